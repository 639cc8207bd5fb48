"""The paired metric (builders.pairs) and every scorer that reports it: a constant answer scores group accuracy 0
on paired data, one wrong answer fails its group, and a half pair counts as unpaired."""

from __future__ import annotations

import argparse

import pytest

from builders.items import Item, make_item
from builders.pairs import pair_provenance, paired_metric, paired_share, pairs_of
from scoring import mioh, mmsap, reefknot

LETTERS = "ABCDE"


def _pair(benchmark: str, task: str, qtype: str, answers: tuple[str, str], options: tuple[str, ...], k: int,
          extra: dict | None = None) -> list[Item]:
    """Two items: one question on two images with different golds."""
    return [make_item(benchmark=benchmark, task=task, question_type=qtype, pressure="easy",
                      images=[f"img{k}{role}.png"], question=f"Question {k}?", options=options, answer=answer,
                      provenance={**pair_provenance(f"{qtype}{k}", role), **(extra or {})})
            for role, answer in zip("ab", answers)]


def _mmsap_pairs() -> list[Item]:
    items = []
    for k, (a, b) in enumerate([("A", "B"), ("C", "A"), ("B", "D")]):
        for it, answer in zip(_pair("mmsap", "basic", "color", (a, b), ("red", "blue", "green", "pink", "Sorry"), k,
                                    {"refusal": "E"}), (a, b)):
            items.append(it)
    return items


def _yes_no_pairs(benchmark: str, task: str, qtype: str) -> list[Item]:
    return [it for k in range(3) for it in _pair(benchmark, task, qtype, ("yes", "no") if k % 2 else ("no", "yes"),
                                                  (), k)]


def _mcq_pairs(benchmark: str, task: str, qtype: str, extra: dict | None = None) -> list[Item]:
    return [it for k, golds in enumerate([("A", "C"), ("B", "A"), ("D", "B")])
            for it in _pair(benchmark, task, qtype, golds, ("w", "x", "y", "z"), k, extra)]


def test_constant_answers_score_group_accuracy_zero_and_one_wrong_fails_the_group():
    items = _mcq_pairs("mioh", "existence", "selective")
    for letter in "ABCD":
        result = paired_metric((it, it.answer == letter) for it in items)
        assert result["group_accuracy"] == 0 and result["pairs"] == 3 and result["unpaired"] == 0
    right = {it.id: True for it in items}
    right[items[0].id] = False  # pair p0: role a wrong
    result = paired_metric((it, right[it.id]) for it in items)
    assert result["group_accuracy"] == pytest.approx(2 / 3)
    assert result["question_accuracy"] == pytest.approx(5 / 6)


def test_a_half_pair_is_unpaired_and_a_repeated_role_is_an_error():
    items = _mcq_pairs("mioh", "existence", "selective")
    kept = items[1:]  # p0's role a dropped (in review, or no prediction)
    result = paired_metric((it, True) for it in kept)
    assert result == {"question_accuracy": 1.0, "group_accuracy": 1.0, "pairs": 2, "unpaired": 1}
    assert paired_share(kept) == {"items": 5, "paired": 4, "pairs": 2, "unpaired": 1, "share": 0.8}
    assert paired_metric([]) == {"question_accuracy": None, "group_accuracy": None, "pairs": 0, "unpaired": 0}
    with pytest.raises(ValueError, match="twice"):
        pairs_of([(items[0], 1), (items[0], 2)])


@pytest.mark.parametrize("constant", ["A", "B", "C", "D", "E", "yes"])
def test_mmsap_scorer_reports_the_paired_metric(constant):
    items = _mmsap_pairs()
    results = mmsap.run(items, {it.id: constant for it in items})
    assert results["paired"]["group_accuracy"] == 0 and results["paired"]["pairs"] == 3
    truthful = mmsap.run(items, {it.id: it.answer for it in items})["paired"]
    assert truthful["group_accuracy"] == 1 and truthful["question_accuracy"] == 1
    assert "overall" in results  # the paper's metrics stay


@pytest.mark.parametrize("constant", ["yes", "no", "A", "B"])
def test_reefknot_scorer_reports_the_paired_metric(constant):
    items = _yes_no_pairs("reefknot", "perception", "yes_no") + _mcq_pairs("reefknot", "perception", "mcq")
    results = reefknot.score(items, {it.id: constant for it in items})
    assert results["paired"]["group_accuracy"] == 0 and results["paired"]["pairs"] == 6
    assert reefknot.score(items, {it.id: it.answer for it in items})["paired"]["group_accuracy"] == 1


@pytest.mark.parametrize("constant", ["A", "B", "C", "D"])
def test_mioh_scorer_reports_the_paired_metric(constant):
    items = _mcq_pairs("mioh", "existence", "selective")
    results = mioh.run(items, {it.id: constant for it in items}, argparse.Namespace())
    assert results["paired"]["group_accuracy"] == 0 and results["paired"]["pairs"] == 3
    assert mioh.score(items, {it.id: it.answer for it in items})["paired"]["group_accuracy"] == 1
