"""Charades (Sigurdsson et al., 2016): scripted indoor videos with a description and time-stamped actions.

Files, as the release ships them:

* ``Charades_v1_train.csv`` / ``Charades_v1_test.csv``: columns ``id, subject, scene, quality, relevance,
  verified, script, objects, descriptions, actions, length``; ``actions`` is ``c092 11.90 21.20;c147 0.00 12.60``
  (class code, start and end in seconds), possibly empty; ``length`` the video's length in seconds (action times
  may run past it);
* ``Charades_v1_classes.txt``: the action dictionary, one ``c000 Holding some clothes`` per line (157 classes);
* videos ``<videos_dir>/<id>.mp4`` (``Charades_v1_480/``). A missing video is not an error: ``file`` is empty
  and the builder skips the video with the reason.

Every problem - a missing column, an action that is not ``code start end``, an unknown class code, ``end <
start``, a length that is not a positive number, a repeated id - is a :class:`SourceError` naming the file, the
row (``line N (id=...)``) and the problem.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from .errors import SourceError
from .jsonio import read_text, require_file
from .records import VideoRecord
from .video_backends import video_files_by_stem

SOURCE = "charades"
COLUMNS: tuple[str, ...] = ("id", "subject", "scene", "quality", "relevance", "verified", "script", "objects",
                            "descriptions", "actions", "length")
LICENSE = "Charades: non-commercial research use (https://prior.allenai.org/projects/charades)"
_CLASS_LINE = re.compile(r"(c\d{3})\s+(\S.*)")


def read_charades_classes(path: str | Path) -> dict[str, str]:
    """Class code -> action text (``{"c000": "Holding some clothes"}``), in file order."""
    file = require_file(path, "Charades classes file")
    classes: dict[str, str] = {}
    for number, line in enumerate(read_text(file).splitlines(), 1):
        if not line.strip():
            continue
        match = _CLASS_LINE.fullmatch(line.strip())
        if match is None:
            raise SourceError(file, f"line {number}", f"expected 'c<3 digits> <action>', got {line.strip()!r}")
        if match.group(1) in classes:
            raise SourceError(file, f"line {number}", f"class {match.group(1)} is defined twice")
        classes[match.group(1)] = match.group(2).strip()
    if not classes:
        raise SourceError(file, "", "no action classes")
    return classes


def read_charades(csv_path: str | Path, classes: dict[str, str], videos_dir: str | Path) -> list[VideoRecord]:
    """One record per row, in file order; ``meta``: ``description``, ``script``, ``length``, ``actions``
    (``{"code", "start", "end"}`` in file order), ``scene``."""
    file = require_file(csv_path, "Charades CSV")
    found = video_files_by_stem(videos_dir)
    reader = csv.DictReader(read_text(file).splitlines())
    header = [name.strip() for name in reader.fieldnames or []]
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise SourceError(file, "header", f"missing column(s): {', '.join(missing)}")
    reader.fieldnames = header
    records, seen = [], set()
    for row in reader:
        where = f"line {reader.line_num} (id={row.get('id') or ''})"
        if None in row or any(row[c] is None for c in COLUMNS):
            raise SourceError(file, where, f"expected {len(header)} fields, got another number")
        video_id = row["id"].strip()
        if not video_id:
            raise SourceError(file, where, "empty 'id'")
        if video_id in seen:
            raise SourceError(file, where, f"id {video_id} appears twice")
        seen.add(video_id)
        try:
            length = float(row["length"])
        except ValueError:
            raise SourceError(file, where, f"length {row['length']!r} is not a number") from None
        if not length > 0:
            raise SourceError(file, where, f"length {length:g} is not positive")
        actions = [_action(part, classes, file, where) for part in row["actions"].split(";") if part.strip()]
        video = found.get(video_id)
        records.append(VideoRecord(
            id=video_id, source=SOURCE, file=str(video) if video else "", fps=None,
            meta={"description": row["descriptions"].strip(), "script": row["script"].strip(), "length": length,
                  "actions": actions, "scene": row["scene"].strip()}))
    if not records:
        raise SourceError(file, "", "no video rows")
    return records


def _action(text: str, classes: dict[str, str], file: Path, where: str) -> dict[str, object]:
    parts = text.split()
    if len(parts) != 3:
        raise SourceError(file, where, f"action {text.strip()!r} is not 'code start end'")
    code = parts[0]
    if code not in classes:
        raise SourceError(file, where, f"action class {code} is not in the classes file")
    try:
        start, end = float(parts[1]), float(parts[2])
    except ValueError:
        raise SourceError(file, where, f"action {text.strip()!r}: start and end must be numbers") from None
    if start < 0 or end < start:
        raise SourceError(file, where, f"action {text.strip()!r}: not a time span (0 <= start <= end)")
    return {"code": code, "start": start, "end": end}
