"""A reviewer in headless Chromium: joins through the invite link, opens an 8-image task, submits a fix.

The screenshot is kept as ``test-artifacts/annotation-8-images.png``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from annotation.builddir import load_build
from annotation.config import ITEM_ID_FIELD
from annotation.pull import pull
from annotation.push import push
from tests.annotation.builds import make_build
from tests.annotation.conftest import ARTIFACTS

pytestmark = pytest.mark.slow

CHROMIUM = os.environ.get("MIRAGE_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
REVIEWER = "browser-reviewer@mirage.test"
PASSWORD = "reviewer-pass-1234"


@pytest.fixture(scope="module")
def chromium():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip("playwright is not installed; .ci/install-annotation.sh installs it")
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        if os.environ.get("CI"):
            raise RuntimeError(f"no Chromium at {CHROMIUM}")
        pytest.skip(f"no Chromium at {CHROMIUM}; .ci/install-annotation.sh installs it")
    profile = tempfile.mkdtemp(prefix="mirage-chromium-")
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=ARGS, viewport={"width": 1400, "height": 1300}
        )
        yield context
        context.close()
    shutil.rmtree(profile, ignore_errors=True)


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

    out = pull(admin, build, "browser review")
    entry = out.review["items"][eight.id]
    assert entry["status"] == "pending" and entry["votes"] == {"accept": 0, "fix": 1, "reject": 0}
    assert entry["annotations"][0]["reviewer"] == REVIEWER
    assert entry["annotations"][0]["answer"] == "B"
    assert entry["comments"] == ["the circles are in image 2"]
    assert out.review["problems"] == []


def test_screen_at_1440x900_shows_images_proposed_answer_and_verdict_together(ls_server, chromium, tmp_path):
    """Issue 15 part 3: images and controls side by side; nothing the reviewer must compare needs scrolling."""
    build_path = make_build(tmp_path, 3)
    admin = ls_server.client()
    res = push(admin, load_build(build_path), "screen review", progress=False)
    build = load_build(build_path)
    eight = next(it for it in build.items if len(it.images) == 8)
    task_id = next(t["id"] for t in admin.iter_tasks(res.project_id) if t["data"][ITEM_ID_FIELD] == eight.id)

    from tests.annotation.lshelpers import signup

    signup(ls_server.url, ls_server.invite, "screen-reviewer@mirage.test", PASSWORD)
    page = chromium.new_page()
    page.context.clear_cookies()
    page.set_viewport_size({"width": 1440, "height": 900})
    page.goto(ls_server.url + "/user/login/")
    page.fill("input[name=email]", "screen-reviewer@mirage.test")
    page.fill("input[name=password]", PASSWORD)
    page.locator("button[type=submit], input[type=submit]").first.click()
    page.wait_for_load_state("networkidle")
    page.goto(f"{ls_server.url}/projects/{res.project_id}/data?task={task_id}")
    page.wait_for_function(
        "document.querySelectorAll('.mirage-cell img').length >= 8 && "
        "Array.from(document.querySelectorAll('.mirage-cell img')).every(i => i.complete && i.naturalWidth > 0)",
        timeout=60_000,
    )
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "annotation-1440x900.png"))

    def box(locator):
        b = locator.bounding_box()
        assert b is not None, locator
        return b

    first_image = box(page.locator(".mirage-cell img").first)
    proposed = box(page.locator(".mirage-proposed"))
    verdict = box(page.locator(".lsf-choice__item label", has_text="reject").first)
    # side by side: the images on the left, question / proposed answer / verdict on the right, all in view
    for name, b in (("first image", first_image), ("proposed answer", proposed), ("verdict", verdict)):
        assert b["y"] >= 0 and b["y"] + b["height"] <= 900, (name, b)
    assert first_image["x"] + first_image["width"] <= proposed["x"], (first_image, proposed)
    assert first_image["width"] >= 280, first_image  # was 215 px in a 4-column grid under the text
    # every image links to itself at native size
    links = page.locator(".mirage-cell a.mirage-native")
    assert links.count() == 8 and "native size (96x72)" in links.first.inner_text()
    # one hotkey scheme: 2 chooses fix, which shows the correct-option choices
    page.locator(".mirage-proposed").click()
    page.keyboard.press("2")
    page.locator(".lsf-choice__item label", has_text="B. Image 2").first.wait_for(timeout=10_000)
    page.screenshot(path=str(ARTIFACTS / "annotation-1440x900-fix.png"))

    # the Data Manager shows question, proposed answer, task and pressure, not the raw HTML / JSON fields
    page.goto(f"{ls_server.url}/projects/{res.project_id}/data")
    page.get_by_text(eight.question).first.wait_for(timeout=30_000)
    page.screenshot(path=str(ARTIFACTS / "annotation-data-manager.png"))
    for column in ("question", "proposed_answer", "task", "pressure"):
        b = box(page.get_by_text(column, exact=True).first)
        assert b["x"] + b["width"] <= 1440 and b["y"] < 300, (column, b)  # a visible header cell, on screen
    for column in ("item_html", "choices", "images", "Annotation results"):
        assert page.get_by_text(column, exact=True).count() == 0, column
    page.close()
