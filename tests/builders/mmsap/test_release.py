"""A demo MM-SAP release answered by a stand-in model through scoring.run and scored by python -m scoring mmsap.

The stand-in (a :class:`~tests.support.openai_stub.VisionAnswers` that knows each item from its image and text)
answers BasicVisQA with the right letter, refuses KnowVisQA in words ("I cannot tell from the image.") and always
says "A" on BeyondVisQA. Per shuffle round that is, by hand, with 40 BasicVisQA, 33 KnowVisQA and 60 BeyondVisQA
questions: AR = (40 + 33 + b) / 133 where b is the number of BeyondVisQA questions whose refusal sits at A (12:
dealt in balanced blocks of five over 60), KK = 40 / 73, KU = (33 + b) / 93, answer rate = (40 + 60 - b) / 133,
answer accuracy = 40 / (40 + 60 - b).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builders.items import read_items
from builders.mmsap import main
from tests.conftest import require
from tests.support.openai_stub import StubOpenAI, VisionAnswers

pytestmark = pytest.mark.slow


class SelfAware(VisionAnswers):
    def answer(self, item) -> str:
        return {"basic": f"The answer is ({item.answer}).", "know": "I cannot tell from the image.",
                "beyond": "A"}[item.task]


def test_demo_release_answered_by_a_stand_in_and_scored(tmp_path: Path) -> None:
    try:
        import datasets  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError:
        require(False, "the release extra (datasets, pyarrow)")
    from data_cards.release import release
    from scoring.__main__ import main as score
    from scoring.run import main as run

    assert main(["--out", str(tmp_path / "builds"), "--no-progress", "--shuffles", "2", "--demo-images", "200"]) == 0
    build = tmp_path / "builds" / "demo-seed0-shuffles2"
    released = release(build, "0.1.0", include_unreviewed=True, out=tmp_path / "releases").path
    items = read_items(build / "items.jsonl")
    responder = SelfAware(items, build)
    with StubOpenAI(responder=responder) as stub:
        assert run([str(released), "--llm-model", "stub-self-aware", "--llm-base-url", stub.base_url,
                    "--out", str(tmp_path / "p.jsonl"), "--cache-dir", str(tmp_path / "cache"), "--no-progress"]) == 0
    assert score(["mmsap", "--release", str(released), "--predictions", str(tmp_path / "p.jsonl"),
                  "--out", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache")]) == 0
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert len(responder.asked) == len(items) == 2 * 133
    for k in range(2):
        b = sum(it.task == "beyond" and it.provenance["shuffle"] == k and it.provenance["refusal"] == "A"
                for it in items)
        assert b == 12
    o = results["overall"]
    assert o["score_AR"]["mean"] == pytest.approx((40 + 33 + 12) / 133) and o["score_AR"]["variance"] == 0
    assert o["score_KK"]["mean"] == pytest.approx(40 / 73)
    assert o["score_KU"]["mean"] == pytest.approx((33 + 12) / 93)
    assert o["answer_rate"]["mean"] == pytest.approx((40 + 48) / 133)
    assert o["answer_accuracy"]["mean"] == pytest.approx(40 / 88)
    assert results["subsets"]["beyond"]["score_AR"]["mean"] == pytest.approx(12 / 60)
    assert results["coverage"]["refusal_in_words"] == 2 * 33 and results["coverage"]["scored"] == 266
    assert (tmp_path / "out" / "kk_ku.png").is_file()
    # pairs: BasicVisQA answered right on both images, KnowVisQA refused (not the correct option) on both
    pairs = {s: len({it.provenance["pair"]["id"] for it in items if it.task == s and "pair" in it.provenance})
             for s in ("basic", "know")}
    assert results["paired"]["pairs"] == pairs["basic"] + pairs["know"] and pairs["basic"] > 0
    assert results["paired"]["group_accuracy"] == pytest.approx(pairs["basic"] / (pairs["basic"] + pairs["know"]))
    card = (released / "README.md").read_text()
    assert "#### Pairs: one question, two images, two answers" in card
    assert f"are in {pairs['basic'] + pairs['know']} complete pairs" in card
