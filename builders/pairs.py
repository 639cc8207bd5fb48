"""Pairs of items and the group metric (NaturalBench, Li et al., NeurIPS 2024): one question, two images, two answers.

A closed item (MCQ or yes/no) may have a partner: the same question (and context) asked of another image set
whose gold differs. Both carry ``provenance.pair = {"id": <pair id>, "role": "a" | "b"}``. A model that does not
look gives the same answer to both, so it cannot get both right: its *group accuracy* (the share of pairs with
both items right) is 0 for any constant answer, however its per-item accuracy fares.

This module states the rule once, for every layer above it: builders mark pairs (:func:`pair_provenance`), the
lint's blind audit, the release card and every scorer read them (:func:`pairs_of`, :func:`paired_metric`).

Choices where NaturalBench is silent or does not apply:

* a pair counts only when both its items are present and scored; an item whose partner is missing (dropped in
  review, not in the predictions, or never found by the builder) is *unpaired*: it still counts one by one in the
  paper's metrics, and is reported in ``unpaired``, but takes no part in the group metric;
* ``question_accuracy`` is the per-item accuracy over the items of complete pairs (so the two numbers compare the
  same items); ``group_accuracy`` the share of complete pairs with both items right; ``None`` when no pair is
  complete;
* a pair id seen on more than two items, or twice with one role, is an error of the build, not a pair.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable, Mapping, Sequence, TypeVar

from builders.items import Item

PAIR_KEY = "pair"
ROLES = ("a", "b")

T = TypeVar("T")


def pair_provenance(pair_id: str, role: str) -> dict[str, dict[str, str]]:
    """What a builder adds to an item's provenance to make it one half of a pair."""
    if role not in ROLES:
        raise ValueError(f"a pair role is 'a' or 'b', not {role!r}")
    return {PAIR_KEY: {"id": pair_id, "role": role}}


def pair_of(item: Item) -> tuple[str, str] | None:
    """``(pair id, role)`` of an item, ``None`` when it has no partner."""
    pair = item.provenance.get(PAIR_KEY)
    if not isinstance(pair, Mapping):
        return None
    return str(pair["id"]), str(pair["role"])


def pairs_of(entries: Iterable[tuple[Item, T]]) -> tuple[dict[str, tuple[T, T]], list[T]]:
    """Complete pairs (pair id -> (role a's value, role b's value)) and the values of the unpaired items.

    ``entries`` are (item, value) with any value a caller needs per item (a correctness flag, the item itself)."""
    halves: dict[str, dict[str, T]] = defaultdict(dict)
    unpaired: list[T] = []
    for item, value in entries:
        pair = pair_of(item)
        if pair is None:
            unpaired.append(value)
            continue
        pair_id, role = pair
        if role not in ROLES or role in halves[pair_id]:
            raise ValueError(f"item {item.id}: pair {pair_id!r} has role {role!r} twice (or an unknown role)")
        halves[pair_id][role] = value
    complete: dict[str, tuple[T, T]] = {}
    for pair_id in sorted(halves):
        members = halves[pair_id]
        if len(members) == 2:
            complete[pair_id] = (members["a"], members["b"])
        else:
            unpaired.extend(members.values())
    return complete, unpaired


def paired_metric(scored: Iterable[tuple[Item, bool]]) -> dict[str, Any]:
    """``{"question_accuracy", "group_accuracy", "pairs", "unpaired"}`` over (item, answered right?) of the
    scored items: see the module docstring for what counts."""
    complete, unpaired = pairs_of(scored)
    hits = [a + b for a, b in complete.values()]
    n = len(hits)
    return {
        "question_accuracy": sum(hits) / (2 * n) if n else None,
        "group_accuracy": sum(1 for h in hits if h == 2) / n if n else None,
        "pairs": n,
        "unpaired": len(unpaired),
    }


def paired_share(items: Sequence[Item]) -> dict[str, Any]:
    """How many items are in complete pairs (for build.json, summaries and cards): ``items``, ``paired``,
    ``pairs``, ``unpaired`` and ``share`` (paired / items, ``None`` for no items)."""
    complete, unpaired = pairs_of((it, it) for it in items)
    paired = 2 * len(complete)
    return {"items": len(items), "paired": paired, "pairs": len(complete), "unpaired": len(unpaired),
            "share": paired / len(items) if items else None}


def paired_summary(paired: Mapping[str, Any]) -> str:
    """One line (under 80 columns) for a scorer's report: group and question accuracy over the complete pairs."""

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{100 * value:.1f}%"

    return (f"Pairs: group accuracy {pct(paired['group_accuracy'])}, question accuracy "
            f"{pct(paired['question_accuracy'])} over {paired['pairs']} pair(s); {paired['unpaired']} unpaired")
