"""The small base every filter shares: a score, a threshold, a decision, and counts of what was dropped and why.

The pattern comes from datatrove: a filter only *decides*; the base class counts what it kept and dropped and
why, so every build can report its funnel (``build.json`` stage statistics) without each filter re-inventing it.

Two rules follow from the design:

* the score is kept apart from the decision. A filter stores its score under ``<name>_score`` (see
  :attr:`ScoreFilter.score_key`) and :meth:`ScoreFilter.decide` only compares a stored score with a
  :class:`Threshold`, so thresholds can be re-tuned later from stored scores without recomputing anything
  (that matters for CLIP, whose scores are the expensive ones);
* a dropped record always carries a human-readable reason (``"relative_area 0.0004 < min 0.001"``), and the
  statistics count drops per *rule* (``"relative_area < min 0.001"``), which stays a small set of keys however
  many distinct scores there are.

Slot for CLIP: ``filters/clip.py`` (open_clip, batched, embeddings cached on disk) plugs in as a
:class:`ScoreFilter` subclass. It should override :meth:`ScoreFilter.score_batch` to embed a whole batch at once
(``batch_size`` sets how many records :meth:`ScoreFilter.apply` hands it) and keep :meth:`ScoreFilter.score` for
single records; a record it cannot score (no weights, unreadable image) may return ``nan``, which
:meth:`ScoreFilter.decide` drops with the reason ``"<name> has no score"``.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections import Counter
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Generic, Iterable, Iterator, Literal, Sequence, TypeVar

import numpy as np

T = TypeVar("T")

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


@dataclass(frozen=True)
class Decision:
    """What a filter decided for one record."""

    keep: bool
    score: float
    reason: str | None = None
    """Human-readable reason, with the score, when dropped; ``None`` when kept."""
    rule: str | None = None
    """Stable key the statistics count by (``Threshold.rule``); falls back to ``reason`` when absent."""


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

    def record(self, name: str, decision: Decision) -> None:
        """Count one decision of filter ``name``."""
        c = self.counts(name)
        c.seen += 1
        if decision.keep:
            c.kept += 1
        else:
            c.dropped += 1
            c.reasons[decision.rule or decision.reason or "unspecified"] += 1

    def record_counts(self, name: str, seen: int, reasons: Counter[str]) -> None:
        """Count ``seen`` decisions of filter ``name`` at once, the dropped ones by rule in ``reasons`` (what
        :meth:`record` would count one decision at a time)."""
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


class ScoreFilter(ABC, Generic[T]):
    """A filter over records of type ``T``: score each, compare with one threshold, count, say why.

    Subclasses set ``name`` and ``threshold`` and implement :meth:`score`. :meth:`apply` yields every record
    with its :class:`Decision` (the caller keeps or routes the dropped ones; :meth:`keep` yields only the kept
    records) and counts into a :class:`FilterStats`.
    """

    name: str
    threshold: Threshold
    batch_size: int = 256
    """How many records :meth:`apply` passes to :meth:`score_batch` at once."""

    @property
    def score_key(self) -> str:
        """Field name the score is stored under in provenance / scored records: ``<name>_score``."""
        return f"{self.name}_score"

    @abstractmethod
    def score(self, x: T) -> float:
        """The score of one record."""

    def score_batch(self, xs: Sequence[T]) -> Sequence[float]:
        """Scores of a batch; override when batching is cheaper (CLIP)."""
        return [self.score(x) for x in xs]

    def decide(self, score: float, threshold: Threshold | None = None) -> Decision:
        """The decision for a (possibly stored) score; ``threshold`` overrides ``self.threshold`` for re-tuning."""
        return decide(score, threshold or self.threshold)

    def apply(self, xs: Iterable[T], stats: FilterStats | None = None) -> Iterator[tuple[T, Decision]]:
        """Every record with its decision, lazily, in input order; counted into ``stats`` when given."""
        it = iter(xs)
        while batch := list(islice(it, max(1, self.batch_size))):
            for x, s in zip(batch, self.score_batch(batch), strict=True):
                d = self.decide(float(s))
                if stats is not None:
                    stats.record(self.name, d)
                yield x, d

    def keep(self, xs: Iterable[T], stats: FilterStats | None = None) -> Iterator[T]:
        """Only the kept records (the dropped ones are still counted)."""
        return (x for x, d in self.apply(xs, stats) if d.keep)


def decide(score: float, threshold: Threshold) -> Decision:
    """Compare one score with one threshold: the only place a keep/drop decision is made."""
    if threshold.passes(score):
        return Decision(True, score)
    return Decision(False, score, threshold.reason(score), threshold.rule)


def redecide(
    name: str, scores: Iterable[float], threshold: Threshold, stats: FilterStats | None = None
) -> list[Decision]:
    """Decisions for stored scores under a new threshold, without any scorer: the re-tuning path."""
    out = []
    for s in scores:
        d = decide(float(s), threshold)
        if stats is not None:
            stats.record(name, d)
        out.append(d)
    return out
