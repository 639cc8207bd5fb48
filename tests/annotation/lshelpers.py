"""Helpers acting as reviewers (signup through the invite link, annotations through the API), and for starting
and stopping ``annotation serve`` in the tests."""

from __future__ import annotations

import signal
import subprocess
from typing import Mapping, Sequence

from annotation.serve import free_port, port_is_free
from annotation.config import COMMENT, CORRECT_OPTION, CORRECT_TEXT, ISSUES, OBJECT, VERDICT, correction_choices
from builders.items import Item

REVIEWER_PASSWORD = "reviewer-pass-1234"


def three_free_ports() -> int:
    """A port whose next two are free too: the three rooms of ``annotation serve --port P``."""
    for _ in range(50):
        port = free_port()
        if port < 65000 and all(port_is_free("127.0.0.1", port + k) for k in range(3)):
            return port
    raise RuntimeError("no three consecutive free ports")


def fronted(server_url: str, data_dir, **kw):
    """A room's front (``annotation.front.RoomFront``) before a test server, its vote ledger in the server's data
    dir as ``serve`` keeps it: ``(front, its URL)``; the caller stops it."""
    from urllib.parse import urlsplit

    from annotation.front import RoomFront
    from annotation.ledger import LEDGER_FILE

    backend = urlsplit(server_url)
    front = RoomFront("127.0.0.1", free_port(), room="Room 1", ledger=data_dir / LEDGER_FILE, **kw).start()
    front.serve_from((backend.hostname, backend.port))
    return front, f"http://127.0.0.1:{front.port}"


def stop_serve(proc: subprocess.Popen, timeout: float) -> None:
    """Ctrl-C to ``annotation serve``, as a user stops it; killed (and the timeout raised) if it hangs."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise


def csrf_cookie(session) -> str:
    """The CSRF cookie of a ``requests`` session, under Label Studio's name or a room front's (``csrftoken_PORT``)."""
    return next(c.value for c in session.cookies if c.name == "csrftoken" or c.name.startswith("csrftoken_"))


def signup(url: str, invite: str, email: str, password: str = REVIEWER_PASSWORD) -> None:
    """Sign up through the organisation's invite link, as a reviewer's browser does."""
    import requests

    s = requests.Session()
    s.get(url + invite, timeout=30).raise_for_status()
    r = s.post(
        url + invite,
        data={"email": email, "password": password, "csrfmiddlewaretoken": csrf_cookie(s)},
        headers={"Referer": url + invite},
        allow_redirects=False,
        timeout=30,
    )
    assert r.status_code in (301, 302), f"signup of {email} failed: HTTP {r.status_code}"


def result(
    item: Item,
    verdict: str,
    correct: str | None = None,
    issues: tuple[str, ...] = (),
    comment: str = "",
    raw_option: str | None = None,
) -> list[dict]:
    """An annotation result. ``correct``: an option letter / yes / no, or the text of an open answer."""
    out = [{"from_name": VERDICT, "to_name": OBJECT, "type": "choices", "value": {"choices": [verdict]}}]
    if raw_option is not None:
        out.append({"from_name": CORRECT_OPTION, "to_name": OBJECT, "type": "choices", "value": {"choices": [raw_option]}})
    elif correct is not None:
        labels = {v: k for k, v in correction_choices(item).items()}
        if labels:
            out.append(
                {"from_name": CORRECT_OPTION, "to_name": OBJECT, "type": "choices", "value": {"choices": [labels[correct]]}}
            )
        else:
            out.append({"from_name": CORRECT_TEXT, "to_name": OBJECT, "type": "textarea", "value": {"text": [correct]}})
    if issues:
        out.append({"from_name": ISSUES, "to_name": OBJECT, "type": "choices", "value": {"choices": list(issues)}})
    if comment:
        out.append({"from_name": COMMENT, "to_name": OBJECT, "type": "textarea", "value": {"text": [comment]}})
    return out


def reviewers_accept(ls_server, task_ids: Mapping[str, int], items: Sequence[Item], prefix: str, n: int = 3) -> None:
    """``n`` newly signed-up reviewers (``<prefix><k>@mirage.test``) each accept every item of ``items``
    (``task_ids``: item id -> its task in the project)."""
    from annotation.client import LabelStudioClient

    for k in range(n):
        email = f"{prefix}{k}@mirage.test"
        signup(ls_server.url, ls_server.invite, email)
        reviewer = LabelStudioClient.login(ls_server.url, email, REVIEWER_PASSWORD)
        for it in items:
            reviewer.create_annotation(task_ids[it.id], result(it, "accept"))
