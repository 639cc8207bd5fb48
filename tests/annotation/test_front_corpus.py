"""The front against a real Label Studio 1.23 server, as an attacker with an ordinary reviewer account writes requests.

One server (the session's migrated template, copied) behind a :class:`~annotation.front.RoomFront` with its vote
ledger, for the module; two reviewers signed up through the invite link, a small build pushed by the maintainer
through the front. Every request goes over a raw socket (python-requests would turn ``%73`` back into ``s``), with
the reviewer's session cookie, CSRF token and referer (so Label Studio itself would accept it: a refusal is the
front's, and the front marks its own answers), or with no session at all:

- every owner-only route in its plain, percent-encoded (each letter position of the route's name), mixed-case,
  double-slash, dot-segment, encoded-dot-segment and trailing-slash forms, and the bulk actions with a repeated
  ``id`` key (as ``id`` and ``i%64``);
- forged ``completed_by`` (JSON, a form, duplicate keys, an escaped key), another member's annotation changed or
  deleted (also through encoded paths), oversized, lying and slow bodies, unknown methods.

After each group the maintainer's API reads the server's state (project settings, tasks, users, annotations,
storages, webhooks, ML backends, the invite and the maintainer's tokens) and the test proves nothing changed. Then a
vote tampered behind the front's back is found by ``pull`` and never counted. The counts of the corpus are printed
(``-s``) and given in ``docs/annotation.md``.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter

import pytest

from tests.conftest import require_annotation_extra

require_annotation_extra()

from annotation.builddir import load_build  # noqa: E402
from annotation.client import LabelStudioClient  # noqa: E402
from annotation.config import ITEM_ID_FIELD  # noqa: E402
from annotation.front import BODY_CAP  # noqa: E402
from annotation.pull import pull  # noqa: E402
from annotation.push import push  # noqa: E402
from tests.annotation.builds import make_build  # noqa: E402
from tests.annotation.lshelpers import REVIEWER_PASSWORD, fronted, result, signup  # noqa: E402
from tests.annotation.rawhttp import Answer, send, send_chunked  # noqa: E402

pytestmark = pytest.mark.slow
ALICE, BOB = "alice@mirage.test", "bob@mirage.test"
PROJECT = "corpus review"
COUNTS: Counter[str] = Counter()


@pytest.fixture(scope="module")
def room(start_ls, files_root, tmp_path_factory):
    ls = start_ls()
    front, url = fronted(ls.url, ls.data_dir, body_timeout=2.0)
    try:
        admin = LabelStudioClient(url, ls.token)
        root = tmp_path_factory.mktemp("corpus")
        build = load_build(make_build(root, 4))
        pid = push(admin, build, PROJECT, files_root=files_root, overlap=3, progress=False).project_id
        tasks = {t["data"][ITEM_ID_FIELD]: t["id"] for t in admin.iter_tasks(pid)}
        members = {}
        for email in (ALICE, BOB):
            signup(url, ls.invite, email)
            members[email] = LabelStudioClient.login(url, email, REVIEWER_PASSWORD)
        me = admin.whoami()
        yield dict(front=front, url=url, admin=admin, ls=ls, build=build, pid=pid, tasks=tasks, members=members,
                   owner_id=int(me["id"]), org=int(me.get("active_organization") or 1))
    finally:
        front.stop()
        print(f"\ncorpus: {sum(COUNTS.values())} raw requests: " + ", ".join(f"{k} {v}" for k, v in sorted(COUNTS.items())))


def _session(client: LabelStudioClient, port: int) -> dict[str, str]:
    """A member's browser headers: session and CSRF cookies under the room's names, the CSRF token, a referer."""
    cookies = "; ".join(f"{c.name}={c.value}" for c in client.session.cookies)
    return {"Cookie": cookies, "X-CSRFToken": client.cookie("csrftoken") or "",
            "Referer": f"http://127.0.0.1:{port}/", "Content-Type": "application/json"}


def state(room) -> dict:
    """What a member must not change, read by the maintainer's API (straight from the server)."""
    admin = LabelStudioClient(room["ls"].url, room["ls"].token)
    pid = room["pid"]
    project = admin.get(f"/api/projects/{pid}/")
    keep = ("title", "label_config", "maximum_annotations", "show_skip_button", "expert_instruction",
            "min_annotations_to_start_training", "sampling", "show_annotation_history", "is_published")
    tasks = sorted(admin.iter_tasks(pid), key=lambda t: t["id"])
    annotations = []
    for t in tasks:
        for a in admin.get(f"/api/tasks/{t['id']}/annotations/"):
            annotations.append((a["id"], a["completed_by"], json.dumps(a["result"], sort_keys=True), a["updated_at"]))
    return {
        "projects": sorted(p["id"] for p in admin.projects()),
        "project": {k: project.get(k) for k in keep},
        "tasks": [(t["id"], json.dumps(t["data"], sort_keys=True)) for t in tasks],
        "annotations": annotations,
        "users": sorted((u["id"], u["email"], u.get("first_name"), u.get("last_name")) for u in admin.users()),
        "storages": admin.get("/api/storages/localfiles/", params={"project": pid}),
        "webhooks": admin.get("/api/webhooks/"),
        "ml": admin.get("/api/ml/", params={"project": pid}),
        "invite": admin.get("/api/invite")["token"],
        "token": admin.get("/api/current-user/token")["token"],
    }


def _spellings(prefix: str, word: str, rest: str) -> list[str]:
    """A route in every form a lenient front could misread: ``prefix + word + rest`` with each letter of ``word``
    percent-encoded in turn, in mixed case, with a double slash, a dot segment (plain and encoded), without or with
    a trailing slash."""
    out = [prefix + word + rest]
    out += [prefix + word[:i] + f"%{ord(c):02x}" + word[i + 1:] + rest for i, c in enumerate(word)]
    out += [prefix + word[:i] + f"%{ord(c):02X}" + word[i + 1:] + rest for i, c in enumerate(word[:1])]
    out += [prefix + word.capitalize() + rest, prefix.upper() + word + rest]
    out += [prefix.replace("/", "//") + word + rest, prefix + "x/../" + word + rest, prefix + "./" + word + rest,
            prefix + "x/%2e%2e/" + word + rest, prefix + word + "%2f" + rest.lstrip("/")]
    path, _, query = rest.partition("?")
    flipped = path.rstrip("/") if path.endswith("/") else path + "/"
    out.append(prefix + word + flipped + ("?" + query if query else ""))
    return list(dict.fromkeys(out))


def owner_routes(room) -> list[tuple[str, str, str, dict | list | None]]:
    """``(method, prefix, word, rest, body)``: Label Studio 1.23's routes only the maintainer may use."""
    pid, task, org, owner = room["pid"], min(room["tasks"].values()), room["org"], room["owner_id"]
    delete_all = {"selectedItems": {"all": True, "excluded": []}}
    return [
        ("GET", "/api/", "storages", f"/localfiles?project={pid}", None),
        ("POST", "/api/", "storages", "/localfiles/", {"project": pid, "path": "/", "title": "mine"}),
        ("GET", "/api/", "invite", "", None),
        ("PATCH", "/api/", "projects", f"/{pid}/", {"maximum_annotations": 7}),
        ("DELETE", "/api/", "projects", f"/{pid}/", None),
        ("POST", "/api/", "projects", "/", {"title": "evil"}),
        ("GET", "/api/", "webhooks", "/", None),
        ("POST", "/api/", "webhooks", "/", {"url": "http://127.0.0.1:9/", "project": pid}),
        ("POST", "/api/dm/", "actions", f"?id=delete_tasks&project={pid}", delete_all),
        ("PATCH", "/api/", "tasks", f"/{task}/", {"data": {"question": "changed"}}),
        ("DELETE", "/api/", "tasks", f"/{task}/", None),
        ("POST", "/api/projects/", str(pid), "/import", [{"data": {"question": "planted"}}]),
        ("GET", "/api/projects/", str(pid), "/export?exportType=JSON", None),
        ("GET", "/api/", "organizations", f"/{org}", None),
        ("GET", "/api/", "organizations", f"/{org}/memberships", None),
        ("POST", "/api/", "users", "/", {"email": "intruder@mirage.test", "password": "x" * 12}),
        ("PATCH", "/api/", "users", f"/{owner}/", {"first_name": "pwned"}),
        ("GET", "/api/current-user/", "token", "", None),
        ("POST", "/api/current-user/", "reset-token", "/", None),
        ("POST", "/api/", "ml", "/", {"url": "http://127.0.0.1:9/", "project": pid}),
    ]


def _refused(a: Answer, status: int = 403) -> bool:
    return a.status == status and a.by_front


def _count(kind: str, answers: list[Answer]) -> None:
    COUNTS[kind] += len(answers)


def test_no_spelling_of_an_owner_route_gets_through(room):
    port, member = room["front"].port, _session(room["members"][ALICE], room["front"].port)
    before = state(room)
    for method, prefix, word, rest, body in owner_routes(room):
        data = json.dumps(body).encode() if body is not None else b""
        answers = []
        for target in _spellings(prefix, word, rest):
            for who in (member, {}):
                a = send(port, method, target, who, data)
                assert _refused(a), (method, target, bool(who), a.status, a.body[:200])
                answers.append(a)
        _count("owner-only route spellings", answers)
        assert state(room) == before, (method, word)


def test_what_a_member_may_read_holds_no_token(room):
    port, pid = room["front"].port, room["pid"]
    member = _session(room["members"][ALICE], port)
    secrets = (state(room)["invite"], room["ls"].token)
    answers = []
    for target in ("/api/current-user/whoami", "/api/users/", "/api/projects/", f"/api/projects/{pid}/",
                   f"/api/dm/project?project={pid}", f"/api/dm/views/?project={pid}", f"/api/tasks/?project={pid}",
                   f"/api/ml?project={pid}", "/projects/", f"/projects/{pid}/data"):
        a = send(port, "GET", target, member)
        assert a.status == 200 and not a.by_front, (target, a.status)
        assert not any(secret in a.body.decode("utf-8", "replace") for secret in secrets), target
        answers.append(a)
    _count("member reads (no token in them)", answers)


def test_a_repeated_key_never_runs_a_bulk_action(room):
    port, pid = room["front"].port, room["pid"]
    member = _session(room["members"][ALICE], port)
    before = state(room)
    body = json.dumps({"selectedItems": {"all": True, "excluded": []}}).encode()
    answers = []
    for action in ("delete_tasks", "delete_tasks_annotations", "delete_annotations", "delete_tasks_predictions"):
        for query in (f"id=next_task&id={action}", f"id={action}&id=next_task", f"id=next_task&i%64={action}",
                      f"i%64={action}&id=next_task", f"id=next_task&project={pid}&id={action}"):
            a = send(port, "POST", f"/api/dm/actions?{query}&project={pid}", member, body)
            assert _refused(a), (query, a.status, a.body[:200])
            answers.append(a)
        a = send(port, "POST", f"/api/dm/actions?id={action}&project={pid}", member, body)
        assert _refused(a)
        answers.append(a)
    _count("repeated query keys", answers)
    assert state(room) == before


def test_votes_cannot_be_forged_or_taken_over(room):
    port = room["front"].port
    alice, bob = (_session(room["members"][e], port) for e in (ALICE, BOB))
    item = room["build"].items[0]
    task = room["tasks"][item.id]
    vote = result(item, "accept")
    before = state(room)
    answers = []
    forged = [
        json.dumps({"result": vote, "completed_by": room["owner_id"]}).encode(),
        json.dumps({"completed_by": room["owner_id"], "result": vote}).encode(),
        b'{"result": [], "completed\\u005fby": 1}',
        b'{"result": [], "result": []}',
        b"[]",
        b"not json",
    ]
    for body in forged:
        for target in (f"/api/tasks/{task}/annotations/", f"/api/tasks/{task}/annotations",
                       f"/api/tasks/{task}/%61nnotations/", f"/api//tasks/{task}/annotations/?project={room['pid']}"):
            a = send(port, "POST", target, alice, body)
            assert _refused(a), (target, body, a.status, a.body[:200])
            answers.append(a)
    for ctype in ("application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "text/plain"):
        a = send(port, "POST", f"/api/tasks/{task}/annotations/", {**alice, "Content-Type": ctype},
                 f"result=[]&completed_by={room['owner_id']}".encode())
        assert _refused(a)
        answers.append(a)
    assert state(room) == before
    # Alice votes; Bob, in the same room, can neither change nor delete her vote, by any spelling
    mine = send(port, "POST", f"/api/tasks/{task}/annotations/", alice, json.dumps({"result": vote}).encode())
    assert mine.status == 201 and not mine.by_front, mine.body[:300]
    aid = mine.json()["id"]
    after_vote = state(room)
    for method in ("PATCH", "PUT", "DELETE"):
        for target in _spellings("/api/", "annotations", f"/{aid}/"):
            body = json.dumps({"result": result(item, "reject")}).encode() if method != "DELETE" else b""
            a = send(port, method, target, bob, body)
            assert _refused(a), (method, target, a.status, a.body[:200])
            answers.append(a)
    assert state(room) == after_vote
    changed = send(port, "PATCH", f"/api/annotations/{aid}/", alice, json.dumps({"result": vote}).encode())
    assert changed.status == 200 and not changed.by_front  # her own vote stays hers to change
    answers.append(changed)
    _count("votes: forged, taken over", answers + [mine])


def test_bodies_and_methods_are_bounded(room):
    port = room["front"].port
    alice = _session(room["members"][ALICE], port)
    before = state(room)
    answers = []
    views = f"/api/dm/views/?project={room['pid']}"
    for length in (BODY_CAP + 1, 10**9, 99999999999999):
        for who in (alice, {}):
            a = send(port, "POST", views, who, length=length)
            assert a.status in (403, 413) and a.by_front, (length, a.status)
            answers.append(a)
    a = send(port, "POST", views, alice, b"x" * (BODY_CAP + 1))
    assert _refused(a, 413)
    a2 = send_chunked(port, "POST", views, alice, [b"x" * 65536] * (BODY_CAP // 65536 + 2))
    assert _refused(a2, 413)
    answers += [a, a2]
    started = time.monotonic()
    for claimed in (100, 10_000):  # a Content-Length the body never reaches
        a = send(port, "POST", views, alice, b"{}", length=claimed)
        assert _refused(a, 408), a.status
        answers.append(a)
    assert time.monotonic() - started < 10
    # slow bodies: each costs its own connection; the room answers the others meanwhile
    slow = [threading.Thread(target=send, args=(port, "POST", views, alice, b"{}"), kwargs={"pause": 1.0,
                             "length": 50}) for _ in range(20)]
    for t in slow:
        t.start()
    quick = send(port, "GET", "/api/current-user/whoami", alice)
    assert quick.status == 200
    for t in slow:
        t.join(15)
    COUNTS["slow bodies"] += len(slow)
    for method in ("BREW", "PROPFIND", "TRACE", "CONNECT", "MOVE", "patch"):
        for target in ("/api/projects/", f"/api/projects/{room['pid']}/", "/api/invite"):
            a = send(port, method, target, alice, b"{}")
            assert a.status in (400, 403, 405) and (a.by_front or a.status == 400), (method, target, a.status)
            answers.append(a)
    _count("bodies and methods", answers + [quick])
    assert state(room) == before


def test_a_vote_tampered_behind_the_fronts_back_is_found_by_pull_and_never_counted(room, tmp_path):
    """Votes made on the server directly (as a member could before the front, or anyone with the database): one
    credited to Alice by the maintainer, one of Bob's changed by the maintainer. Pull lists both and counts
    neither."""
    port = room["front"].port
    bob = _session(room["members"][BOB], port)
    items = room["build"].items
    task1, task2 = room["tasks"][items[1].id], room["tasks"][items[2].id]
    a = send(port, "POST", f"/api/tasks/{task2}/annotations/", bob, json.dumps({"result": result(items[2], "accept")}).encode())
    assert a.status == 201
    bobs = a.json()["id"]
    direct = LabelStudioClient(room["ls"].url, room["ls"].token)  # the server itself, not the front
    alice_id = next(u["id"] for u in direct.users() if u["email"] == ALICE)
    planted = direct.post(f"/api/tasks/{task1}/annotations/", {"result": result(items[1], "reject"),
                                                                  "completed_by": alice_id})
    direct.patch(f"/api/annotations/{bobs}/", {"result": result(items[2], "reject")})
    out = pull(room["admin"], room["build"], PROJECT)
    lines = out.quarantined
    assert (f"tampered: room 1, task {task1}, annotation {planted['id']}: not in the room's vote ledger (not submitted "
            "through the room's front)") in lines
    assert f"tampered: room 1, task {task2}, annotation {bobs}: its result differs from what was submitted" in lines
    assert len(lines) == 2, lines  # Alice's vote through the front is vouched for
    votes = out.review["items"]
    assert sum((votes[items[1].id].get("votes") or {}).values()) == 0
    assert sum((votes[items[2].id].get("votes") or {}).values()) == 0
    assert sum((votes[items[0].id].get("votes") or {}).values()) == 1
    assert out.review["quarantined"] == lines
    counted = pull(room["admin"], room["build"], PROJECT, accept_unverified=True)
    assert sum((counted.review["items"][items[1].id].get("votes") or {}).values()) == 1
