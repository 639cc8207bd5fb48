"""Contradictions: one question, two answers.

* the same (images, context, question, options) with different answers (Reefknot's release has 34 such
  (image, prompt) keys labelled both "yes" and "no"); every item of such a group is flagged, score 0. "The
  same" is read as the near-duplicate check reads it (:func:`builders.lint.base.normalise`: case, punctuation
  and determiners do not count), so "Is there smoke from plane?" answered "yes" and "Is there smoke from the
  plane?" answered "no" on one image are one question with two answers, not two questions;
* yes/no items that a builder promises to pair 1:1 (a "yes" and an adversarial "no" about one fact) whose group
  does not hold as many "yes" as "no" answers, score 0.5. Where the promise comes from: ``build.json``
  ``"lint_promises": {"yes_no_pairs": [provenance keys]}`` (the importers write it, any builder may), else
  :data:`PAIRED_YES_NO` for builders that promise it in their docstrings. A group is the items of one
  (benchmark, task, images) with equal values under those provenance keys; no keys: the images alone.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

from builders.items import Item, canonical_json
from builders.lint.base import CheckResult, LintContext, image_names, normalise
from builders.registry import find
from builders.semantics.format import answer_text, is_yes_no

def pair_keys(benchmark: str, context: LintContext) -> tuple[str, ...] | None:
    """The provenance keys of the yes/no pairing promised for ``benchmark`` (``None``: no promise): build.json's
    ``lint_promises``, else the benchmark's spec (Reefknot's: each triplet gives one "yes" and one adversarial
    "no" question on the same image, subject and object)."""
    promises = (context.build.get("lint_promises") or {}) if context.build else {}
    if "yes_no_pairs" in promises and context.build.get("benchmark", benchmark) == benchmark:
        return tuple(promises["yes_no_pairs"])
    spec = find(benchmark)
    keys = spec.lint_promises.get("yes_no_pairs") if spec else None
    return tuple(keys) if keys is not None else None


def same_question_key(item: Item) -> tuple:
    """What makes two items the same question: their images, and context, question and options normalised."""
    return (image_names(item), normalise(item.context), normalise(item.question), tuple(map(normalise, item.options)))


def answers_differ(items: Sequence[Item], members: Sequence[int]) -> bool:
    """Whether the items ``members`` (of one :func:`same_question_key` group) have more than one answer."""
    return len({answer_text(items[i]).strip().lower() for i in members}) > 1


def check(items: Sequence[Item], context: LintContext) -> CheckResult:
    result = CheckResult("contradictions", [1.0] * len(items))
    groups: dict[tuple, list[int]] = defaultdict(list)
    for i, it in enumerate(items):
        groups[same_question_key(it)].append(i)
    conflicting = 0
    for members in groups.values():
        if len(members) > 1 and answers_differ(items, members):
            answers = {answer_text(items[i]).strip().lower() for i in members}
            conflicting += 1
            shown = " / ".join(sorted(answers))[:80]
            for i in members:
                others = [items[j].id for j in members if j != i]
                result.flag(i, f"same question answered {shown!r} elsewhere ({', '.join(others[:3])})", 0.0)

    unpaired = 0
    promised: dict[str, tuple[str, ...]] = {}
    pairs: dict[tuple, list[int]] = defaultdict(list)
    for i, it in enumerate(items):
        if not is_yes_no(it):
            continue
        keys = promised.setdefault(it.benchmark, pair_keys(it.benchmark, context))  # type: ignore[arg-type]
        if keys is None:
            continue
        values = canonical_json([it.provenance.get(k) for k in keys])
        pairs[(it.benchmark, it.task, image_names(it), values)].append(i)
    for members in pairs.values():
        yes = sum(items[i].answer.lower() == "yes" for i in members)
        no = len(members) - yes
        if yes != no:
            unpaired += 1
            for i in members:
                result.flag(i, f"promised yes/no pairing broken: {yes} yes, {no} no in its group", 0.5)
    result.summary = {
        "conflicting_groups": conflicting,
        "unpaired_groups": unpaired,
        "pairing": {b: list(k) for b, k in sorted(promised.items()) if k is not None},
    }
    return result
