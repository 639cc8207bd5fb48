"""The small base every filter shares: a threshold that decides and says why, and counts of what was dropped.

The pattern comes from datatrove: a filter *decides*, and what it kept and dropped and why is counted by name, so
every build can report its funnel (``build.json`` stage statistics) without each filter re-inventing it. Two rules
follow from the design:

* the score is kept apart from the decision. A filter stores its score (``relative_area``, ``occlusion``, a CLIP
  z-score) and a :class:`Threshold` compares it, so thresholds can be re-tuned later from stored scores without
  recomputing anything;
* a dropped record always carries a human-readable reason (:meth:`Threshold.reason`: ``"relative_area 0.0004 <
  min 0.001"``), and :class:`FilterStats` counts drops per *rule* (:attr:`Threshold.rule`: ``"relative_area <
  min 0.001"``), which stays a small set of keys however many distinct scores there are.

:mod:`filters.geometry` is the worked example: its thresholds in a dataclass, scores computed in bulk, counts
added with :meth:`FilterStats.record_counts`.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

Direction = Literal["min", "max"]
"""``"min"``: keep when the score is at least the value; ``"max"``: keep when it is at most the value."""


@dataclass(frozen=True)
class Threshold:
    """A one-sided rule on one score.

    ``direction="min"`` keeps ``score >= value`` (``score > value`` when ``inclusive`` is false);
    ``direction="max"`` keeps ``score <= value`` (``score < value`` when ``inclusive`` is false).
    ``inclusive`` exists because papers state some bounds as "hard when occlusion >= 0.4": the easy side of
    that rule is ``occlusion < 0.4``, an exclusive maximum.
    """

    name: str
    value: float
    direction: Direction = "min"
    inclusive: bool = True

    def __post_init__(self) -> None:
        if self.direction not in ("min", "max"):
            raise ValueError(f"Threshold {self.name!r}: direction must be 'min' or 'max', not {self.direction!r}")

    def passes_array(self, scores: np.ndarray) -> np.ndarray:
        """:meth:`passes` of every score at once (``nan`` never passes: every comparison with it is false)."""
        if self.direction == "min":
            return scores >= self.value if self.inclusive else scores > self.value
        return scores <= self.value if self.inclusive else scores < self.value

    def passes(self, score: float) -> bool:
        """True when ``score`` is on the keep side of the rule (``nan`` never passes)."""
        if math.isnan(score):
            return False
        if self.direction == "min":
            return score >= self.value if self.inclusive else score > self.value
        return score <= self.value if self.inclusive else score < self.value

    @property
    def _failing_op(self) -> str:
        """The comparison a failing score satisfies, for reason texts."""
        if self.direction == "min":
            return "<" if self.inclusive else "<="
        return ">" if self.inclusive else ">="

    @property
    def rule(self) -> str:
        """Stable key of the rule, independent of any score: ``"relative_area < min 0.001"``."""
        return f"{self.name} {self._failing_op} {self.direction} {self.value:.4g}"

    def reason(self, score: float) -> str:
        """Why ``score`` fails: ``"relative_area 0.0004 < min 0.001"`` (or ``"<name> has no score"`` for nan)."""
        if math.isnan(score):
            return f"{self.name} has no score"
        return f"{self.name} {score:.4g} {self._failing_op} {self.direction} {self.value:.4g}"


@dataclass
class FilterCounts:
    """Counts for one filter name."""

    seen: int = 0
    kept: int = 0
    dropped: int = 0
    reasons: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        return {
            "dropped": self.dropped,
            "kept": self.kept,
            "reasons": {k: self.reasons[k] for k in sorted(self.reasons)},
            "seen": self.seen,
        }


@dataclass
class FilterStats:
    """Kept / dropped / per-reason counts, per filter name, for a build's statistics.

    Shards of a build each fill their own ``FilterStats`` and :meth:`merge` them at the end, so counting never
    needs shared state between workers.
    """

    filters: dict[str, FilterCounts] = field(default_factory=dict)

    def counts(self, name: str) -> FilterCounts:
        """The counts of filter ``name`` (created empty on first use)."""
        return self.filters.setdefault(name, FilterCounts())

    def record_counts(self, name: str, seen: int, reasons: Counter[str]) -> None:
        """Count ``seen`` decisions of filter ``name`` at once, the dropped ones by rule in ``reasons``
        (:attr:`Threshold.rule`)."""
        c = self.counts(name)
        dropped = sum(reasons.values())
        c.seen += seen
        c.kept += seen - dropped
        c.dropped += dropped
        c.reasons.update(reasons)

    def merge(self, other: FilterStats) -> FilterStats:
        """A new ``FilterStats`` holding the sum of both (neither input is modified)."""
        out = FilterStats()
        for source in (self, other):
            for name, c in source.filters.items():
                t = out.counts(name)
                t.seen += c.seen
                t.kept += c.kept
                t.dropped += c.dropped
                t.reasons.update(c.reasons)
        return out

    def as_dict(self) -> dict[str, dict[str, Any]]:
        """JSON-ready, with sorted keys at every level, so ``build.json`` is byte-stable."""
        return {name: self.filters[name].as_dict() for name in sorted(self.filters)}

    @classmethod
    def from_dict(cls, data: dict[str, dict[str, Any]]) -> FilterStats:
        """:meth:`as_dict` undone."""
        return cls({name: FilterCounts(c["seen"], c["kept"], c["dropped"], Counter(c["reasons"]))
                    for name, c in data.items()})

