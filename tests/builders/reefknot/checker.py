"""An independent checker of Reefknot items: plain loops over the raw Visual Genome-format files.

It imports no builder code. It reads ``relationships.json`` (and ``objects.json`` and ``image_data.json`` when
given), finds each item's image by its file name, parses the question text against the names of that image, and
re-derives the answer from the scene graph:

* every name the question uses must refer to exactly one object of the image;
* Y/N: "yes" exactly when the asked relation is annotated from the subject to the object; a "no" relation must
  be no near-synonym of an annotated one and, on a non-exhaustive source, have a box rule the two boxes
  contradict (its own implementation of the rules the builder documents): a relation a scene graph merely does
  not annotate may hold in the picture;
* MCQ: exactly one option is annotated, it is the answer, and no two options are near-synonyms;
* cognitive Y/N and MCQ: every relation asked or offered is one the subject takes somewhere in the source (a
  relation never annotated with the subject's name is one it cannot have: "Is the hexagon pointing at ...?");
* directions (left of, right of, above, below and their wordings in :data:`DIRECTIONS`, this checker's own list)
  are read from the two boxes alone, on every source: a direction is true when the boxes are apart along its axis
  and overlap across it by at least half the smaller extent, false when they show another direction that way, and
  a question on a pair showing none (diagonal, or overlapping) is invalid; an MCQ offering a direction the boxes
  show besides its answer has two true options;
* VQA: the reference sentence states an annotated relation, with "is"/"are" agreeing with the subject, and the
  accepted answers the item lists are exactly the pair's annotated relations as sentences.

The word lists (predicate aliases, synonyms, box rules, plural names) are read from ``templates/reefknot`` data:
they are the specification, not code. Predicates are normalised here (a copula, a trailing article and doubled
words dropped: Visual Genome v1.0 writes "is on the", "is is in the the") before the aliases apply.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

from tests.builders import viewer

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
LISTS = Path(__file__).resolve().parents[3] / "templates" / "reefknot" / "filters.yaml"


DIRECTIONS = {
    "left of": "left", "to left of": "left", "to the left of": "left", "on left side of": "left",
    "right of": "right", "to right of": "right", "to the right of": "right", "on right side of": "right",
    "above": "above", "higher than": "above", "below": "below", "lower than": "below",
}


def _norm(text: str) -> str:
    words = text.lower().split()
    words = [w for k, w in enumerate(words) if not k or w != words[k - 1]]
    while len(words) > 1 and words[0] in ("is", "are"):
        words.pop(0)
    while len(words) > 1 and words[-1] in ("the", "a", "an"):
        words.pop()
    return " ".join(words)


def seen_direction(s: tuple, o: tuple) -> str | None:
    """Where box ``s`` is relative to box ``o`` by the viewer's clear-direction rule (:func:`viewer.side`): apart along
    one axis and sharing at least half the smaller extent across it; ``None`` for a diagonal or overlapping pair."""
    side = viewer.side({"bbox": s}, {"bbox": o})
    return side.removesuffix(" of") if side else None


class Checker:
    def __init__(
        self,
        relationships: str | Path,
        image_data: str | Path | None = None,
        objects: str | Path | None = None,
        exhaustive: bool = False,
    ) -> None:
        lists = yaml.safe_load(LISTS.read_text())
        self.aliases = {str(k): str(v) for k, v in lists["predicate_aliases"].items()}
        self.articles = set(lists["name_articles"])
        self.synonyms: dict[str, set[str]] = defaultdict(set)
        for group in lists["synonyms"]:
            for a in group:
                self.synonyms[str(a)].update(str(b) for b in group)
        self.box_kind = {str(p): kind for kind, ps in lists["box_rules"].items() for p in ps}
        self.plural = set(lists["plural_names"])
        self.singular = set(lists["singular_s_names"])
        self.exhaustive = exhaustive
        files: dict[str, Any] = {}
        if image_data:
            for entry in json.loads(Path(image_data).read_text()):
                iid = entry.get("image_id", entry.get("id"))
                url = entry.get("url") or ""
                files[str(iid)] = url.rsplit("/", 1)[-1] if url.strip("/") else f"{iid}.jpg"
        self.images: dict[str, dict[str, Any]] = {}
        self.subject_relations: dict[str, set[str]] = defaultdict(set)
        """Every relation annotated with each subject name anywhere in the source."""
        for entry in json.loads(Path(relationships).read_text()):
            iid = str(entry.get("image_id", entry.get("id")))
            image = {"objects": {}, "relations": defaultdict(set)}
            for rel in entry["relationships"]:
                ids = []
                for end in (rel["subject"], rel["object"]):
                    ids.append(self._add_object(image, end))
                image["relations"][(ids[0], ids[1])].add(self.predicate(rel["predicate"]))
                self.subject_relations[image["objects"][ids[0]][0]].add(self.predicate(rel["predicate"]))
            self.images[files.get(iid, f"{iid}.jpg")] = image
            self.images.setdefault(f"{iid}.jpg", image)  # the archives name every file <id>.jpg
            image["id"] = iid
        if objects:
            by_id = {img["id"]: img for img in self.images.values()}  # one entry per image, under either name
            for entry in json.loads(Path(objects).read_text()):
                img = by_id.get(str(entry.get("image_id", entry.get("id"))))
                if img is None:
                    continue
                merged = {}
                for obj in entry["objects"]:
                    oid = self._add_object(img, obj)
                    for m in obj.get("merged_object_ids") or ():
                        merged[str(m)] = oid
                for m, oid in merged.items():  # a merged id is the same object: drop its duplicate entry
                    if m in img["objects"] and m != oid:
                        del img["objects"][m]
                        for (a, b), preds in list(img["relations"].items()):
                            if m in (a, b):
                                img["relations"][(oid if a == m else a, oid if b == m else b)] |= preds
                                del img["relations"][(a, b)]

    def _add_object(self, image: dict[str, Any], obj: dict[str, Any]) -> str:
        """The id of ``obj`` in ``image``: one already there under the same name with the same box if any (VG
        v1.0 writes an object again, under a new id, in every relationship), else its own, added."""
        oid = str(obj.get("object_id", obj.get("id")))
        name = self.name(obj["name"] if "name" in obj else obj["names"][0])
        box = (obj["x"], obj["y"], obj["w"], obj["h"])
        if oid not in image["objects"]:
            oid = next((k for k, v in image["objects"].items() if v == (name, box)), oid)
        image["objects"].setdefault(oid, (name, box))
        return oid

    # --------------------------------------------------------------------------------------------- words

    def name(self, raw: str) -> str:
        words = raw.lower().split()
        while len(words) > 1 and words[0] in self.articles:
            words = words[1:]
        return " ".join(words)

    def predicate(self, raw: str) -> str:
        text = _norm(raw)
        return self.aliases.get(text, text)

    def plural_name(self, name: str) -> bool:
        for w in (name, name.split()[-1]):
            if w in self.plural:
                return True
            if w in self.singular:
                return False
        head = name.split()[-1]
        return head.endswith("s") and not head.endswith(("ss", "us", "is", "ous"))

    def similar(self, a: str, b: str) -> bool:
        return a == b or b in self.synonyms.get(a, set())

    # --------------------------------------------------------------------------------------------- truth

    def _one(self, image: dict, name: str) -> tuple[str, tuple] | None:
        found = [(oid, box) for oid, (n, box) in image["objects"].items() if n == name]
        return found[0] if len(found) == 1 else None

    def _pair(self, image: dict, s: str, o: str) -> tuple[set[str], tuple, tuple] | None:
        a, b = self._one(image, s), self._one(image, o)
        if a is None or b is None:
            return None
        return image["relations"].get((a[0], b[0]), set()), a[1], b[1]

    def true_in_image(self, relation: str, annotated: set[str], sbox: tuple, obox: tuple) -> bool:
        """A direction by the boxes; any other relation by the scene graph."""
        if relation in DIRECTIONS:
            return seen_direction(sbox, obox) == DIRECTIONS[relation]
        return relation in annotated

    def false_in_image(self, relation: str, annotated: set[str], sbox: tuple, obox: tuple) -> bool:
        if relation in DIRECTIONS:
            seen = seen_direction(sbox, obox)
            return seen is not None and seen != DIRECTIONS[relation]
        if any(self.similar(relation, a) for a in annotated):
            return False
        kind = self.box_kind.get(relation)
        if self.exhaustive or kind is None:
            return True  # cognitive relations (and all on exhaustive sources): absent is false
        sx, sy, sw, sh = sbox
        ox, oy, ow, oh = obox
        cx, cy = sx + sw / 2, sy + sh / 2
        gap = max(ox - sx - sw, sx - ox - ow, oy - sy - sh, sy - oy - oh)
        return {
            "above": cy >= oy + oh,
            "below": cy <= oy,
            "inside": gap > 0,
            "contact": gap > 0 and gap >= 0.25 * min(max(sw, sh), max(ow, oh)),
            "near": gap >= max(sw, sh, ow, oh),
        }[kind]

    def _parse_pair(self, image: dict, text: str) -> list[tuple[str, str, str]]:
        """Every (subject, middle, object) reading of ``text`` = "<subject> <middle> the <object>"."""
        names = {n for n, _ in image["objects"].values()}
        out = []
        for s in names:
            for o in names:
                if text.startswith(s + " ") and text.endswith(" the " + o):
                    out.append((s, text[len(s) + 1 : len(text) - len(o) - 5], o))
        return out

    def expected(self, item: dict) -> str | None:
        """The answer the raw annotations give, or an explanation starting with '!' when the item is invalid."""
        image = self.images.get(Path(item["images"][0]).name)
        if image is None:
            return "!image not in the annotations"
        q = item["question"]
        if item["question_type"] == "yes_no":
            m = re.fullmatch(r"(Is|Are) the (.+) in this photo\?", q)
            readings = [(s, r, o) for s, r, o in self._parse_pair(image, m.group(2))] if m else []
            readings = [x for x in readings if self._pair(image, x[0], x[2]) is not None]
            if len(readings) != 1:
                return f"!{len(readings)} readings of the question"
            s, r, o = readings[0]
            if (m.group(1) == "Are") != self.plural_name(s):
                return "!verb does not agree with the subject"
            annotated, sb, ob = self._pair(image, s, o)
            if item["task"] == "cognition" and r not in self.subject_relations[s]:
                return f"!the {s} is never {r} anything in the source"
            if r in DIRECTIONS and seen_direction(sb, ob) is None:
                return "!no clear direction between the boxes"
            if self.true_in_image(r, annotated, sb, ob):
                return "yes"
            if not self.exhaustive and r not in DIRECTIONS and r not in self.box_kind:
                return "!a 'no' to a relation the scene graph merely does not annotate"
            return "no" if self.false_in_image(r, annotated, sb, ob) else "!negative not provably false"
        m = re.fullmatch(r"What is the relation between the (.+) and the (.+) in this photo\?(.*)", q)
        if not m:
            return "!question does not parse"
        names = {n for n, _ in image["objects"].values()}
        pairs = [
            (s, o)
            for s in names
            for o in names
            if f"the {s} and the {o} in this photo?" in q and q.startswith(f"What is the relation between the {s} and")
        ]
        pairs = [p for p in pairs if self._pair(image, *p) is not None]
        if len(pairs) != 1:
            return f"!{len(pairs)} readings of the question"
        s, o = pairs[0]
        annotated, sb, ob = self._pair(image, s, o)
        if item["question_type"] == "mcq":
            true = [i for i, opt in enumerate(item["options"]) if self.true_in_image(opt, annotated, sb, ob)]
            if len(true) != 1:
                return f"!{len(true)} true options"
            for i, a in enumerate(item["options"]):
                for b in item["options"][i + 1 :]:
                    if self.similar(a, b):
                        return f"!options {a!r} and {b!r} are near-synonyms"
            if not all(
                self.false_in_image(opt, annotated, sb, ob) for i, opt in enumerate(item["options"]) if i != true[0]
            ):
                return "!a distractor is not provably false"
            impossible = [opt for opt in item["options"] if opt not in self.subject_relations[s]]
            if item["task"] == "cognition" and impossible:
                return f"!the {s} is never {impossible[0]} anything in the source"
            return LETTERS[true[0]]
        be = "are" if self.plural_name(s) else "is"
        subject = f"The {s} {be} "
        if not item["answer"].startswith(subject) or not item["answer"].endswith(f" the {o}."):
            return "!reference does not agree with the question"
        relation = item["answer"][len(subject) : -len(f" the {o}.")]
        if relation not in annotated:
            return "!reference relation not annotated"
        if not self.true_in_image(relation, annotated, sb, ob):
            return "!reference direction not shown by the boxes"
        if f"Please answer in the following format: The {s} {be} <relation> the {o}." not in q:
            return "!format instruction missing"
        accepted = item.get("provenance", {}).get("accepted_answers")
        if accepted is not None and sorted(accepted) != sorted(f"{subject}{a} the {o}." for a in annotated):
            return "!accepted answers are not the pair's annotated relations"
        return item["answer"]

    def check(self, items: list[dict]) -> list[tuple[str, str, str]]:
        """(item id, given answer, expected) for every disagreement."""
        bad = []
        for item in items:
            want = self.expected(item)
            if want != item["answer"]:
                bad.append((item["id"], item["answer"], str(want)))
        return bad


def read_items(path: str | Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
