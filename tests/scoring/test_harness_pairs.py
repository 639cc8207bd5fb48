"""Pairs in the harness exports: lmms-eval tasks with pairs carry ``group_acc`` (a constant answer scores 0,
a half pair is left out) and VLMEvalKit sheets carry the pair id and role."""

from __future__ import annotations

import json
import math

import yaml

from data_cards.harness.lmms_eval import GROUP_METRIC, task_yaml
from data_cards.harness.rows import ReleaseTask
from data_cards.harness.vlmevalkit import mcq_records
from scoring.harness.lmms_eval_utils import group_accuracy_of_values, make_process_results


def _rows() -> list[dict]:
    """Three pairs of one MCQ on two images (golds differ) and one item without a partner."""
    rows = []
    for k, golds in enumerate([("A", "B"), ("C", "A"), ("B", "D"), ("A", None)]):
        for role, gold in zip("ab", golds):
            if gold is None:
                continue
            pair = {"pair": {"id": f"p{k}", "role": role}} if golds[1] else {}
            rows.append({"id": f"{k}{role}", "benchmark": "mmsap", "task": "basic", "question_type": "color",
                         "pressure": "none", "images": [{"bytes": f"{k}{role}".encode(), "path": None}],
                         "image_names": [f"images/{k}{role}.png"], "context": "", "question": f"Q{k}?",
                         "options": ["w", "x", "y", "z"], "answer": gold, "provenance": json.dumps(pair)})
    return rows


def _group(rows: list[dict], outputs: dict[str, str]) -> float:
    process = make_process_results(("none",))
    return group_accuracy_of_values([process(r, [outputs[r["id"]]])[GROUP_METRIC] for r in rows])


def test_lmms_eval_tasks_with_pairs_report_group_accuracy():
    rows = _rows()
    task = ReleaseTask("basic", "basic", "basic", rows)
    config = yaml.safe_load(task_yaml(task, release="mmsap", repo_id="o/mmsap", version="1.0.0", pressures=["none"])
                            .replace("!function ", ""))
    metrics = {m["metric"]: m["aggregation"] for m in config["metric_list"]}
    assert metrics[GROUP_METRIC] == "utils.group_accuracy_of_values"
    for letter in "ABCD":
        assert _group(rows, {r["id"]: letter for r in rows}) == 0
    truthful = {r["id"]: r["answer"] for r in rows}
    assert _group(rows, truthful) == 1
    assert _group(rows, {**truthful, "0a": "D"}) == 2 / 3  # one wrong answer fails its pair
    assert _group(rows[1:], truthful) == 1  # p0 lost its role a (dropped in review): left out, not failed
    assert math.isnan(_group(rows[-1:], truthful))  # no complete pair


def test_vlmevalkit_sheets_carry_the_pair():
    records = list(mcq_records(_rows()))
    assert [(r["id"], r.get("pair_id"), r.get("pair_role")) for r in records[:2]] == [("0a", "p0", "a"),
                                                                                      ("0b", "p0", "b")]
    assert "pair_id" not in records[-1]
