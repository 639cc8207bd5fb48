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
                                                  "f1": 0.6667, "yes_ratio": 0.6}
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
