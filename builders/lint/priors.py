"""The language prior of the lint, leave-one-out: the answer the *other* questions' statistics suggest for an
item (:mod:`builders.lint.independence` flags items by it; :mod:`builders.lint.blind` uses it as its "most frequent
text" rule). Variants of one question (``provenance[VARIANT_KEY]``) are left out together."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Hashable, Sequence

from builders.items import OPTION_LETTERS, Item, canonical_json
from builders.lint.base import normalise

PRIOR_SUPPORT = 10
VARIANT_KEY = "group"
"""Provenance key whose equal values mark variants of one question (MM-SAP's shuffles). Leaving a larger set out
of a leave-one-out prior only takes information away from it, so a key that groups more than variants can hide a
leak but never invent one."""


def variant_groups(items: Sequence[Item], members: list[int]) -> dict[int, Hashable]:
    """Item index -> the key of its question: ``provenance[VARIANT_KEY]`` for variants, else the item itself."""
    out = {}
    for i in members:
        value = items[i].provenance.get(VARIANT_KEY)
        if value is None:
            out[i] = i
        else:
            out[i] = (value if isinstance(value, str) else canonical_json(value), )  # never equal to an index
    return out


def yes_no_prior(items: Sequence[Item], members: list[int]) -> dict[int, tuple[str, float]]:
    """Item index -> (predicted answer, confidence) from the other questions with the same normalised text (its
    own variants left out with it)."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    own: dict[tuple[Hashable, str], Counter[str]] = defaultdict(Counter)
    keys = {i: normalise(items[i].question) for i in members}
    groups = variant_groups(items, members)
    for i in members:
        counts[keys[i]][items[i].answer.lower()] += 1
        own[(groups[i], keys[i])][items[i].answer.lower()] += 1
    out = {}
    for i in members:
        c = counts[keys[i]] - own[(groups[i], keys[i])]
        n = c["yes"] + c["no"]
        if n and c["yes"] != c["no"]:
            guess = "yes" if c["yes"] > c["no"] else "no"
            out[i] = (guess, c[guess] / n if n >= PRIOR_SUPPORT else 0.0)
    return out


def mcq_prior(items: Sequence[Item], members: list[int]) -> dict[int, tuple[str, float]]:
    """Item index -> (predicted letter, confidence): the option most often right in the other questions where
    offered (its own variants left out with it)."""
    offered: Counter[str] = Counter()
    right: Counter[str] = Counter()
    own_offered: dict[Hashable, Counter[str]] = defaultdict(Counter)
    own_right: dict[Hashable, Counter[str]] = defaultdict(Counter)
    norm = {i: [normalise(o) for o in items[i].options] for i in members}
    groups = variant_groups(items, members)
    for i in members:
        answer = normalise(items[i].answer_text)
        offered.update(norm[i])
        right[answer] += 1
        own_offered[groups[i]].update(norm[i])
        own_right[groups[i]][answer] += 1
    out = {}
    for i in members:
        g = groups[i]
        best, best_rate, best_support = None, -1.0, 0
        for k, o in enumerate(norm[i]):
            shown = offered[o] - own_offered[g][o]
            won = right[o] - own_right[g][o]
            rate = (won + 1) / (shown + 2)
            if rate > best_rate:
                best, best_rate, best_support = k, rate, shown
        if best is not None:
            out[i] = (OPTION_LETTERS[best], best_rate if best_support >= PRIOR_SUPPORT else 0.0)
    return out
