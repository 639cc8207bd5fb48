"""FilterStats counting, Threshold boundaries and reasons."""

from __future__ import annotations

import json
import math
from collections import Counter

import pytest

from filters.base import FilterStats, Threshold


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
    assert not t.passes(math.nan) and t.reason(math.nan) == "clip has no score"


def test_bad_direction_is_rejected():
    with pytest.raises(ValueError, match="direction"):
        Threshold("x", 1.0, "above")  # type: ignore[arg-type]


def test_merge_sums_and_leaves_inputs_alone():
    a, b = FilterStats(), FilterStats()
    a.record_counts("size", seen=2, reasons=Counter({"small": 1}))
    b.record_counts("size", seen=2, reasons=Counter({"small": 1, "only reason": 1}))
    b.record_counts("clip", seen=1, reasons=Counter())
    m = a.merge(b)
    assert m.as_dict() == {
        "clip": {"dropped": 0, "kept": 1, "reasons": {}, "seen": 1},
        "size": {"dropped": 3, "kept": 1, "reasons": {"only reason": 1, "small": 2}, "seen": 4},
    }
    assert a.filters["size"].seen == 2 and "clip" not in a.filters
    # JSON-ready and sorted: dumping with sort_keys changes nothing
    text = json.dumps(m.as_dict())
    assert text == json.dumps(m.as_dict(), sort_keys=True)
