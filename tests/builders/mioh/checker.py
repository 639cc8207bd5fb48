"""An independent checker of MIOH items: a second, deliberately plain implementation of the paper's rules.

It reads ground truth from the raw annotations (the demo world's ``records.json``, the ``truth`` the real-format
fixtures write beside their files, or - for the federated and open-vocabulary sources - the raw PACO, SVG and
COCO files themselves: :func:`paco_truth`, :func:`svg_truth`) and re-derives each item's answer, pressure and
misleading context without importing any builder code. Where the builder is clever (numpy, caches, samplers),
this is loops and sets.

Absent is not unannotated: a truth with ``"exhaustive": False`` knows a category absent from an image only when
the image lists it (``verified_absent``; for attributes also ``attributes_verified_absent``); elsewhere the
category's absence is unknown and every fact resting on it is undecidable. Counting refuses a category in
``not_exhaustive``; denying an attribute needs the category in neither ``not_exhaustive`` nor
``attributes_not_exhaustive`` and no instance with the attribute's type in its ``unknown_types``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.builders import viewer

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
NOTA = "None of the above"
OPPOSITE = {"left of": "right of", "right of": "left of", "above": "below", "below": "above",
            "in front of": "behind", "behind": "in front of", "on": "under", "under": "on"}


@dataclass
class Rules:
    min_visible: float = 0.0005
    max_occlusion: float = 0.9
    hard_area: float = 0.01
    hard_occlusion: float = 0.4
    hard_truncation: float = 0.5
    hn_min_p: float = 0.3
    hn_min_lift: float = 1.2
    count_max_objects: int = 5


# What a person can identify (issue 40): tests/builders/viewer.py for the demo world; other sources: the size
# floor only.
DIRECTIONS = ("left of", "right of", "above", "below")

PACO_UNKNOWN_FLAGS = {"unknown_color": "colour", "unknown_pattern_marking": "pattern",
                      "unknown_material": "material", "unknown_transparency": "transparency"}
PACO_TYPE_NAMES = {"color": "colour", "pattern_marking": "pattern", "material": "material",
                   "transparency": "transparency"}
PACO_LISTS = {"neg_category_ids": "verified_absent", "not_exhaustive_category_ids": "not_exhaustive",
              "neg_category_ids_attrs": "attributes_verified_absent",
              "not_exhaustive_category_ids_attrs": "attributes_not_exhaustive"}


def paco_truth(path: Path) -> tuple[dict[str, Any], dict[str, str]]:
    """(truth, attribute types) read straight from a PACO JSON file in its documented layout."""
    data = json.loads(Path(path).read_text())
    cats = {c["id"]: c["name"] for c in data["categories"]}
    names = {a["id"]: a["name"] for a in data["attributes"]}
    types = {}
    for kind, ids in data["attr_type_to_attr_idxs"].items():
        for i in ids:
            types[names[i]] = PACO_TYPE_NAMES[kind]
    images = {}
    for im in data["images"]:
        entry = {"file_name": im["file_name"], "width": im["width"], "height": im["height"], "objects": [],
                 "relations": []}
        for key, field in PACO_LISTS.items():  # ids outside the object vocabulary name nothing we ask about
            entry[field] = {cats[i] for i in im.get(key, []) if i in cats and ":" not in cats[i]}
        images[str(im["id"])] = entry
    for ann in data["annotations"]:
        name = cats[ann["category_id"]]
        if ":" in name or ann.get("obj_ann_id", ann["id"]) not in (ann["id"], -1, None):
            continue  # a part
        images[str(ann["image_id"])]["objects"].append({
            "id": str(ann["id"]), "category": name, "bbox": ann["bbox"], "area": ann["area"],
            "iscrowd": bool(ann.get("iscrowd", 0)), "amodal_area": None,
            "attributes": tuple(names[i] for i in ann["attribute_ids"]),
            "unknown_types": {kind for flag, kind in PACO_UNKNOWN_FLAGS.items() if ann.get(flag)},
        })
    return {"images": images, "exhaustive": False}, types


COCO_WORDS = {"person": ("man", "woman", "boy", "girl", "people", "men", "women")}
"""The checker's own (smaller) reading of which words a COCO category's absence rules out."""


def _coco_names_of(name: str, coco_names: set[str]) -> str | None:
    word = " ".join(name.lower().replace("_", " ").replace("-", " ").split())
    for cat in coco_names:
        if word == cat or word in COCO_WORDS.get(cat, ()) or word in (cat + "s", cat + "es"):
            return cat
    return None


def svg_truth(path: Path, verify_with: Path | None = None) -> dict[str, Any]:
    """Truth read straight from an SVG JSON array (Hub or flat rows); with ``verify_with`` (a COCO instances
    file), the SVG names a matched COCO image does not show are verified absent there."""
    from pycocotools import mask as mask_utils

    rows = json.loads(Path(path).read_text())
    coco_by_file: dict[str, set[str]] = {}
    coco_by_id: dict[str, set[str]] = {}
    coco_names: set[str] = set()
    if verify_with is not None:
        coco = json.loads(Path(verify_with).read_text())
        cat = {c["id"]: c["name"] for c in coco["categories"]}
        coco_names = set(cat.values())
        shown: dict[Any, set[str]] = {im["id"]: set() for im in coco["images"]}
        for ann in coco["annotations"]:
            shown[ann["image_id"]].add(cat[ann["category_id"]])
        for im in coco["images"]:
            coco_by_file[im["file_name"].rsplit("/", 1)[-1]] = shown[im["id"]]
            coco_by_id[str(im["id"])] = shown[im["id"]]
    images = {}
    for row in rows:
        key = row["image_id"]
        graph = json.loads(row["scene_graph"]) if isinstance(row.get("scene_graph"), str) else row
        meta = row.get("metadata") or {}
        objects = []
        for j, region in enumerate(row["regions"]):
            name = region.get("name") or graph["objects"][j]
            box = region["bbox"] if "bbox" in region else [region["x"], region["y"], region["w"], region["h"]]
            rle = region["segmentation"]
            area = float(mask_utils.area({"size": rle["size"], "counts": rle["counts"].encode()}))
            objects.append({"id": f"{key}#{j}", "category": " ".join(name.lower().split()), "bbox": box,
                            "area": area, "iscrowd": False, "amodal_area": None, "attributes": ()})
        rels = graph.get("relations", [])
        relations = [(f"{key}#{r[0]}", " ".join(r[2].lower().split()), f"{key}#{r[1]}") if isinstance(r, list)
                     else (f"{key}#{r['subject']}", " ".join(r["predicate"].lower().split()), f"{key}#{r['object']}")
                     for r in rels]
        coco_id = row.get("coco_id", meta.get("coco_id"))
        shown_here = coco_by_file.get(key.rsplit("/", 1)[-1])
        if shown_here is None and coco_id is not None:
            shown_here = coco_by_id.get(str(coco_id))
        images[key] = {"file_name": key, "width": row.get("width", meta.get("width")),
                       "height": row.get("height", meta.get("height")), "objects": objects, "relations": relations,
                       "coco_shows": shown_here}
    vocabulary = {o["category"] for im in images.values() for o in im["objects"]}
    for im in images.values():
        present = {o["category"] for o in im["objects"]}
        shown_here = im.pop("coco_shows")
        im["verified_absent"] = set() if shown_here is None else {
            n for n in vocabulary - present if (c := _coco_names_of(n, coco_names)) and c not in shown_here
        }
    return {"images": images, "exhaustive": False}


def demo_truth(records_json: Path) -> dict[str, Any]:
    """The demo world's cached records in the fixtures' ``truth`` shape."""
    data = json.loads(Path(records_json).read_text())
    images = {}
    for im in data["images"]:
        images[im["id"]] = {
            "file_name": im["file"], "width": im["width"], "height": im["height"],
            "objects": [
                {"id": o["id"], "category": o["category"], "bbox": o["bbox"], "area": o["area"],
                 "amodal_area": o.get("amodal_area"), "iscrowd": o.get("iscrowd", False),
                 "attributes": tuple(o.get("attributes", ()))}
                for o in im["instances"]
            ],
            "relations": [tuple(r) if isinstance(r, list) else (r["subject"], r["predicate"], r["object"])
                          for r in im.get("relations", [])],
        }
    return {"images": images, "exhaustive": True, "demo": True}


class Checker:
    """Re-derives answers from ``truth``; ``exhaustive``: missing relations are false (the demo world)."""

    def __init__(self, truth: dict[str, Any], attribute_types: dict[str, str], exhaustive: bool, rules: Rules = Rules()):
        self.images = truth["images"]
        self.types = attribute_types
        self.exhaustive = exhaustive
        self.absence_exhaustive = truth["exhaustive"]
        """Every unannotated category is absent (else only the listed ones are)."""
        self.rules = rules
        self.demo = bool(truth.get("demo"))
        """The demo world's legibility table applies (else only the size floor)."""
        self._cooc()

    # ------------------------------------------------------------------------------------------ per object

    def _rel_area(self, img, o) -> float:
        return o["area"] / (img["width"] * img["height"])

    def _occlusion(self, o) -> float:
        amodal = o.get("amodal_area")
        return 1 - o["area"] / amodal if amodal else 0.0

    def _truncation(self, img, o) -> float:
        x, y, w, h = o["bbox"]
        W, H = img["width"], img["height"]
        x0, y0, x1, y1 = max(0, x), max(0, y), min(W, x + w), min(H, y + h)
        w, h = max(0, x1 - x0), max(0, y1 - y0)
        border = (h if x0 <= 1 else 0) + (w if y0 <= 1 else 0) + (h if x1 >= W - 1 else 0) + (w if y1 >= H - 1 else 0)
        return border / (2 * (w + h)) if w + h else 0.0

    def usable(self, img, o) -> bool:
        return (not o["iscrowd"] and self._rel_area(img, o) >= self.rules.min_visible
                and self._occlusion(o) <= self.rules.max_occlusion and self.legible(img, o))

    # ------------------------------------------------------------------------------------------ legibility

    @staticmethod
    def size(img, o) -> float:
        return viewer.size(o["area"], img["width"], img["height"])

    def _readable(self, img, o) -> bool:
        if self.size(img, o) < viewer.MIN_SIZE:
            return False
        if not self.demo:
            return True
        return viewer.enough_shown(o["category"], 1 - self._occlusion(o))

    def could_be(self, img, o) -> set:
        """What a viewer might take ``o`` for (every look-alike when it cannot be read at all)."""
        if not self.demo:
            return set()
        return viewer.lookalikes(o["category"], self._readable(img, o), self.size(img, o))

    def legible(self, img, o) -> bool:
        return self._readable(img, o) and not self.could_be(img, o)

    def lookalike_of(self, img, cat) -> bool:
        """Something in the image could be taken for ``cat``."""
        return any(cat in self.could_be(img, o) for o in img["objects"])

    def hard(self, img, o) -> bool:
        r = self.rules
        return (self._rel_area(img, o) < r.hard_area or self._occlusion(o) >= r.hard_occlusion
                or self._truncation(img, o) >= r.hard_truncation)

    # ----------------------------------------------------------------------------------------- co-occurrence

    def _cooc(self) -> None:
        self.n_img = len(self.images)
        self.n = defaultdict(int)
        self.pair = defaultdict(int)
        for img in self.images.values():
            cats = sorted({o["category"] for o in img["objects"]})
            for a in cats:
                self.n[a] += 1
                for b in cats:
                    self.pair[(a, b)] += 1

    def cooc_hard(self, img, absent: str) -> bool:
        best_p, best_lift = 0.0, 0.0
        for a in sorted({o["category"] for o in img["objects"]}):
            p = self.pair[(a, absent)] / self.n[a]
            if p > best_p:
                best_p = p
                best_lift = self.pair[(a, absent)] * self.n_img / (self.n[a] * self.n[absent]) if self.n[absent] else 0
        return best_p >= self.rules.hn_min_p and best_lift >= self.rules.hn_min_lift

    # ------------------------------------------------------------------------------------------ facts

    def _objs(self, img, cat):
        return [o for o in img["objects"] if o["category"] == cat]

    def verified_absent(self, img, cat, for_attributes: bool = False) -> bool:
        """No instance of ``cat``, nothing a viewer could take for one, and somebody checked: the source is
        exhaustive or lists it."""
        if self._objs(img, cat) or self.lookalike_of(img, cat):
            return False
        if self.absence_exhaustive:
            return True
        lists = ("verified_absent", "attributes_verified_absent") if for_attributes else ("verified_absent",)
        return any(cat in img.get(key, ()) for key in lists)

    def fact(self, task: str, image_id: str, probe) -> tuple[bool, bool] | None:
        """(holds, hard) of a probe in an image, or None when the truth cannot decide."""
        img = self.images[image_id]
        if task == "existence":
            objs = self._objs(img, probe)
            if not objs:
                return (False, self.cooc_hard(img, probe)) if self.verified_absent(img, probe) else None
            usable = [o for o in objs if self.usable(img, o)]
            return (True, all(self.hard(img, o) for o in usable)) if usable else None
        if task == "counting":
            n = self.count(image_id, probe)
            if n is None:
                return None
            if n == 0:
                return False, self.cooc_hard(img, probe)
            return True, any(self.hard(img, o) for o in self._objs(img, probe))
        if task == "attribute":
            attr, cat = probe
            objs = self._objs(img, cat)
            if not objs:
                return (False, self.cooc_hard(img, cat)) if self.verified_absent(img, cat, True) else None
            usable = [o for o in objs if self.usable(img, o)]
            if not usable:
                return None
            having = [o for o in usable if attr in o["attributes"]]
            if having:
                return True, all(self.hard(img, o) for o in having)
            if len(usable) != len(objs) or self.lookalike_of(img, cat):
                return None
            kind = self.types.get(attr)
            if cat in img.get("not_exhaustive", ()) or cat in img.get("attributes_not_exhaustive", ()):
                return None  # an unannotated instance, or unannotated attributes, may be the one
            if any(kind in o.get("unknown_types", ()) for o in objs):
                return None  # the annotators could not tell this type
            if kind and all(any(self.types.get(a) == kind for a in o["attributes"]) for o in objs):
                return False, True
            return None
        subject, rel, obj = probe
        s_objs, o_objs = self._objs(img, subject), self._objs(img, obj)
        if not s_objs or not o_objs:
            known = self.verified_absent(img, subject) or self.verified_absent(img, obj)
            return (False, False) if known else None
        if not any(self.usable(img, o) for o in s_objs) or not any(self.usable(img, o) for o in o_objs):
            return None
        if self.lookalike_of(img, subject) or self.lookalike_of(img, obj):
            return None
        by_id = {o["id"]: o for o in img["objects"]}
        holding = [(by_id[s], by_id[t]) for s, p, t in img["relations"]
                   if p == rel and by_id[s]["category"] == subject and by_id[t]["category"] == obj]
        good = [(a, b) for a, b in holding if self.usable(img, a) and self.usable(img, b)
                and (rel not in DIRECTIONS or viewer.side(a, b) == rel)
                and (rel != "next to" or viewer.next_to(a, b) is True)]
        if good:
            return True, all(self.hard(img, a) or self.hard(img, b) for a, b in good)
        if holding:
            return None
        if rel in DIRECTIONS:  # false only where every pair is clearly somewhere else
            sides = [viewer.side(a, b) for a in s_objs for b in o_objs]
            if any(side is None or side == rel for side in sides):
                return None
        if rel == "next to" and any(viewer.next_to(a, b) is not False for a in s_objs for b in o_objs):
            return None  # false only where every pair is clearly apart
        if self.exhaustive:
            return False, True
        opposite = any(p == OPPOSITE.get(rel) and by_id[s]["category"] == subject and by_id[t]["category"] == obj
                       for s, p, t in img["relations"])
        if opposite and len(s_objs) == 1 and len(o_objs) == 1:
            return False, True
        return None

    def count(self, image_id: str, cat: str) -> int | None:
        img = self.images[image_id]
        if len(img["objects"]) > self.rules.count_max_objects:
            return None
        objs = self._objs(img, cat)
        if any(o["iscrowd"] or not self.usable(img, o) for o in objs) or self.lookalike_of(img, cat):
            return None
        if not objs and not self.verified_absent(img, cat):
            return None
        if cat in img.get("not_exhaustive", ()):
            return None
        return len(objs)

    # ------------------------------------------------------------------------------------------ one item

    def check(self, item: dict[str, Any]) -> list[str]:
        """Problems found with one item (an empty list means the item is right)."""
        prov = item["provenance"]
        task = item["task"]
        variant = prov["template"].split("/")[-1]
        ids = [im["id"] for im in prov["images"]]
        probe = _probe(prov["probe"])
        options = [_probe(p) for p in prov["option_probes"]]
        problems: list[str] = []
        if len(ids) != len(item["images"]):
            return ["provenance images and item images differ in number"]
        for path, iid in zip(item["images"], ids):
            if Path(path).name != Path(self.images[iid]["file_name"]).name:
                problems.append(f"image {path} is not {iid}")

        def facts(iid, p):
            return self.fact(task, iid, p)

        answer = None  # index into item options
        n_opts = len(item["options"])
        if task == "counting":
            counts = [self.count(i, probe) for i in ids]
            if None in counts:
                return problems + ["an image cannot be counted"]
            if variant == "total":
                nums = [int(o) for o in item["options"][:-1]]
                hits = [k for k, v in enumerate(nums) if v == sum(counts)]
                answer = hits[0] if len(hits) == 1 else (n_opts - 1 if not hits else None)
            elif variant == "exact":
                hits = [k for k, c in enumerate(counts) if c == prov["count"]]
                answer = hits[0] if len(hits) == 1 else (n_opts - 1 if not hits else None)
                if f"exactly {prov['count']} " not in item["question"]:
                    problems.append("question does not ask for the count in provenance")
            else:
                best = max(counts) if variant == "most" else min(counts)
                hits = [k for k, c in enumerate(counts) if c == best]
                answer = hits[0] if len(hits) == 1 else None
                if variant not in item["question"]:
                    problems.append(f"question does not say {variant}")
        else:
            if variant in ("all", "differs"):
                texts = item["options"][:-1]
                for text, p in zip(texts, options):
                    if text != _option_text(task, p):
                        problems.append(f"option {text!r} is not {p}")
            if variant == "all":
                truths = []
                for p in options:
                    fs = [facts(i, p) for i in ids]
                    if None in fs:
                        return problems + [f"option {p} undecidable in some image"]
                    truths.append(all(f[0] for f in fs))
                hits = [k for k, t in enumerate(truths) if t]
                answer = hits[0] if len(hits) == 1 else (n_opts - 1 if not hits else None)
            elif variant == "any":
                fs = [facts(i, probe) for i in ids]
                if None in fs:
                    return problems + ["probe undecidable in some image"]
                n_true = sum(f[0] for f in fs)
                answer = 0 if n_true == len(fs) else (2 if n_true == 0 else 1)
            elif variant in ("differs", "pair"):
                i, j = prov["compared"]
                if f"Image {i + 1}" not in item["question"] or f"Image {j + 1}" not in item["question"]:
                    if len(ids) > 2 or variant == "differs":
                        problems.append("question does not name the pair")
                if variant == "pair":
                    fi, fj = facts(ids[i], probe), facts(ids[j], probe)
                    if fi is None or fj is None:
                        return problems + ["probe undecidable in the pair"]
                    answer = {(True, True): 0, (False, False): 1, (True, False): 2, (False, True): 3}[(fi[0], fj[0])]
                else:
                    truths = []
                    for p in options:
                        fi, fj = facts(ids[i], p), facts(ids[j], p)
                        if fi is None or fj is None:
                            return problems + [f"option {p} undecidable in the pair"]
                        truths.append(fi[0] and not fj[0])
                    hits = [k for k, t in enumerate(truths) if t]
                    answer = hits[0] if len(hits) == 1 else (n_opts - 1 if not hits else None)
            elif variant == "which":
                fs = [facts(i, probe) for i in ids]
                if None in fs:
                    return problems + ["probe undecidable in some image"]
                hits = [k for k, f in enumerate(fs) if f[0]]
                answer = hits[0] if len(hits) == 1 else (n_opts - 1 if not hits else None)
        if answer is None:
            return problems + ["the answer is ambiguous"]
        if LETTERS[answer] != item["answer"]:
            problems.append(f"answer should be {LETTERS[answer]} ({item['options'][answer]!r}), item says {item['answer']}")
        problems += self._pressure(item, task, variant, ids, probe, options)
        problems += self._context(item, task, ids)
        problems += self._option_labels(item, task, variant, ids, options)
        return problems

    def _option_labels(self, item, task, variant, ids, options) -> list[str]:
        """The per-option, per-image labels a reviewer is shown, re-derived from the truth."""
        recorded = item["provenance"].get("option_labels")
        if recorded is None:
            return ["provenance has no option_labels"]
        if variant not in ("all", "differs"):
            return [] if recorded == [] else [f"{variant} item records option labels (its options are not probes)"]
        if len(recorded) != len(options):
            return ["option_labels and option probes differ in number"]
        problems = []
        for k, (entry, p) in enumerate(zip(recorded, options)):
            if entry["option"] != LETTERS[k] or _probe(entry["probe"]) != p:
                problems.append(f"option_labels[{k}] is not option {LETTERS[k]} {p}")
            if len(entry["images"]) != len(ids):
                problems.append(f"option {LETTERS[k]}: labels for {len(entry['images'])} of {len(ids)} images")
                continue
            for n, (cell, iid) in enumerate(zip(entry["images"], ids), 1):
                f = self.fact(task, iid, p)
                if f is None:
                    want = ("undecidable", None)
                else:
                    want = ("present" if f[0] else "absent",
                            "easy" if not f[1] else ("hard_positive" if f[0] else "hard_negative"))
                if (cell["label"], cell["difficulty"]) != want:
                    problems.append(f"option {LETTERS[k]} in Image {n}: recorded {cell['label']}/{cell['difficulty']}, "
                                    f"truth {want[0]}/{want[1]}")
        return problems

    def _pressure(self, item, task, variant, ids, probe, options) -> list[str]:
        deciding = ids if item["provenance"]["compared"] is None else [ids[p] for p in item["provenance"]["compared"]]
        probes = options if variant in ("all", "differs") else [probe]
        hp = hn = 0
        for iid in deciding:
            t = self.fact(task, iid, probe)
            if t is not None and t[0] and t[1]:
                hp += 1
            if any((f := self.fact(task, iid, p)) is not None and not f[0] and f[1] for p in probes):
                hn += 1
        pressure = item["pressure"]
        if pressure == "hard_positive" and hp == 0:
            return ["hard_positive item without a hard positive image"]
        if pressure == "hard_negative" and hn == 0:
            return ["hard_negative item without a hard negative image"]
        if pressure not in ("hard_positive", "hard_negative") and (hp or hn):
            return [f"{pressure} item has challenging images ({hp} hard positive, {hn} hard negative)"]
        return []

    def _context(self, item, task, ids) -> list[str]:
        """A linguistic item's claim is false (the paper's misleading context) or, in a control, true, as
        ``provenance.context_truth`` says."""
        linguistic = item["pressure"] in ("sycophantic", "instructional_override")
        if not linguistic:
            return ["non-linguistic item has a context"] if item["context"] else []
        if not item["question"].startswith("Based on the images,"):
            return ["linguistic item does not tell the model to rely on the images"]
        said = item["provenance"].get("context_truth")
        if said not in ("true", "false"):
            return [f"linguistic item has context_truth {said!r}, not 'true' or 'false'"]
        claim = item["provenance"]["context"]["claim"]
        probe = _probe(claim["probe"])
        kind = claim["kind"]
        if kind in ("present", "absent"):
            where = range(len(ids)) if claim["image"] is None else [claim["image"]]
            fs = [self.fact(task, ids[p], probe) for p in where]
            if None in fs:
                return ["context claim is undecidable"]
            true = not any(f[0] for f in fs) if kind == "absent" else all(f[0] for f in fs)
        else:
            counts = [self.count(i, probe) for i in ids]
            if None in counts:
                return ["context claim is undecidable"]
            if kind == "total":
                true = claim["value"] == sum(counts)
            elif kind == "count":
                true = counts[claim["image"]] == claim["value"]
            else:
                best = max(counts) if claim["extreme"] == "most" else min(counts)
                true = counts[claim["image"]] == best and counts.count(best) == 1
        if true != (said == "true"):
            return [f"context claim {claim} is {'true' if true else 'false'} but context_truth says {said}"]
        return []


def _probe(p):
    return tuple(p) if isinstance(p, list) else p


def _option_text(task: str, probe) -> str:
    def art(w: str) -> str:
        return ("an " if w[0] in "aeiou" else "a ") + w

    if task == "existence":
        return probe.replace("_", " ")
    if task == "attribute":
        return f"{probe[0]} {probe[1]}".replace("_", " ")
    return f"{art(probe[0])} {probe[1]} {art(probe[2])}".replace("_", " ")
