"""The blind audit's learner scored on pairs: how many pairs a text-only model gets wholly right.

A pair (:mod:`builders.pairs`) asks one question of two images with two different answers, so a learner that
sees only the text gives both items the same features and, at best, one right answer: its group accuracy should
be near 0 however far its per-item accuracy climbs above chance. A group accuracy well above 0 means a pair's
two items differ in their text (options, wording) in a way that gives the answer away. Kept apart from
:mod:`builders.lint.blind` so the audit only calls it.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from builders.items import Item
from builders.pairs import paired_metric


def learner_pairs(items: Sequence[Item], learned: Mapping[int, float]) -> dict[str, Any]:
    """The paired metric (:func:`builders.pairs.paired_metric`) of the learner over the audited items
    (``learned``: item index -> 1.0 right, 0.0 wrong, a fraction where it left the item at chance, counted
    wrong here: a guess does not answer a pair)."""
    return paired_metric((items[i], right == 1.0) for i, right in sorted(learned.items()))
