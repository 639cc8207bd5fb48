"""The card's limitations read off the release's own numbers: a fixed option a blind guesser strikes out, answers
with several true values, cells too small to read a rate from, one template writing most items."""

from __future__ import annotations

from typing import Any, Mapping

from builders.registry import find

from .card_creation import clip_ran


def derived_limitations(stats: Mapping[str, Any], build: Mapping[str, Any]) -> str:
    """Limitations read off this release's own numbers rather than written in general."""
    lines = []
    nota = stats.get("nota") or {}
    if nota.get("offered"):
        if not nota.get("correct"):
            lines.append(
                f"- \"None of the above\" is offered in {nota['offered']} items but is never the correct answer: a "
                "model that never picks it loses nothing here."
            )
        else:
            lines.append(
                f"- \"None of the above\" is offered in {nota['offered']} items and correct in {nota['correct']}."
            )
    for fixed in stats.get("fixed_options") or ():
        if fixed["correct"] < fixed["fair"] / 2:
            lines.append(
                f"- In `{fixed['template']}`, \"{fixed['option']}\" is offered in {fixed['offered']} items and correct "
                f"in {fixed['correct']} (its fair share: {fixed['fair']}): a blind guesser gains by striking it out. "
                "The question form leaves it no more room (see the benchmark's notes in docs/papers.md)."
            )
    if stats.get("several_accepted"):
        lines.append(
            f"- {stats['several_accepted']} open-answer items have more than one true answer (e.g. a pair that is "
            "both \"pointing at\" and \"above\"): each lists them in `provenance.accepted_answers`, and Mirage's "
            "scorer counts a reply right when it states any of them."
        )
    small = [
        f"{t}/{p} ({n})" for t, c in stats["task_pressure"].items() for p, n in c.items() if n < 5
    ]
    if small:
        lines.append(
            f"- {len(small)} task/pressure cell(s) hold fewer than 5 items ({', '.join(small[:8])}"
            + (", ..." if len(small) > 8 else "")
            + "): do not read a rate off them."
        )
    templates = stats.get("templates") or {}
    if templates and max(templates.values()) > 0.5 * stats["num_items"] and len(templates) > 1:
        top, n = max(templates.items(), key=lambda kv: kv[1])
        lines.append(f"- One template (`{top}`) writes {n} of {stats['num_items']} items: its wording artefacts weigh.")
    spec = find(str(build.get("benchmark")))
    if not clip_ran(build) and spec is not None and spec.uses_clip:
        lines.append("- The CLIP stage did not run: hard positives and negatives were chosen without CLIP scores.")
    return "\n".join(lines)
