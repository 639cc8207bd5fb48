"""An independent check of pairs (issue 55), plain code over the items as written: each pair id names exactly two
items, roles ``a`` and ``b``, asking the same question (same task, question type, pressure, context, question and
options) of other images, with different answers. The item checkers re-derive each answer on its own."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

SAME = ("benchmark", "task", "question_type", "pressure", "context", "question", "options")


def pair_problems(items: list[dict[str, Any]], same: tuple[str, ...] = SAME) -> list[str]:
    """Problems with the pairs among ``items`` (an empty list means every pair is a pair); ``same``: the fields
    both items must share (Reefknot's Y/N pressure tells its "no" from its "yes", and differs in a pair)."""
    members: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for item in items:
        pair = item["provenance"].get("pair")
        if isinstance(pair, dict):
            members[pair["id"]].append(item)
    problems = []
    for pair_id, both in sorted(members.items()):
        roles = sorted(it["provenance"]["pair"]["role"] for it in both)
        if roles != ["a", "b"]:
            problems.append(f"pair {pair_id}: roles {roles}, not one 'a' and one 'b'")
            continue
        a, b = both
        differ = [field for field in same if a.get(field) != b.get(field)]
        if differ:
            problems.append(f"pair {pair_id}: the two items differ in {', '.join(differ)}")
        if a["answer"] == b["answer"]:
            problems.append(f"pair {pair_id}: both items answer {a['answer']}")
        if a["images"] == b["images"]:
            problems.append(f"pair {pair_id}: both items show the same images")
    return problems


def paired_share(items: list[dict[str, Any]]) -> float:
    """The share of ``items`` that carry a pair id."""
    return sum(1 for it in items if isinstance(it["provenance"].get("pair"), dict)) / len(items)
