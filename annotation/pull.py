"""Pull the annotations of a project, keep the raw export, resolve, and write the review beside the build.

Written into the build dir:

- ``reviews/export-<time>-<sha>.json``: the export exactly as the server sent it (one per room). ``<time>`` is the newest change
  in it (UTC) and ``<sha>`` the start of its SHA-256, so a file is never overwritten: an unchanged project gives
  back the same file, a changed one a new file.
- ``review.json``: decisions and statistics (see :func:`annotation.resolve.resolve`), with ``pulled_at`` the
  newest change in the exported data rather than the wall clock, so pulling an unchanged project twice gives a
  byte-identical file.
- ``reviewed.jsonl``: the kept and fixed items, canonical JSON, sorted by id.

- ``recheck.json`` (``pull --recheck``, :mod:`annotation.recheck`): the re-reviews of items a model health check
  suspected; ``reviewed.jsonl`` is always written with them applied on top of ``review.json``.

Read from it: ``adjudications.json``, the maintainer's decisions for items without a majority (optional).

Every vote is checked against its room's vote ledger (:mod:`annotation.ledger`, served by the room's front): a vote
the ledger does not vouch for (credited to someone else, changed or deleted by another user, never submitted through
the front) is quarantined: left out of the decisions, listed in ``review.json`` under ``quarantined`` and in
:attr:`PullResult.quarantined`, one line each. ``accept_unverified=True`` (``pull --accept-unverified``) counts them
anyway, listed under ``accepted_unverified``: the maintainer's explicit word, for example after editing a vote.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from annotation.builddir import Build, read_json, write_atomic
from annotation.client import LabelStudioClient
from annotation.errors import AnnotationError
from annotation.ledger import Tampered, check_votes
from annotation.push import settings_changes
from annotation.resolve import ROOM_FIELD, resolve, reviewed_items, reviewer_name, room_capacity
from builders.review import RECHECK_FILE

REVIEW_FILE = "review.json"
REVIEWED_FILE = "reviewed.jsonl"
REVIEWS_DIR = "reviews"
ADJUDICATIONS_FILE = "adjudications.json"


@dataclass
class PullResult:
    review: dict[str, Any]
    review_path: Path
    reviewed_path: Path
    export_path: Path
    export_is_new: bool
    quarantined: list[str] = field(default_factory=list)
    """One line per vote its room's ledger does not vouch for (left out unless accepted)."""


def _parse_time(value: Any) -> datetime | None:
    if not value or not isinstance(value, str):
        return None
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return t.astimezone(timezone.utc)


def snapshot_time(tasks: Iterable[Mapping[str, Any]]) -> datetime | None:
    """The newest creation/update time of any task or annotation in an export."""
    times = []
    for t in tasks:
        for key in ("created_at", "updated_at"):
            times.append(_parse_time(t.get(key)))
        for a in t.get("annotations") or []:
            for key in ("created_at", "updated_at"):
                times.append(_parse_time(a.get(key)))
    times = [t for t in times if t is not None]
    return max(times) if times else None


def iso_utc(t: datetime) -> str:
    return t.astimezone(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


def write_shared(path: Path, data: bytes) -> None:
    """Write atomically with the mode an ordinary file gets (``0666 & ~umask``, like the build's items), not the
    ``0600`` of the temporary file: the review files are read by the release step and by the team."""
    write_atomic(path, data)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


def save_export(build_dir: Path, raw: bytes, when: datetime) -> tuple[Path, bool]:
    """Keep the raw export under ``reviews/``; never overwrite. Returns ``(path, newly written)``."""
    digest = hashlib.sha256(raw).hexdigest()
    stamp = when.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    path = build_dir / REVIEWS_DIR / f"export-{stamp}-{digest[:12]}.json"
    if path.exists():
        if hashlib.sha256(path.read_bytes()).hexdigest() == digest:
            return path, False
        raise AnnotationError(f"{path} exists with other content; move it away")  # a 2**-48 event, or tampering
    write_shared(path, raw)
    return path, True


def load_adjudications(build_dir: Path) -> dict[str, Any]:
    """The maintainer's decisions for items without a majority (``adjudications.json``; empty when absent)."""
    path = build_dir / ADJUDICATIONS_FILE
    if not path.exists():
        return {}
    data = read_json(path)
    if not isinstance(data, dict):
        raise AnnotationError(f"{path}: expected an object {{item_id: {{status, answer, note}}}}")
    return data


def _export_room(
    client: LabelStudioClient, project: str, room: int, build: Build, per_room: int, accept_unverified: bool
) -> tuple[int, bytes, list[dict], str, list[Tampered]]:
    """``(project id, raw export, tasks, label config, votes the ledger does not vouch for)`` of one room; every
    task tagged with its room and every annotation's ``completed_by`` resolved to the reviewer's e-mail (user ids are
    only unique within one server). The votes the room's ledger does not vouch for are taken out of the tasks unless
    ``accept_unverified``.

    A project whose label config or review settings differ from what push sets is refused: any member can change
    them in the community edition (a verdict choice added, the overlap raised), and votes made under other rules
    cannot be merged with the rest."""
    proj = client.find_project(project)
    if proj is None:
        where = client.url
        raise AnnotationError(f"no project {project!r} on {where}: push the build first")
    changed = settings_changes(proj, build, per_room)
    if changed:
        raise AnnotationError(
            f"project {project!r} on {client.url} was changed since push ({', '.join(sorted(changed))} differ from "
            "what push sets; anyone in the room could have done it): check its annotations, then push the build "
            "again to restore them and pull"
        )
    pid = int(proj["id"])
    raw = client.export_raw(pid)
    try:
        tasks = json.loads(raw)
    except ValueError:
        raise AnnotationError(f"the export of project {project!r} on {client.url} is not valid JSON") from None
    if not isinstance(tasks, list):
        raise AnnotationError(f"the export of project {project!r} on {client.url} is not a list of tasks")
    tampered = check_votes(room, tasks, client.vote_ledger())
    if not accept_unverified:
        out = {(t.task, t.annotation) for t in tampered}
        for t in tasks:
            t["annotations"] = [a for a in t.get("annotations") or [] if (int(t.get("id") or 0), int(a.get("id") or 0))
                                not in out]
    users = {int(u["id"]): u.get("email") or f"user {u['id']}" for u in client.users()}
    for t in tasks:
        t[ROOM_FIELD] = room
        for a in t.get("annotations") or []:
            a["completed_by"] = {"email": reviewer_name(a.get("completed_by"), users)}
    return pid, raw, tasks, str(proj.get("label_config") or ""), tampered


@dataclass
class _Exported:
    """What every room of a project gave: the resolved decisions, each room's saved export, the newest change."""

    decided: dict[str, Any]
    saved: list[tuple[int, str, int, bytes, Path, bool]]
    when: datetime
    tampered: list[Tampered]


def _export_and_resolve(
    clients: LabelStudioClient | Sequence[LabelStudioClient], build: Build, project: str, overlap: int,
    adjudications: Mapping[str, Any], accept_unverified: bool = False,
) -> _Exported:
    """Export the project from every room, keep each raw export under ``reviews/``, resolve the build's items."""
    rooms = [clients] if isinstance(clients, LabelStudioClient) else list(clients)
    if not rooms:
        raise AnnotationError("no Label Studio server to pull from")
    tasks: list[dict] = []
    exports = []
    per_room = room_capacity(overlap, len(rooms))
    config = ""
    tampered: list[Tampered] = []
    for k, client in enumerate(rooms, 1):
        pid, raw, room_tasks, config, room_tampered = _export_room(client, project, k, build, per_room,
                                                                   accept_unverified)
        tasks.extend(room_tasks)
        tampered.extend(room_tampered)
        exports.append((k, client.url, pid, raw, snapshot_time(room_tasks)))

    times = [e[4] for e in exports if e[4] is not None]
    when = max(times) if times else datetime.now(timezone.utc)
    saved = []
    for k, url, pid, raw, room_when in exports:
        path, is_new = save_export(build.path, raw, room_when or when)
        saved.append((k, url, pid, raw, path, is_new))
    decided = resolve(build.items, tasks, {}, overlap, adjudications, rooms=len(rooms), label_config=config or None)
    lines = [t.line() for t in tampered]
    decided["accepted_unverified" if accept_unverified else "quarantined"] = lines
    return _Exported(decided, saved, when, tampered)


def _rooms_record(build: Build, saved: Sequence[tuple[int, str, int, bytes, Path, bool]]) -> list[dict[str, Any]]:
    return [
        {
            "room": k,
            "label_studio_url": url,
            "project_id": pid,
            "raw_export": path.relative_to(build.path).as_posix(),
            "raw_export_sha256": hashlib.sha256(raw).hexdigest(),
        }
        for k, url, pid, raw, path, _ in saved
    ]


def write_reviewed(build: Build, review: Mapping[str, Any]) -> Path:
    """``reviewed.jsonl`` from ``review.json`` with every re-review round of the build applied on top."""
    from annotation.recheck import merged_review

    built = {it.id: it.answer for it in build.items}
    reviewed = reviewed_items(build.items, merged_review(build.path, review, built))
    path = build.path / REVIEWED_FILE
    write_shared(path, "".join(it.to_json() + "\n" for it in reviewed).encode())
    return path


def pull(
    clients: LabelStudioClient | Sequence[LabelStudioClient],
    build: Build,
    project: str,
    *,
    overlap: int = 3,
    accept_unverified: bool = False,
) -> PullResult:
    """Export the project from every room, resolve every item of the build, write ``review.json`` and
    ``reviewed.jsonl``. Votes the rooms' ledgers do not vouch for are left out unless ``accept_unverified``.

    ``clients``: one client (one server, every reviewer in one project) or one per room (one server per reviewer
    slot, the independent setup of ``serve --rooms``); the rooms' exports are merged here.
    """
    got = _export_and_resolve(clients, build, project, overlap, load_adjudications(build.path), accept_unverified)
    _, url1, pid1, raw1, path1, new1 = got.saved[0]
    review = {
        "project": project,
        "project_id": pid1,
        "label_studio_url": url1,
        "build": build.label,
        "pulled_at": iso_utc(got.when),
        "raw_export": path1.relative_to(build.path).as_posix(),
        "raw_export_sha256": hashlib.sha256(raw1).hexdigest(),
        "rooms": _rooms_record(build, got.saved),
        **got.decided,
    }
    review_path = build.path / REVIEW_FILE
    write_shared(review_path, (json.dumps(review, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode())
    reviewed_path = write_reviewed(build, review)
    return PullResult(review, review_path, reviewed_path, path1, any(s[5] for s in got.saved),
                      [t.line() for t in got.tampered])


def pull_recheck(
    clients: LabelStudioClient | Sequence[LabelStudioClient],
    build: Build,
    project: str,
    health: str | os.PathLike[str],
    *,
    overlap: int = 3,
    accept_unverified: bool = False,
) -> PullResult:
    """Resolve a re-review project (``push --recheck``) over the health report's suspects, record the round in
    ``recheck.json`` and rewrite ``reviewed.jsonl`` with it (:mod:`annotation.recheck`); ``review.json`` is
    left as the first review wrote it. ``PullResult.review`` is the round."""
    from annotation.recheck import read_health, read_rechecks, recheck_build, recheck_round

    suspects, digest = read_health(health)
    sub = recheck_build(build, suspects, project)
    got = _export_and_resolve(clients, sub, project, overlap, {}, accept_unverified)
    rnd = recheck_round(project, got.decided, sub, suspects, (Path(health).name, digest), iso_utc(got.when))
    rnd["rooms"] = _rooms_record(build, got.saved)
    rnd.update({k: got.decided[k] for k in ("quarantined", "accepted_unverified") if k in got.decided})
    rechecks = read_rechecks(build.path)
    rechecks = {"rounds": {**(rechecks.get("rounds") or {}), project: rnd}}
    path = build.path / RECHECK_FILE
    write_shared(path, (json.dumps(rechecks, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode())
    review = json.loads((build.path / REVIEW_FILE).read_text(encoding="utf-8"))
    reviewed_path = write_reviewed(build, review)
    return PullResult(rnd, path, reviewed_path, got.saved[0][4], any(s[5] for s in got.saved),
                      [t.line() for t in got.tampered])
