"""The front's allow-list held the other way: every request real Chromium makes in the review, re-review (recheck)
and authoring screens gets through, at 1440x900 and 1280x720.

A real Label Studio behind a :class:`~annotation.front.RoomFront` with its ledger (as ``serve`` sets them up); a new
member joins through the invite link in the browser, opens each project's labeling stream ("Label All Tasks") and
the Data Manager, and submits a vote, a re-review vote and a description. Every answer the browser gets is
recorded: none may be one of the front's refusals, and the ledger holds each submission, credited to the member.
"""

from __future__ import annotations

import time

import pytest

from tests.conftest import require_annotation_extra

require_annotation_extra()

from annotation import author as authoring  # noqa: E402
from annotation.builddir import load_build  # noqa: E402
from annotation.client import LabelStudioClient  # noqa: E402

from annotation.ledger import parse_ledger  # noqa: E402
from annotation.push import push  # noqa: E402
from tests.annotation.builds import draw_png, make_build  # noqa: E402
from tests.annotation.conftest import ARTIFACTS  # noqa: E402
from tests.annotation.lshelpers import fronted  # noqa: E402
from tests.annotation.test_author import TEXT  # noqa: E402

pytestmark = pytest.mark.slow
PASSWORD = "reviewer-pass-1234"
VIEWPORTS = [(1440, 900), (1280, 720)]

@pytest.fixture(scope="module")
def room(start_ls, files_root, tmp_path_factory):
    ls = start_ls()
    front, url = fronted(ls.url, ls.data_dir)
    try:
        admin = LabelStudioClient(url, ls.token)
        root = tmp_path_factory.mktemp("front-browser")
        build = load_build(make_build(root, 3))
        review = push(admin, build, "review", files_root=files_root, progress=False).project_id
        models = {it.id: "B" if it.options else "no" for it in build.items}
        recheck = push(admin, build, "recheck", files_root=files_root, progress=False, models=models).project_id
        for name in ("c1-rolling", "c2-falling"):  # one comic to describe per viewport's author
            for k in range(3):
                draw_png(root / "comics" / name / f"panel{k + 1}.png", 10 * k + len(name), size=(160, 120))
        flow, inputs = authoring.hook("descriptions"), {"comics": root / "comics", "cache_dir": root / "cache"}
        assert authoring.push(admin, flow, inputs, "describe", files_root) == (len(VIEWPORTS), 0)
        author = admin.find_project("describe")["id"]
        yield dict(front=front, url=url, admin=admin, invite=ls.invite, projects=dict(
            review=review, recheck=recheck, author=author))
    finally:
        front.stop()

def _votes(room, email: str) -> list[dict]:
    return [e for e in parse_ledger(room["front"].ledger.read()) if e["email"] == email]

def _wait_for(predicate, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.3)

@pytest.mark.parametrize("width, height", VIEWPORTS)
def test_review_recheck_and_authoring_screens_pass_the_front(room, browser, width, height):
    url, admin, projects = room["url"], room["admin"], room["projects"]
    email = f"screens-{width}@mirage.test"
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    seen: list[tuple[str, str, int, bool]] = []
    page.on("response", lambda r: seen.append((r.request.method, r.url, r.status, "x-mirage-front" in r.headers)))
    try:
        page.goto(url + room["invite"])  # joins through the invite link
        page.fill("input[name=email]", email)
        page.fill("input[name=password]", PASSWORD)
        page.locator("button[type=submit], input[type=submit]").first.click()
        page.wait_for_load_state("networkidle")
        assert "/user/signup" not in page.url, "signup through the invite link failed"
        page.goto(url + "/projects/")
        page.wait_for_load_state("networkidle")
        for name in ("review", "recheck", "author"):
            pid = projects[name]
            page.goto(f"{url}/projects/{pid}/data")  # the Data Manager
            page.wait_for_load_state("networkidle")
            before = len(_votes(room, email))
            page.goto(f"{url}/projects/{pid}/data?labeling=1")  # "Label All Tasks"
            if name == "author":
                box = page.locator("textarea").first
                box.wait_for(timeout=60_000)
                box.fill(TEXT)
            else:
                accept = page.locator(".lsf-choice__item label", has_text="accept").first
                accept.wait_for(timeout=60_000)
                accept.click()
            page.wait_for_load_state("networkidle")
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / f"front-{name}-{width}x{height}.png"))
            page.get_by_test_id("bottombar-submit-button").click()
            _wait_for(lambda: len(_votes(room, email)) > before)
            page.wait_for_load_state("networkidle")
    finally:
        context.close()
        print("\n".join(f"{m} {u} {s}{' (front)' if f else ''}" for m, u, s, f in seen if s >= 400 or f))
    refused = [(m, u, s) for m, u, s, by_front in seen if by_front]
    assert refused == [], refused
    assert all(s < 400 or s == 404 for _, _, s, _ in seen), [x for x in seen if x[2] >= 400]
    mine = _votes(room, email)
    assert [e["action"] for e in mine] == ["create"] * 3, mine
    tasks = {pid: {t["id"] for t in admin.iter_tasks(pid)} for pid in projects.values()}
    assert [next(p for p, ids in tasks.items() if e["task"] in ids) for e in mine] == list(projects.values())
