"""Pull the annotations of a project, keep the raw export, resolve, and write the review beside the build.

Written into the build dir:

- ``reviews/export-<time>-<sha>.json``: the export exactly as the server sent it. ``<time>`` is the newest change
  in it (UTC) and ``<sha>`` the start of its SHA-256, so a file is never overwritten: an unchanged project gives
  back the same file, a changed one a new file.
- ``review.json``: decisions and statistics (see :func:`annotation.resolve.resolve`), with ``pulled_at`` the
  newest change in the exported data rather than the wall clock, so pulling an unchanged project twice gives a
  byte-identical file.
- ``reviewed.jsonl``: the kept and fixed items, canonical JSON, sorted by id.

Read from it: ``adjudications.json``, the maintainer's decisions for items without a majority (optional).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping

from annotation.builddir import Build, write_atomic
from annotation.client import LabelStudioClient
from annotation.errors import AnnotationError
from annotation.resolve import resolve, reviewed_items

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


def save_export(build_dir: Path, raw: bytes, when: datetime) -> tuple[Path, bool]:
    """Keep the raw export under ``reviews/``; never overwrite. Returns ``(path, newly written)``."""
    digest = hashlib.sha256(raw).hexdigest()
    stamp = when.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    path = build_dir / REVIEWS_DIR / f"export-{stamp}-{digest[:12]}.json"
    if path.exists():
        if hashlib.sha256(path.read_bytes()).hexdigest() == digest:
            return path, False
        raise AnnotationError(f"{path} exists with other content; move it away")  # a 2**-48 event, or tampering
    write_atomic(path, raw)
    return path, True


def load_adjudications(build_dir: Path) -> dict[str, Any]:
    """The maintainer's decisions for items without a majority (``adjudications.json``; empty when absent)."""
    path = build_dir / ADJUDICATIONS_FILE
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AnnotationError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise AnnotationError(f"{path}: expected an object {{item_id: {{status, answer, note}}}}")
    return data


def pull(
    client: LabelStudioClient,
    build: Build,
    project: str,
    *,
    overlap: int = 3,
) -> PullResult:
    """Export the project, resolve every item of the build, write ``review.json`` and ``reviewed.jsonl``."""
    proj = client.find_project(project)
    if proj is None:
        raise AnnotationError(f"no project {project!r} on {client.url}: push the build first")
    pid = int(proj["id"])
    raw = client.export_raw(pid)
    try:
        tasks = json.loads(raw)
    except ValueError:
        raise AnnotationError(f"the export of project {project!r} is not valid JSON") from None
    if not isinstance(tasks, list):
        raise AnnotationError(f"the export of project {project!r} is not a list of tasks")
    adjudications = load_adjudications(build.path)
    users = {int(u["id"]): u.get("email") or f"user {u['id']}" for u in client.users()}

    when = snapshot_time(tasks) or datetime.now(timezone.utc)
    export_path, is_new = save_export(build.path, raw, when)
    decided = resolve(build.items, tasks, users, overlap, adjudications)
    review = {
        "project": project,
        "project_id": pid,
        "label_studio_url": client.url,
        "build": build.label,
        "pulled_at": iso_utc(when),
        "raw_export": export_path.relative_to(build.path).as_posix(),
        "raw_export_sha256": hashlib.sha256(raw).hexdigest(),
        **decided,
    }
    review_path = build.path / REVIEW_FILE
    write_atomic(review_path, (json.dumps(review, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode())
    reviewed = reviewed_items(build.items, review)
    reviewed_path = build.path / REVIEWED_FILE
    write_atomic(reviewed_path, "".join(it.to_json() + "\n" for it in reviewed).encode())
    return PullResult(review, review_path, reviewed_path, export_path, is_new)
