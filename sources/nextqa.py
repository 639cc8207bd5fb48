"""NExT-QA (Xiao et al., 2021): the videos Mementos' daily-life sequences come from, with their QA pairs.

Files, as the NExT-QA release ships them:

* ``train.csv`` / ``val.csv`` / ``test.csv`` (multiple-choice): one row per question with the columns
  ``video, frame_count, width, height, question, answer, qid, type, a0, a1, a2, a3, a4``; ``answer`` is the index
  (0..4) of the right option ``a<answer>``; ``type`` is the question type (``CW``, ``TN``, ``DC``, ...);
* ``map_vid_vidorID.json``: video id -> path of the video relative to the videos folder, without extension
  (``{"4010069381": "1022/4010069381"}``); the video is ``<videos_dir>/<path>.mp4``.

:func:`read_nextqa` returns one :class:`VideoRecord` per video with its questions grouped, in file order, in
``meta["qa"]`` - Mementos merges each video's QA pairs into one description, so the builder wants them together.
The CSV's ``frame_count`` is kept in the record (the daily-life policy can pre-select on it without opening a
video); :func:`sources.video.sample_video` probes the file itself before sampling.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from .errors import SourceError
from .jsonio import load_json, read_text, require_file
from .records import VideoRecord

SOURCE = "nextqa"
MAP_FILE = "map_vid_vidorID.json"
VIDEO_SUFFIX = ".mp4"
N_OPTIONS = 5
OPTION_COLUMNS: tuple[str, ...] = tuple(f"a{i}" for i in range(N_OPTIONS))
COLUMNS: tuple[str, ...] = ("video", "frame_count", "width", "height", "question", "answer", "qid", "type",
                            *OPTION_COLUMNS)
LICENSE = "NExT-QA: see https://github.com/doc-doc/NExT-QA (videos from VidOR / YFCC100M, research use)"


def read_nextqa(csv_path: str | Path, videos_dir: str | Path, map_json: str | Path | None = None) -> list[VideoRecord]:
    """Records of the videos a NExT-QA CSV asks about, in order of first appearance.

    ``map_json`` defaults to ``map_vid_vidorID.json`` beside the CSV or inside ``videos_dir``; without one,
    videos are looked up as ``<videos_dir>/<video>.mp4``. Every problem - a missing column, an answer that is not
    an integer in 0..4, a size that is not a positive integer, rows of one video that disagree on its size, a video
    the map does not know or whose file is missing - is a :class:`SourceError` naming the file, the row
    (``line N (qid=...)``) and the problem.
    """
    path = require_file(csv_path, "NExT-QA CSV")
    videos = Path(videos_dir)
    if not videos.is_dir():
        raise SourceError(videos, "", "videos folder not found")
    mapping, map_file = _load_map(path, videos, map_json)
    records: dict[str, dict[str, Any]] = {}
    for line, row in _rows(path):
        where = f"line {line} (qid={row.get('qid', '')!s})"
        video_id = (row["video"] or "").strip()
        if not video_id:
            raise SourceError(path, where, "empty 'video'")
        size = {key: _positive_int(row[key], path, where, key) for key in ("frame_count", "width", "height")}
        qa = _question(row, path, where)
        entry = records.get(video_id)
        if entry is None:
            file = _video_file(video_id, videos, mapping, map_file, path, where)
            entry = records[video_id] = {"file": file, "size": size, "qa": []}
        elif entry["size"] != size:
            raise SourceError(path, where, f"video {video_id} has frame_count/width/height {_fmt(size)} here but "
                                           f"{_fmt(entry['size'])} on an earlier row")
        entry["qa"].append(qa)
    if not records:
        raise SourceError(path, "", "no question rows")
    return [
        VideoRecord(id=video_id, source=SOURCE, file=entry["file"], frame_count=entry["size"]["frame_count"],
                    fps=None, width=entry["size"]["width"], height=entry["size"]["height"],
                    meta={"qa": entry["qa"], "split": path.stem})
        for video_id, entry in records.items()
    ]


def _rows(path: Path) -> Any:
    """``(line number, row)`` for every data row; the header must hold every column of :data:`COLUMNS`."""
    reader = csv.DictReader(read_text(path).splitlines())
    header = [name.strip() for name in reader.fieldnames or []]
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise SourceError(path, "header", f"missing column(s): {', '.join(missing)} (expected: {', '.join(COLUMNS)})")
    reader.fieldnames = header
    for row in reader:
        if None in row or any(row[c] is None for c in COLUMNS):
            raise SourceError(path, f"line {reader.line_num}", f"expected {len(header)} fields, got another number")
        yield reader.line_num, row


def _question(row: dict[str, str], path: Path, where: str) -> dict[str, Any]:
    options = [row[c].strip() for c in OPTION_COLUMNS]
    raw = row["answer"].strip()
    try:
        answer = int(raw)
    except ValueError:
        raise SourceError(path, where, f"answer {raw!r} is not an integer option index 0..{N_OPTIONS - 1}") from None
    if not 0 <= answer < N_OPTIONS:
        raise SourceError(path, where, f"answer {answer} is outside the option indices 0..{N_OPTIONS - 1}")
    question = row["question"].strip()
    if not question:
        raise SourceError(path, where, "empty 'question'")
    return {"qid": row["qid"].strip(), "type": row["type"].strip(), "question": question, "options": options,
            "answer": answer, "answer_text": options[answer]}


def _positive_int(value: str, path: Path, where: str, key: str) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        raise SourceError(path, where, f"{key} {value!r} is not an integer") from None
    if number < 1:
        raise SourceError(path, where, f"{key} {number} is not positive")
    return number


def _fmt(size: dict[str, int]) -> str:
    return f"{size['frame_count']}/{size['width']}/{size['height']}"


def _load_map(csv_path: Path, videos: Path, map_json: str | Path | None) -> tuple[dict[str, str] | None, Path | None]:
    if map_json is None:
        candidates = [csv_path.parent / MAP_FILE, videos / MAP_FILE]
        found = next((c for c in candidates if c.is_file()), None)
        if found is None:
            return None, None
        map_json = found
    data = load_json(map_json, "video map")
    if not isinstance(data, dict):
        raise SourceError(map_json, "", f"expected an object mapping video id to path, got {type(data).__name__}")
    for key, value in data.items():
        if not isinstance(value, str) or not value.strip():
            raise SourceError(map_json, f"video {key}", f"path {value!r} is not a non-empty string")
    return {str(k): v.strip() for k, v in data.items()}, Path(map_json)


def _video_file(video_id: str, videos: Path, mapping: dict[str, str] | None, map_file: Path | None,
                csv_path: Path, where: str) -> str:
    if mapping is None:
        relative = video_id
    elif video_id in mapping:
        relative = mapping[video_id]
    else:
        raise SourceError(csv_path, where, f"video {video_id} is not in the video map {map_file}")
    file = videos / relative
    if file.suffix.lower() != VIDEO_SUFFIX:
        file = file.with_name(file.name + VIDEO_SUFFIX)
    if not file.is_file():
        raise SourceError(csv_path, where, f"video file not found: {file}")
    return str(file)
