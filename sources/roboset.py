"""RoboSet teleoperation (Bharadhwaj et al., 2023): kitchen activities split into subtask clips.

Layout read by :func:`read_roboset` (the clips exported from RoboSet's trajectories as videos or frame folders):

* ``<root>/<activity>/<subtask>/<variant>.mp4`` (or ``<variant>/`` holding frame images): one clip per variant
  (a scene recorded once through all subtasks) and subtask; subtask folders in natural order (``1_plunge_toaster``
  before ``2_pick_toast``) unless a combinations file orders them;
* ``<root>/<activity>/<subtask>.mp4`` (or ``<subtask>/`` of frame images): one variant only, the activity folder
  itself;
* a combinations file (``<root>/combinations.json`` or the path given), App. D.3's "subtask combinations with
  consistent scenes": ``[{"name": "toast_a", "activity": "make_toast", "subtasks": ["plunge_toaster",
  {"folder": "pick_toast", "caption": "pick up the toast"}, ...]}, ...]``. Without one, every activity is one
  combination of all its subtasks.

A subtask's caption is its ``caption`` or its folder name in words (``2_pick_toast`` -> ``pick toast``). A
combination's variants are the variant names present under *every* one of its subtasks. Problems (an unknown
activity or subtask, a combination of fewer than two subtasks, a malformed entry) are :class:`SourceError` s
naming the file and the entry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import SourceError
from .jsonio import load_json
from .validate import check_name, expect_dict, expect_list, require_key
from .video import frame_images, is_video_file, natural_key

SOURCE = "roboset"
COMBINATIONS_FILE = "combinations.json"
LICENSE = "RoboSet: see https://robopen.github.io/roboset/ (check its terms before redistributing)"


@dataclass(frozen=True)
class Subtask:
    name: str
    caption: str
    file: str
    """A video file or a folder of frame images."""


@dataclass(frozen=True)
class RobosetSequence:
    """One variant of one combination: its subtask clips in order (the last is the one to predict)."""

    id: str
    combination: str
    activity: str
    variant: str
    subtasks: tuple[Subtask, ...]


def caption_of(folder: str) -> str:
    """``2_pick_toast`` -> ``pick toast``: a folder name in words, without a leading order number."""
    return re.sub(r"\s+", " ", re.sub(r"^\d+[_\-. ]*", "", folder).replace("_", " ").replace("-", " ")).strip()


def read_roboset(root: str | Path, combinations: str | Path | None = None) -> list[RobosetSequence]:
    """Every (combination, variant) sequence, sorted by id; see the module docstring."""
    base = Path(root)
    if not base.is_dir():
        raise SourceError(base, "", "RoboSet folder not found")
    file = Path(combinations) if combinations else base / COMBINATIONS_FILE
    combos = _combinations(file, base) if (combinations or file.is_file()) else _all_activities(base)
    out = []
    for name, activity, subtasks in combos:
        clips = [_clips(base / activity / folder) for folder, _ in subtasks]
        shared = set(clips[0])
        for c in clips[1:]:
            shared &= set(c)
        for variant in sorted(shared, key=natural_key):
            steps = tuple(Subtask(folder, caption, str(c[variant])) for (folder, caption), c in zip(subtasks, clips))
            out.append(RobosetSequence(f"{name}/{variant}" if variant else name, name, activity, variant, steps))
    if not out:
        raise SourceError(base, "", "no subtask clips found (<activity>/<subtask>/<variant>.mp4 or frame folders)")
    return sorted(out, key=lambda s: natural_key(s.id))


def _clips(subtask: Path) -> dict[str, Path]:
    """Variant name -> clip: ``""`` for a subtask that is itself one clip (a video file or a frame folder)."""
    if subtask.is_dir() and frame_images(subtask):
        return {"": subtask}
    for video in subtask.parent.glob(subtask.name + ".*"):
        if is_video_file(video):
            return {"": video}
    if not subtask.is_dir():
        return {}
    return {p.stem if p.is_file() else p.name: p for p in sorted(subtask.iterdir())
            if is_video_file(p) or (p.is_dir() and frame_images(p))}


def _subtask_names(activity: Path) -> list[str]:
    names = {p.stem if p.is_file() else p.name for p in activity.iterdir()
             if (p.is_dir() and not p.name.startswith(".")) or is_video_file(p)}
    return sorted(names, key=natural_key)


def _all_activities(base: Path) -> list[tuple[str, str, list[tuple[str, str]]]]:
    out = []
    for activity in sorted((p for p in base.iterdir() if p.is_dir() and not p.name.startswith(".")),
                           key=lambda p: natural_key(p.name)):
        names = _subtask_names(activity)
        if len(names) >= 2:
            out.append((activity.name, activity.name, [(n, caption_of(n)) for n in names]))
    return out


def _combinations(file: Path, base: Path) -> list[tuple[str, str, list[tuple[str, str]]]]:
    data = load_json(file, "RoboSet combinations file")
    out, seen = [], set()
    for k, entry in enumerate(expect_list(data, file, "", "combinations")):
        where = f"combinations[{k}]"
        entry = expect_dict(entry, file, where, "combination")
        activity = check_name(require_key(entry, "activity", file, where), file, where, "activity").strip()
        name = check_name(entry.get("name", activity), file, where, "name").strip()
        if name in seen:
            raise SourceError(file, where, f"combination name {name!r} is used twice")
        seen.add(name)
        if not (base / activity).is_dir():
            raise SourceError(file, where, f"activity folder {activity!r} not found under {base}")
        steps = []
        for j, sub in enumerate(expect_list(require_key(entry, "subtasks", file, where), file, where, "subtasks")):
            steps.append(_subtask(sub, file, f"{where}.subtasks[{j}]", base / activity))
        if len(steps) < 2:
            raise SourceError(file, where, f"{len(steps)} subtask(s): a combination needs context and a target")
        out.append((name, activity, steps))
    return out


def _subtask(sub: Any, file: Path, where: str, activity: Path) -> tuple[str, str]:
    if isinstance(sub, str):
        folder, caption = sub, None
    else:
        sub = expect_dict(sub, file, where, "subtask")
        folder = check_name(require_key(sub, "folder", file, where), file, where, "folder")
        caption = sub.get("caption")
        if caption is not None:
            caption = check_name(caption, file, where, "caption")
    folder = folder.strip()
    if not folder or folder not in _subtask_names(activity):
        raise SourceError(file, where, f"subtask {folder!r} not found in {activity}")
    return folder, (caption or caption_of(folder)).strip()
