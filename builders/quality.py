"""Quality report of a build: can a model score without looking at the images?

Every builder's items go through the same checks (cleanlab-style: a score and a verdict you can audit):

* answer-position balance: a chi-square test of the answer letters against the uniform distribution each item
  allows (``provenance["answer_slots"]`` positions; "None of the above" answers are counted apart);
* the "None of the above" share;
* blind baselines - always "A", always the most frequent letter, always the longest option - next to chance.
  A blind baseline far above chance means the benchmark leaks its answers.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Iterable, NamedTuple, Sequence

import numpy as np
from scipy.special import chdtrc

from builders.items import Item, OPTION_LETTERS
from builders.semantics.format import is_multiple_choice
from builders.semantics.options import ALWAYS_A, is_none_of_the_above, longest_option_index


class ChiSquare(NamedTuple):
    """Pearson's goodness-of-fit test of observed counts against expected counts."""

    chi2: float
    dof: int
    p_value: float


def chi_square(observed: Sequence[float], expected: Sequence[float]) -> ChiSquare:
    """Pearson's chi-square of ``observed`` against ``expected`` counts (same categories, same totals): the one
    place where Mirage computes it (answer letters of a build, MM-SAP's letters, the lint's yes/no balance, a
    model's letters against the truth in ``scoring.mioh``). The p-value is the chi-square distribution's survival
    function (:func:`scipy.special.chdtrc`, what :func:`scipy.stats.chisquare` returns; a test holds them equal):
    importing ``scipy.stats`` costs every build about half a second before it starts.

    A category expected and observed 0 times is left out (it cannot occur); one observed but never expected
    makes the statistic infinite (p = 0). Fewer than two categories left: nothing to test (chi2 0, p 1).
    """
    pairs = [(float(o), float(e)) for o, e in zip(observed, expected, strict=True) if o > 0 or e > 0]
    dof = max(0, sum(1 for _, e in pairs if e > 0) - 1)
    if any(e <= 0 for _, e in pairs):
        return ChiSquare(math.inf, dof, 0.0)
    if len(pairs) < 2:
        return ChiSquare(0.0, 0, 1.0)
    observed_, expected_ = (np.array(side, dtype=np.float64) for side in zip(*pairs))
    statistic = float(((observed_ - expected_) ** 2 / expected_).sum())  # summed as scipy.stats sums it
    return ChiSquare(statistic, dof, float(chdtrc(dof, statistic)))


def _mcq(items: Iterable[Item]) -> list[Item]:
    return [it for it in items if is_multiple_choice(it)]


def answer_balance(items: Sequence[Item]) -> dict[str, Any]:
    """Observed vs expected answer positions (non-NOTA answers) and the chi-square test."""
    observed: Counter[int] = Counter()
    expected: Counter[int] = Counter()
    for it in _mcq(items):
        if is_none_of_the_above(it.answer_text):
            continue
        slots = int(it.provenance.get("answer_slots", len(it.options)))
        observed[OPTION_LETTERS.index(it.answer)] += 1
        for pos in range(slots):
            expected[pos] += 1.0 / slots  # type: ignore[assignment]
    positions = sorted(set(expected) | set(observed))
    test = chi_square([observed[p] for p in positions], [expected[p] for p in positions])
    return {
        "observed": {OPTION_LETTERS[p]: observed[p] for p in positions},
        "expected": {OPTION_LETTERS[p]: round(expected[p], 3) for p in positions},
        "chi2": round(test.chi2, 4),
        "dof": test.dof,
        "p_value": round(test.p_value, 4),
    }


def nota_share(items: Sequence[Item]) -> dict[str, Any]:
    offered = [it for it in _mcq(items) if any(map(is_none_of_the_above, it.options))]
    correct = sum(1 for it in offered if is_none_of_the_above(it.answer_text))
    return {"offered": len(offered), "correct": correct, "share": round(correct / len(offered), 4) if offered else 0.0}


def longest_option(item: Item) -> str:
    """The letter of the item's longest option (the first one on a tie): the blind "longest option" guess."""
    return OPTION_LETTERS[longest_option_index(item.options)]


def guess_chance(item: Item, choices: int | None = None) -> float:
    """The chance that a blind guess is right: one over the choices (``len(item.options)`` unless given) that can be
    the answer. An option the builder never makes the answer (``provenance["never_gold"]``: MIOH's "I don't know",
    offered so that a model may abstain) is struck out by any guesser that has seen a few items: it is no choice."""
    n = len(item.options) if choices is None else choices
    never = sum(1 for text in item.provenance.get("never_gold") or () if text in item.options)
    return 1.0 / max(1, n - never)


def blind_baselines(items: Sequence[Item]) -> dict[str, float]:
    """Accuracy of answer strategies that never look at the images, and of chance."""
    mcq = _mcq(items)
    if not mcq:
        return {}
    n = len(mcq)
    letters = Counter(it.answer for it in mcq)
    return {
        "chance": round(sum(guess_chance(it) for it in mcq) / n, 4),
        "always_A": round(letters[OPTION_LETTERS[ALWAYS_A]] / n, 4),
        "most_frequent_letter": round(letters.most_common(1)[0][1] / n, 4),
        "longest_option": round(sum(longest_option(it) == it.answer for it in mcq) / n, 4),
    }


def report(items: Sequence[Item]) -> dict[str, Any]:
    """The generic part of the quality report (builders add their own sections)."""
    return {
        "answer_balance": answer_balance(items),
        "none_of_the_above": nota_share(items),
        "blind_baselines": blind_baselines(items),
    }
