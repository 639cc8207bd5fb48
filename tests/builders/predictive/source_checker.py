"""Independent checker of predictive items built from ActivityNet Captions, Charades, CLEVRER and RoboSet.

Imports no builder (nor source-reader) code: it reads the raw annotation files itself and re-derives what each
item must say.

* ActivityNet: the video's segments (sentences stripped, segments starting at or past ``duration`` dropped) in
  time order, the first ``segments_per_item``; the reference is the last one's sentence, the context captions the
  others'; the image of segment ``k`` is a frame inside segment ``k`` and before the held-out segment's start, and
  no two images show the same picture.
* Charades: the item's action is among the video's labels, named in the classes file, and its latest instance
  starts at the cut; every frame is before the cut; the reference is a subject (at most three words) and the
  description's last clause from the pair's verb on - nothing the clause tells before it, which happened before
  the cut - and contains the action's verb and noun; the context text is what the description says before it.
* CLEVRER: the shown frames are the last frame of each of the first five seconds; the reference names, in frame
  order, every collision after the last shown frame (each pair once) by colour, material and shape, and every
  other object as continuing unscathed ("No collision happens." when there is none).
* RoboSet: the reference is the combination's last subtask (caption or folder name in words), 3-5 images.

``check_*(build_dir, ...) -> list[str]`` return problems (empty when the build is right).
"""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image


def _items(build_dir: Path, source: str) -> list[dict[str, Any]]:
    lines = (Path(build_dir) / "items.jsonl").read_text().splitlines()
    return [i for i in map(json.loads, lines) if i["provenance"].get("source") == source]


def _config(build_dir: Path) -> dict[str, Any]:
    return json.loads((Path(build_dir) / "build.json").read_text())["config"]


def check_activitynet(build_dir: Path, json_path: Path) -> list[str]:
    raw = json.loads(Path(json_path).read_text())
    keep = _config(build_dir)["segments_per_item"]
    bad = []
    for item in _items(build_dir, "activitynet"):
        p, entry = item["provenance"], raw[item["provenance"]["video_id"]]
        segs = sorted(((s, e, t.strip()) for (s, e), t in zip(entry["timestamps"], entry["sentences"])
                       if s < entry["duration"]), key=lambda x: (x[0], min(x[1], entry["duration"])))[:keep]
        tag = f"{item['id']} ({p['video_id']})"
        if item["answer"] != segs[-1][2]:
            bad.append(f"{tag}: reference {item['answer']!r}, the last segment says {segs[-1][2]!r}")
        if p["context_captions"] != [t for _, _, t in segs[:-1]]:
            bad.append(f"{tag}: context captions {p['context_captions']} are not the earlier segments'")
        if len(item["images"]) != len(segs) - 1:
            bad.append(f"{tag}: {len(item['images'])} images for {len(segs) - 1} context segments")
        pictures = [np.asarray(Image.open(Path(build_dir) / rel).convert("RGB")).tobytes() for rel in item["images"]]
        if len(set(pictures)) != len(pictures):
            bad.append(f"{tag}: two images show the same picture")
        held = segs[-1][0]
        if p["frame_indices"] != sorted(set(p["frame_indices"])):
            bad.append(f"{tag}: frames {p['frame_indices']} are not in time order, as the prompt says they are")
        if p["frame_count"] / p["fps"] < entry["duration"] - 1.0:
            bad.append(f"{tag}: the video lasts {p['frame_count'] / p['fps']:.2f} s, its annotation "
                       f"{entry['duration']} s")
        for k, (index, (s, e, _)) in enumerate(zip(p["frame_indices"], segs)):
            t = index / p["fps"]
            if not (math.floor(s * p["fps"]) <= index and t < min(e, held) + 1e-9 and t < held):
                bad.append(f"{tag}: image {k} is frame {index} ({t:.2f} s), outside segment [{s}, {min(e, held)})")
    return bad


def check_charades(build_dir: Path, csv_path: Path, classes_path: Path) -> list[str]:
    classes = dict(line.split(" ", 1) for line in Path(classes_path).read_text().splitlines() if line.strip())
    rows = {r["id"]: r for r in csv.DictReader(Path(csv_path).read_text().splitlines())}
    bad = []
    for item in _items(build_dir, "charades"):
        p = item["provenance"]
        row, tag = rows[p["video_id"]], f"{item['id']} ({p['video_id']})"
        labels = [a.split() for a in row["actions"].split(";") if a.strip()]
        starts = [float(s) for code, s, _ in labels if code == p["action"]]
        if not starts:
            bad.append(f"{tag}: action {p['action']} is not among the video's labels")
            continue
        if p["action_text"] != classes[p["action"]].strip():
            bad.append(f"{tag}: action text {p['action_text']!r} is not the dictionary's")
        if abs(p["cut_seconds"] - max(starts)) > 1e-9:
            bad.append(f"{tag}: cut at {p['cut_seconds']} s, the action's latest start is {max(starts)} s")
        if max(p["frame_indices"]) >= p["cut_seconds"] * p["fps"]:
            bad.append(f"{tag}: frame {max(p['frame_indices'])} is at or after the cut")
        description = row["descriptions"].strip()
        clause = [x.strip() for x in re.split(r"[.!?;,]+", description) if x.strip()][-1]
        clause = re.sub(r"^(?:and then|and|then|but|so|before|after|finally)\s+", "", clause, flags=re.IGNORECASE)
        # the reference is a subject (at most three words, with an auxiliary) and the last clause from the pair's
        # verb on: what happens after the cut, nothing before it
        body, words = item["answer"].rstrip(".").lower(), clause.lower().split()
        tails = [" ".join(words[k:]) for k in range(len(words)) if words[k].startswith(p["verb"][:3])]
        prefix = body[: -len(tails[-1])].split() if tails and body.endswith(tails[-1]) else None
        if prefix is None or len(prefix) > 3:
            bad.append(f"{tag}: reference {item['answer']!r} is not the last clause {clause!r} from its verb "
                       f"{p['verb']!r} on")
        if p["noun"][:4] not in item["answer"].lower() or p["verb"][:3] not in item["answer"].lower():
            bad.append(f"{tag}: reference {item['answer']!r} lacks the pair {p['verb']} {p['noun']}")
        context = " ".join(p["context_captions"])
        if context and not description.startswith(context):
            bad.append(f"{tag}: context text {context!r} is not the start of the description")
    return bad


def _look(o: dict[str, Any]) -> str:
    return f"{o['color']} {o['material']} {o['shape']}"


def check_clevrer(build_dir: Path, annotations_dir: Path) -> list[str]:
    raw = {}
    for f in Path(annotations_dir).rglob("*.json"):
        data = json.loads(f.read_text())
        raw[Path(data["video_filename"]).stem] = data
    bad = []
    for item in _items(build_dir, "clevrer"):
        p = item["provenance"]
        data, tag = raw[p["video_id"]], f"{item['id']} ({p['video_id']})"
        fps = p["fps"]
        expected_frames = [math.ceil(s * fps) - 1 for s in range(1, 6)]
        if p["frame_indices"] != expected_frames:
            bad.append(f"{tag}: frames {p['frame_indices']}, the last of each second are {expected_frames}")
        last = expected_frames[-1]
        objects = {o["object_id"]: o for o in data["object_property"]}
        said, pairs = [], []
        for c in sorted(data["collision"], key=lambda c: (c["frame_id"], c["object_ids"])):
            pair = frozenset(c["object_ids"])
            if c["frame_id"] > last and pair not in pairs:
                pairs.append(pair)
                said.append(c["object_ids"])
        answer, position = item["answer"], 0
        for a, b in said:
            sentence = f"The {_look(objects[a])} collides with the {_look(objects[b])}."
            found = answer.find(sentence, position)
            if found < 0:
                bad.append(f"{tag}: reference {answer!r} misses (or misorders) {sentence!r}")
            position = max(position, found)
        if not said and not answer.startswith("No collision happens."):
            bad.append(f"{tag}: no collision after frame {last}, the reference says {answer!r}")
        hit = {i for pair in pairs for i in pair}
        for oid, o in objects.items():
            calm = oid not in hit
            mentioned_calm = re.search(rf"\b{_look(o)}\b[^.]*continues? unscathed", answer, re.IGNORECASE)
            if calm != bool(mentioned_calm):
                bad.append(f"{tag}: the {_look(o)} {'continues' if calm else 'does not continue'} unscathed, the "
                           f"reference says otherwise")
    return bad


def _words(folder: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"^\d+[_\-. ]*", "", folder).replace("_", " ").replace("-", " ")).strip()


def check_roboset(build_dir: Path, combinations_file: Path) -> list[str]:
    combos = {c["name"]: c for c in json.loads(Path(combinations_file).read_text())}
    bad = []
    for item in _items(build_dir, "roboset"):
        p, tag = item["provenance"], item["id"]
        last = combos[p["combination"]]["subtasks"][-1]
        caption = last["caption"] if isinstance(last, dict) and last.get("caption") else \
            _words(last["folder"] if isinstance(last, dict) else last)
        if item["answer"] != f"The robotic arm will {caption}.":
            bad.append(f"{tag}: reference {item['answer']!r}, the last subtask is {caption!r}")
        if not 3 <= len(item["images"]) <= 5:
            bad.append(f"{tag}: {len(item['images'])} images, not 3-5")
    return bad
