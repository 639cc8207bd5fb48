"""Multiple-choice plumbing every builder shares: letters, balanced answer positions, a controlled NOTA share.

Blind baselines (always "A", the longest option) exploit position and length biases, so answer positions are not
left to chance: :class:`BalancedCycle` deals values in shuffled blocks that each contain every value once, which
makes the distribution exactly uniform after every full block while the order stays unpredictable.
"""

from __future__ import annotations

import math
from typing import Generic, Sequence, TypeVar

import numpy as np

from builders.items import OPTION_LETTERS

T = TypeVar("T")


def letter(index: int) -> str:
    """``0 -> "A"``."""
    return OPTION_LETTERS[index]


class BalancedCycle(Generic[T]):
    """Yields ``values`` in shuffled blocks, each block a permutation of all values."""

    def __init__(self, values: Sequence[T], rng: np.random.Generator) -> None:
        if not values:
            raise ValueError("BalancedCycle needs at least one value")
        self.values = list(values)
        self.rng = rng
        self._block: list[T] = []

    def next(self) -> T:
        if not self._block:
            order = self.rng.permutation(len(self.values))
            self._block = [self.values[i] for i in order]
        return self._block.pop()


class ShareSchedule:
    """Says yes for exactly ``round(n * share)`` of the first ``n`` calls, spread evenly (no randomness needed)."""

    def __init__(self, share: float) -> None:
        if not 0.0 <= share <= 1.0:
            raise ValueError(f"share must be within [0, 1], got {share}")
        self.share = share
        self.n = 0

    def next(self) -> bool:
        before = math.floor(self.n * self.share + 0.5)
        self.n += 1
        return math.floor(self.n * self.share + 0.5) > before
