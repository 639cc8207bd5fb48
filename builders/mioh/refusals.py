"""How many (image, probe) pairs federated or open-vocabulary annotation left undecidable, and why.

A refusal (:class:`builders.mioh.pools.Refusal`) is a pair an exhaustive reading of the annotations would have
decided - "no mug here" because no mug is annotated, "three cups" because three are - but that the source does
not support: the absence was never verified, the category's instances or attributes are not all annotated, or
the attribute's type is flagged unknown. :func:`refusal_counts` counts them over every probe the pools offer and
every image, which is what ``build.json`` (``stats.federated_refusals``) and the summary report.

Pairs whose category has no instance are counted with matrices (one column per category); pairs whose category
is present are read from the pools' decision tables (:meth:`builders.mioh.pools.Pools.shown_refusals`), so a large
source stays cheap and a prepared pool answers without its per-image facts.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import numpy as np

from builders.mioh.pools import REFUSAL_REASONS, UNVERIFIED_ABSENCE, Pools


def refusal_counts(pools: Pools, task: str) -> dict[str, Any]:
    """``{"pairs": all (image, probe) pairs, "refused": how many were refused, "reasons": {reason: n}}``."""
    probes = pools.probes(task)
    n_images = len(pools.facts)
    reasons: Counter = Counter()
    if task == "position":
        reasons[UNVERIFIED_ABSENCE] = _unverified_positions(pools, probes)
    else:
        by_category: dict[str, list] = defaultdict(list)
        for probe in probes:
            by_category[probe[1] if task == "attribute" else probe].append(probe)  # type: ignore[index]
        cats = sorted(by_category)
        idx = [pools.category_index(c) for c in cats]
        verified = pools.attribute_verified_absent if task == "attribute" else pools.verified_absent
        unverified = ~pools.incidence[:, idx] & ~verified[:, idx]
        if task == "counting":  # without the federated rules these images would count 0 only within the limit
            unverified &= _within_count_limit(pools)[:, None]
        per_category = unverified.sum(axis=0)
        reasons[UNVERIFIED_ABSENCE] = int(sum(int(n) * len(by_category[c]) for n, c in zip(per_category, cats)))
        reasons.update(pools.shown_refusals(task))
    counted = {r: int(reasons[r]) for r in REFUSAL_REASONS if reasons[r]}
    return {"pairs": len(probes) * n_images, "refused": sum(counted.values()), "reasons": counted}


def _within_count_limit(pools: Pools) -> np.ndarray:
    """Images the image-scope count limit does not already rule out."""
    if pools.config.count_scope != "image":
        return np.ones(len(pools.facts), dtype=bool)
    return pools.object_counts() <= pools.config.count_max_objects


def _unverified_positions(pools: Pools, probes: list) -> int:
    """Triples x images where the subject or object is missing and neither missing one is verified absent."""
    predicates: Counter = Counter((s, o) for s, _, o in probes)
    not_verified = ~pools.verified_absent
    total = 0
    for (s, o), n in predicates.items():
        a, b = pools.category_index(s), pools.category_index(o)
        both_present = np.count_nonzero(pools.incidence[:, a] & pools.incidence[:, b])
        total += n * (int(np.count_nonzero(not_verified[:, a] & not_verified[:, b])) - int(both_present))
    return total


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
