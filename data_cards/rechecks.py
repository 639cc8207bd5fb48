"""How a release tells what the re-review of suspected label errors changed (``annotation pull --recheck``).

One wording for the changelog and the card: the card describes the version, the changelog what changed since the
previous one, and both must name the same fixes for the same reasons.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

DECISION_WORDS = {"fix": "fixed", "drop": "dropped", "keep": "confirmed"}


def _votes(entry: Mapping[str, Any], verdict: str) -> str:
    votes = entry.get("votes") or {}
    total = sum(int(v) for v in votes.values() if isinstance(v, int))
    return f"{votes.get(verdict, 0)} of {total} reviewers"


def _models(entry: Mapping[str, Any]) -> str:
    if entry.get("models_count") is None or entry.get("models") is None:
        return f"the models answered {entry.get('models_answer')}"
    return f"{entry['models_count']} of {entry['models']} models answered {entry.get('models_answer')}"


def recheck_lines(rechecked: Sequence[Mapping[str, Any]]) -> list[str]:
    """Markdown list lines: a summary, then one line per item whose answer changed or that was dropped."""
    if not rechecked:
        return []
    counts = {k: sum(1 for e in rechecked if e.get("decision") == k) for k in DECISION_WORDS}
    undecided = len(rechecked) - sum(counts.values())
    parts = [f"{n} {DECISION_WORDS[k]}" for k, n in counts.items()]
    if undecided:
        parts.append(f"{undecided} undecided (the first review stands)")
    lines = [f"- Re-review of {len(rechecked)} item(s) whose answer several models disputed (a model health "
             f"check, `python -m scoring health`): {', '.join(parts)}."]
    for e in rechecked:
        if e.get("decision") == "fix":
            lines.append(f"  - `{e['id']}`: answer {e.get('before')} -> {e.get('after')}, fixed by "
                         f"{_votes(e, 'fix')}; {_models(e)}.")
        elif e.get("decision") == "drop":
            lines.append(f"  - `{e['id']}`: dropped by {_votes(e, 'reject')} (answer was {e.get('before')}); "
                         f"{_models(e)}.")
    return lines
