"""Small datasets in the real layouts of ActivityNet Captions, Charades, CLEVRER and RoboSet, with synthetic
videos of known content: every frame is one flat grey level, ``frame_level(index)``, written losslessly (FFV1),
so a checker can tell from an image's pixels which frame it is.

Each ``make_*`` returns the paths a build needs and ``expected``: what the fixture was written to produce (the
items' video ids and, where a fixture video is meant to be skipped, the step that skips it).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from sources.video_backends import write_video

SIZE = (48, 64)


def frame_level(index: int) -> int:
    """The grey level of frame ``index`` (distinct for the first 128 frames)."""
    return (index * 2) % 256


def write_grey_video(path: Path, frames: int, fps: float, offset: int = 0) -> Path:
    """Frame ``i`` is grey level ``frame_level(i + offset)`` (``offset`` tells clips apart)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_video(path, (np.full((*SIZE, 3), frame_level(i + offset), np.uint8) for i in range(frames)), fps, "FFV1")
    return path


def write_frame_folder(folder: Path, frames: int, offset: int = 0) -> Path:
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    for i in range(frames):
        Image.fromarray(np.full((*SIZE, 3), frame_level(i + offset), np.uint8)).save(folder / f"frame{i}.png")
    return folder


# ------------------------------------------------------------------------------------------------ ActivityNet


def make_activitynet(root: Path) -> dict[str, Any]:
    """Four videos at 4 fps: two good ones, one with two segments (too few), one not downloaded."""
    videos = root / "videos"
    data = {
        "v_good1": {"duration": 30.0, "timestamps": [[0.0, 8.0], [8.5, 16.0], [16.0, 25.0], [24.0, 31.5]],
                    "sentences": [" A man walks into a gym.", " He picks up a barbell.", " He lifts it over his head.",
                                  " He drops the barbell and cheers."]},
        "v_good2": {"duration": 20.0, "timestamps": [[1.0, 6.0], [5.0, 12.0], [12.5, 19.0]],
                    "sentences": ["A girl paints a fence.", " She dips the brush in paint.", " She waves at the camera."]},
        "v_short": {"duration": 10.0, "timestamps": [[0.0, 5.0], [5.0, 10.0]],
                    "sentences": ["A dog runs.", "The dog sits."]},
        "v_missing": {"duration": 10.0, "timestamps": [[0.0, 3.0], [3.0, 6.0], [6.0, 9.0]],
                      "sentences": ["One.", "Two.", "Three."]},
        # two context segments with one span: their middle frame is the same picture
        "v_twice": {"duration": 12.0, "timestamps": [[1.0, 5.0], [1.0, 5.0], [6.0, 11.0]],
                    "sentences": ["A boy opens a box.", "He looks inside.", "He closes the box."]},
        # overlapping captions: the second segment's middle frame (4 s) comes before the first one's (6 s)
        "v_overlap": {"duration": 20.0, "timestamps": [[0.0, 20.0], [2.0, 6.0], [12.0, 19.0]],
                      "sentences": ["A chef cooks.", "He chops an onion.", "He serves the soup."]},
        # the annotation says 20 s, the file holds 8 s: its later times point past the last frame
        "v_cut": {"duration": 20.0, "timestamps": [[0.0, 3.0], [3.0, 6.0], [9.0, 15.0]],
                  "sentences": ["A cat sleeps.", "It wakes up.", "It jumps off the sofa."]},
    }
    seconds = {"v_cut": 8.0}
    for vid, entry in data.items():
        if vid != "v_missing":
            write_grey_video(videos / f"{vid}.avi", int(seconds.get(vid, entry["duration"]) * 4), 4.0)
    path = root / "val_1.json"
    path.write_text(json.dumps(data))
    return {"json": path, "videos": videos, "items": {"v_good1", "v_good2"},
            "skipped": {"v_short": "fewer than", "v_missing": "video file not found", "v_twice": "unlike, the frames",
                        "v_overlap": "no frame after", "v_cut": "12.00 s less than its annotation's 20 s"}}


# --------------------------------------------------------------------------------------------------- Charades

CHARADES_CLASSES = """c000 Holding some clothes
c001 Putting something on a shelf
c002 Opening a door
c003 Taking a book from somewhere
c004 Drinking from a cup/glass/bottle
c005 Sitting in a chair
"""

CHARADES_HEADER = "id,subject,scene,quality,relevance,verified,script,objects,descriptions,actions,length"


def make_charades(root: Path) -> dict[str, Any]:
    """Rows at 5 fps: two that pass the three steps, one per failing step."""
    rows = [
        ("AB001", "A person opens the door and walks in, then puts a box on the shelf.",
         "c002 0.00 3.00;c001 6.00 9.50", 10.0),
        ("AB002", "A person is sitting in a chair. The person drinks from a cup, and then takes a book from the table.",
         "c005 0.00 12.00;c004 2.00 5.00;c003 3.00 4.00;c003 7.50 11.00", 12.0),
        ("AB003", "A person laughs and smiles.", "c000 0.00 6.00", 6.0),  # step 2: no noun
        ("AB004", "A person opens a door and sits in a chair.", "c002 0.00 4.00", 8.0),  # step 2: not labelled
        ("AB005", "A person opens the door.", "c002 0.00 2.00", 8.0),  # step 3: starts at 0
        # the last clause tells two actions: only the one after the cut is the reference
        ("AB006", "A person sits on a chair eating a sandwich and then drinks from a cup.",
         "c005 0.00 10.00;c004 6.00 9.00", 10.0),
    ]
    videos = root / "Charades_v1_480"
    lines = [CHARADES_HEADER]
    for vid, description, actions, length in rows:
        write_grey_video(videos / f"{vid}.avi", int(length * 5), 5.0)
        lines.append(f'{vid},P1,Kitchen,6,7,Yes,"script",door;shelf,"{description}",{actions},{length}')
    csv_path = root / "Charades_v1_test.csv"
    csv_path.write_text("\n".join(lines) + "\n")
    classes = root / "Charades_v1_classes.txt"
    classes.write_text(CHARADES_CLASSES)
    return {"csv": csv_path, "classes": classes, "videos": videos,
            "items": {"AB001": ("c001", 6.0), "AB002": ("c003", 7.5), "AB006": ("c004", 6.0)},
            "skipped": {"AB003": "step 2", "AB004": "step 2", "AB005": "step 3"}}


# ---------------------------------------------------------------------------------------------------- CLEVRER


def _clevrer_annotation(n: int, objects: list[tuple[str, str, str]], collisions: list[tuple[int, int, int]]
                        ) -> dict[str, Any]:
    return {
        "scene_index": n, "video_filename": f"video_{n}.avi",  # the release's are .mp4; lossless .avi here
        "object_property": [{"object_id": i, "color": c, "material": m, "shape": s}
                            for i, (c, m, s) in enumerate(objects)],
        "motion_trajectory": [{"frame_id": f, "objects": [{"object_id": i, "location": [0, 0, 0],
                                                           "inside_camera_view": True} for i in range(len(objects))]}
                              for f in range(128)],
        "collision": [{"object_ids": [a, b], "frame_id": f, "location": [0, 0, 0]} for a, b, f in collisions],
    }


def make_clevrer(root: Path) -> dict[str, Any]:
    """Four 128-frame videos at 25 fps (frames shown: 24, 49, 74, 99, 124): two with collisions after frame 124,
    one without, one with look-alike objects."""
    cube, sphere, cyl = ("red", "rubber", "cube"), ("blue", "metal", "sphere"), ("green", "rubber", "cylinder")
    annotations = {
        10000: _clevrer_annotation(10000, [cube, sphere, cyl], [(0, 1, 40), (0, 2, 126)]),
        10001: _clevrer_annotation(10001, [cube, sphere, cyl], [(1, 2, 125), (2, 1, 127), (0, 1, 127)]),
        10002: _clevrer_annotation(10002, [cube, sphere], [(0, 1, 60)]),
        10003: _clevrer_annotation(10003, [cube, cube], [(0, 1, 126)]),
    }
    ann_dir, videos = root / "annotation_10000-11000", root / "video_10000-11000"
    ann_dir.mkdir(parents=True)
    for n, data in annotations.items():
        (ann_dir / f"annotation_{n}.json").write_text(json.dumps(data))
        write_grey_video(videos / f"video_{n}.avi", 128, 25.0)
    return {"annotations": root / "annotation_10000-11000", "videos": videos,
            "items": {"video_10000", "video_10001", "video_10002"}, "skipped": {"video_10003": "look alike"}}


# ---------------------------------------------------------------------------------------------------- RoboSet


def roboset_offset(subtask: int, variant: int) -> int:
    """Frame-level offset of a RoboSet clip: every clip of the fixture has its own grey levels."""
    return 20 * subtask + 10 * variant


def make_roboset(root: Path) -> dict[str, Any]:
    """Two activities, two variants each; ``make_toast`` as videos (3 subtasks: 2 context x 2 keyframes),
    ``clean_table`` as frame folders (5 subtasks: 4 x 1 keyframe); a combination with one context subtask is
    skipped (2 keyframes)."""
    base = root / "roboset"
    for k, sub in enumerate(("1_plunge_toaster", "2_pick_toast", "3_place_toast")):
        for v, variant in enumerate(("v0", "v1")):
            write_grey_video(base / "make_toast" / sub / f"{variant}.avi", 20, 10.0, offset=roboset_offset(k, v))
    for k, sub in enumerate(("1_wipe", "2_stack_cups", "3_move_plate", "4_open_drawer", "5_put_cloth_in_drawer")):
        for v, variant in enumerate(("v0", "v1")):
            write_frame_folder(base / "clean_table" / sub / variant, 12, offset=roboset_offset(k, v))
    combos = [
        {"name": "toast", "activity": "make_toast", "subtasks": ["1_plunge_toaster", "2_pick_toast",
                                                                 {"folder": "3_place_toast",
                                                                  "caption": "place the toast on the plate"}]},
        {"name": "table", "activity": "clean_table",
         "subtasks": ["1_wipe", "2_stack_cups", "3_move_plate", "4_open_drawer", "5_put_cloth_in_drawer"]},
        {"name": "short", "activity": "make_toast", "subtasks": ["2_pick_toast", "3_place_toast"]},
    ]
    (base / "combinations.json").write_text(json.dumps(combos))
    return {"root": base, "items": {"toast/v0", "toast/v1", "table/v0", "table/v1"},
            "skipped": {"short/v0": "not 3-5", "short/v1": "not 3-5"}}
