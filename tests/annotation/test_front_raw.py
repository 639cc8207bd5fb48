"""The front read as an attacker reads it: raw requests against a front before the stand-in server (seconds).

What reaches the stand-in is recorded (``fake_label_studio.Handler.seen``), so each test shows what the server was
asked, not only what the client was answered. The same requests against real Label Studio servers, with their state
read back, are in ``test_front_corpus.py``.
"""

from __future__ import annotations

import html
import json
import threading
import time
from http.server import ThreadingHTTPServer

import pytest

from tests.conftest import have, require

require(have("aiohttp"), "aiohttp (the annotation extra)", "pip install -e '.[annotation]'")

from annotation.front import ANONYMOUS_CAP, BODY_CAP, RoomFront, cookie_name  # noqa: E402
from annotation.ledger import Ledger, check_votes, parse_ledger, result_hash  # noqa: E402
from annotation.routes import Refused, allowed, canonical  # noqa: E402
from annotation.serve import free_port  # noqa: E402
from tests.annotation import fake_label_studio  # noqa: E402
from tests.annotation.rawhttp import send, send_chunked  # noqa: E402

Seen = fake_label_studio.Handler.seen


@pytest.fixture
def front(tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), fake_label_studio.Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    f = RoomFront("127.0.0.1", free_port(), room="Room 1", ledger=tmp_path / "votes.jsonl", body_timeout=1.0).start()
    f.serve_from(("127.0.0.1", server.server_address[1]))
    Seen.clear()
    yield f
    f.stop()
    server.shutdown()
    server.server_close()


def _as(front: RoomFront, who: str) -> dict[str, str]:
    return {"Cookie": f"{cookie_name('sessionid', front.port)}={who}"}


@pytest.mark.parametrize("target", [
    "/api/%73torages/localfiles?project=1", "/api/%69nvite", "/api/webhook%73/", "/API/storages/",
    "/api//storages/", "/api/projects/../storages/", "/api/./invite", "/api/%2e%2e/api/invite", "/api%2Fstorages",
    "/api/projects/1/%2e%2e/", "/api/storages%25", "/api/dm/actions?id=next_task&id=delete_tasks&project=1",
    "/api/dm/actions?id=next_task&i%64=delete_tasks&project=1", "/api/organizations/1", "/api/users/",
    "/api/current-user/token", "http://127.0.0.1/api/storages/", "/api/tasks/1/annotations/\\..\\",
])
def test_a_member_cannot_reach_an_owner_route_by_any_spelling(front, target):
    a = send(front.port, "POST", target, _as(front, "member"), b"{}")
    assert a.status == 403 and a.by_front and "Refused by Room 1's front" in html.unescape(a.body.decode()), a
    assert Seen == []  # the server was never asked


def test_the_front_forwards_its_own_reading_of_the_request():
    t = canonical("GET", "/api//projects/./%33/?page=1&x=%20y")
    assert t.path == "/api/projects/3/" and t.forward == "/api/projects/3/?page=1&x=%20y"
    for method, target in (("BREW", "/"), ("GET", "/a%2fb"), ("GET", "/%2E%2E/x"), ("GET", "/a?k=1&k=2"),
                           ("GET", "/a%zz"), ("GET", "/a%ff"), ("GET", "/a%00")):
        with pytest.raises(Refused):
            canonical(method, target)
    assert allowed("member", canonical("POST", "/api/dm/actions?id=next_task&project=1"))
    assert not allowed("member", canonical("POST", "/api/dm/actions?id=delete_tasks&project=1"))
    assert not allowed("anonymous", canonical("GET", "/api/projects/"))
    assert allowed("maintainer", canonical("PATCH", "/api/projects/1/"))


def test_encoded_allowed_routes_reach_the_server_decoded(front):
    a = send(front.port, "GET", "/api/projects/%31/", _as(front, "member"))
    assert a.status == 200 and Seen == [("GET", "/api/projects/1/")]


def test_bodies_are_bounded(front):
    member = _as(front, "member")
    started = time.monotonic()
    a = send(front.port, "POST", "/api/dm/views/", member, length=99999999999999)
    assert a.status == 413 and a.by_front and time.monotonic() - started < 5
    a = send(front.port, "POST", "/api/dm/views/", member, b"x" * (BODY_CAP + 1))
    assert a.status == 413
    a = send_chunked(front.port, "POST", "/api/dm/views/", member, [b"x" * 65536] * (BODY_CAP // 65536 + 2))
    assert a.status == 413
    assert send(front.port, "POST", "/user/login/", {}, b"x" * (ANONYMOUS_CAP + 1)).status == 413  # no session
    a = send(front.port, "POST", "/api/dm/views/", member, b"{}", length=1000)  # a body that never comes
    assert a.status == 408 and a.by_front
    a = send(front.port, "POST", "/api/dm/views/", {**member, "Content-Type": "application/json"}, b'{"a": 1}')
    assert a.status == 200 and json.loads(a.json()["body"]) == {"a": 1}
    assert Seen == [("POST", "/api/dm/views/")]


def test_slow_clients_cost_only_their_own_connection(front):
    threads = [threading.Thread(target=send, args=(front.port, "POST", "/api/dm/views/", _as(front, "member"), b"{}"),
                                kwargs={"length": 10, "pause": 0}) for _ in range(50)]
    for t in threads:
        t.start()
    started = time.monotonic()
    a = send(front.port, "GET", "/api/projects/", _as(front, "member"))
    assert a.status == 200 and time.monotonic() - started < 0.5
    for t in threads:
        t.join(10)


def test_votes_are_recorded_and_nobody_changes_anothers(front, tmp_path):
    member, other = {**_as(front, "member"), "Content-Type": "application/json"}, _as(front, "other")
    other["Content-Type"] = "application/json"
    result = [{"from_name": "verdict", "value": {"choices": ["accept"]}}]
    forged = send(front.port, "POST", "/api/tasks/7/annotations/", member,
                  json.dumps({"result": result, "completed_by": 1}).encode())
    assert forged.status == 403 and "completed_by" in forged.json()["detail"] and Seen == []
    for body in (b'{"result": [], "result": []}', b"completed_by=1", b"[1]"):
        assert send(front.port, "POST", "/api/tasks/7/annotations/", member, body).status == 403
    a = send(front.port, "POST", "/api/tasks/7/annotations/", member, json.dumps({"result": result}).encode())
    assert a.status == 201 and a.json()["id"] == 41
    for method in ("PATCH", "DELETE"):  # another member of the room
        b = send(front.port, method, "/api/annotations/41/", other, b'{"result": []}' if method == "PATCH" else b"")
        assert b.status == 403 and "another reviewer's vote" in b.json()["detail"]
    assert send(front.port, "PATCH", "/api/annotations/41/", member, json.dumps({"result": result}).encode()).status == 200
    entries = parse_ledger((tmp_path / "votes.jsonl").read_bytes())
    assert [(e["action"], e["annotation"], e["task"], e["user"]) for e in entries] == [
        ("create", 41, 7, 2), ("update", 41, 7, 2)]
    assert entries[0]["result_sha256"] == result_hash(result) and Ledger(tmp_path / "votes.jsonl").owner(41) == 2
    # the ledger is the maintainer's to read
    assert send(front.port, "GET", "/mirage/votes", member).status == 403
    owner = send(front.port, "GET", "/mirage/votes", {"Authorization": "Token owner-token"})
    assert owner.status == 200 and parse_ledger(owner.body) == entries


def test_pull_finds_every_kind_of_tampering(tmp_path):
    """The checker, on an export, against a ledger: one vouched vote and one planted wrong of each kind."""
    ledger = Ledger(tmp_path / "votes.jsonl")
    ok = [{"value": {"choices": ["accept"]}}]
    for ann, task, user in ((1, 10, 5), (2, 10, 6), (3, 11, 5), (4, 11, 6), (5, 12, 5)):
        ledger.append("create", ann, task, user, f"u{user}@x", ok)
    ledger.append("update", 4, 11, 5, "u5@x", ok)  # changed by another member
    ledger.append("delete", 5, 12, 5, "u5@x")
    tasks = [
        {"id": 10, "annotations": [{"id": 1, "completed_by": 5, "result": ok},  # vouched
                                   {"id": 2, "completed_by": 5, "result": ok}]},  # credited to another
        {"id": 11, "annotations": [{"id": 3, "completed_by": 5, "result": [], "updated_by": 5},  # result changed
                                   {"id": 4, "completed_by": 6, "result": ok}]},
        {"id": 12, "annotations": [{"id": 5, "completed_by": 5, "result": ok},  # deleted, yet there
                                   {"id": 6, "completed_by": 5, "result": ok}]},  # never through the front
        {"id": 13, "annotations": [{"id": 1, "completed_by": 5, "result": ok}]},  # moved to another task
    ]
    found = {t.annotation: t.why for t in check_votes(1, tasks, ledger.read()) if t.task != 13}
    assert found == {2: "completed_by is not the submitter", 3: "its result differs from what was submitted",
                     4: "changed by another user than its author", 5: "deleted in the ledger but still on the server",
                     6: "not in the room's vote ledger (not submitted through the room's front)"}
    lines = [t.line() for t in check_votes(1, tasks, ledger.read())]
    assert "tampered: room 1, task 10, annotation 2: completed_by is not the submitter" in lines
    assert "tampered: room 1, task 13, annotation 1: on another task than it was submitted to" in lines
    assert len(check_votes(2, tasks, None)) == 7  # no ledger: nothing is vouched for
