"""Predictive scoring: the three judges against the loopback stub (well-formed, malformed once, malformed twice,
refusing), strict reply parsing, per-task averages and the Table 11 layout against hand-computed values, and
the judge validation (references scored, distance from full marks)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from builders import predictive
from builders.items import read_items
from scoring.__main__ import main as scoring_main
from scoring.predictive.judges import Malformed, judges, parse_scores
from tests.conftest import have, require
from tests.support.openai_stub import StubOpenAI

DIMS = {"sgae": ("LogicalConsistency", "Accuracy", "Specificity"), "ppe": ("Plausibility", "Specificity", "Diversity"),
        "mgae": ("Specificity", "Logical Consistency", "Accuracy")}
VALIDATION = {"sgae": "5,5,4", "ppe": "5,3,1", "mgae": "4,5,1"}
"""What the stub judge gives a reference (an output with no ``S=`` code): the judge validation's expected means."""


def judge_of(prompt: str) -> str:
    if prompt.startswith("Apply the following three criteria"):
        return "sgae"
    return "ppe" if prompt.startswith("Hello GPT") else "mgae"


def stub_judge(body: dict) -> str:
    """Scores coded in the judged output (``S=a,b,c`` in the judge's dimension order); ``MALFORMED-ONCE`` answers
    without scores until re-asked, ``ALWAYS-MALFORMED`` never gives one, ``REFUSE`` declines."""
    messages = body["messages"]
    prompt = messages[0]["content"]
    judge = judge_of(prompt)
    answer = prompt.split("<A>:")[-1] if judge == "sgae" else (
        prompt.split("next action as:")[-1].split("We would like")[0] if judge == "ppe" else
        prompt.split("Prediction:")[-1].split("True Label:")[0])
    if "REFUSE" in answer:
        return "I'm sorry, but I can't help with evaluating this."
    if "ALWAYS-MALFORMED" in answer or ("MALFORMED-ONCE" in answer and len(messages) == 1):
        return "The prediction looks fine overall; I would rate it highly."
    code = re.search(r"S=(\d),(\d),(\d)", answer)
    values = (code.groups() if code else VALIDATION[judge].split(","))
    return "\n".join(f"{k + 1}. {d}: score: [{v}]. reason: [stub]." for k, (d, v) in enumerate(zip(DIMS[judge], values)))


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from PIL import Image

    root = tmp_path_factory.mktemp("predictive-scoring")
    for k in range(3):
        Image.new("RGB", (32, 32), (60 * k, 100, 100)).save(root / f"a{k}.png")
    (root / "authored.jsonl").write_text(json.dumps({
        "id": "grow", "images": ["a0.png", "a1.png", "a2.png"], "pattern": "A square gets lighter.",
        "pred": "In the next image, the square will be lighter still."}) + "\n")
    assert predictive.main(["--out", str(root / "out"), "--cache-dir", str(root / "cache"), "--no-progress",
                            "--patterns", "4", "--demo-videos", "14", "--authored", str(root / "authored.jsonl")]) == 0
    return root / "out" / "demo-seed0"


def write_predictions(path: Path, outputs: dict[str, str]) -> Path:
    path.write_text("".join(json.dumps({"id": i, "output": o, "model": "m"}) + "\n" for i, o in outputs.items()))
    return path


def test_scores_per_task_and_table11_match_hand_computed_values(release: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    require(have("openai"), "openai (the llm extra)", "pip install -e '.[llm]'")
    items = read_items(release / "items.jsonl")
    generated = [i for i in items if i.task == "abstract_pattern" and i.provenance["source"] == "generated"]
    authored = [i for i in items if i.provenance.get("source") == "authored"]
    activity = [i for i in items if i.task == "human_activity"]
    physics = [i for i in items if i.task == "physical_interaction"]
    assert len(generated) >= 2 and authored and len(activity) >= 3 and len(physics) >= 2
    outputs = {generated[0].id: "It turns. S=4,3,5", generated[1].id: "It moves. S=2,1,3",
               authored[0].id: "Lighter. S=5,5,5",
               activity[0].id: "1. walks S=4,2,0", activity[1].id: "1. runs MALFORMED-ONCE S=2,2,2",
               activity[2].id: "1. REFUSE", physics[0].id: "1. they collide S=3,4,1",
               physics[1].id: "1. ALWAYS-MALFORMED"}
    preds = write_predictions(tmp_path / "preds.jsonl", outputs)
    with StubOpenAI(responder=stub_judge) as stub:
        code = scoring_main(["predictive", "--release", str(release), "--predictions", str(preds), "--out",
                             str(tmp_path / "res"), "--cache-dir", str(tmp_path / "cache"), "--llm-model", "judge",
                             "--llm-base-url", stub.base_url, "--validate-judge", "--no-plots"])
    assert code == 0
    assert all(b["temperature"] == 0 for b in stub.bodies)
    results = json.loads((tmp_path / "res" / "results.json").read_text())
    pattern = results["tasks"]["abstract_pattern"]
    # (4+2+5)/3, (3+1+5)/3, (5+3+5)/3 over the three judged pattern items
    assert pattern["dimensions"] == pytest.approx({"LogicalConsistency": 11 / 3, "Accuracy": 3.0, "Specificity": 13 / 3})
    assert (pattern["judged"], pattern["failures"], pattern["reasked"]) == (3, 0, 0)
    act = results["tasks"]["human_activity"]
    assert act["dimensions"] == pytest.approx({"Plausibility": 3.0, "Specificity": 2.0, "Diversity": 1.0})
    assert (act["judged"], act["failures"], act["reasked"]) == (2, 1, 2)
    phys = results["tasks"]["physical_interaction"]
    assert phys["dimensions"] == pytest.approx({"Specificity": 3.0, "Logical Consistency": 4.0, "Accuracy": 1.0})
    assert (phys["judged"], phys["failures"]) == (1, 1)
    assert phys["percent_average"] == pytest.approx((60 + 80 + 100) / 3)
    auto, human = results["table11"]["automated"], results["table11"]["human"]
    assert auto["percent"] == pytest.approx({"LogicalConsistency": 60.0, "Accuracy": 40.0, "Specificity": 80.0})
    assert auto["percent_average"] == pytest.approx(60.0) and human["percent_average"] == pytest.approx(100.0)
    assert results["missing"] == len([i for i in items if i.benchmark == "predictive"]) - len(outputs)
    val = results["judge_validation"]
    assert val["abstract_pattern"]["gap"] == pytest.approx({"LogicalConsistency": 0, "Accuracy": 0, "Specificity": 1})
    assert val["physical_interaction"]["gap"] == pytest.approx({"Specificity": 1, "Logical Consistency": 0,
                                                                "Accuracy": 0})
    out = capsys.readouterr().out
    assert "Table 11 layout" in out and "Judge validation" in out and "SGAE" in out


def test_the_judge_is_required_and_cached(release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    require(have("openai"), "openai (the llm extra)", "pip install -e '.[llm]'")
    item = read_items(release / "items.jsonl")[0]
    preds = write_predictions(tmp_path / "p.jsonl", {item.id: "S=1,1,1"})
    args = ["predictive", "--release", str(release), "--predictions", str(preds), "--out", str(tmp_path / "r"),
            "--cache-dir", str(tmp_path / "cache"), "--no-plots"]
    assert scoring_main(args) == 2 and "--llm-model" in capsys.readouterr().err
    with StubOpenAI(responder=stub_judge) as stub:
        for _ in range(2):
            assert scoring_main(args + ["--llm-model", "judge", "--llm-base-url", stub.base_url]) == 0
    assert stub.attempts == 1  # the second run read the judge's answer from the cache


@pytest.mark.parametrize("reply, problem", [
    ("LogicalConsistency: score: [4]. Accuracy: score: [3].", "no score for Specificity"),
    ("LogicalConsistency: score: [7]. Accuracy: score: [3]. Specificity: score: [1].", "outside 0-5"),
    ("LogicalConsistency: score: []. Accuracy: score: [3]. Specificity: score: [1].", "no score for LogicalConsistency"),
    ("LogicalConsistency: score: [2]. LogicalConsistency: score: [4]. Accuracy: score: [3]. Specificity: score: [1].",
     "scored 2 different ways"),
])
def test_malformed_replies_are_rejected(reply: str, problem: str) -> None:
    with pytest.raises(Malformed, match=re.escape(problem)):
        parse_scores(reply, judges()["sgae"])


def test_well_formed_replies_in_the_papers_variants() -> None:
    sgae, mgae = judges()["sgae"], judges()["mgae"]
    assert parse_scores("1. LogicalConsistency: score: [4]. reason: [ok].\n2. Accuracy: score: 3. reason: [x]\n"
                        "3. **Specificity**: score: [2.5]. reason: []", sgae) == {
        "LogicalConsistency": 4, "Accuracy": 3, "Specificity": 2.5}
    assert parse_scores("Specificity: score: [3].\nLogical Consistency: score: [4]. Accuracy: score: [1].", mgae) == {
        "Specificity": 3, "Logical Consistency": 4, "Accuracy": 1}
    with pytest.raises(Malformed, match="must be 0 or 1"):
        parse_scores("Specificity: score: [3]. Logical Consistency: score: [4]. Accuracy: score: [3].", mgae)


@pytest.mark.slow
def test_a_demo_release_is_judged_like_the_build(release: Path, tmp_path: Path) -> None:
    """The build released (parquet, provenance as JSON strings) and judged through ``python -m scoring``."""
    from tests.conftest import have, require

    require(have("pyarrow", "datasets"), "the release extra (datasets, pyarrow)")
    from data_cards.cli import main as release_main

    assert release_main(["release", str(release), "--version", "0.1.0", "--include-unreviewed",
                         "--out", str(tmp_path / "releases")]) == 0
    items = [i for i in read_items(release / "items.jsonl")]
    preds = write_predictions(tmp_path / "p.jsonl", {i.id: "1. S=3,3,1" for i in items})
    with StubOpenAI(responder=stub_judge) as stub:
        assert scoring_main(["predictive", "--release", str(tmp_path / "releases" / "predictive" / "0.1.0"),
                             "--predictions", str(preds), "--out", str(tmp_path / "res"), "--no-plots",
                             "--cache-dir", str(tmp_path / "cache"), "--llm-model", "judge",
                             "--llm-base-url", stub.base_url]) == 0
    results = json.loads((tmp_path / "res" / "results.json").read_text())
    for task, stats in results["tasks"].items():
        assert stats["judged"] == sum(i.task == task for i in items) and stats["failures"] == 0
        assert sorted(stats["dimensions"].values()) == [1.0, 3.0, 3.0]  # results.json sorts the keys
    assert results["table11"]["human"]["judged"] == 1
