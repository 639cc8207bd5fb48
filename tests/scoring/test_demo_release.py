"""Issue 10's "done when": a demo MIOH release (with the decomposed ablation) answered by the stand-in model
through ``python -m scoring.run`` and scored by ``python -m scoring mioh``; every number re-derived here with
plain code over the build's items.jsonl."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from builders import mioh
from builders.items import read_items
from data_cards.release import release
from scoring.__main__ import main as score_main
from scoring.run import main as run_main
from tests.builders.mioh.test_build import cache_dir  # noqa: F401 - the session's demo-world cache
from tests.conftest import have, require, require_release_extra
from tests.support.openai_stub import StubOpenAI, VisionAnswers

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def demo_release(tmp_path_factory, cache_dir) -> tuple[Path, Path]:  # noqa: F811
    require_release_extra()
    require(have("openai"), "openai (the llm extra: scoring.run asks the model)", "pip install -e '.[llm]'")
    out = tmp_path_factory.mktemp("demo")
    assert mioh.main(["--n-questions", "1", "--decomposed", "--out", str(out / "builds"), "--cache-dir",
                      str(cache_dir), "--no-progress"]) == 0
    build = out / "builds" / "n4-seed0-decomposed"
    return build, release(build, "0.1.0", include_unreviewed=True, out=out / "releases").path


@pytest.mark.parametrize("pattern", ["truth", "A"])
def test_demo_release_answered_and_scored(demo_release, tmp_path: Path, pattern: str) -> None:
    build, release_dir = demo_release
    items = read_items(build / "items.jsonl")
    main_items = [it for it in items if it.question_type != "decomposed"]
    responder = VisionAnswers(items, build, pattern)
    with StubOpenAI(responder=responder) as stub:
        assert run_main([str(release_dir), "--llm-model", f"stub-{pattern}", "--llm-base-url", stub.base_url,
                         "--out", str(tmp_path / "p.jsonl"), "--cache-dir", str(tmp_path / "cache"),
                         "--no-progress"]) == 0
    assert score_main(["mioh", "--release", str(release_dir), "--predictions", str(tmp_path / "p.jsonl"),
                       "--out", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache")]) == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert len(responder.asked) == len(items)
    overall = results["table1"]["overall"]
    controls = [it for it in main_items if it.provenance.get("context_truth") == "true"]
    paper = [it for it in main_items if it.provenance.get("context_truth") != "true"]
    assert controls and overall["average"]["n"] == len(paper)  # Table 1: the paper's misleading contexts only
    ctl = results["context_controls"]["overall"]
    assert sum(v["control"]["n"] for v in ctl.values()) == len(controls)
    if pattern == "truth":
        assert overall["average"]["accuracy"] == 1.0
        assert all(v["control"]["accuracy"] in (None, 1.0) and v["gap"] in (None, 0.0) for v in ctl.values())
        assert results["decomposed"]["decomposed_accuracy"] == 1.0 == results["decomposed"]["comprehensive_accuracy"]
        assert results["coverage"]["all"]["unparsed"] == 0
    else:  # always "A": right exactly where the answer is A; the yes/no questions are unparsed
        expected = sum(it.answer == "A" for it in paper) / len(paper)
        assert overall["average"]["accuracy"] == pytest.approx(expected, abs=1e-6)
        per_pressure = Counter(it.pressure for it in paper if it.answer == "A")
        for pressure, n in per_pressure.items():
            total = sum(it.pressure == pressure for it in paper)
            assert overall[pressure]["accuracy"] == pytest.approx(n / total, abs=1e-6)
        assert results["extraction"]["unparsed"] == len(items) - len(main_items)
        assert results["letters"]["model"]["A"] == len(main_items)
    groups = {g for it in items if it.question_type == "decomposed" for g in it.provenance["groups"]}
    assert results["decomposed"]["groups"] == len(groups) > 0
    assert {p.name for p in (tmp_path / "out").iterdir()} >= {"results.json", "accuracy_robustness.png",
                                                             "decomposed.png"}
