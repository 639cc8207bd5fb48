"""Predictive scoring per dataset (Tables 2 and 3): items built from ActivityNet, CLEVRER and RoboSet fixtures,
judged by the loopback stub with scores coded in the outputs; the per-dataset means are worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builders import predictive
from builders.items import read_items
from scoring.__main__ import main as scoring_main
from tests.builders.predictive.source_fixtures import make_activitynet, make_clevrer, make_roboset
from tests.conftest import have, require
from tests.scoring.test_predictive_scoring import stub_judge, write_predictions
from tests.support.openai_stub import StubOpenAI


def test_scores_per_dataset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    require(have("openai"), "openai (the llm extra)", "pip install -e '.[llm]'")
    require(have("cv2"), "OpenCV", "bash .ci/install-video.sh")
    anet, clevrer, robo = make_activitynet(tmp_path / "a"), make_clevrer(tmp_path / "c"), make_roboset(tmp_path / "r")
    assert predictive.main(["--out", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache"), "--no-progress",
                            "--patterns", "0", "--no-clip", "--activitynet", str(anet["json"]),
                            "--clevrer-annotations", str(clevrer["annotations"]), "--roboset", str(robo["root"]),
                            "--videos", str(tmp_path)]) == 0
    build = tmp_path / "out" / "data-seed0"
    items = read_items(build / "items.jsonl")
    by = {s: [i for i in items if i.provenance["source"] == s] for s in ("activitynet", "clevrer", "roboset")}
    outputs = {by["activitynet"][0].id: "1. lifts S=4,2,0", by["activitynet"][1].id: "1. waves S=2,4,2",
               by["clevrer"][0].id: "1. collide S=3,4,1", by["clevrer"][1].id: "1. nothing S=1,2,0",
               by["roboset"][0].id: "1. places S=5,5,0"}
    preds = write_predictions(tmp_path / "preds.jsonl", outputs)
    with StubOpenAI(responder=stub_judge) as stub:
        assert scoring_main(["predictive", "--release", str(build), "--predictions", str(preds), "--out",
                             str(tmp_path / "res"), "--cache-dir", str(tmp_path / "cache"), "--llm-model", "judge",
                             "--llm-base-url", stub.base_url, "--no-plots"]) == 0
    results = json.loads((tmp_path / "res" / "results.json").read_text())["datasets"]
    assert list(results) == ["human_activity/activitynet", "physical_interaction/clevrer",
                             "physical_interaction/roboset"]
    assert results["human_activity/activitynet"]["dimensions"] == pytest.approx(
        {"Plausibility": 3.0, "Specificity": 3.0, "Diversity": 1.0})
    assert results["physical_interaction/clevrer"]["dimensions"] == pytest.approx(
        {"Specificity": 2.0, "Logical Consistency": 3.0, "Accuracy": 0.5})
    roboset = results["physical_interaction/roboset"]
    assert roboset["judged"] == 1 and roboset["percent_average"] == pytest.approx((100 + 100 + 0) / 3)
    assert "Tables 2 and 3 layout" in capsys.readouterr().out
