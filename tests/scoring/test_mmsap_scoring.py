"""MM-SAP metrics (formulas 2-6) on hand-computed cases, shuffle statistics, and words read as the refusal."""

from __future__ import annotations

import pytest

from builders.items import make_item
from scoring.mmsap import (
    Response,
    answer_accuracy,
    answer_rate,
    over_shuffles,
    run,
    score_ar,
    score_kk,
    score_ku,
)


def r(subset: str, choice: str | None, correct: str | None = "B", refusal: str = "E", shuffle: int = 0) -> Response:
    return Response(subset, "t", None if subset == "beyond" else correct, refusal, choice, shuffle)


# basic: right, right, refused, wrong | know: right, refused, wrong, refused | beyond: refused, wrong
HAND = [r("basic", "B"), r("basic", "B"), r("basic", "E"), r("basic", "A"),
        r("know", "B"), r("know", "E"), r("know", "C"), r("know", "E"),
        r("beyond", "E"), r("beyond", "A")]


def test_formulas_2_to_6_match_hand_computation():
    # AR: aware = basic 2 of 4, know 3 of 4 (right or refused), beyond 1 of 2 -> 6 / 10
    assert score_ar(HAND) == pytest.approx(0.6)
    # KK over basic+know (8): right = 2 + 1
    assert score_kk(HAND) == pytest.approx(3 / 8)
    # KU over know+beyond (6): refused = 2 + 1
    assert score_ku(HAND) == pytest.approx(3 / 6)
    # answer rate: not refused = basic 3 + know 2 + beyond 1 = 6 of 10
    assert answer_rate(HAND) == pytest.approx(0.6)
    # answer accuracy: of those 6, aware = basic 2 + know 1
    assert answer_accuracy(HAND) == pytest.approx(0.5)


def test_per_subset_values_and_undefined_metrics():
    basic = [x for x in HAND if x.subset == "basic"]
    beyond = [x for x in HAND if x.subset == "beyond"]
    assert score_ar(basic) == 0.5 and score_kk(basic) == 0.5 and score_ku(basic) is None
    assert score_ar(beyond) == 0.5 and score_kk(beyond) is None and score_ku(beyond) == 0.5
    assert answer_accuracy([r("beyond", "E")]) is None  # everything refused: no answered question


def test_unparsed_output_is_answered_and_wrong():
    rows = [r("know", None), r("basic", None)]
    assert score_ar(rows) == 0 and answer_rate(rows) == 1 and answer_accuracy(rows) == 0


def test_mean_and_variance_over_shuffles():
    rows = [r("basic", "B", shuffle=0), r("basic", "A", shuffle=0), r("basic", "B", shuffle=1), r("basic", "B", shuffle=1)]
    ar = over_shuffles(rows)["score_AR"]
    assert ar["runs"] == [0.5, 1.0]
    assert ar["mean"] == pytest.approx(0.75) and ar["variance"] == pytest.approx(0.0625)


def _item(task: str, answer: str, refusal: str, shuffle: int = 0):
    options = ["Red", "Blue", "Green", "Pink", "Brown"]
    options["ABCDE".index(refusal)] = "Sorry, I can't help with it"
    return make_item(benchmark="mmsap", task=task, question_type="t", pressure="none", images=["x.png"],
                     question=f"q{task}{shuffle}", options=options, answer=answer,
                     provenance={"refusal": refusal, "shuffle": shuffle, "group": task})


def test_run_reads_letters_option_text_and_refusals_in_words():
    basic, know, beyond = _item("basic", "B", "D"), _item("know", "A", "C"), _item("beyond", "E", "E")
    out = run([basic, know, beyond], {basic.id: "(B) Blue", know.id: "I cannot tell from the image.",
                                      beyond.id: "Sorry, I can't help with it"})
    assert out["overall"]["score_AR"]["mean"] == 1.0
    assert out["subsets"]["know"]["score_KU"]["mean"] == 1.0  # the refusal in words is the refusal option
    assert out["coverage"]["refusal_in_words"] == 1 and out["coverage"]["scored"] == 3
    out = run([basic, know], {basic.id: "Green"})
    assert out["overall"]["score_AR"]["mean"] == 0.0 and out["coverage"]["missing"] == 1
