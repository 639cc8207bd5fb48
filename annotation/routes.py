"""What a room's front lets through: one reading of each request, and an allow-list per role.

Label Studio (Django) routes the path percent-decoded once and reads the *last* value of a repeated query key;
a front that matched the raw path, or the first value, could be walked around (``/api/%73torages`` is
``/api/storages``; ``?id=next_task&id=delete_tasks`` runs ``delete_tasks``). So the front never matches what the
client wrote: :func:`canonical` reads the request once, the way the server will, refuses whatever could be read two
ways, and gives the target the front forwards in place of the client's. What is decided on is exactly what the
server serves.

:func:`allowed` then says whether a role may make it. Deny by default: each role has an explicit list of
``(methods, route)`` pairs, :data:`ANONYMOUS` and :data:`MEMBER`; everything else is refused. Label Studio's community
edition has one kind of member, so reviewers, authors and rechecking reviewers share :data:`MEMBER`: their screens
are the same labeling stream (tasks, annotations, drafts, the Data Manager's views) and need nothing more. The
maintainer (the organisation's owner, who runs ``push``, ``pull`` and ``serve``) may make any well-formed request:
Label Studio lets the owner do everything anyway.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import parse_qsl, quote, unquote_to_bytes, urlencode

Role = Literal["maintainer", "member", "anonymous"]

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
"""The methods Label Studio's views answer; any other is refused before routing."""

_PATH_SAFE = "/:@!$&'()*+,;=-._~"
"""Characters kept as they are when the decided path is written out again (RFC 3986 ``pchar`` and ``/``)."""


class Refused(ValueError):
    """A request the front will not forward; ``str()`` is the one line the client gets."""


@dataclass(frozen=True)
class Target:
    """A request as the server will read it: the method, the decoded and normalised path, the query pairs (each key
    once), and ``forward``, the request target sent upstream in place of the client's."""

    method: str
    path: str
    query: dict[str, str]
    forward: str


def _decoded_path(raw: str) -> str:
    if "\\" in raw or any(ord(c) < 0x21 or ord(c) == 0x7F for c in raw):
        raise Refused("a backslash, a space or a control character in the path")
    low = raw.lower()
    if "%2f" in low or "%5c" in low:
        raise Refused("an encoded slash in the path (the server and the front could read it two ways)")
    if "%25" in low:
        raise Refused("an encoded percent sign in the path (it could be decoded twice)")
    if re.search(r"%(?![0-9A-Fa-f]{2})", raw):
        raise Refused("a malformed percent escape in the path")
    try:
        path = unquote_to_bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        raise Refused("the path is not UTF-8 once decoded") from None
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in path):
        raise Refused("a control character in the decoded path")
    raw_segments, segments = raw.split("/"), path.split("/")
    for r, s in zip(raw_segments, segments):
        if s in (".", "..") and r != s:
            raise Refused("an encoded dot segment in the path")
    return path


def _normalised(path: str) -> str:
    """Dot segments resolved and repeated slashes collapsed; a trailing slash kept."""
    norm = posixpath.normpath("/" + path.lstrip("/"))
    if norm.startswith("//"):
        norm = "/" + norm.lstrip("/")
    if path.endswith("/") and norm != "/":
        norm += "/"
    return norm


def canonical(method: str, target: str) -> Target:
    """One reading of ``method target`` (the request line's target, raw), or :class:`Refused` with why."""
    if method not in METHODS:
        raise Refused(f"method {method[:20]!r} is not one Label Studio answers")
    if not target.startswith("/"):
        raise Refused("the request target is not a path")
    if "#" in target:
        raise Refused("a fragment in the request target")
    raw_path, _, raw_query = target.partition("?")
    path = _normalised(_decoded_path(raw_path))
    try:
        pairs = parse_qsl(raw_query, keep_blank_values=True, strict_parsing=False, errors="strict")
    except (UnicodeDecodeError, ValueError):
        raise Refused("the query is not UTF-8 once decoded") from None
    query: dict[str, str] = {}
    for key, value in pairs:
        if key in query:
            raise Refused(f"query key {key[:40]!r} given twice (the server reads only one of them)")
        query[key] = value
    forward = quote(path, safe=_PATH_SAFE)
    if pairs:
        forward += "?" + urlencode(pairs, quote_via=quote)
    return Target(method, path, query, forward)


def _rules(*rules: tuple[str, str]) -> tuple[tuple[frozenset[str], re.Pattern[str]], ...]:
    return tuple((frozenset(m.split()), re.compile(p)) for m, p in rules)


_READ = "GET HEAD"
ANONYMOUS = _rules(
    (_READ, r"/"),
    (_READ, r"/health/?"),
    (_READ, r"/favicon\.ico"),
    (_READ, r"/(static|react-app|label-studio-frontend|dm)/[^?]+"),
    (_READ + " POST", r"/user/login/?"),
    (_READ + " POST", r"/user/signup/?"),  # Label Studio itself requires the invite token (signup without link off)
    (_READ, r"/user/logout/?"),
    (_READ, r"/heidi-tips/?"),  # the tips the login and loading screens show
    (_READ, r"/api/version/?"),
)
"""What a browser without a session needs: the login and signup pages (and their scripts and styles)."""

MEMBER = ANONYMOUS + _rules(
    (_READ, r"/projects/?"),
    (_READ, r"/projects/\d+/?"),
    (_READ, r"/projects/\d+/data/?"),
    (_READ, r"/data/local-files/?"),  # the images; the front refuses ".." in ``d``
    (_READ, r"/api/current-user/whoami/?"),
    (_READ, r"/api/projects/?"),
    (_READ, r"/api/projects/\d+/?"),
    (_READ, r"/api/projects/\d+/next/?"),
    (_READ, r"/api/projects/\d+/label-stream-history/?"),
    (_READ, r"/api/label_links/?"),
    (_READ, r"/api/ml/?"),  # the labeling screen asks for ML backends (Mirage connects none)
    (_READ, r"/api/dm/(project|columns|views|actions)/?"),
    ("POST", r"/api/dm/views/?"),  # the Data Manager saves each user's tab (columns, order)
    (_READ + " PATCH PUT DELETE", r"/api/dm/views/\d+/?"),
    ("POST", r"/api/dm/actions/?"),  # only the actions of MEMBER_ACTIONS, see allowed()
    (_READ, r"/api/tasks/?"),
    (_READ, r"/api/tasks/\d+/?"),
    (_READ + " POST", r"/api/tasks/\d+/annotations/?"),  # a vote: recorded in the ledger
    (_READ + " PATCH DELETE", r"/api/annotations/\d+/?"),  # one's own vote only: checked against the ledger
    (_READ + " POST", r"/api/tasks/\d+/drafts/?"),
    (_READ + " POST", r"/api/annotations/\d+/drafts/?"),
    (_READ + " PATCH PUT DELETE", r"/api/drafts/\d+/?"),
    (_READ, r"/api/users/?"),  # the names shown beside annotations
)
"""What the labeling stream of a reviewer, an author or a rechecking reviewer needs (checked in real Chromium by
``tests/annotation/test_front_browser.py``). Absent on purpose: organisations (their invite token), users' changes and
tokens, storages, webhooks, ML backends, imports, exports, task changes, the project's settings."""

MEMBER_ACTIONS = frozenset({"next_task"})
"""Data Manager actions a member runs (``POST /api/dm/actions?id=next_task``): the labeling stream's next task."""

VOTE_CREATE = re.compile(r"/api/tasks/(\d+)/annotations/?")
VOTE_CHANGE = re.compile(r"/api/annotations/(\d+)/?")


def allowed(role: Role, target: Target) -> bool:
    """Whether ``role`` may make ``target`` (see :data:`ANONYMOUS`, :data:`MEMBER`)."""
    if role == "maintainer":
        return True
    rules = MEMBER if role == "member" else ANONYMOUS
    if not any(target.method in methods and pattern.fullmatch(target.path) for methods, pattern in rules):
        return False
    if target.method == "POST" and target.path.rstrip("/") == "/api/dm/actions":
        return target.query.get("id") in MEMBER_ACTIONS
    return True


def local_files_escape(query: dict[str, str]) -> bool:
    """Whether a ``/data/local-files/?d=...`` request reaches outside the files root (a ``..`` after the path is
    normalised as Label Studio does)."""
    d = query.get("d")
    if d is None:
        return False
    norm = posixpath.normpath(d).lstrip("/")
    return norm == ".." or norm.startswith("../")
