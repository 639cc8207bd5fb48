"""Validity figures of a Reefknot build (build.json ``quality`` and the summary), computed from the items alone.

* ``two_answers``: (image, question, options) keys that carry more than one answer (the released data has 34);
* ``duplicate_questions``: such keys asked more than once (98 in the release);
* ``agreement_faults``: questions or references whose verb does not agree with the subject's number, that lack
  the article, or double a word ("the the", "is are": the release has ~150 such VQA labels);
* Y/N balance per category, relation balance (max/min triplets per relation, per set and category), answer
  letters (chi-square, :mod:`builders.quality`);
* blind baselines: always "yes" on Y/N, always "A" on MCQ, and the language prior - for Y/N "yes" exactly when
  the asked relation is the pair's most frequent relation in the rest of the source (leave-one-out: the asked
  triplet itself is not counted), for MCQ the option most often seen with the pair elsewhere (ties: the first) -
  next to chance.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from typing import Any, Sequence

from builders import quality
from builders.items import Item

_DOUBLED = re.compile(r"\b(\w+) \1\b", re.IGNORECASE)
_BE_PAIR = re.compile(r"\b(is|are) (is|are)\b", re.IGNORECASE)


def agreement_fault(item: Item) -> str | None:
    """What is wrong with the wording of one item, or ``None``."""
    prov = item.provenance
    be = "are" if prov.get("subject_plural") else "is"
    subject = f"the {prov['triplet']['subject']}"
    texts = [item.question] + ([item.answer] if item.question_type == "vqa" else [])
    for text in texts:
        if _DOUBLED.search(text) or _BE_PAIR.search(text):
            return "doubled word"
    if item.question_type == "yes_no" and not item.question.startswith(f"{be.capitalize()} {subject} "):
        return "verb does not agree with the subject"
    if item.question_type == "vqa":
        expected = f"{subject[:1].upper()}{subject[1:]} {be} "
        if not item.answer.startswith(expected) or f"format: {expected}" not in item.question:
            return "reference or format instruction does not agree with the subject"
    if f"the {prov['triplet']['object']}" not in item.question:
        return "object without its article"
    return None


def validity(items: Sequence[Item]) -> dict[str, Any]:
    keys: dict[tuple, set[str]] = defaultdict(set)
    asked: Counter = Counter()
    for it in items:
        key = (it.images, it.question, it.options)
        keys[key].add(it.answer)
        asked[key] += 1
    faults = (
        Counter(f for f in map(agreement_fault, items) if f)
        if all("triplet" in it.provenance for it in items)
        else Counter()
    )
    yes_no = Counter((it.task, it.answer) for it in items if it.question_type == "yes_no")
    relations: dict[str, Counter] = defaultdict(Counter)
    for it in items:
        if (it.question_type != "yes_no" or it.answer == "yes") and "triplet" in it.provenance:
            relations[f"{it.question_type}/{it.task}"][it.provenance["triplet"]["relation"]] += 1
    return {
        "two_answers": sum(1 for answers in keys.values() if len(answers) > 1),
        "duplicate_questions": sum(n - 1 for n in asked.values() if n > 1),
        "agreement_faults": sum(faults.values()),
        "agreement_fault_kinds": dict(sorted(faults.items())),
        "yes_no_balance": {
            cat: {"yes": yes_no[(cat, "yes")], "no": yes_no[(cat, "no")]} for cat in sorted({c for c, _ in yes_no})
        },
        "relation_balance": {
            k: {
                "relations": len(c),
                "max": max(c.values()),
                "min": min(c.values()),
                "max_over_min": round(max(c.values()) / min(c.values()), 3),
            }
            for k, c in sorted(relations.items())
            if c
        },
        "answer_balance": quality.answer_balance(items),
        "blind_baselines": blind_baselines(items),
    }


def blind_baselines(items: Sequence[Item]) -> dict[str, dict[str, float]]:
    """Accuracy of strategies that never look at the image, per set, next to chance."""
    out: dict[str, dict[str, float]] = {}
    yn = [it for it in items if it.question_type == "yes_no"]
    if yn:
        out["yes_no"] = {
            "chance": 0.5,
            "always_yes": _share(it.answer == "yes" for it in yn),
            "language_prior": _share(it.provenance.get("prior_answer") == it.answer for it in yn),
        }
    mcq = [it for it in items if it.question_type == "mcq"]
    if mcq:
        base = quality.blind_baselines(mcq)
        out["mcq"] = {
            "chance": base["chance"],
            "always_A": base["always_A"],
            "longest_option": base["longest_option"],
            "language_prior": _share(it.provenance.get("prior_answer") == it.answer for it in mcq),
        }
    return out


def _share(flags) -> float:
    flags = list(flags)
    return round(sum(flags) / len(flags), 4) if flags else 0.0
