"""``python -m scoring.harness circular``: a VLMEvalKit result sheet of a circular TSV, scored by CircularEval.

The sheets themselves (and the rotations they hold) are written with the release (:mod:`data_cards.harness`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from builders.items import OPTION_LETTERS
from builders.semantics.extract import extract_option
from builders.semantics.options import refusal_letters
from data_cards.harness.vlmevalkit import ROTATION_OFFSET
from scoring.predictions import read_sheet
from sources.errors import ConfigError


def read_result_sheet(path: str | Path) -> list[dict[str, str]]:
    """The rows of a VLMEvalKit result sheet of a Mirage circular TSV, as text (read by
    :func:`scoring.predictions.read_sheet`, the one sheet reader; this adds the circular sheet's column check)."""
    columns, rows = read_sheet(path)
    missing = [c for c in ("index", "id", "answer", "prediction") if c not in columns]
    if missing:
        raise ConfigError(f"{path}: no {', '.join(missing)} column(s): not the result sheet of a Mirage circular "
                          "TSV (python -m scoring.harness export)")
    return rows


def score_circular(rows: Sequence[dict[str, str]], source: str = "sheet") -> dict[str, Any]:
    """VLMEvalKit's CircularEval, with Mirage's extraction: an item counts correct only when every rotation is.

    Each row's prediction is read against that row's own (rotated) options, so "the answer is (B)" means the
    option shown under B in that rotation; an unparsed answer is wrong (never a random letter, which VLMEvalKit's
    fallback draws). Returns ``{"items", "circular_accuracy", "vanilla_accuracy" (rotation 0 only), "unparsed",
    "by_category": {task: {...}}, "items_detail": [...]}``.
    """
    groups: dict[int, list[dict[str, str]]] = {}
    for n, row in enumerate(rows, 2):
        try:
            index = int(float(row["index"]))
        except ValueError:
            raise ConfigError(f"{source}: row {n}: index {row['index']!r} is not an integer") from None
        groups.setdefault(index % ROTATION_OFFSET, []).append(dict(row, index=index))
    detail = []
    for base, members in sorted(groups.items()):
        ids = {m["id"] for m in members}
        if len(ids) != 1:
            raise ConfigError(f"{source}: index {base}: rows of different items ({', '.join(sorted(ids))})")
        if not any(m["index"] == base for m in members):
            raise ConfigError(f"{source}: index {base}: the original row (rotation 0) is missing")
        hits, unparsed = [], 0
        for m in sorted(members, key=lambda m: m["index"]):
            options = [m[c] for c in OPTION_LETTERS if c in m and m[c] != ""]
            answer = extract_option(m["prediction"], options, refusal_letters(options))
            unparsed += answer.kind == "unparsed"
            hits.append(answer.kind == "option" and answer.value == m["answer"])
        detail.append({"id": members[0]["id"], "category": members[0].get("category", ""),
                       "rotations": len(members), "vanilla": hits[0], "circular": all(hits), "unparsed": unparsed})

    def summary(sel: list[dict[str, Any]]) -> dict[str, Any]:
        n = len(sel)
        return {"items": n, "rows": sum(d["rotations"] for d in sel),
                "circular_accuracy": round(sum(d["circular"] for d in sel) / n, 6) if n else None,
                "vanilla_accuracy": round(sum(d["vanilla"] for d in sel) / n, 6) if n else None,
                "unparsed": sum(d["unparsed"] for d in sel)}

    categories = sorted({d["category"] for d in detail})
    return {**summary(detail), "by_category": {c: summary([d for d in detail if d["category"] == c])
                                               for c in categories}, "items_detail": detail}
