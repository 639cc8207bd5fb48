"""Markdown tables and cells of the card: pipes and newlines escaped, long values cut, nested mappings flattened."""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping, Sequence


def md_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    def cell(v: Any) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def count_table(name: str, counts: Mapping[str, int], total: int) -> str:
    rows = [(f"`{k}`", v, f"{100.0 * v / total:.1f}%") for k, v in counts.items()]
    rows.append(("**total**", sum(counts.values()), "100.0%"))
    return md_table([name, "items", "share"], rows)


def flatten(value: Any, prefix: str = "", depth: int = 0) -> list[tuple[str, Any]]:
    if isinstance(value, Mapping) and value and depth < 4:
        out = []
        for k in sorted(value, key=str):
            out += flatten(value[k], f"{prefix}.{k}" if prefix else str(k), depth + 1)
        return out
    return [(prefix, value)]


def short(value: Any, limit: int = 100) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"
