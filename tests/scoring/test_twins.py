"""Release against twin (issue 44): a model that memorised the release (right on every item it saw, at its true
skill on fresh items) is told apart from models that did not, by the Newcombe interval of the accuracy gap."""

from __future__ import annotations

import json

import pytest

from builders.items import write_items
from scoring.__main__ import main as score_main
from scoring.twins import compare, hits
from tests.conftest import have, require
from tests.scoring.simulated_models import SimModel, predictions, synthetic_items, write_model

require(have("statsmodels"), "statsmodels (the release extra: the intervals)", "pip install -e '.[release]'")

N = 400


def _sets():
    release = synthetic_items(N, 3, tag="release")
    twin = synthetic_items(N, 4, tag="twin")
    honest = SimModel("honest", 0.6)
    memoriser = SimModel("memoriser", 0.6, memorised=frozenset(it.id for it in release))
    strong = SimModel("strong", 0.85)
    return release, twin, (honest, memoriser, strong)


def test_a_memorising_model_is_told_apart():
    release, twin, models = _sets()
    gaps = {m.name: compare(m.name, hits(release, predictions(m, release, {}, {}, 3)),
                            hits(twin, predictions(m, twin, {}, {}, 4))) for m in models}
    memo = gaps["memoriser"]
    assert memo.accuracy == 1.0 and memo.twin_accuracy == pytest.approx(0.6, abs=0.06)
    assert memo.larger_than_chance and memo.low > 0.25 and memo.p_value < 1e-6
    for name in ("honest", "strong"):
        assert not gaps[name].larger_than_chance and gaps[name].low < 0 < gaps[name].high
    # the interval is Newcombe's: wider than the gap's rounding, narrower than +-0.2 at 400 items a side
    assert 0.05 < memo.high - memo.low < 0.2


def test_twin_command_prints_and_writes_the_comparison(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    release, twin, models = _sets()
    write_items(tmp_path / "release.jsonl", release)
    write_items(tmp_path / "twin.jsonl", twin)
    ours = [str(write_model(tmp_path / f"{m.name}.jsonl", m, release, {}, {}, 3)) for m in models]
    theirs = [str(write_model(tmp_path / f"{m.name}-twin.jsonl", m, twin, {}, {}, 4)) for m in models]
    assert score_main(["twin", str(tmp_path / "release.jsonl"), str(tmp_path / "twin.jsonl"), "--predictions",
                       *ours, "--twin-predictions", *theirs, "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    rows = {line.split()[1]: line for line in out.splitlines() if line.startswith("│")}
    assert rows["memoriser"].rstrip(" │").endswith("yes") and rows["honest"].rstrip(" │").endswith("no")
    saved = json.loads((tmp_path / "out" / "twin.json").read_text())
    assert [m["larger_than_chance"] for m in saved["models"]] == [False, True, False]
    assert score_main(["twin", str(tmp_path / "release.jsonl"), str(tmp_path / "twin.jsonl"), "--predictions",
                       *ours, "--twin-predictions", *theirs[:2]]) == 2
    assert "give one of each per model" in capsys.readouterr().err
