"""An independent checker of MM-SAP items: the paper's rules re-derived in plain loops, importing no builder code.

Ground truth comes from the raw inputs only: the demo world's ``records.json`` (instances, attributes, relations,
visible and whole areas, from which what a person can identify is re-derived with the rules restated below), the
raw VQAv2-format JSON files, the raw authored-questions YAML, and the two data tables the rules are written in
(``templates/mmsap/normalise.yaml``, ``types.yaml``), read here with ``yaml`` and interpreted by this file's own
code. Every item must pass :meth:`Checker.check`; it returns the list of problems (empty when the item is right).
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import yaml

from tests.builders import viewer

LETTERS = "ABCDE"
REFUSAL = "Sorry, I can't help with it"
TEMPLATES = Path(__file__).resolve().parents[3] / "templates" / "mmsap"
DEMO_COLOURS = ("red", "orange", "yellow", "green", "blue", "purple", "pink", "brown")
# how the demo world paints them (sources/demo/world.py COLOURS, restated): a colour word must name what is drawn
PAINT = {"red": (214, 39, 40), "orange": (247, 129, 15), "yellow": (240, 200, 20), "green": (44, 160, 44),
         "blue": (31, 90, 200), "purple": (128, 60, 170), "pink": (240, 110, 180), "brown": (125, 75, 35)}
PATTERN_INK = {(35, 35, 35), (250, 250, 250)}  # stripes, dots and checks (sources/demo/render.py, restated)
DEMO_PATTERNS = ("solid", "striped", "dotted", "checkered")
DIRECTIONS = {"to the left of": "left of", "to the right of": "right of", "above": "above", "below": "below"}
PLURALS = {"crosses": "cross"}
# geometry thresholds of the paper-derived defaults (filters/geometry.py GeometryThresholds, restated)
MIN_VISIBLE, MAX_OCCLUSION, HARD_AREA, HARD_OCCLUSION, HARD_TRUNCATION = 0.0005, 0.9, 0.01, 0.4, 0.5
# what a person can identify in a demo picture: tests/builders/viewer.py
COUNT_OPTIONS = ["1", "2", "3", "4"]
REFER = {"the plain object": "solid", "the striped object": "striped", "the dotted object": "dotted",
         "the checkered object": "checkered"}


# ------------------------------------------------------------------------------------------------ answers


class Answers:
    """VQA-style normalisation, plurals and synonyms, from the raw table."""

    def __init__(self) -> None:
        t = yaml.safe_load((TEMPLATES / "normalise.yaml").read_text())
        self.articles = set(t["articles"])
        self.numbers = dict(t["number_words"])
        self.contractions = dict(t["contractions"])
        self.colours = [self.norm(c) for c in t["colours"]]
        self.synonym = {}
        for group in t["synonyms"]:
            for form in group:
                self.synonym[self.stem(self.norm(form))] = self.stem(self.norm(group[0]))

    def norm(self, text: str) -> str:
        text = text.lower().replace("&", " and ")
        text = "".join(c if (c.isalnum() and c.isascii()) or c in " '" else " " for c in text)
        words = []
        for w in text.replace("'", " '").split():
            if w.startswith("'"):
                if words:
                    words[-1] = words[-1] + w
            elif w not in self.articles:
                w = self.numbers.get(w, w)
                words.append(self.contractions.get(w, w))
        return " ".join(words)

    @staticmethod
    def stem(text: str) -> str:
        words = text.split(" ")
        w = words[-1]
        if len(w) > 4 and w.endswith("ies"):
            w = w[:-3] + "y"
        elif len(w) > 4 and w.endswith("es") and (w[:-2].endswith(("s", "x", "z", "ch", "sh"))):
            w = w[:-2]
        elif len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
            w = w[:-1]
        return " ".join(words[:-1] + [w])

    def same(self, a: str, b: str) -> bool:
        return self.key(a) == self.key(b)

    def key(self, text: str) -> str:
        s = self.stem(self.norm(text))
        return self.synonym.get(s, s)


# ------------------------------------------------------------------------------------------------ VQAv2


def vqa_type(rules: dict[str, Any], question: str, question_type: str, answer_type: str) -> str | None:
    if answer_type in rules.get("excluded_answer_types", []):
        return None
    words = set(re.findall(r"[a-z]+", question.lower()))
    qt = question_type.lower().strip()
    for rule in rules["types"]:
        if not any(qt.startswith(p.lower()) for p in rule["question_type_prefixes"]):
            continue
        if rule.get("answer_types") and answer_type not in rule["answer_types"]:
            continue
        if rule.get("keywords") and not (set(rule["keywords"]) & words):
            continue
        if set(rule.get("exclude_keywords", [])) & words:
            continue
        return rule["name"]
    return None


class VqaTruth:
    def __init__(self, questions_json: Path, annotations_json: Path, answers: Answers) -> None:
        qs = {q["question_id"]: q for q in json.loads(Path(questions_json).read_text())["questions"]}
        self.rules = yaml.safe_load((TEMPLATES / "types.yaml").read_text())
        self.records = {}
        self.majority_by_type: dict[str, set[str]] = defaultdict(set)
        for a in json.loads(Path(annotations_json).read_text())["annotations"]:
            q = qs[a["question_id"]]
            kind = vqa_type(self.rules, q["question"], a["question_type"], a["answer_type"])
            self.records[a["question_id"]] = {**a, "question": q["question"], "type": kind}
            if kind:
                self.majority_by_type[kind].add(answers.key(a["multiple_choice_answer"]))


# ------------------------------------------------------------------------------------------------ the demo world


class Demo:
    def __init__(self, records_json: Path) -> None:
        data = json.loads(Path(records_json).read_text())
        self.images = {im["id"]: im for im in data["images"]}
        self.folder = Path(records_json).parent

    def drawn_colour(self, im: dict, o: dict) -> str:
        """The palette colour nearest to the commonest pixel of the instance's visible mask in the PNG."""
        import numpy as np
        from PIL import Image
        from pycocotools import mask as mask_util

        pixels = np.asarray(Image.open(self.folder / im["file"]).convert("RGB"))
        visible = mask_util.decode({"size": o["rle"]["size"], "counts": o["rle"]["counts"].encode()}).astype(bool)
        colours, counts = np.unique(pixels[visible], axis=0, return_counts=True)
        body = [k for k, c in enumerate(colours) if tuple(int(v) for v in c) not in PATTERN_INK]
        common = colours[max(body, key=lambda k: counts[k])].astype(int)
        return min(PAINT, key=lambda name: sum((a - b) ** 2 for a, b in zip(PAINT[name], common)))

    def geometry(self, im: dict, o: dict) -> tuple[float, float, float]:
        """(relative area, occlusion, truncation) of an instance."""
        W, H = im["width"], im["height"]
        rel = o["area"] / (W * H)
        occ = min(1.0, max(0.0, 1 - o["area"] / o["amodal_area"])) if o.get("amodal_area") else 0.0
        x, y, w, h = o["bbox"]
        x0, y0, x1, y1 = max(0, min(x, W)), max(0, min(y, H)), max(0, min(x + w, W)), max(0, min(y + h, H))
        bw, bh = x1 - x0, y1 - y0
        touching = bh * (x0 <= 1) + bh * (x1 >= W - 1) + bw * (y0 <= 1) + bw * (y1 >= H - 1)
        trunc = touching / (2 * (bw + bh)) if bw + bh > 0 else 0.0
        return rel, occ, trunc

    def level(self, im: dict, o: dict) -> str:
        rel, occ, trunc = self.geometry(im, o)
        if rel < MIN_VISIBLE or occ > MAX_OCCLUSION:
            return "drop"
        if rel < HARD_AREA or occ >= HARD_OCCLUSION or trunc >= HARD_TRUNCATION:
            return "hard"
        return "easy"

    def legible(self, im: dict, o: dict) -> bool:
        """Whether a person can name the shape: enough of it visible, large enough, told from its look-alikes."""
        return not self.could_be(im, o) and self._readable(im, o)

    def _readable(self, im: dict, o: dict) -> bool:
        visible = o["area"] / o["amodal_area"]
        return viewer.enough_shown(o["category"], visible) and self.size(im, o) >= viewer.MIN_SIZE

    @staticmethod
    def size(im: dict, o: dict) -> float:
        return viewer.size(o["area"], im["width"], im["height"])

    def could_be(self, im: dict, o: dict) -> set[str]:
        """Categories a viewer might take ``o`` for (all its look-alikes when it cannot be read at all)."""
        return viewer.lookalikes(o["category"], self._readable(im, o), self.size(im, o))

    def count(self, im: dict, category: str) -> int | None:
        """The count a viewer can be sure of, else None."""
        own = self.of_category(im, category)
        if not own or not all(self.legible(im, o) for o in own):
            return None
        if any(category in self.could_be(im, o) for o in im["instances"]):
            return None
        return len(own)

    def surely_absent(self, im: dict, category: str) -> bool:
        return all(o["category"] != category and category not in self.could_be(im, o) for o in im["instances"])

    def clear(self, im: dict, o: dict) -> bool:
        """Shown once, easy and legible: what a question may name."""
        return len(self.of_category(im, o["category"])) == 1 and self.level(im, o) == "easy" and self.legible(im, o)

    def hidden_reason(self, im: dict, o: dict) -> str | None:
        rel, occ, trunc = self.geometry(im, o)
        return "occluded" if occ >= HARD_OCCLUSION else "truncated" if trunc >= HARD_TRUNCATION else \
            "tiny" if rel < HARD_AREA else None

    @staticmethod
    def of_category(im: dict, category: str) -> list[dict]:
        return [o for o in im["instances"] if o["category"] == category]

    @staticmethod
    def colour(o: dict) -> str:
        return next(a for a in o["attributes"] if a in DEMO_COLOURS)

    @staticmethod
    def pattern(o: dict) -> str:
        return next(a for a in o["attributes"] if a in DEMO_PATTERNS)


class CocoTruth:
    """What the raw COCO instances JSON says each image shows (category counts; geometry is not re-derived)."""

    def __init__(self, instances_json: Path) -> None:
        data = json.loads(Path(instances_json).read_text())
        names = {c["id"]: c["name"] for c in data["categories"]}
        self.shown: dict[str, Counter] = {str(im["id"]): Counter() for im in data["images"]}
        self.instance_category: dict[str, str] = {}
        for a in data["annotations"]:
            self.shown[str(a["image_id"])][names[a["category_id"]]] += 1
            self.instance_category[str(a["id"])] = names[a["category_id"]]


# ------------------------------------------------------------------------------------------------ the checker


class Checker:
    def __init__(self, demo: Demo | None = None, vqa: VqaTruth | None = None, authored: Path | None = None,
                 min_agreement: float = 0.8, coco: CocoTruth | None = None) -> None:
        self.demo, self.vqa, self.min_agreement, self.coco = demo, vqa, min_agreement, coco
        self.answers = Answers()
        self.authored = {}
        if authored is not None and Path(authored).suffix == ".jsonl":
            for n, line in enumerate(Path(authored).read_text().splitlines(), 1):
                if line.strip():
                    self.authored[f"line {n}"] = json.loads(line)
        elif authored is not None:
            for k, rec in enumerate(yaml.safe_load(Path(authored).read_text())["questions"]):
                self.authored[f"questions[{k}]"] = rec

    def check(self, item: dict) -> list[str]:
        problems = self._layout(item)
        p = item["provenance"]
        source = p.get("source")
        if source == "vqav2":
            problems += self._vqa(item)
        elif source == "authored":
            problems += self._authored(item)
        elif item["task"] == "basic":
            problems += self._demo_basic(item)
        else:
            problems += self._beyond(item)
        return problems

    # every item
    def _layout(self, item: dict) -> list[str]:
        out = []
        options, p = item["options"], item["provenance"]
        if len(options) != 5:
            out.append("not 5 options")
        refusals = [LETTERS[k] for k, o in enumerate(options) if o == REFUSAL]
        if refusals != [p["refusal"]]:
            out.append(f"refusal at {refusals}, provenance says {p['refusal']}")
        if len({self.answers.key(o) for o in options}) != len(options):
            out.append("two options say the same")
        if item["task"] == "beyond":
            want = [p["refusal"]]
            if item["answer"] != p["refusal"]:
                out.append("a BeyondVisQA answer must be the refusal")
        elif item["task"] == "know":
            want = sorted({item["answer"], p["refusal"]})
        else:
            want = [item["answer"]]
        if p["aware"] != want:
            out.append(f"aware {p['aware']} != {want}")
        if item["task"] != "beyond" and item["answer"] == p["refusal"]:
            out.append("the answer is the refusal")
        return out

    def _text(self, item: dict) -> tuple[str, list[str]]:
        answer = item["options"][LETTERS.index(item["answer"])]
        wrong = [o for k, o in enumerate(item["options"])
                 if LETTERS[k] != item["answer"] and LETTERS[k] != item["provenance"]["refusal"]]
        return answer, wrong

    # VQAv2
    def _vqa(self, item: dict) -> list[str]:
        rec = self.vqa.records[item["provenance"]["question_id"]]
        answer, wrong = self._text(item)
        out = []
        if rec["type"] != item["question_type"]:
            out.append(f"type {item['question_type']} but the rules say {rec['type']}")
        human = [a["answer"] for a in rec["answers"]]
        agree = sum(self.answers.same(h, rec["multiple_choice_answer"]) for h in human) / len(human)
        if agree < self.min_agreement - 1e-9:
            out.append(f"agreement {agree} below {self.min_agreement}")
        if not self.answers.same(answer, rec["multiple_choice_answer"]):
            out.append(f"answer {answer!r} is not the majority answer {rec['multiple_choice_answer']!r}")
        for w in wrong:
            if any(self.answers.same(w, h) for h in human):
                out.append(f"distractor {w!r} is one of the ten human answers (or a synonym)")
            if rec["type"] == "counting":
                if not w.isdigit() or abs(int(w) - int(self.answers.norm(answer))) > 6:
                    out.append(f"counting distractor {w!r} is not a number near {answer}")
            elif rec["type"] == "color":
                if self.answers.norm(w) not in self.answers.colours:
                    out.append(f"colour distractor {w!r} is not a colour")
            elif item["provenance"].get("distractor_writer") == "llm":
                continue  # an LLM's option need not occur in the corpus; the rules above still hold
            elif self.answers.key(w) not in self.vqa.majority_by_type[rec["type"]]:
                out.append(f"distractor {w!r} is no answer of a {rec['type']} question in the corpus")
        return out

    # authored
    def _authored(self, item: dict) -> list[str]:
        rec = self.authored[item["provenance"]["record"]]
        answer, wrong = self._text(item)
        out = []
        head, placeholder, tail = rec["question"].partition("{object}")
        said = item["question"]
        fits = placeholder and said.startswith(head) and said.endswith(tail)
        pointer = said[len(head):len(said) - len(tail)] if fits else None
        if (pointer is None and said != rec["question"]) or (answer, item["task"], item["question_type"]) != (
                rec["answer"], rec["subset"], rec["type"]):
            out.append("question, answer, subset or type differ from the authored record")
        given = rec.get("distractors", [])
        if not set(given) <= set(wrong):
            out.append("an authored distractor is missing")
        if any(self.answers.same(w, answer) for w in wrong):
            out.append("a distractor is the answer")
        if str(rec["image"]).startswith("demo:"):
            category = rec["image"][5:]
            im = self.demo.images[item["provenance"]["image_id"]]
            shown = self.demo.of_category(im, category)
            if len(shown) != 1 or not self.demo.clear(im, shown[0]):
                out.append(f"the image does not show one clear, legible {category}")
            elif pointer is not None and self.pointed_at(im, pointer) is not shown[0]:
                out.append(f"{pointer!r} does not single out the {category}")
        entity = rec.get("entity") or (rec["image"][5:] if str(rec["image"]).startswith("demo:") else None)
        if entity and re.search(rf"\b{re.escape(entity)}(e?s)?\b", said, re.I):
            out.append(f"the question names {entity!r}: it is answered without the image")
        return out

    @staticmethod
    def pointed_at(im: dict, pointer: str) -> dict | None:
        """The one instance a referring expression picks out, else None."""
        if pointer in REFER:
            found = [o for o in im["instances"] if REFER[pointer] in o["attributes"]]
            return found[0] if len(found) == 1 else None
        if pointer == "the largest object":
            big = max(im["instances"], key=lambda o: o["area"])
            return big if all(big["area"] >= 2 * o["area"] for o in im["instances"] if o is not big) else None
        return None

    # demo BasicVisQA
    def _demo_basic(self, item: dict) -> list[str]:
        im = self.demo.images[item["provenance"]["image_id"]]
        if not item["images"][0].endswith(im["file"]):
            return ["the item shows another image"]
        answer, wrong = self._text(item)
        q = item["question"]
        kind = item["question_type"]
        if kind == "color":
            cat = re.fullmatch(r"What colour is the (\w+)\?", q).group(1)
            shown = self.demo.of_category(im, cat)
            if len(shown) != 1 or not self.demo.clear(im, shown[0]):
                return [f"{cat} is not shown exactly once, clearly and legibly"]
            truth = self.demo.colour(shown[0])
            bad = [w for w in wrong if w.lower() not in DEMO_COLOURS or w.lower() == truth]
            drawn = self.demo.drawn_colour(im, shown[0])
            return ([f"colour {answer} != {truth}"] if answer.lower() != truth else []) + \
                ([f"the {cat} is drawn {drawn}, annotated {truth}"] if drawn != truth else []) + \
                [f"wrong colour option {w}" for w in bad]
        if kind == "counting":
            word = re.fullmatch(r"How many (\w+) are in the picture\?", q).group(1)
            cat = PLURALS.get(word, word[:-1])
            n = self.demo.count(im, cat)
            if n is None:
                return [f"{cat}: the count is undecidable (an instance illegible or a look-alike in the picture)"]
            out = [f"count {answer} != {n}"] if answer != str(n) else []
            if sorted(wrong + [answer]) != COUNT_OPTIONS:
                out.append(f"count options {sorted(wrong + [answer])} are not {COUNT_OPTIONS}")
            return out
        if kind == "shape":
            colour, pattern = re.fullmatch(r"What shape is the (\w+) (\w+) object\?", q).groups()
            shown = [o for o in im["instances"] if colour in o["attributes"] and pattern in o["attributes"]]
            if len(shown) != 1 or self.demo.level(im, shown[0]) != "easy" or not self.demo.legible(im, shown[0]):
                return ["the colour and pattern do not pick one clear, legible object"]
            if self.demo.drawn_colour(im, shown[0]) != colour:
                return [f"the {colour} {pattern} object is drawn {self.demo.drawn_colour(im, shown[0])}"]
            cat = shown[0]["category"]
            truth = f"{'An' if cat[0] in 'aeiou' else 'A'} {cat}"
            article = lambda word: "An" if word[0] in "aeiou" else "A"  # noqa: E731
            bad = [w for w in wrong if w == truth or w.split(" ")[0] != article(w.split(" ")[-1])]
            return ([f"shape {answer} != {truth}"] if answer != truth else []) + \
                [f"wrong shape option {w}" for w in bad]
        if kind == "position":
            a, b = re.fullmatch(r"Where is the (\w+) relative to the (\w+)\?", q).groups()
            sa, sb = self.demo.of_category(im, a), self.demo.of_category(im, b)
            if len(sa) != 1 or len(sb) != 1 or not all(self.demo.clear(im, o) for o in sa + sb):
                return ["the two shapes are not each shown once, clearly and legibly"]
            holds = {r[1] for r in im["relations"] if r[0] == sa[0]["id"] and r[2] == sb[0]["id"]}
            holds &= set(DIRECTIONS.values())
            if len(holds) != 1:
                return [f"not exactly one direction holds: {holds}"]
            truth = holds.pop()
            if viewer.side(sa[0], sb[0]) != truth:
                return [f"{a} is {truth} the {b} in the records, but no axis clearly dominates"]
            said = {DIRECTIONS[m] for t in [answer] for m in DIRECTIONS if t == f"It's {m} the {b}"}
            wrong_said = [DIRECTIONS[m] for w in wrong for m in DIRECTIONS if w == f"It's {m} the {b}"]
            out = [] if said == {truth} else [f"position answer {answer!r} but {a} is {truth} the {b}"]
            if truth in wrong_said or len(set(wrong_said)) != 3:
                out.append("position distractors are not the three false directions")
            return out
        return [f"unknown demo type {kind}"]

    # BeyondVisQA
    def _beyond(self, item: dict) -> list[str]:
        if item["provenance"]["source"] != "demo":
            return self._coco_beyond(item)
        im = self.demo.images[item["provenance"]["image_id"]]
        g = item["provenance"]["grounding"]
        q = item["question"].lower()
        cats = Counter(o["category"] for o in im["instances"])
        if item["question_type"] == "nonexistent_objects":
            absent = g["absent"]
            out = [] if absent not in cats else [f"nonexistent {absent} is in the image"]
            if absent not in cats and not self.demo.surely_absent(im, absent):
                out.append(f"a shape in the image could be taken for a {absent}")
            return out + ([] if absent in q else [f"the question does not ask about {absent}"])
        inst = next((o for o in im["instances"] if o["id"] == g["instance"]), None)
        if inst is None or cats[inst["category"]] != 1:
            return ["the asked object is not shown exactly once"]
        out = [] if inst["category"] in q else ["the question does not name the object"]
        level = self.demo.level(im, inst)
        if item["question_type"] == "missing_visual_information":
            reason = self.demo.hidden_reason(im, inst)
            if level != "hard" or reason != g["reason"]:
                out.append(f"missing-information object is {level}/{reason}, not hard/{g['reason']}")
        elif level != "easy" or not self.demo.legible(im, inst):
            out.append(f"the object is {level}, not clearly visible and legible")
        return out

    def _coco_beyond(self, item: dict) -> list[str]:
        shown = self.coco.shown[item["provenance"]["image_id"]]
        g = item["provenance"]["grounding"]
        q = item["question"].lower()
        if item["question_type"] == "nonexistent_objects":
            return ([] if shown[g["absent"]] == 0 else [f"nonexistent {g['absent']} is in the image"]) + \
                ([] if g["absent"] in q else ["the question does not name the absent object"])
        category = self.coco.instance_category[g["instance"]]
        out = [] if shown[category] == 1 else [f"{category} is not shown exactly once"]
        return out + ([] if category in q else ["the question does not name the object"])


# ------------------------------------------------------------------------------------------------ pairs


def check_pairs(items: list[dict], vqa: VqaTruth | None = None) -> list[str]:
    """Problems with the pairs of a build (each item is checked on its own by :meth:`Checker.check`): a pair is two
    items, roles a and b, of one subset and subtask, asking the same question of two different images, whose
    right answers (the text of the gold option) and answer letters differ; BeyondVisQA is never paired (its gold is
    the refusal). Both items of every pair offer the same options in the same order, and with the raw
    files (``vqa``) a VQAv2 pair's two records ask the same words with the same ``question_type`` and have
    majority answers of different keys."""
    members: dict[str, list[dict]] = defaultdict(list)
    for it in items:
        pair = it["provenance"].get("pair")
        if pair is not None:
            members[pair["id"]].append(it)
    out = []
    for pair_id, pair in sorted(members.items()):
        if sorted(it["provenance"]["pair"]["role"] for it in pair) != ["a", "b"]:
            out.append(f"pair {pair_id}: roles {[it['provenance']['pair']['role'] for it in pair]}, not a and b")
            continue
        a, b = pair
        if any(it["task"] == "beyond" for it in pair):
            out.append(f"pair {pair_id}: a BeyondVisQA item is paired")
        for key in ("task", "question_type", "question"):
            if a[key] != b[key]:
                out.append(f"pair {pair_id}: {key} differs ({a[key]!r} / {b[key]!r})")
        if a["images"] == b["images"]:
            out.append(f"pair {pair_id}: both ask of {a['images']}")
        gold = [it["options"][LETTERS.index(it["answer"])].lower() for it in pair]
        if gold[0] == gold[1]:
            out.append(f"pair {pair_id}: both answered {gold[0]!r}")
        if a["answer"] == b["answer"]:
            out.append(f"pair {pair_id}: both answer {a['answer']} (always answering it gets the pair right)")
        if a["options"] != b["options"]:
            out.append(f"pair {pair_id}: the two items offer different options")
        sources = {it["provenance"].get("source") for it in pair}
        if "vqav2" in sources:
            out += [f"pair {pair_id}: {p}" for p in _vqa_pair(a, b, sources, vqa)]
    return out


def _vqa_pair(a: dict, b: dict, sources: set, vqa: VqaTruth | None) -> list[str]:
    if sources != {"vqav2"}:
        return [f"a VQAv2 item is paired with a {sorted(sources - {'vqav2'})} one"]
    out: list[str] = []
    if vqa is None:
        return out
    first, second = (vqa.records[it["provenance"]["question_id"]] for it in (a, b))
    if first["question_id"] == second["question_id"]:
        return out + ["both items are one VQAv2 record"]
    if (first["question"], first["question_type"]) != (second["question"], second["question_type"]):
        out.append("the raw records ask different words or question types")
    if Answers().key(first["multiple_choice_answer"]) == Answers().key(second["multiple_choice_answer"]):
        out.append("the raw records' majority answers are the same")
    if first["image_id"] == second["image_id"]:
        out.append("the raw records are about one image")
    return out
