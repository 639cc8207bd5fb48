"""The Reefknot demo scenes: the drawn cognitive relations obey their documented rules (re-derived here from the
written VG files with plain code), every kind of subject takes several of them and none it cannot have, every
scene names each shape once, and the files read as Visual Genome."""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from pathlib import Path

from sources.demo.reefknot import COGNITIVE_PREDICATES, load_reefknot_demo
from sources.visual_genome import read_visual_genome

STEP = {"right": (1, 0), "down": (0, 1), "left": (-1, 0), "up": (0, -1)}


def _area(*objects: dict) -> int:
    """Pixels the whole-object masks of ``objects`` share (one object: its area)."""
    from pycocotools import mask as mask_util

    rles = [{"size": o["amodal_rle"]["size"], "counts": o["amodal_rle"]["counts"].encode()} for o in objects]
    return int(mask_util.area(mask_util.merge(rles, intersect=True) if len(rles) > 1 else rles[0]))


def _expected(objects: list[dict], in_front: set[tuple[int, int]]) -> set[tuple[int, str, int]]:
    out = set()
    for a in objects:
        ax, ay, aw, ah = a["x"], a["y"], a["w"], a["h"]
        if "heading" in a:
            for predicate, sign in (("pointing at", 1), ("pointing away from", -1)):
                dx, dy = (sign * v for v in STEP[a["heading"]])
                cx, cy = ax + aw / 2, ay + ah / 2
                hits = []
                for b in objects:
                    if b is a:
                        continue
                    if dx and b["y"] <= cy <= b["y"] + b["h"]:
                        d = b["x"] - (ax + aw) if dx > 0 else ax - (b["x"] + b["w"])
                    elif dy and b["x"] <= cx <= b["x"] + b["w"]:
                        d = b["y"] - (ay + ah) if dy > 0 else ay - (b["y"] + b["h"])
                    else:
                        continue
                    if d >= 0:
                        hits.append((d, b["object_id"]))
                if hits:
                    out.add((a["object_id"], predicate, min(hits)[1]))
        for b in objects:
            if b is a:
                continue
            inside = ax < b["x"] and ay < b["y"] and b["x"] + b["w"] < ax + aw and b["y"] + b["h"] < ay + ah
            holds = b["x"] < ax and b["y"] < ay and ax + aw < b["x"] + b["w"] and ay + ah < b["y"] + b["h"]
            name = a["names"][0]
            centred = math.hypot(b["x"] + b["w"] / 2 - ax - aw / 2, b["y"] + b["h"] / 2 - ay - ah / 2) <= 0.1 * aw
            if inside and name == "ring" and centred:
                out.add((a["object_id"], "surrounding", b["object_id"]))
            elif inside and name not in ("ring", "arrow") and (b["object_id"], a["object_id"]) in in_front:
                out.add((a["object_id"], "carrying", b["object_id"]))
            elif not inside and not holds and (a["object_id"], b["object_id"]) in in_front:
                if _area(a, b) >= 0.3 * _area(b):
                    out.add((a["object_id"], "covering", b["object_id"]))
                    out.add((b["object_id"], "hiding behind", a["object_id"]))
            apart = (a["object_id"], b["object_id"]) not in in_front and (b["object_id"], a["object_id"]) not in in_front
            if ay + ah == b["y"] and b["x"] <= ax + aw / 2 <= b["x"] + b["w"] and apart:
                out.add((a["object_id"], "standing on", b["object_id"]))
    return out


def test_cognitive_relations_follow_their_rules(tmp_path: Path) -> None:
    files = load_reefknot_demo(seed=3, n_images=40, cache_dir=tmp_path)
    rels = json.loads(Path(files.relationships).read_text())
    objects = {e["image_id"]: e["objects"] for e in json.loads(Path(files.objects).read_text())}
    kinds: Counter = Counter()
    by_kind: dict[str, Counter] = defaultdict(Counter)
    for entry in rels:
        triples = {
            (r["subject"]["object_id"], r["predicate"], r["object"]["object_id"]) for r in entry["relationships"]
        }
        in_front = {(s, o) for s, p, o in triples if p == "in front of"}
        cognitive = {t for t in triples if t[1] in COGNITIVE_PREDICATES}
        assert cognitive == _expected(objects[entry["image_id"]], in_front), entry["image_id"]
        names = [o["names"][0] for o in objects[entry["image_id"]]]
        assert len(names) == len(set(names)), "every shape of a scene has its own category"
        kinds.update(p for _, p, _ in cognitive)
        name = {o["object_id"]: o["names"][0] for o in objects[entry["image_id"]]}
        for s, p, _ in cognitive:
            kind = name[s] if name[s] in ("arrow", "ring") else "other"
            by_kind[kind][p] += 1
    assert set(kinds) == set(COGNITIVE_PREDICATES)
    assert set(by_kind["arrow"]) == {"pointing at", "pointing away from", "covering", "hiding behind", "standing on"}
    assert set(by_kind["ring"]) == {"surrounding", "covering", "hiding behind", "standing on"}
    assert set(by_kind["other"]) == {"carrying", "covering", "hiding behind", "standing on"}
    for kind, counts in by_kind.items():  # no relation dominates a kind of subject (the name would tell it)
        assert max(counts.values()) < 0.45 * sum(counts.values()), (kind, counts)


def test_a_standing_shape_touches_its_support(tmp_path: Path) -> None:
    """The box rule of "standing on" is what the picture shows: a pixel of the upper shape sits right above a
    pixel of the lower one (rendered masks, re-read from the written RLEs)."""
    from pycocotools import mask as mask_util

    files = load_reefknot_demo(seed=3, n_images=40, cache_dir=tmp_path)
    objects = {o["object_id"]: o for e in json.loads(Path(files.objects).read_text()) for o in e["objects"]}
    seen = 0
    for entry in json.loads(Path(files.relationships).read_text()):
        for r in entry["relationships"]:
            if r["predicate"] != "standing on":
                continue
            a, b = (mask_util.decode({"size": o["amodal_rle"]["size"], "counts": o["amodal_rle"]["counts"].encode()})
                    for o in (objects[r["subject"]["object_id"]], objects[r["object"]["object_id"]]))
            assert not (a & b).any() and (a[:-1] & b[1:]).any(), entry["image_id"]
            seen += 1
    assert seen >= 5


def test_demo_files_read_as_visual_genome(tmp_path: Path) -> None:
    files = load_reefknot_demo(seed=0, n_images=5, cache_dir=tmp_path)
    records = read_visual_genome(files.relationships, files.images_dir, files.image_data, files.objects)
    assert len(records.images) == 5 and all(Path(im.file).is_file() for im in records.images)
    again = load_reefknot_demo(seed=0, n_images=5, cache_dir=tmp_path)
    assert Path(again.relationships).read_bytes() == Path(files.relationships).read_bytes()
