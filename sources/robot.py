"""Robot episodes (Mementos' robotics domain: Open X-Embodiment videos) as video files or frame folders.

:func:`read_robot_episodes` accepts three layouts under ``root``:

* **LeRobot v2.x** (``meta/info.json`` present): ``videos/chunk-*/<camera key>/episode_<index>.mp4``, one video per
  episode and camera (e.g. ``observation.images.top``), frame rate from ``info.json``, and the language
  instruction(s) of each episode from ``meta/episodes.jsonl`` (``{"episode_index": 0, "tasks": [...], "length":
  N}``) in ``meta["tasks"]``. The tabular parquet data is not needed for frames and is not read. LeRobot v3 packs
  several episodes into one ``file-000.mp4`` (episodes are time ranges); that layout is refused with a clear
  message rather than sampled wrongly.
* **video files** anywhere below ``root`` (:data:`~sources.video.VIDEO_SUFFIXES`): one episode each;
* **frame folders**: every directory holding images (natural order, ``frame2`` before ``frame10``) is one episode.

Ids are paths relative to ``root`` without extension (``kitchen/ep_003``), so they are stable and unique. An optional
description written by a person (``<video>.txt`` or ``<folder>/description.txt``) lands in ``meta["description"]``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .errors import SourceError
from .jsonio import iter_jsonl, load_json
from .records import VideoRecord
from .video import description_beside, frame_images, is_video_file, natural_key

SOURCE = "robot"
LEROBOT_INFO = Path("meta") / "info.json"
LEROBOT_EPISODES = Path("meta") / "episodes.jsonl"
_EPISODE = re.compile(r"episode_(\d+)$")


def read_robot_episodes(root: str | Path) -> list[VideoRecord]:
    """One record per episode (per camera for LeRobot), sorted by id; a :class:`SourceError` when ``root`` is
    missing or holds no episode."""
    base = Path(root)
    if not base.is_dir():
        raise SourceError(base, "", "robot episodes folder not found")
    if (base / LEROBOT_INFO).is_file():
        return _read_lerobot(base)
    records = []
    for path in _episode_paths(base):
        relative = path.relative_to(base).with_suffix("") if path.is_file() else path.relative_to(base)
        video_id = relative.as_posix() if str(relative) != "." else base.name
        records.append(_record(video_id, path, {}))
    if not records:
        raise SourceError(base, "", "no robot episodes found (video files or folders of frame images)")
    return sorted(records, key=lambda r: natural_key(r.id))


def _episode_paths(base: Path) -> list[Path]:
    """Video files and folders holding images, below ``base`` (``base`` itself when it holds images)."""
    found: list[Path] = []
    for folder in [base, *sorted((p for p in base.rglob("*") if p.is_dir()), key=lambda p: natural_key(str(p)))]:
        if any(part.startswith(".") for part in folder.relative_to(base).parts):
            continue
        if frame_images(folder):
            found.append(folder)
        found.extend(p for p in folder.iterdir() if is_video_file(p))
    return found


def _record(video_id: str, path: Path, meta: dict[str, Any], fps: float | None = None) -> VideoRecord:
    description = description_beside(path)
    if description is not None:
        meta = {**meta, "description": description}
    frame_count = len(frame_images(path)) if path.is_dir() else None
    return VideoRecord(id=video_id, source=SOURCE, file=str(path), frame_count=frame_count, fps=fps, meta=meta)


def _read_lerobot(base: Path) -> list[VideoRecord]:
    info_file = base / LEROBOT_INFO
    info = load_json(info_file, "LeRobot info")
    if not isinstance(info, dict):
        raise SourceError(info_file, "", "expected a JSON object")
    version = str(info.get("codebase_version", ""))
    fps = info.get("fps")
    fps = float(fps) if isinstance(fps, (int, float)) and fps > 0 else None
    episodes = _lerobot_episodes(base / LEROBOT_EPISODES)
    records = []
    for video in sorted(base.glob("videos/chunk-*/*/episode_*.mp4"), key=lambda p: natural_key(str(p))):
        match = _EPISODE.search(video.stem)
        if match is None:
            continue
        index, camera = int(match.group(1)), video.parent.name
        meta: dict[str, Any] = {"episode_index": index, "camera": camera, "layout": f"lerobot {version}".strip()}
        meta.update(episodes.get(index, {}))
        records.append(_record(f"episode_{index:06d}/{camera}", video, meta, fps))
    if not records:
        hint = " (LeRobot v3 stores several episodes per video file: not supported, use a v2.1 dataset)" \
            if version.startswith("v3") or list(base.glob("videos/*/chunk-*/file-*.mp4")) else ""
        raise SourceError(base, "", f"no videos/chunk-*/<camera>/episode_*.mp4 files found{hint}")
    return sorted(records, key=lambda r: (r.meta["episode_index"], r.meta["camera"]))


def _lerobot_episodes(path: Path) -> dict[int, dict[str, Any]]:
    """Episode index -> ``{"tasks": [...], "length": N}`` from ``meta/episodes.jsonl`` (absent: empty)."""
    if not path.is_file():
        return {}
    episodes: dict[int, dict[str, Any]] = {}
    for line, row in iter_jsonl(path, "LeRobot episodes"):
        if not isinstance(row, dict) or not isinstance(row.get("episode_index"), int):
            raise SourceError(path, f"line {line}", "expected an object with an integer 'episode_index'")
        tasks = row.get("tasks", [])
        if isinstance(tasks, str):
            tasks = [tasks]
        if not isinstance(tasks, list) or not all(isinstance(t, str) for t in tasks):
            raise SourceError(path, f"line {line}", "'tasks' must be a list of strings")
        entry: dict[str, Any] = {"tasks": tasks}
        if isinstance(row.get("length"), int):
            entry["length"] = row["length"]
        episodes[row["episode_index"]] = entry
    return episodes
