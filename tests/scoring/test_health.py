"""Item health (issue 44): simulated models of known strengths answer items whose label errors were planted.

The numbers are asserted, so each test can fail: the label-error rule must find the planted errors with recall of
at least 0.9 at precision of at least 0.8 with five models, two of which share a wrong belief (and a naive
"most models agree on another option" rule, checked on the same answers, must not, or the simulation would be too
easy to tell the rules apart); discrimination is re-derived by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import have

from builders.items import make_item, write_items
from scoring.__main__ import main as score_main
from scoring.health import answer_matrix, discrimination, item_health
from tests.scoring.simulated_models import FIVE, pick_traps, plant_errors, predictions, synthetic_items, write_model

SEEDS = range(5)
ITEMS = 1000
ERROR_SHARE = 0.05
TRAP_SHARE = 0.15


def _simulate(seed: int):
    items = synthetic_items(ITEMS, seed)
    planted, truths = plant_errors(items, ERROR_SHARE, seed)
    traps = pick_traps(planted, TRAP_SHARE, seed, skip=list(truths))
    runs = {m.name: predictions(m, planted, truths, traps, seed) for m in FIVE}
    return planted, truths, traps, runs


def test_planted_label_errors_are_found_with_recall_and_precision():
    found = flagged = planted_n = naive_found = naive_flagged = named = 0
    for seed in SEEDS:
        items, truths, traps, runs = _simulate(seed)
        health = item_health(items, runs)
        suspects = set(health.flagged["suspected_label_error"])
        found += len(suspects & truths.keys())
        flagged += len(suspects)
        planted_n += len(truths)
        naive = {i for i, e in health.items.items()
                 if e["models_answer"] not in (None, e["gold"]) and e["models_answer_count"] >= 3}
        naive_found += len(naive & truths.keys())
        naive_flagged += len(naive)
        # what the report names as the likely answer of a found error is (nearly always) the planted truth
        named += sum(health.items[iid]["likely_answer"] == truths[iid] for iid in suspects & truths.keys())
    recall, precision = found / planted_n, found / flagged
    print(f"planted {planted_n}, flagged {flagged}, recall {recall:.3f}, precision {precision:.3f}; naive rule "
          f"recall {naive_found / planted_n:.3f}, precision {naive_found / naive_flagged:.3f}")
    assert recall >= 0.9 and precision >= 0.8
    assert named >= 0.95 * found
    assert naive_found / naive_flagged < 0.8  # shared beliefs and lucky agreement fool a plain majority


def test_the_error_rate_and_model_accuracies_are_estimated():
    items, truths, _, runs = _simulate(0)
    health = item_health(items, runs)
    assert health.error_rate == pytest.approx(ERROR_SHARE, abs=0.02)
    estimated = [health.models[m.name]["estimated_accuracy"] for m in FIVE]
    assert estimated == sorted(estimated, reverse=True)  # the strengths come out in order


def _tiny(tmp_path: Path):
    """Four items answered by four models, hand-made: item 0 every model right, item 1 only the weak ones
    right (negative discrimination), items 2 and 3 the stronger models right."""
    items = [make_item(benchmark="mioh", task="existence", question_type="comprehensive", pressure="easy",
                       images=[f"images/{k}.png"], question=f"Q{k}?", options=("cat", "dog", "cow"), answer="A",
                       provenance={}) for k in range(4)]
    grid = {"m1": "AAAA", "m2": "ACAA", "m3": "AABB", "m4": "AABC"}  # m1 strongest
    runs = {m: {it.id: f"Answer: {a}" for it, a in zip(items, answers)} for m, answers in grid.items()}
    return items, runs


def test_discrimination_is_the_corrected_item_total_correlation(tmp_path):
    items, runs = _tiny(tmp_path)
    matrix = answer_matrix(items, runs)
    right = matrix.right
    assert right.tolist() == [[1, 1, 1, 1], [1, 0, 1, 1], [1, 1, 0, 0], [1, 1, 0, 0]]
    disc = discrimination(right)
    assert disc[0] is None  # every model right: no spread
    for i in (1, 2, 3):  # Pearson's r of the item against the rest score, by hand
        x = right[:, i]
        rest = (right.sum(axis=1) - x) / (right.shape[1] - 1)
        expected = np.corrcoef(x, rest)[0, 1]
        assert disc[i] == pytest.approx(expected)
    assert disc[1] < 0 < disc[2]
    health = item_health(items, runs)
    assert health.items[items[0].id]["flags"] == ["answered_by_every_model"]
    assert "negative_discrimination" in health.items[items[1].id]["flags"]
    assert health.items[items[2].id]["accuracy"] == 0.5


def test_unparsed_answers_are_wrong_and_missing_ones_left_out():
    items, runs = _tiny(None)
    runs["m4"][items[0].id] = "I am not sure what to say."
    del runs["m3"][items[0].id]
    health = item_health(items, runs)
    entry = health.items[items[0].id]
    assert entry["models"] == 3 and entry["accuracy"] == pytest.approx(2 / 3)
    assert "answered_by_every_model" not in entry["flags"]


def test_health_command_writes_the_report(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    items, truths, traps, _ = _simulate(1)
    items, truths = items[:300], {k: v for k, v in truths.items() if k in {it.id for it in items[:300]}}
    write_items(tmp_path / "items.jsonl", items)
    files = [str(write_model(tmp_path / f"{m.name}.jsonl", m, items, truths, traps, 1)) for m in FIVE]
    assert score_main(["health", str(tmp_path / "items.jsonl"), "--predictions", *files,
                       "--out", str(tmp_path / "out")]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "existence / hard_negative" in out and "Suspected label errors" in out
    report = json.loads((tmp_path / "out" / "health.json").read_text())
    suspects = set(report["suspected_label_errors"])
    assert len(suspects & truths.keys()) >= 0.9 * len(truths) and len(suspects & truths.keys()) >= 0.8 * len(suspects)
    assert {c["task"] for c in report["cells"]} == {"existence", "counting"}
    assert sum(c["items"] for c in report["cells"]) == 300
    if have("matplotlib"):  # the plot needs the release extra; without it the report says so
        assert (tmp_path / "out" / "health.png").stat().st_size > 0
    else:
        assert "no health.png: the plot needs matplotlib" in captured.err


def test_health_command_refuses_bad_input_in_one_line(tmp_path, capsys):
    items = synthetic_items(10, 0)
    write_items(tmp_path / "items.jsonl", items)
    good = tmp_path / "a.jsonl"
    good.write_text("".join(json.dumps({"id": it.id, "output": "A"}) + "\n" for it in items))
    bad = tmp_path / "b.jsonl"
    bad.write_text('{"id": "x"}\n')
    assert score_main(["health", str(tmp_path / "items.jsonl"), "--predictions", str(good), str(bad)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "b.jsonl: line 1" in err
    stranger = tmp_path / "c.jsonl"
    stranger.write_text(json.dumps({"id": "0000000000000000", "output": "A"}) + "\n")
    assert score_main(["health", str(tmp_path / "items.jsonl"), "--predictions", str(good), str(stranger)]) == 2
    assert "not items of the release" in capsys.readouterr().err
    assert score_main(["health", str(tmp_path / "items.jsonl"), "--predictions", str(good)]) == 2
    assert "at least two models" in capsys.readouterr().err
