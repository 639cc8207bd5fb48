"""Issue 54: the lint reads Reefknot's yes/no questions as carefully as its references, and POPE's files as a
linguist would. Sentences are made here in the published layouts (Reefknot's release JSON lines, POPE's COCO /
GQA / A-OKVQA split files, POPEv2's annotations.json), each known good or of one fault family by construction;
the whole wording check (every rule, spelling included) must flag at least 80 % of each family and at most 1 % of
the good sentences."""

from __future__ import annotations

import json
import random
from pathlib import Path

from lint.cli import main as lint_main
from tests.conftest import have, require

SINGULAR = """man woman boy girl dog cat horse cathedral steeple hydrant broccoli grass snow bench bus tree sign car
    truck laptop cup bottle plate table kite umbrella countertop hoodie smartphone cafe backsplash cliffside lamp
    chair giraffe elephant pizza""".split()
COMPOUNDS = ["front wheel", "top shelf", "trash can", "fire hydrant", "traffic light", "tennis racket"]
PLURAL = "dvds tvs people cars dogs bananas scissors skis men books clouds".split()
OBJECTS = "road table field wall fence tree building shelf sidewalk plate street water beach grass".split()
PLACES = ["on", "near", "behind", "under", "above", "beside", "next to", "in front of", "on top of", "inside"]
ACTIONS = ["holding", "riding", "wearing", "carrying", "covering", "sitting on", "standing next to",
           "looking at", "parked on", "leaning on"]
FINITE = ["holds", "rides", "wears", "carries", "covers", "eats", "pulls", "pushes", "watches", "touches"]
POPE_OBJECTS = ["dog", "apple", "umbrella", "playing field", "fire hydrant", "traffic light", "tennis racket",
                "teddy bear", "dining table", "cell phone", "hair drier", "tv", "oven", "elephant", "orange",
                "skateboard", "surfboard", "sports ball", "wine glass", "hot dog"]
JOINED = ["playingfield", "tennisracket", "trafficlight", "teddybear", "diningtable", "pottedplant",
          "sportsball", "baseballbat", "stopsign", "firehydrant"]


def _a(word: str) -> str:
    return ("an " if word[0] in "aeiou" else "a ") + word


def good_sentences(rng: random.Random) -> dict[str, list[str]]:
    """Good text per layout: Reefknot yes/no questions and references, POPE's questions."""
    subjects = SINGULAR + COMPOUNDS
    yes_no, references = set(), set()
    while len(yes_no) < 200:
        s, o, rel = rng.choice(subjects), rng.choice(OBJECTS), rng.choice(PLACES + ACTIONS)
        if s != o:
            yes_no.add(f"Is the {s} {rel} {o} in this photo?")
        p = rng.choice(PLURAL)
        yes_no.add(f"Are the {p} {rng.choice(PLACES)} {rng.choice(OBJECTS)} in this photo?")
    while len(references) < 120:
        s, o, rel = rng.choice(subjects), rng.choice(OBJECTS), rng.choice(PLACES + ACTIONS)
        if s != o:
            references.add(f"{s} is {rel} {o}.")
        references.add(f"{rng.choice(PLURAL)} are {rng.choice(PLACES)} {rng.choice(OBJECTS)}.")
    pope = [f"Is there {_a(obj)} in the image?" for obj in POPE_OBJECTS]
    return {"yes_no": sorted(yes_no), "references": sorted(references), "pope": pope}


def fault_families(rng: random.Random) -> dict[str, list[str]]:
    """Each family of the issue, 30 questions or more, in Reefknot's yes/no wording or POPE's."""
    nouns = [s for s in SINGULAR if s not in ("people",)]
    pick = lambda: (rng.choice(nouns), rng.choice(OBJECTS))  # noqa: E731
    families: dict[str, set[str]] = {k: set() for k in ("are_singular", "aux_finite", "besides", "next_x",
                                                         "same_object")}
    while min(len(v) for v in families.values()) < 30:
        s, o = pick()
        families["are_singular"].add(f"Are the {s} {rng.choice(PLACES)} {o} in this photo?")
        families["aux_finite"].add(f"Is the {s} {rng.choice(FINITE)} {o} in this photo?")
        families["besides"].add(f"Is the {s} besides {o} in this photo?")
        families["next_x"].add(f"Is the {s} next {o} in this photo?")
        families["same_object"].add(f"Is the {s} {rng.choice(PLACES + ACTIONS)} {s} in this photo?")
    out = {k: sorted(v) for k, v in families.items()}
    out["joined"] = [f"Is there {_a(obj)} in the image?" for obj in JOINED]
    return out


def reefknot_rows(questions: list[str], references: list[str]) -> list[dict]:
    """Reefknot's release lines: yes/no questions (balanced per image) and VQA references."""
    rows = [{"image_id": str(1 + k // 2), "query_prompt": q, "label": "yes" if k % 2 else "no", "type": "Yes/No",
             "relation_type": "perception"} for k, q in enumerate(questions)]
    for k, ref in enumerate(references):
        subject = ref.split(" is ")[0].split(" are ")[0]
        rows.append({"image_id": str(5000 + k), "query_prompt": f"What is the relation with {subject} and the "
                     "object in this photo? Please answer in the following format: <subject> <relation> <object>.",
                     "label": ref, "type": "VQA", "relation_type": "perception"})
    return rows


def pope_rows(questions: list[str], images: str) -> list[dict]:
    """POPE's split file layout (COCO, A-OKVQA, GQA): three yes and three no per image."""
    return [{"question_id": k + 1, "image": images.format(k // 6), "text": q,
             "label": "yes" if k % 6 < 3 else "no"} for k, q in enumerate(questions)]


def popev2_rows(questions: list[str]) -> list[dict]:
    """POPEv2's annotations.json: each question of a COCO image and of its edited copy."""
    rows = []
    for k, q in enumerate(questions):
        obj = q.removeprefix("Is there ").removesuffix(" in the image?").split(" ", 1)[1]
        for folder, label in (("normal_images", "Yes"), ("images", "No")):
            rows.append({"image_id": 139 + k, "query": q, "target_object": obj, "label": label,
                         "image_name": f"/{folder}/{139 + k:012d}.jpg"})
    return rows


def lint_reasons(folder: Path, name: str, fmt: str, rows: list[dict], array: bool = False) -> list[list[str]]:
    """The wording reasons of every line of one file linted as ``--format fmt``, in file order."""
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rows) if array else "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = folder / (name.replace("/", "_") + "-lint")
    assert lint_main([str(path), "--format", fmt, "--out", str(out), "--checks", "wording"]) == 0
    return [[why for why in json.loads(line)["reasons"] if why.startswith("wording")]
            for line in (out / "issues.jsonl").read_text().splitlines()]


def _objects(questions: list[str]) -> list[str]:
    return [q.removeprefix("Is there ").removesuffix(" in the image?").split(" ", 1)[1] for q in questions]


def test_fault_families_are_caught_and_good_sentences_pass(tmp_path, spacy_model, capsys):
    require(have("spellchecker") and have("wordfreq"), "the word lists", "pip install -e .[lint]")
    rng = random.Random(54)
    good, bad = good_sentences(rng), fault_families(rng)
    questions = good["yes_no"] + [q for k in ("are_singular", "aux_finite", "besides", "next_x", "same_object")
                                  for q in bad[k]]
    reasons = lint_reasons(tmp_path, "reefknot.jsonl", "reefknot", reefknot_rows(questions, good["references"]))
    by_text = dict(zip(questions + good["references"], reasons))
    pope_good, joined = good["pope"] * 3, bad["joined"] * 3  # three images each
    for name, images in (("coco/coco_pope_random.json", "COCO_val2014_{:012d}.jpg"),
                         ("gqa/gqa_pope_popular.json", "n{:06d}.jpg"),
                         ("aokvqa/aokvqa_pope_adversarial.json", "COCO_val2014_{:012d}.jpg")):
        rows = pope_rows(pope_good + joined, images)
        for row, obj in zip(rows, _objects(pope_good + joined)):
            row["object"] = obj  # GQA's and A-OKVQA's files name the object; it is allowed, unless joined
        found = lint_reasons(tmp_path, name, "pope", rows)
        by_text.update({f"{name}: {row['text']}": why for row, why in zip(rows, found)})
    v2 = popev2_rows(good["pope"])
    found = lint_reasons(tmp_path, "popev2/annotations.json", "pope", v2, array=True)
    by_text.update({f"popev2: {row['query']}": why for row, why in zip(v2, found)})

    good_texts = good["yes_no"] + good["references"] + [t for t in by_text if ": " in t and not any(
        j in t for j in JOINED)]
    false_flags = {t: by_text[t] for t in good_texts if by_text[t]}
    rates = {family: sum(bool(by_text[t]) for t in texts) / len(texts) for family, texts in bad.items()
             if family != "joined"}
    joined_texts = [t for t in by_text if any(j in t for j in JOINED)]
    rates["joined"] = sum(any("spelling" in w for w in by_text[t]) for t in joined_texts) / len(joined_texts)
    with capsys.disabled():
        print(f"\ngood sentences: {len(good_texts)}, false flags: {len(false_flags)} "
              f"({len(false_flags) / len(good_texts):.1%})")
        for family, rate in rates.items():
            print(f"  {family:<14} flagged {rate:.0%}")
        for text, why in false_flags.items():
            print(f"  false flag: {text} {why}")
        print("  missed:", sorted({t for t in joined_texts if not by_text[t]} | {
            t for f, texts in bad.items() if f != "joined" for t in texts if not by_text[t]}))
    assert len(good_texts) >= 300
    assert len(false_flags) <= 0.01 * len(good_texts), false_flags
    assert all(rate >= 0.8 for rate in rates.values()), rates


def test_a_missing_word_list_is_one_line_in_the_summary_not_false_flags(tmp_path, monkeypatch, capsys):
    """Without the lint extra's word lists spelling is off, the table says so, and no word is flagged (before,
    a partial list flagged "hoodie", "countertop" and said nothing)."""
    import sys

    from builders.lint.dictionary import load_dictionary

    monkeypatch.setitem(sys.modules, "wordfreq", None)  # as if not installed
    load_dictionary.cache_clear()
    try:
        rows = [{"image_id": "1", "query_prompt": "Is the boy wearing hoodie in this photo?", "label": "yes",
                 "type": "Yes/No", "relation_type": "perception"},
                {"image_id": "1", "query_prompt": "Is the cup on teh countertop in this photo?", "label": "no",
                 "type": "Yes/No", "relation_type": "perception"}]
        reasons = lint_reasons(tmp_path, "reefknot.jsonl", "reefknot", rows)
    finally:
        load_dictionary.cache_clear()
    section = json.loads((tmp_path / "reefknot.jsonl-lint" / "lint.json").read_text())
    assert section["checks"]["wording"]["summary"]["dictionary"].startswith("off (install the lint extra")
    assert not any("spelling" in why for whys in reasons for why in whys)
    assert "no dictionary: spelling not checked" in capsys.readouterr().out
