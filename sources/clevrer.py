"""CLEVRER (Yi et al., 2020): synthetic 5-second videos of colliding objects, with their annotations.

Files, as the CLEVRER release ships them:

* annotations: one JSON per video, ``annotation_<n>.json`` (in ``annotation_10000-11000/`` style folders), with
  ``scene_index``, ``video_filename`` (``video_<n>.mp4``), ``object_property`` (``object_id``, ``color``,
  ``material``, ``shape``), ``motion_trajectory`` (per frame: ``frame_id`` and ``objects`` with ``object_id``,
  ``location``, ``inside_camera_view``, ...) and ``collision`` (``object_ids`` (two), ``frame_id``, ``location``);
* videos: ``video_<n>.mp4`` (in ``video_10000-11000/`` style folders), 128 frames at 25 fps.

:func:`read_clevrer` reads every ``*.json`` below the annotations folder and finds each video by its
``video_filename`` anywhere below the videos folder. Every problem is a :class:`SourceError` naming the file,
the record (``collision[2]``, ``object_property[0]``) and what is wrong; a video file that is not there is not
an error (CLEVRER is often downloaded in parts) - the record's ``file`` is empty and the builder skips it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .errors import SourceError
from .jsonio import load_json
from .validate import check_name, expect_dict, expect_list, require_key
from .records import VideoRecord
from .video import is_video_file, natural_key

SOURCE = "clevrer"
FPS = 25.0
"""CLEVRER's frame rate (128 frames, 5.12 s); used when a video file does not say."""
LICENSE = "CLEVRER: see http://clevrer.csail.mit.edu/ (check its terms before redistributing)"


def read_clevrer(annotations_dir: str | Path, videos_dir: str | Path) -> list[VideoRecord]:
    """One record per annotation file, sorted by id (``video_10000``); ``meta`` holds ``objects`` (id -> colour,
    material, shape), ``collisions`` (``{"objects": [a, b], "frame": f}`` in frame order) and ``visible`` (frame
    -> ids inside the camera view)."""
    root = Path(annotations_dir)
    if not root.is_dir():
        raise SourceError(root, "", "CLEVRER annotations folder not found")
    videos = Path(videos_dir)
    if not videos.is_dir():
        raise SourceError(videos, "", "videos folder not found")
    files = sorted(root.rglob("*.json"), key=lambda p: natural_key(str(p)))
    if not files:
        raise SourceError(root, "", "no annotation_*.json files found")
    by_name = {p.name: p for p in videos.rglob("*") if is_video_file(p)}
    records, seen = [], {}
    for file in files:
        record = _record(file, by_name)
        if record.id in seen:
            raise SourceError(file, "video_filename", f"{record.id} is annotated twice (also in {seen[record.id]})")
        seen[record.id] = file
        records.append(record)
    return sorted(records, key=lambda r: natural_key(r.id))


def _record(file: Path, videos: dict[str, Path]) -> VideoRecord:
    data = expect_dict(load_json(file, "CLEVRER annotation"), file, "", "annotation")
    name = check_name(require_key(data, "video_filename", file, ""), file, "", "video_filename").strip()
    objects: dict[int, dict[str, str]] = {}
    for k, obj in enumerate(expect_list(require_key(data, "object_property", file, ""), file, "",
                                        "object_property")):
        where = f"object_property[{k}]"
        obj = expect_dict(obj, file, where, "object")
        oid = require_key(obj, "object_id", file, where)
        if type(oid) is not int:
            raise SourceError(file, where, f"'object_id' must be an integer, got {oid!r}")
        if oid in objects:
            raise SourceError(file, where, f"object_id {oid} appears twice")
        objects[oid] = {key: check_name(require_key(obj, key, file, where), file, where, key).strip().lower()
                        for key in ("color", "material", "shape")}
    if not objects:
        raise SourceError(file, "object_property", "no objects")
    frames = expect_list(require_key(data, "motion_trajectory", file, ""), file, "", "motion_trajectory")
    visible: dict[int, list[int]] = {}
    for k, frame in enumerate(frames):
        where = f"motion_trajectory[{k}]"
        frame = expect_dict(frame, file, where, "frame")
        fid = require_key(frame, "frame_id", file, where)
        if type(fid) is not int or fid < 0:
            raise SourceError(file, where, f"'frame_id' must be a non-negative integer, got {fid!r}")
        shown = []
        for j, obj in enumerate(expect_list(require_key(frame, "objects", file, where), file, where, "objects")):
            obj = expect_dict(obj, file, f"{where}.objects[{j}]", "object")
            oid = require_key(obj, "object_id", file, f"{where}.objects[{j}]")
            if oid not in objects:
                raise SourceError(file, f"{where}.objects[{j}]", f"object_id {oid!r} is not in object_property")
            if obj.get("inside_camera_view", True):
                shown.append(oid)
        visible[fid] = sorted(shown)
    collisions = []
    for k, hit in enumerate(expect_list(data.get("collision", []), file, "", "collision")):
        where = f"collision[{k}]"
        hit = expect_dict(hit, file, where, "collision")
        ids = expect_list(require_key(hit, "object_ids", file, where), file, where, "object_ids")
        if len(ids) != 2 or any(i not in objects for i in ids) or ids[0] == ids[1]:
            raise SourceError(file, where, f"object_ids {ids!r} must be two different ids of object_property")
        fid = require_key(hit, "frame_id", file, where)
        if type(fid) is not int or fid < 0:
            raise SourceError(file, where, f"'frame_id' must be a non-negative integer, got {fid!r}")
        collisions.append({"objects": [int(i) for i in ids], "frame": fid})
    collisions.sort(key=lambda c: (c["frame"], c["objects"]))
    video = videos.get(name)
    meta: dict[str, Any] = {"objects": {str(k): v for k, v in sorted(objects.items())}, "collisions": collisions,
                            "visible": {str(k): v for k, v in sorted(visible.items())}, "annotation": str(file),
                            "scene_index": data.get("scene_index")}
    return VideoRecord(id=Path(name).stem, source=SOURCE, file=str(video) if video else "", frame_count=None,
                       fps=FPS, meta=meta)
