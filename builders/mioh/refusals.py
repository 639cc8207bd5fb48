"""How many (image, probe) pairs federated or open-vocabulary annotation left undecidable, and why.

A refusal (:data:`builders.mioh.rules.REFUSAL_REASONS`) is a pair an exhaustive reading of the annotations would have
decided - "no mug here" because no mug is annotated, "three cups" because three are - but that the source does
not support: the absence was never verified, the category's instances or attributes are not all annotated, or
the attribute's type is flagged unknown. :func:`refusal_counts` counts them over every probe the pools offer and
every image, which is what ``build.json`` (``stats.federated_refusals``) and the summary report.

Pairs whose category has no instance are counted with matrices (one column per category); pairs whose category
is present are read from the pools' tables, where the rules recorded them (:mod:`builders.mioh.rules`).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from builders.mioh.pools import Pools
from builders.mioh.rules import COUNT_REFUSED, NOT_EXHAUSTIVE, REFUSAL_REASONS, UNVERIFIED_ABSENCE, within_limit


def refusal_counts(pools: Pools, task: str) -> dict[str, Any]:
    """``{"pairs": all (image, probe) pairs, "refused": how many were refused, "reasons": {reason: n}}``."""
    probes = pools.probes(task)
    reasons: Counter = Counter()
    if task == "position":
        reasons[UNVERIFIED_ABSENCE] = _unverified_positions(pools, probes)
    else:
        verified = pools.attribute_verified_absent if task == "attribute" else pools.verified_absent
        unverified = ~pools.incidence & ~verified & ~pools.lookalike  # a look-alike's pair is not a refusal
        if task == "counting":  # without the federated rules these images would count 0 only within the limit
            unverified &= within_limit(pools.object_counts(), pools.config)[:, None]
        cats = [pools.category_index(probe[1] if task == "attribute" else probe) for probe in probes]  # type: ignore[index]
        reasons[UNVERIFIED_ABSENCE] = int(unverified.sum(axis=0)[cats].sum())
    if task == "counting":  # shown categories: counting refuses the not exhaustively annotated ones
        reasons[NOT_EXHAUSTIVE] = int(np.count_nonzero(np.asarray(pools.tables[task]["count"]) == COUNT_REFUSED))
    elif task == "attribute":  # and attributes those the rules refused to deny
        numbers = np.bincount(np.asarray(pools.tables[task]["refusal"]), minlength=len(REFUSAL_REASONS) + 1)
        reasons.update({reason: int(n) for reason, n in zip(REFUSAL_REASONS, numbers[1:].tolist())})
    counted = {r: int(reasons[r]) for r in REFUSAL_REASONS if reasons[r]}
    return {"pairs": len(probes) * pools.n_images, "refused": sum(counted.values()), "reasons": counted}


def _unverified_positions(pools: Pools, probes: list) -> int:
    """Triples x images where the subject or object is missing and neither missing one is verified absent."""
    predicates: Counter = Counter((s, o) for s, _, o in probes)
    if not predicates:
        return 0
    a = np.array([pools.category_index(s) for s, _ in predicates], dtype=np.int64)
    b = np.array([pools.category_index(o) for _, o in predicates], dtype=np.int64)
    n = np.array(list(predicates.values()), dtype=np.int64)
    known = (pools.verified_absent | pools.lookalike) & ~pools.incidence  # a look-alike's pair: not a refusal
    unverified = _pair_counts(~known, a, b) - _pair_counts(pools.incidence, a, b)
    return int((n * unverified).sum())


def _pair_counts(matrix: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For each pair ``k``: the images (rows of the boolean ``matrix``) where columns ``a[k]`` and ``b[k]`` both
    hold."""
    columns = np.asfortranarray(matrix)
    return np.array([np.count_nonzero(columns[:, i] & columns[:, j]) for i, j in zip(a.tolist(), b.tolist())],
                    dtype=np.int64)


def refusal_rows(stats: dict[str, Any]) -> list[list[str]]:
    """Summary rows - task (source), reason, pairs - for the tasks whose source is not exhaustive."""
    rows = []
    for task, r in stats.get("federated_refusals", {}).items():
        if r["exhaustive"] and not r["refused"]:
            continue
        name = f"{task} ({r['source']})"
        for reason, n in r["reasons"].items():
            rows.append([name, reason, str(n)])
            name = ""
        share = f" ({r['refused'] / r['pairs']:.0%})" if r["pairs"] else ""
        rows.append([name, f"undecidable of {r['pairs']} pairs", f"{r['refused']}{share}"])
    return rows


def print_refusals(stats: dict[str, Any]) -> None:
    """The summary table of refusals (nothing when every source is exhaustive)."""
    from builders.cli import stdout, table

    rows = refusal_rows(stats)
    if rows:
        stdout.print(table("Pairs left undecidable by federated / open-vocabulary annotation",
                           ["task (source)", "why", "(image, probe) pairs"], rows, numeric=False))
