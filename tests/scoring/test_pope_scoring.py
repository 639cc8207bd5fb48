"""POPE's metrics on an imported POPE build, hand-computed; the answers are read as POPE's evaluate.py does."""

from __future__ import annotations

import json

from builders.imports.cli import main as import_main
from scoring.__main__ import main as scoring_main
from scoring.pope import pope_answer


def test_pope_answer_reading():
    assert pope_answer("Yes, there is a dog.") == "yes"
    assert pope_answer("No, there is not.") == "no"
    assert pope_answer("There is not a dog in the image. But maybe yes.") == "no"
    assert pope_answer("I cannot tell") == "yes"  # POPE counts everything else as yes


def test_scoring_an_imported_pope_build(tmp_path, capsys):
    rows = [{"question_id": k, "image": f"COCO_val2014_{k // 2:012d}.jpg", "text": f"Is there a {obj} in the image?",
             "label": label} for k, (obj, label) in enumerate([("dog", "yes"), ("cat", "no"), ("cup", "yes"),
                                                                ("car", "no"), ("bus", "yes"), ("sink", "no")])]
    source = tmp_path / "coco_pope_adversarial.json"
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert import_main(["pope", str(source), "--out", str(tmp_path / "b"), "--name", "p"]) == 0
    items = [json.loads(line) for line in (tmp_path / "b" / "p" / "items.jsonl").read_text().splitlines()]
    by_object = {it["provenance"]["object"]: it["id"] for it in items}
    # dog yes->yes (TP), cat no->yes (FP), cup yes->no (FN), car no->no (TN), bus yes->yes (TP); sink missing
    outputs = {"dog": "Yes.", "cat": "Yes, there is.", "cup": "No.", "car": "There is not.", "bus": "yes"}
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"id": by_object[o], "output": t, "model": "m"}) + "\n"
                             for o, t in outputs.items()))
    assert scoring_main(["pope", "--release", str(tmp_path / "b" / "p"), "--predictions", str(preds), "--out",
                         str(tmp_path / "r"), "--no-plots"]) == 0
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    # TP 2, FP 1, FN 1, TN 1: accuracy 3/5, precision 2/3, recall 2/3, F1 2/3, yes ratio 3/5
    assert results["settings"]["adversarial"] == {"n": 5, "accuracy": 0.6, "precision": 0.6667, "recall": 0.6667,
                                                  "f1": 0.6667, "yes_ratio": 0.6, "unparsed": 0}
    assert results["coverage"] == {"items": 6, "scored": 5, "missing": 1}
    assert "POPE (%)" in capsys.readouterr().out


def test_perfect_predictions_on_popev2_score_100(tmp_path, capsys):
    """Issue 38: with 500 ids for 1,000 POPEv2 questions, scoring refused perfect predictions ("a second
    prediction for item ...")."""
    from tests.lint.test_imports import write_popev2

    source = write_popev2(tmp_path, 50)
    assert import_main(["pope", str(source), "--out", str(tmp_path / "b"), "--name", "v2"]) == 0
    items = [json.loads(line) for line in (tmp_path / "b" / "v2" / "items.jsonl").read_text().splitlines()]
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"id": it["id"], "output": it["answer"].capitalize() + ".", "model": "m"})
                             + "\n" for it in items))
    assert scoring_main(["pope", "--release", str(tmp_path / "b" / "v2"), "--predictions", str(preds), "--out",
                         str(tmp_path / "r"), "--no-plots"]) == 0
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    assert results["coverage"] == {"items": 100, "scored": 100, "missing": 0}
    assert set(results["settings"]) == {"all", "normal", "counterfactual"}
    for setting, m in results["settings"].items():
        assert (m["accuracy"], m["precision"], m["recall"], m["f1"]) == (1.0, 1.0, 1.0, 1.0), setting


SPLITS = {  # per image: the three objects present (asked in every split) and each split's three absent ones
    "random": ["kite", "oven", "bed"], "popular": ["chair", "car", "cup"], "adversarial": ["chair", "bowl", "fork"]}
PRESENT = ["dog", "person", "bench"]


def write_pope_splits(folder, images: int = 2) -> list:
    """POPE's three COCO split files as its generator writes them: ``{"question_id", "image", "text", "label"}``
    per line, three yes then three no per image; the yes questions (and popular's and adversarial's "chair") are
    the same question in several splits."""
    paths = []
    for setting, absent in SPLITS.items():
        asked = [(img, obj, label) for img in range(images)
                 for obj, label in [(o, "yes") for o in PRESENT] + [(o, "no") for o in absent]]
        rows = [{"question_id": k + 1, "image": f"COCO_val2014_{img:012d}.jpg",
                 "text": f"Is there {'an' if obj[0] in 'aeiou' else 'a'} {obj} in the image?", "label": label}
                for k, (img, obj, label) in enumerate(asked)]
        path = folder / f"coco_pope_{setting}.json"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        paths.append(path)
    return paths


def test_three_splits_get_unique_ids_share_questions_and_score_per_split(tmp_path, capsys):
    paths = write_pope_splits(tmp_path)
    assert import_main(["pope", *map(str, paths), "--out", str(tmp_path / "b"), "--name", "p"]) == 0
    build = tmp_path / "b" / "p"
    items = [json.loads(line) for line in (build / "items.jsonl").read_text().splitlines()]
    assert len(items) == 36 and len({it["id"] for it in items}) == 36
    shared = {(it["pressure"], it["provenance"]["object"]): it["provenance"].get("shared_by") for it in items}
    assert shared[("random", "dog")] == ["adversarial", "popular", "random"]
    assert shared[("popular", "chair")] == ["adversarial", "popular"] and shared[("random", "kite")] is None
    duplicates = json.loads((build / "build.json").read_text())["lint"]["checks"]["duplicates"]
    assert duplicates["flagged"] == 0 and duplicates["summary"]["exact_groups"] == 0
    assert duplicates["summary"]["shared_groups"] == 2 * 4  # per image: three yes questions and "chair"
    # one prediction per POPE question, written as a model would answer: right everywhere but random's "no"s
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"id": it["id"], "model": "m", "output": "Yes, there is." if
                                         it["pressure"] == "random" or it["answer"] == "yes" else "No."}) + "\n"
                             for it in items))
    assert scoring_main(["pope", "--release", str(build), "--predictions", str(preds), "--out", str(tmp_path / "r"),
                         "--no-plots"]) == 0
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    assert results["coverage"] == {"items": 36, "scored": 36, "missing": 0}
    assert {s: m["accuracy"] for s, m in results["settings"].items()} == {
        "all": round(30 / 36, 4), "random": 0.5, "popular": 1.0, "adversarial": 1.0}
    assert results["settings"]["random"]["precision"] == 0.5
    assert results["strict"] == results["settings"]  # every output here is read alike by both rules


def test_pope_reading_beside_the_strict_one_and_zero_over_zero_is_none(tmp_path, capsys):
    from scoring.pope import metrics, run, strict_answer

    assert [pope_answer(o) for o in ("NO", "Nope", "I don't know.", "Yes, there is a cup, not a dog.")] == [
        "yes", "yes", "yes", "no"]
    assert [strict_answer(o) for o in ("NO", "Nope", "I don't know.", "Yes, there is a cup, not a dog.")] == [
        "no", "no", None, "yes"]
    # POPEv2's counterfactual side where every truth is "no" and a perfect model never says yes: no precision,
    # no recall, no F1 (0/0), not 0
    perfect = metrics([("no", "no")] * 4)
    assert perfect == {"n": 4, "accuracy": 1.0, "precision": None, "recall": None, "f1": None, "yes_ratio": 0.0,
                       "unparsed": 0}
    from builders.items import make_item

    items = [make_item(benchmark="pope", task="existence", question_type="yes_no", pressure="counterfactual",
                       images=[f"{k}.jpg"], question="Is there a dog in the image?", options=(), answer="no")
             for k in range(2)]
    results = run(items, {items[0].id: "NO", items[1].id: "I don't know."})
    assert results["settings"]["counterfactual"]["accuracy"] == 0.0  # POPE's rule reads both as yes
    assert results["strict"]["counterfactual"] == {"n": 2, "accuracy": 0.5, "precision": None, "recall": None,
                                                       "f1": None, "yes_ratio": 0.0, "unparsed": 1}
    from scoring.pope import print_report

    print_report(results)
    out = capsys.readouterr().out
    assert "POPE's reading" in out and "strict reading" in out and "none" in out
