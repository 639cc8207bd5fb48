"""The vote ledger of a room: every vote its front let through, written by the front, checked by ``pull``.

In Label Studio's community edition any member can change or delete any annotation, and the server takes the
author of a new annotation from the request body (``completed_by``). So the server's word on who voted what is
not enough for "validated by three independent reviewers". The front (:mod:`annotation.front`) knows who made each
request (it asks the server whose session it is) and appends one JSON line per vote it forwarded and the server
accepted: the action (``create``, ``update``, ``delete``), the annotation and task ids, the voter's user id and
e-mail as the session says, and the SHA-256 of the result the server stored. ``pull`` then keeps a vote only when
the server's annotation matches the ledger's last word on it (:func:`check_votes`).

The ledger is a file in the room's data dir (``votes.jsonl``, beside the database it vouches for, written only by the
front of that room); ``pull`` reads it through the front's owner-only route ``/mirage/votes``, because ``pull`` may run
on another machine than ``serve``. Each append is one ``write`` of a whole line to a file opened with ``O_APPEND``,
then ``fsync``: a crash leaves at most one partial last line, which :func:`parse_ledger` skips.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping

LEDGER_FILE = "votes.jsonl"
LEDGER_ROUTE = "/mirage/votes"
"""The front's own route that serves the ledger, to the maintainer only."""


def result_hash(result: Any) -> str:
    """SHA-256 of an annotation's result in canonical JSON (sorted keys, no spaces)."""
    text = json.dumps(result if result is not None else [], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Ledger:
    """The append-only vote ledger of one room, and who holds each annotation (for the front's checks)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._owners: dict[int, int | None] = {}
        self._tasks: dict[int, int] = {}
        if self.path.exists():
            for entry in parse_ledger(self.path.read_bytes()):
                self._note(entry)

    def _note(self, entry: Mapping[str, Any]) -> None:
        ann = int(entry["annotation"])
        self._tasks[ann] = int(entry["task"])
        if entry["action"] == "create":
            self._owners[ann] = int(entry["user"])
        elif entry["action"] == "delete":
            self._owners[ann] = None

    def owner(self, annotation: int) -> int | None:
        """The user id that created ``annotation`` through the front (``None``: unknown or deleted)."""
        with self._lock:
            return self._owners.get(annotation)

    def task(self, annotation: int) -> int:
        """The task ``annotation`` was last recorded on (0: unknown)."""
        with self._lock:
            return self._tasks.get(annotation, 0)

    def append(self, action: str, annotation: int, task: int, user: int, email: str, result: Any = None) -> None:
        """Append one vote (atomic line, fsync'd)."""
        entry = {
            "action": action, "annotation": int(annotation), "task": int(task), "user": int(user), "email": email,
            "result_sha256": result_hash(result) if action != "delete" else None,
            "at": datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z"),
        }
        line = (json.dumps(entry, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)
            self._note(entry)

    def read(self) -> bytes:
        with self._lock:
            return self.path.read_bytes() if self.path.exists() else b""


def parse_ledger(data: bytes) -> list[dict[str, Any]]:
    """The entries of a ledger file; a torn last line (a crash mid-append) is skipped."""
    out = []
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and {"action", "annotation", "task", "user"} <= entry.keys():
            out.append(entry)
    return out


@dataclass(frozen=True)
class Tampered:
    """A vote the ledger does not vouch for."""

    room: int
    task: int
    annotation: int
    why: str

    def line(self) -> str:
        return f"tampered: room {self.room}, task {self.task}, annotation {self.annotation}: {self.why}"


def _user_id(value: Any) -> int | None:
    if isinstance(value, Mapping):
        value = value.get("id")
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def check_annotation(task: int, ann: Mapping[str, Any], history: list[Mapping[str, Any]]) -> str | None:
    """Why the ledger does not vouch for ``ann`` (``None``: it does). ``history``: the ledger's entries for it."""
    if not history:
        return "not in the room's vote ledger (not submitted through the room's front)"
    first, last = history[0], history[-1]
    if first["action"] != "create":
        return "the ledger has no creation of it"
    author = int(first["user"])
    if _user_id(ann.get("completed_by")) != author:
        return "completed_by is not the submitter"
    if any(int(e["user"]) != author for e in history):
        return "changed by another user than its author"
    if last["action"] == "delete":
        return "deleted in the ledger but still on the server"
    if int(last["task"]) != int(task):
        return "on another task than it was submitted to"
    if last.get("result_sha256") != result_hash(ann.get("result")):
        return "its result differs from what was submitted"
    updated_by = _user_id(ann.get("updated_by"))
    if updated_by is not None and updated_by != author:
        return "updated_by is not the submitter"
    return None


def check_votes(room: int, tasks: Iterable[Mapping[str, Any]], ledger: bytes | None) -> list[Tampered]:
    """Every annotation of an export the ledger does not vouch for (all of them when the room has no ledger)."""
    history: dict[int, list[dict[str, Any]]] = {}
    for entry in parse_ledger(ledger or b""):
        history.setdefault(int(entry["annotation"]), []).append(entry)
    out = []
    for t in tasks:
        for ann in t.get("annotations") or []:
            aid = int(ann.get("id") or 0)
            why = ("the room has no vote ledger (it is not served by `python -m annotation serve`)" if ledger is None
                   else check_annotation(int(t.get("id") or 0), ann, history.get(aid, [])))
            if why:
                out.append(Tampered(room, int(t.get("id") or 0), aid, why))
    return out
