"""A reviewer in headless Chromium: joins through the invite link, opens an 8-image task and submits a fix; the
screen at 1440x900 and 1280x720 in the labeling stream; the Data Manager's columns.

Screenshots are kept under ``test-artifacts/`` (``annotation-8-images.png``, ``annotation-<W>x<H>*.png``).
"""

from __future__ import annotations

import time

import pytest

from annotation.builddir import load_build
from annotation.config import ITEM_ID_FIELD
from annotation.pull import pull
from annotation.push import push
from tests.annotation.builds import make_build
from tests.annotation.conftest import ARTIFACTS

pytestmark = pytest.mark.slow

REVIEWER = "browser-reviewer@mirage.test"
PASSWORD = "reviewer-pass-1234"


@pytest.fixture(scope="module")
def chromium(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1300})
    yield context
    context.close()


def test_reviewer_sees_eight_images_and_submits_a_fix(ls_server, chromium, tmp_path):
    build_path = make_build(tmp_path, 3)  # item 0 has 8 images, 4 options
    admin = ls_server.client()
    res = push(admin, load_build(build_path), "browser review", progress=False)
    build = load_build(build_path)
    eight = next(it for it in build.items if len(it.images) == 8)
    task_id = next(t["id"] for t in admin.iter_tasks(res.project_id) if t["data"][ITEM_ID_FIELD] == eight.id)

    page = chromium.new_page()
    # join through the invite link, as a new reviewer would
    page.goto(ls_server.url + ls_server.invite)
    page.fill("input[name=email]", REVIEWER)
    page.fill("input[name=password]", PASSWORD)
    page.locator("button[type=submit], input[type=submit]").first.click()
    page.wait_for_load_state("networkidle")
    assert "/user/signup" not in page.url, "signup through the invite link failed"

    page.goto(f"{ls_server.url}/projects/{res.project_id}/data?task={task_id}")
    page.wait_for_function(
        "document.querySelectorAll('.mirage-cell img').length >= 8 && "
        "Array.from(document.querySelectorAll('.mirage-cell img')).every(i => i.complete && i.naturalWidth > 0)",
        timeout=60_000,
    )
    widths = page.evaluate("Array.from(document.querySelectorAll('.mirage-cell img')).map(i => i.naturalWidth)")
    assert len(widths) == 8 and all(w > 0 for w in widths), widths
    titles = page.locator(".mirage-cell h4, .mirage-cell h5, .mirage-cell h6").all_inner_texts()
    assert [t.strip() for t in titles] == [f"Image {i}" for i in range(1, 9)]
    # the controls: verdicts, issue tags, comment, submit; question and proposed answer
    for label in ("accept", "fix", "reject", "ambiguous", "annotation error", "image unsuitable", "wording"):
        assert page.locator(".lsf-choice__item label", has_text=label).count() >= 1, label
    assert page.locator("textarea[name=comment]").count() == 1
    assert page.get_by_role("button", name="Submit").count() == 1
    assert page.get_by_text(eight.question).count() >= 1
    assert page.locator(".mirage-proposed").inner_text().endswith("A. Image 1")
    # zoom controls on every image
    assert page.locator(".mirage-cell").count() == 8

    # choose fix: the correct-option choices appear; pick B, comment, submit
    page.locator(".lsf-choice__item label", has_text="fix").first.click()
    page.locator(".lsf-choice__item label", has_text="B. Image 2").first.click()
    page.fill("textarea[name=comment]", "the circles are in image 2")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "annotation-8-images.png"))
    page.get_by_role("button", name="Submit").click()
    deadline = time.monotonic() + 30
    while not admin.get(f"/api/tasks/{task_id}/annotations/") and time.monotonic() < deadline:
        time.sleep(0.5)
    page.close()

    out = pull(admin, build, "browser review", accept_unverified=True)  # a bare server: no ledger
    entry = out.review["items"][eight.id]
    assert entry["status"] == "pending" and entry["votes"] == {"accept": 0, "fix": 1, "reject": 0}
    assert entry["annotations"][0]["reviewer"] == REVIEWER
    assert entry["annotations"][0]["answer"] == "B"
    assert entry["comments"] == ["the circles are in image 2"]
    assert out.review["problems"] == []


def _box(locator) -> dict:
    b = locator.bounding_box()
    assert b is not None, locator
    return b


def _in_view(b: dict, top: float, bottom: float) -> bool:
    return b["y"] >= top and b["y"] + b["height"] <= bottom


@pytest.mark.parametrize("width, height", [(1440, 900), (1280, 720)])
def test_the_screen_fits_four_images_question_and_verdict(ls_server, browser, tmp_path, width, height):
    """Issue 42 part 5, in the reviewer's labeling stream: every image of a 4-image item at least 400 px wide, two
    side by side; question, proposed answer and verdict in view, also after choosing fix and while the images
    scroll. Screenshots: ``test-artifacts/annotation-<W>x<H>*.png``."""
    from tests.annotation.builds import make_screen_build
    from tests.annotation.lshelpers import signup

    build = load_build(make_screen_build(tmp_path))
    admin = ls_server.client()
    project = f"screen {width}"
    res = push(admin, build, project, progress=False)
    email = f"screen-{width}@mirage.test"
    signup(ls_server.url, ls_server.invite, email, PASSWORD)
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    try:
        page.goto(ls_server.url + "/user/login/")
        page.fill("input[name=email]", email)
        page.fill("input[name=password]", PASSWORD)
        page.locator("button[type=submit], input[type=submit]").first.click()
        page.wait_for_load_state("networkidle")
        page.goto(f"{ls_server.url}/projects/{res.project_id}/data?labeling=1")  # "Label All Tasks"
        page.wait_for_function(
            "document.querySelectorAll('.mirage-cell img').length == 4 && "
            "Array.from(document.querySelectorAll('.mirage-cell img')).every(i => i.complete && i.naturalWidth > 0)",
            timeout=60_000,
        )
        page.wait_for_timeout(500)  # the images settle into their final size
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"annotation-{width}x{height}.png"))
        top = _box(page.locator(".lsf-main-content")).get("y")
        bottom = _box(page.locator(".lsf-bottombar"))["y"]  # Skip / Submit

        def check(when: str) -> None:
            images = [_box(page.locator(".mirage-cell img").nth(k)) for k in range(4)]
            assert all(b["width"] >= 400 for b in images), (when, images)
            assert abs(images[0]["y"] - images[1]["y"]) < 1 and images[0]["x"] + images[0]["width"] <= images[1]["x"]
            for name in (".mirage-question", ".mirage-proposed"):
                assert _in_view(_box(page.locator(name)), top, bottom), (when, name)
            for verdict in ("accept", "fix", "reject"):
                label = page.locator(".lsf-choice__item label", has_text=verdict).first
                assert _in_view(_box(label), top, bottom), (when, verdict)
            assert images[0]["x"] + images[0]["width"] <= _box(page.locator(".mirage-question"))["x"]

        check("opened")
        # side panels (Info, History, Regions) are gone; the comment box has no counter and no "Add"
        assert page.locator(".lsf-sidepanels__wrapper").first.is_hidden()
        assert page.get_by_text("submissions").count() == 0 and page.get_by_role("button", name="Add").count() == 0
        # every image links to itself at native size
        links = page.locator(".mirage-cell a.mirage-native")
        assert links.count() == 4 and "native size (640x480)" in links.first.inner_text()
        # one hotkey scheme: 2 chooses fix, which shows the correct-option choices below the verdict
        page.locator(".mirage-proposed").click()
        page.keyboard.press("2")
        page.locator(".lsf-choice__item label", has_text="None of the above").last.wait_for(timeout=10_000)
        check("fix chosen")
        page.screenshot(path=str(ARTIFACTS / f"annotation-{width}x{height}-fix.png"))
        # the images scroll; question and verdict stay
        page.evaluate("document.querySelector('.lsf-main-content').scrollTop = 10000")
        page.wait_for_timeout(300)
        assert _box(page.locator(".mirage-cell img").nth(0))["y"] < top  # scrolled away
        for name in (".mirage-question", ".mirage-proposed"):
            assert _in_view(_box(page.locator(name)), top, bottom), ("scrolled", name)
        assert _in_view(_box(page.locator(".lsf-choice__item label", has_text="reject").first), top, bottom)
        page.screenshot(path=str(ARTIFACTS / f"annotation-{width}x{height}-scrolled.png"))
    finally:
        context.close()


def test_the_data_manager_shows_columns_not_raw_fields(ls_server, chromium, tmp_path):
    """The Data Manager shows question, proposed answer, task and pressure, not the raw HTML / JSON fields."""
    build_path = make_build(tmp_path, 3)
    admin = ls_server.client()
    res = push(admin, load_build(build_path), "columns review", progress=False)
    build = load_build(build_path)
    from tests.annotation.lshelpers import signup

    signup(ls_server.url, ls_server.invite, "columns-reviewer@mirage.test", PASSWORD)
    page = chromium.new_page()
    page.context.clear_cookies()
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(ls_server.url + "/user/login/")
    page.fill("input[name=email]", "columns-reviewer@mirage.test")
    page.fill("input[name=password]", PASSWORD)
    page.locator("button[type=submit], input[type=submit]").first.click()
    page.wait_for_load_state("networkidle")
    page.goto(f"{ls_server.url}/projects/{res.project_id}/data")
    page.get_by_text(build.items[0].question).first.wait_for(timeout=30_000)
    page.screenshot(path=str(ARTIFACTS / "annotation-data-manager.png"))
    for column in ("question", "proposed_answer", "task", "pressure"):
        b = _box(page.get_by_text(column, exact=True).first)
        assert b["x"] + b["width"] <= 1440 and b["y"] < 300, (column, b)  # a visible header cell, on screen
    for column in ("item_html", "record_html", "choices", "images", "Annotation results"):
        assert page.get_by_text(column, exact=True).count() == 0, column
    page.close()


def test_a_reviewer_whose_room_is_down_sees_why(ls_server, browser, tmp_path):
    """The web app in front of a room that goes down (its front says so, as ``serve`` makes it when the server
    dies): Submit fails with Label Studio's own "not saved" notice, and the next request shows the front's reason in
    the app's error dialog. Screenshot: ``test-artifacts/annotation-room-down.png``."""
    from annotation.front import RoomFront
    from annotation.serve import free_port
    from annotation.client import LabelStudioClient
    from tests.annotation.lshelpers import signup

    backend = ls_server.url.rsplit(":", 1)
    front = RoomFront("127.0.0.1", free_port(), room="Room 2").start()
    front.serve_from((backend[0].split("//")[1], int(backend[1])))
    url = f"http://127.0.0.1:{front.port}"
    admin = LabelStudioClient(url, ls_server.token)
    res = push(admin, load_build(make_build(tmp_path, 2)), "room down", progress=False)
    signup(url, ls_server.invite, "down@mirage.test", PASSWORD)
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    page = context.new_page()
    try:
        page.goto(url + "/user/login/")
        page.fill("input[name=email]", "down@mirage.test")
        page.fill("input[name=password]", PASSWORD)
        page.locator("button[type=submit], input[type=submit]").first.click()
        page.wait_for_load_state("networkidle")
        page.goto(f"{url}/projects/{res.project_id}/data?labeling=1")
        page.locator(".lsf-choice__item label", has_text="reject").first.wait_for(timeout=60_000)
        page.wait_for_load_state("networkidle")
        front.down("stopped with status -9 and is restarting")
        page.locator(".lsf-choice__item label", has_text="reject").first.click()
        page.get_by_test_id("bottombar-submit-button").click()
        page.get_by_text("Annotation is not saved").first.wait_for(timeout=30_000)
        page.get_by_text("Projects", exact=True).first.click()  # the app's next request
        reason = "Room 2's Label Studio server stopped with status -9 and is restarting. What you submitted before is saved"
        page.get_by_text(reason).first.wait_for(timeout=30_000)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "annotation-room-down.png"))
        page.goto(url + "/projects/")  # a page load: the front's own page, which reloads itself
        assert reason in page.locator("body").inner_text()
    finally:
        context.close()
        front.stop()
