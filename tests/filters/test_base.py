"""FilterStats counting, Threshold boundaries and reasons, and the ScoreFilter stream."""

from __future__ import annotations

import json
import math

import pytest

from filters.base import Decision, FilterStats, ScoreFilter, Threshold, decide, redecide


class LengthFilter(ScoreFilter[str]):
    """Keeps strings of at least 3 characters; counts how often score_batch is called."""

    name = "length"
    threshold = Threshold("length", 3, "min")
    batch_size = 2

    def __init__(self) -> None:
        self.batches: list[int] = []

    def score(self, x: str) -> float:
        return float(len(x))

    def score_batch(self, xs):  # type: ignore[override]
        self.batches.append(len(xs))
        return super().score_batch(xs)


@pytest.mark.parametrize(
    ("direction", "inclusive", "score", "keep"),
    [
        ("min", True, 0.001, True),
        ("min", True, 0.0009, False),
        ("min", False, 0.001, False),
        ("min", False, 0.0011, True),
        ("max", True, 0.001, True),
        ("max", True, 0.0011, False),
        ("max", False, 0.001, False),
        ("max", False, 0.0009, True),
    ],
)
def test_threshold_boundaries(direction, inclusive, score, keep):
    assert Threshold("x", 0.001, direction, inclusive).passes(score) is keep


def test_threshold_reason_and_rule_texts():
    t = Threshold("relative_area", 0.001, "min")
    assert t.reason(0.0004) == "relative_area 0.0004 < min 0.001"
    assert t.rule == "relative_area < min 0.001"
    t2 = Threshold("occlusion", 0.4, "max", inclusive=False)
    assert t2.reason(0.4) == "occlusion 0.4 >= max 0.4"
    assert t2.rule == "occlusion >= max 0.4"


def test_nan_never_passes_and_says_so():
    t = Threshold("clip", 0.2, "max")
    assert not t.passes(math.nan)
    d = decide(math.nan, t)
    assert not d.keep and d.reason == "clip has no score"


def test_bad_direction_is_rejected():
    with pytest.raises(ValueError, match="direction"):
        Threshold("x", 1.0, "above")  # type: ignore[arg-type]


def test_apply_counts_kept_dropped_and_reasons_in_order():
    f = LengthFilter()
    stats = FilterStats()
    out = list(f.apply(["a", "abcd", "ab", "abc", "xy"], stats))
    assert [x for x, _ in out] == ["a", "abcd", "ab", "abc", "xy"]
    assert [d.keep for _, d in out] == [False, True, False, True, False]
    assert out[0][1] == Decision(False, 1.0, "length 1 < min 3", "length < min 3")
    assert out[1][1].reason is None
    assert f.batches == [2, 2, 1]
    c = stats.filters["length"]
    assert (c.seen, c.kept, c.dropped) == (5, 2, 3)
    assert dict(c.reasons) == {"length < min 3": 3}
    assert f.score_key == "length_score"


def test_keep_yields_only_kept_but_counts_all():
    stats = FilterStats()
    assert list(LengthFilter().keep(["abc", "a"], stats)) == ["abc"]
    assert stats.as_dict()["length"]["seen"] == 2


def test_decide_with_retuned_threshold_and_redecide():
    f = LengthFilter()
    assert f.decide(2.0).keep is False
    assert f.decide(2.0, Threshold("length", 2, "min")).keep is True
    stats = FilterStats()
    ds = redecide("length", [1.0, 5.0, 9.0], Threshold("length", 6, "max"), stats)
    assert [d.keep for d in ds] == [True, True, False]
    assert ds[2].reason == "length 9 > max 6"
    assert stats.as_dict() == {"length": {"dropped": 1, "kept": 2, "reasons": {"length > max 6": 1}, "seen": 3}}


def test_merge_sums_and_leaves_inputs_alone():
    a, b = FilterStats(), FilterStats()
    a.record("size", Decision(False, 0.1, "r", "small"))
    a.record("size", Decision(True, 0.9))
    b.record("size", Decision(False, 0.2, "r2", "small"))
    b.record("size", Decision(False, 0.2, "only reason"))
    b.record("clip", Decision(True, 0.3))
    m = a.merge(b)
    assert m.as_dict() == {
        "clip": {"dropped": 0, "kept": 1, "reasons": {}, "seen": 1},
        "size": {"dropped": 3, "kept": 1, "reasons": {"only reason": 1, "small": 2}, "seen": 4},
    }
    assert a.filters["size"].seen == 2 and "clip" not in a.filters
    # JSON-ready and sorted: dumping with sort_keys changes nothing
    text = json.dumps(m.as_dict())
    assert text == json.dumps(m.as_dict(), sort_keys=True)
