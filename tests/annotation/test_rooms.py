"""Three real rooms started by ``python -m annotation serve`` (one set for the module), used as a team would.

- ``kill -9`` of one room's server: the other rooms go on serving, the reviewer of the dead room is told why (in
  the browser too), the room comes back by itself and nothing submitted before is lost;
- two rooms logged into from one browser keep both sessions;
- a skipped item comes back to its reviewer and reaches a verdict; one skipped for good counts as unsure;
- an author's own item completes review, and pull says how;
- a member cannot change the project; a project changed anyway is refused at pull until push restores it;
- every vote went through the rooms' fronts, so pull verifies each against its room's ledger (none quarantined).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import require_annotation_extra

require_annotation_extra()  # Label Studio's client side (label-studio-sdk, requests)

import requests  # noqa: E402 - checked above

from annotation.builddir import load_build  # noqa: E402
from annotation.client import LabelStudioClient  # noqa: E402
from annotation.config import ITEM_ID_FIELD  # noqa: E402
from annotation.errors import AnnotationError  # noqa: E402
from annotation.pull import pull  # noqa: E402
from annotation.push import push  # noqa: E402
from builders.items import make_item, write_items  # noqa: E402
from tests.annotation.builds import make_build  # noqa: E402
from tests.annotation.conftest import ADMIN_EMAIL, ADMIN_PASSWORD  # noqa: E402
from tests.annotation.lshelpers import REVIEWER_PASSWORD, result, signup, stop_serve, three_free_ports  # noqa: E402

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
AUTHOR = "author@mirage.test"  # room 1's reviewer, who also wrote the last item
REVIEWERS = (AUTHOR, "second@mirage.test", "third@mirage.test")
PROJECT = "rooms review"


def _build(root: Path) -> Path:
    """Six mixed items and one whose text the room-1 reviewer wrote (``provenance.author``); ``items.jsonl`` is
    sorted by id, so tests find the authored one by its provenance."""
    path = make_build(root, 6)
    from builders.items import read_items

    items = read_items(path / "items.jsonl")
    authored = make_item(benchmark="demo", task="description", question_type="yes_no", pressure="easy",
                         images=items[1].images, question="Does the ball hit the cup? (authored)", options=[],
                         answer="yes", provenance={"author": AUTHOR})
    write_items(path / "items.jsonl", items + [authored])
    return path


def _server_pid(data_dir: Path) -> int:
    """The Label Studio process serving ``data_dir`` (a child of ``serve``, found by its command line)."""
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"start" in cmd and str(data_dir).encode() in cmd:
            return int(pid)
    raise AssertionError(f"no Label Studio process for {data_dir}")


@pytest.fixture(scope="module")
def team(ls_template, label_studio_bin, tmp_path_factory):
    root = tmp_path_factory.mktemp("team")
    data = root / "data"
    for k in (1, 2, 3):
        shutil.copytree(ls_template, data / f"room-{k}")
    port = three_free_ports()
    env = dict(os.environ, LABEL_STUDIO_USERNAME=ADMIN_EMAIL, LABEL_STUDIO_PASSWORD=ADMIN_PASSWORD,
               MIRAGE_LABEL_STUDIO_BIN=str(label_studio_bin))
    err_path = root / "serve.err"
    err = open(err_path, "w")
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "annotation", "serve", "--data-dir", str(data), "--port", str(port)],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=err, text=True)
    out: list[str] = []
    try:
        for line in proc.stdout:
            out.append(line)
            if line.startswith("Press Ctrl-C"):
                break
        text = "".join(out)
        assert "Press Ctrl-C" in text, err_path.read_text()
        print(f"three rooms ready in {time.monotonic() - started:.1f} s")
        exported = dict(re.findall(r"(\w+)=(\S+)", text.split("export ", 1)[1].splitlines()[0]))
        urls = exported["LABEL_STUDIO_URL"].split(",")
        admins = [LabelStudioClient(u, t) for u, t in zip(urls, exported["LABEL_STUDIO_API_KEY"].split(","))]
        invites = re.findall(r"Reviewer slot \d joins through the invite link: \S+?(/user/\S+)", text)
        files_root = Path(exported["LOCAL_FILES_DOCUMENT_ROOT"])
        build_path = _build(root)
        build = load_build(build_path)
        pushes = [push(a, build, PROJECT, files_root=files_root, overlap=1, progress=False) for a in admins]
        tasks = [{t["data"][ITEM_ID_FIELD]: t["id"] for t in a.iter_tasks(p.project_id)} for a, p in zip(admins, pushes)]
        reviewers = []
        for url, invite, email in zip(urls, invites, REVIEWERS):
            signup(url, invite, email)
            reviewers.append(LabelStudioClient.login(url, email, REVIEWER_PASSWORD))
        yield dict(proc=proc, err=err_path, data=data, urls=urls, admins=admins, build=build, build_path=build_path,
                   pushes=pushes, tasks=tasks, reviewers=reviewers, files_root=files_root)
    finally:
        with contextlib.suppress(subprocess.TimeoutExpired):
            stop_serve(proc, 90)
        err.close()


def third_session_get(team, path: str) -> requests.Response:
    """A request of room 3's reviewer, as their browser makes it (session cookie)."""
    rev = team["reviewers"][2]
    return rev.session.get(rev.url + path, timeout=10)


def _vote(team, room: int, item, verdict: str, **kw) -> dict:
    rev = team["reviewers"][room - 1]
    return rev.create_annotation(team["tasks"][room - 1][item.id], result(item, verdict, **kw), lead_time=1.0)


def _skip(team, room: int, item) -> dict:
    rev = team["reviewers"][room - 1]
    return rev.create_annotation(team["tasks"][room - 1][item.id], [], was_cancelled=True)


def test_a_member_cannot_change_the_project_and_a_changed_one_is_refused_at_pull(team):
    rev, admin = team["reviewers"][1], team["admins"][1]
    pid = team["pushes"][1].project_id
    for method, path, body in (("PATCH", f"/api/projects/{pid}/", {"maximum_annotations": 5}),
                               ("GET", f"/api/storages/localfiles/?project={pid}", None),
                               ("GET", "/api/invite", None)):
        r = rev.session.request(method, rev.url + path, json=body, timeout=30,
                                headers={"X-CSRFToken": rev.cookie("csrftoken") or ""})
        assert r.status_code == 403 and r.json()["detail"].startswith("Refused by Room 2's front"), (path, r.text)
    assert admin.find_project(PROJECT)["maximum_annotations"] == 1
    # no absolute path in what a member reads; a ".." path is not served and names no path
    project = rev.get(f"/api/projects/{pid}/")
    assert str(team["build_path"].parents[2]) not in json.dumps(project)
    assert project["description"] == "Mirage review of demo/test"
    r = rev.session.get(rev.url + "/data/local-files/", params={"d": "a/../../etc/passwd"}, timeout=30)
    assert r.status_code == 404 and "/etc" not in r.text and str(team["files_root"]) not in r.text
    # changed anyway (here by the maintainer's own token, as a second admin could): pull refuses, push restores
    config = admin.find_project(PROJECT)["label_config"]
    admin.update_project(pid, {"label_config": config.replace('<Choice value="reject"', '<Choice value="maybe"/>\n'
                                                              '    <Choice value="reject"')})
    with pytest.raises(AnnotationError, match=r"was changed since push \(label_config differ"):
        pull(team["admins"], team["build"], PROJECT)
    push(admin, team["build"], PROJECT, files_root=team["files_root"], overlap=1, progress=False)
    pull(team["admins"], team["build"], PROJECT)  # restored: accepted


def test_a_skipped_item_comes_back_and_reaches_a_verdict(team):
    items = team["build"].items
    back, gone = [it for it in items if not it.provenance.get("author")][2:4]
    for room in (1, 2):
        _vote(team, room, back, "accept")
    _vote(team, 1, gone, "accept")
    _vote(team, 2, gone, "reject")
    _skip(team, 3, back)
    _skip(team, 3, gone)
    third, pid = team["reviewers"][2], team["pushes"][2].project_id
    # room 3's reviewer labels everything else; the skipped items come back to them at the end of the stream
    for it in items:
        if it not in (back, gone):
            _vote(team, 3, it, "accept")
    nxt = third.get(f"/api/projects/{pid}/next")
    assert nxt["data"][ITEM_ID_FIELD] in (back.id, gone.id)
    _vote(team, 3, back, "reject", comment="looked again: the ball is not there")
    review = pull(team["admins"], team["build"], PROJECT).review
    assert review["quarantined"] == []  # every vote and skip went through the fronts: the ledgers vouch for all
    assert review["items"][back.id]["status"] == "keep"  # 2 accept of 3: a verdict after the skip
    assert "empty_seats" not in review["items"][back.id]
    entry = review["items"][gone.id]  # skipped for good: unsure, and 1-1 is no majority
    assert entry["status"] == "adjudicate"
    assert entry["empty_seats"] == [{"room": 3, "reviewer": REVIEWERS[2], "annotation": entry["empty_seats"][0]
                                     ["annotation"], "reason": "skipped (unsure)"}]
    assert any(gone.id in p and "settle it in adjudications.json" in p for p in review["problems"])


def test_an_author_s_own_item_completes_review(team, capsys, monkeypatch):
    from annotation.cli import main

    (authored,) = [it for it in team["build"].items if it.provenance.get("author")]
    assert authored.provenance["author"] == AUTHOR
    _vote(team, 1, authored, "accept")  # the author, room 1's reviewer: refused
    _vote(team, 2, authored, "accept")
    _vote(team, 3, authored, "accept")
    monkeypatch.setenv("LABEL_STUDIO_URL", ",".join(team["urls"]))
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", ",".join(a._token for a in team["admins"]))
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["pull", str(team["build_path"]), "--project", PROJECT]) == 0
    out, err = capsys.readouterr()
    review = json.loads((team["build_path"] / "review.json").read_text())
    entry = review["items"][authored.id]
    assert entry["status"] == "keep" and entry["votes"] == {"accept": 2, "fix": 0, "reject": 0}
    assert entry["empty_seats"][0]["reason"] == "own work (refused)" and review["refused_own_work"] == {AUTHOR: 1}
    assert "1 item(s) had their author's vote refused: 1 decided by the other reviewers' majority" in err
    assert re.search(r"items with an empty seat\s*│?\s*2 \(1 decided by the other votes, 1 to adjudicate\)", out), out


def test_rooms_keep_their_sessions_and_a_dead_room_says_why_comes_back_and_loses_nothing(team, browser):
    """The sessions part in Chromium; the kill part through the API, while rooms 1 and 2 are polled all along."""
    urls, data = team["urls"], team["data"]
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        # one browser, two rooms: logging in to room 2 does not log room 1 out (cookies do not separate ports)
        page = context.new_page()
        for url, email in ((urls[0], REVIEWERS[0]), (urls[2], REVIEWERS[2])):
            page.goto(url + "/user/login/")
            page.fill("input[name=email]", email)
            page.fill("input[name=password]", REVIEWER_PASSWORD)
            page.locator("button[type=submit], input[type=submit]").first.click()
            page.wait_for_load_state("networkidle")
        for url, email in ((urls[0], REVIEWERS[0]), (urls[2], REVIEWERS[2])):
            page.goto(url + "/api/current-user/whoami")
            assert json.loads(page.locator("body").inner_text())["email"] == email, url
        # room 3's server is killed
        item = [it for it in team["build"].items if not it.provenance.get("author")][4]
        _vote(team, 1, item, "accept")
        admin3, pid3 = team["admins"][2], team["pushes"][2].project_id

        def room3_annotations() -> list[int]:
            return sorted(a["id"] for t in json.loads(admin3.export_raw(pid3)) for a in t["annotations"])

        if not room3_annotations():  # this test alone: the earlier tests' skips and votes are not there
            _vote(team, 3, team["build"].items[0], "accept")
        before = room3_annotations()
        pid = _server_pid(data / "room-3")
        alive = threading.Event()
        failures: list[str] = []

        def watch() -> None:  # rooms 1 and 2 answer all along
            while not alive.is_set():
                for url in urls[:2]:
                    try:
                        if requests.get(url + "/health", timeout=10).status_code != 200:
                            failures.append(url)
                    except requests.RequestException as exc:
                        failures.append(f"{url}: {exc}")
                time.sleep(0.5)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        killed = time.monotonic()
        os.kill(pid, signal.SIGKILL)
        # room 3's reviewer is told why, by the API, which the web app shows in its error dialog (test_browser.py)
        reason = "Room 3's Label Studio server stopped with status -9 and is restarting. What you submitted before is saved"
        deadline = time.monotonic() + 30
        while reason not in (r := third_session_get(team, "/api/projects/")).text:
            assert time.monotonic() < deadline, "room 3's front never said why it is down"
            time.sleep(0.2)
        assert r.status_code == 503
        # the room comes back by itself
        deadline = time.monotonic() + 240
        while requests.get(urls[2] + "/health", timeout=10).status_code != 200:
            assert time.monotonic() < deadline, "room 3 did not come back"
            time.sleep(0.5)
        print(f"room 3 back {time.monotonic() - killed:.1f} s after kill -9")
        alive.set()
        watcher.join(10)
        assert failures == []
        log = team["err"].read_text()
        assert re.search(r"Room 3 \(port \d+\): Label Studio stopped with status -9: .*; restarting it", log), log
        assert re.search(r"Room 3 \(port \d+\) is serving again", log), log
        # nothing lost: room 3 holds every annotation it held before the kill, and takes the reviewer's vote again
        assert room3_annotations() == before
        _vote(team, 3, item, "reject")
        entry = pull(team["admins"], team["build"], PROJECT).review["items"][item.id]
        assert [(a["room"], a["verdict"]) for a in entry["annotations"]] == [(1, "accept"), (3, "reject")]
    finally:
        context.close()
