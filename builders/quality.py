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
from typing import Any, Iterable, Sequence

from builders.items import Item, OPTION_LETTERS

NOTA = "None of the above"


def chi_square_sf(x: float, dof: int) -> float:
    """P(X >= x) for a chi-square variable with ``dof`` degrees of freedom (regularised upper gamma)."""
    if dof <= 0:
        return 1.0
    if x <= 0:
        return 1.0
    a, z = dof / 2.0, x / 2.0
    if z < a + 1:  # series for the lower gamma, then complement
        term = total = 1.0 / a
        k = a
        for _ in range(500):
            k += 1
            term *= z / k
            total += term
            if term < total * 1e-15:
                break
        return max(0.0, 1.0 - total * math.exp(-z + a * math.log(z) - math.lgamma(a)))
    # continued fraction for the upper gamma (Lentz)
    tiny = 1e-300
    b = z + 1 - a
    c, d = 1 / tiny, 1 / b
    h = d
    for i in range(1, 500):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < 1e-15:
            break
    return min(1.0, math.exp(-z + a * math.log(z) - math.lgamma(a)) * h)


def _mcq(items: Iterable[Item]) -> list[Item]:
    return [it for it in items if it.options and len(it.answer) == 1 and it.answer in OPTION_LETTERS]


def answer_balance(items: Sequence[Item]) -> dict[str, Any]:
    """Observed vs expected answer positions (non-NOTA answers) and the chi-square test."""
    observed: Counter[int] = Counter()
    expected: Counter[int] = Counter()
    for it in _mcq(items):
        if it.answer_text == NOTA:
            continue
        slots = int(it.provenance.get("answer_slots", len(it.options)))
        observed[OPTION_LETTERS.index(it.answer)] += 1
        for pos in range(slots):
            expected[pos] += 1.0 / slots  # type: ignore[assignment]
    positions = sorted(set(expected) | set(observed))
    chi2 = sum((observed[p] - expected[p]) ** 2 / expected[p] for p in positions if expected[p] > 0)
    dof = max(0, len([p for p in positions if expected[p] > 0]) - 1)
    return {
        "observed": {OPTION_LETTERS[p]: observed[p] for p in positions},
        "expected": {OPTION_LETTERS[p]: round(expected[p], 3) for p in positions},
        "chi2": round(chi2, 4),
        "dof": dof,
        "p_value": round(chi_square_sf(chi2, dof), 4),
    }


def nota_share(items: Sequence[Item]) -> dict[str, Any]:
    offered = [it for it in _mcq(items) if NOTA in it.options]
    correct = sum(1 for it in offered if it.answer_text == NOTA)
    return {"offered": len(offered), "correct": correct, "share": round(correct / len(offered), 4) if offered else 0.0}


def longest_option(item: Item) -> str:
    """The letter of the item's longest option (the first one on a tie): the blind "longest option" guess."""
    lengths = [len(o) for o in item.options]
    return OPTION_LETTERS[lengths.index(max(lengths))]


def blind_baselines(items: Sequence[Item]) -> dict[str, float]:
    """Accuracy of answer strategies that never look at the images, and of chance."""
    mcq = _mcq(items)
    if not mcq:
        return {}
    n = len(mcq)
    letters = Counter(it.answer for it in mcq)
    return {
        "chance": round(sum(1.0 / len(it.options) for it in mcq) / n, 4),
        "always_A": round(letters["A"] / n, 4),
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
