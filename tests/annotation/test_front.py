"""The rooms' fronts and their supervision, against a stand-in Label Studio (seconds, no real server).

The real-server tests are in ``test_rooms.py``.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import have, require

require(have("requests", "aiohttp"), "requests and aiohttp (the annotation extra)", "pip install -e '.[annotation]'")

import requests  # noqa: E402 - checked above

from annotation.front import RoomFront, cookie_name  # noqa: E402
from annotation.routes import local_files_escape  # noqa: E402
from annotation.serve import free_port, port_is_free  # noqa: E402
from tests.annotation import fake_label_studio  # noqa: E402
from tests.annotation.lshelpers import stop_serve, three_free_ports  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
FAKE = Path(fake_label_studio.__file__)


@pytest.fixture
def backend():
    server = ThreadingHTTPServer(("127.0.0.1", 0), fake_label_studio.Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield ("127.0.0.1", server.server_address[1])
    server.shutdown()
    server.server_close()


@pytest.fixture
def front(backend):
    f = RoomFront("127.0.0.1", free_port(), room="Room 2").start()
    f.serve_from(backend)
    yield f
    f.stop()


def _url(front: RoomFront, path: str) -> str:
    return f"http://127.0.0.1:{front.port}{path}"


def test_requests_pass_through_with_their_host_body_and_keep_alive(front):
    s = requests.Session()
    s.cookies.set(cookie_name("sessionid", front.port), "member", domain="127.0.0.1")
    for _ in range(3):  # one connection, several requests
        r = s.post(_url(front, "/api/dm/views/?project=1"), json={"data": []}, timeout=10)
        echo = r.json()
        assert r.status_code == 200 and echo["method"] == "POST" and echo["body"] == '{"data": []}'
        assert echo["path"] == "/api/dm/views/?project=1" and echo["host"] == f"127.0.0.1:{front.port}"
    owner = {"Authorization": "Token owner-token"}
    streamed = s.get(_url(front, "/stream"), headers=owner, timeout=10)
    assert streamed.headers.get("Transfer-Encoding") == "chunked" and len(streamed.content) == 100_000


def test_each_room_has_its_own_cookies(backend):
    """Two rooms on one host, one browser (cookie jar): logging in at one does not log out the other."""
    a = RoomFront("127.0.0.1", free_port(), room="Room 1").start()
    b = RoomFront("127.0.0.1", free_port(), room="Room 2").start()
    try:
        a.serve_from(backend)
        b.serve_from(backend)
        s = requests.Session()
        s.get(_url(a, "/login"), allow_redirects=False, headers={"Authorization": "Token owner-token"}, timeout=10)
        s.get(_url(b, "/login"), allow_redirects=False, headers={"Authorization": "Token owner-token"}, timeout=10)
        names = sorted(c.name for c in s.cookies)
        assert names == sorted(cookie_name(n, f.port) for n in ("csrftoken", "sessionid") for f in (a, b))
        s.cookies.set("sessionid", "someone-else", domain="127.0.0.1")  # a bare cookie must not shadow the room's
        for f in (a, b):
            assert s.get(_url(f, "/api/projects/"), timeout=10).json()["cookie"] == "csrftoken=c1; sessionid=member"
    finally:
        a.stop()
        b.stop()


def test_only_the_owner_changes_the_project_its_storage_or_the_invite(front):
    member = requests.Session()
    member.cookies.set(cookie_name("sessionid", front.port), "member", domain="127.0.0.1")
    for method, path in (("PATCH", "/api/projects/3/"), ("DELETE", "/api/projects/3"), ("GET", "/api/storages/"),
                         ("GET", "/api/invite"), ("POST", "/api/dm/actions?id=delete_tasks&project=3"),
                         ("PATCH", "/api/tasks/7/"), ("POST", "/api/projects/3/import"),
                         ("GET", "/api/organizations/1"), ("POST", "/api/users/"), ("PATCH", "/api/users/1/"),
                         ("GET", "/api/current-user/token"), ("GET", "/mirage/votes")):
        r = member.request(method, _url(front, path), json={"label_config": "<View/>"}, timeout=10)
        assert r.status_code == 403 and r.json()["detail"].startswith("Refused by Room 2's front"), (method, path)
    # what reviewing needs stays open
    for method, path in (("GET", "/api/projects/3/"), ("POST", "/api/tasks/7/annotations/?project=3"),
                         ("GET", "/api/projects/3/next"), ("GET", "/api/users/"),
                         ("POST", "/api/dm/actions?id=next_task&tabID=2&project=3")):
        assert member.request(method, _url(front, path), json={}, timeout=10).status_code in (200, 201), (method, path)
    owner = requests.Session()
    r = owner.patch(_url(front, "/api/projects/3/"), json={}, headers={"Authorization": "Token owner-token"}, timeout=10)
    assert r.status_code == 200 and r.json()["method"] == "PATCH"
    assert requests.patch(_url(front, "/api/projects/3/"), json={}, timeout=10).status_code == 403  # nobody


def test_no_traversal_and_no_paths_in_server_errors(front):
    assert local_files_escape({"d": "../../etc/passwd"}) and local_files_escape({"d": "a/../../x"})
    assert not local_files_escape({"d": "mirage/x/a.png"}) and not local_files_escape({"d": "/a/../b.png"})
    owner = {"Authorization": "Token owner-token"}
    r = requests.get(_url(front, "/data/local-files/"), params={"d": "a/../../etc/passwd"}, headers=owner, timeout=10)
    assert r.status_code == 404 and "etc" not in r.text
    r = requests.get(_url(front, "/data/local-files/"), params={"d": "r/1/a.png"}, headers=owner, timeout=10)
    assert r.status_code == 200 and r.json()["path"] == "/data/local-files/?d=r%2F1%2Fa.png"
    r = requests.get(_url(front, "/boom"), headers=owner, timeout=10)
    assert r.status_code == 500 and "/srv" not in r.text and "/etc" not in r.text
    assert "Room 2's server log" in r.json()["detail"]


def test_a_room_that_is_down_says_why(front):
    front.down("stopped with status -9 and is restarting")
    r = requests.get(_url(front, "/api/projects/3/next"), timeout=10)
    assert r.status_code == 503 and r.headers["Retry-After"] == "15"
    assert r.json()["detail"].startswith("Room 2's Label Studio server stopped with status -9 and is restarting.")
    page = requests.get(_url(front, "/projects/3/data"), timeout=10)
    assert page.status_code == 503 and 'http-equiv="refresh"' in page.text and "status -9" in page.text
    front.serve_from(("127.0.0.1", free_port()))  # up, but nothing listens there: still a 503 with a reason
    reviewer = {"Cookie": f"{cookie_name('sessionid', front.port)}=member"}
    r = requests.post(_url(front, "/api/tasks/1/annotations/"), json={}, headers=reviewer, timeout=10)
    assert r.status_code == 503 and "does not answer" in r.json()["detail"]


# ---------------------------------------------------------------- supervision, with the stand-in executable
def _fake_bin(tmp_path: Path) -> Path:
    exe = tmp_path / "label-studio"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    exe.chmod(0o755)
    return exe


def _pid(data: Path) -> int:
    return int((data / "fake.pid").read_text())


def _serve_three_rooms(data: Path, exe: Path, err_path: Path) -> tuple[subprocess.Popen, int]:
    """``annotation serve`` of three rooms on free ports, once it says they serve: tried again on new ports when
    another process took one of them between the check and the start (tests run beside other servers)."""
    env = {k: v for k, v in os.environ.items() if k not in ("LABEL_STUDIO_USERNAME", "LABEL_STUDIO_PASSWORD")}
    for _ in range(3):
        port = three_free_ports()
        with open(err_path, "w") as err:
            proc = subprocess.Popen(
                [sys.executable, "-m", "annotation", "serve", "--data-dir", str(data), "--port", str(port),
                 "--label-studio-bin", str(exe)],
                cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=err, text=True,
            )
        if any(line.startswith("Press Ctrl-C") for line in proc.stdout):
            return proc, port
        proc.wait(30)
        if "already in use" not in err_path.read_text():
            break
    raise AssertionError(f"serve did not start: {err_path.read_text()}")


def _wait(predicate, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError("timed out")


def test_a_dead_room_is_restarted_and_the_others_keep_serving(tmp_path):
    data = tmp_path / "data"
    for k in (1, 2, 3):
        (data / f"room-{k}").mkdir(parents=True)
        (data / f"room-{k}" / "label_studio.sqlite3").touch()  # an initialised data dir
    err_path = tmp_path / "serve.err"
    proc, port = _serve_three_rooms(data, _fake_bin(tmp_path), err_path)
    urls = [f"http://127.0.0.1:{port + k}" for k in range(3)]
    try:
        pids = [_pid(data / f"room-{k}") for k in (1, 2, 3)]
        assert len(set(pids)) == 3
        # room 2 dies; its next start is slow, so its front is seen answering 503 with the reason
        (data / "room-2" / "slow-start").touch()
        os.kill(pids[1], signal.SIGKILL)
        reason = "Room 2's Label Studio server stopped with status -9 and is restarting"
        (r,) = _wait(lambda: reason in (x := requests.get(urls[1] + "/api/projects/", timeout=5)).text and (x,))
        assert r.status_code == 503 and r.json()["detail"].startswith(reason)
        for url in (urls[0], urls[2]):  # the other rooms serve all along
            assert requests.get(url + "/health", timeout=5).status_code == 200
        _wait(lambda: requests.get(urls[1] + "/health", timeout=5).status_code == 200)
        assert _pid(data / "room-2") != pids[1]
        # room 3 dies and cannot start again: given up after the allowed restarts, the others go on
        (data / "room-3" / "fail-to-start").touch()
        os.kill(pids[2], signal.SIGKILL)
        _wait(lambda: "given up" in err_path.read_text())
        r = requests.get(urls[2] + "/projects/", timeout=5)
        assert r.status_code == 503 and "was not restarted" in r.text and "try again" not in r.text
        assert all(requests.get(u + "/health", timeout=5).status_code == 200 for u in urls[:2])
    finally:
        stop_serve(proc, 30)
    log = err_path.read_text()
    assert proc.returncode == 0, log
    assert re.search(rf"Room 2 \(port {port + 1}\): Label Studio stopped with status -9: .*; restarting it", log), log
    assert f"Room 2 (port {port + 1}) is serving again" in log
    assert re.search(rf"Room 3 \(port {port + 2}\): .* given up .*the other rooms go on", log), log
    _wait(lambda: all(port_is_free("127.0.0.1", port + k) for k in range(3)), 10)
    for k in (1, 2):
        with pytest.raises(ProcessLookupError):
            os.kill(_pid(data / f"room-{k}"), 0)  # no server left behind
