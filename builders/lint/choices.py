"""Options: the faults of an MCQ's answer options.

* ``repeated``: two options equal once normalised (case, punctuation, articles);
* ``contained``: one option's words inside another's ("dog" and "hot dog"), so one may give the other away;
  options of one or two characters (numbers, letters) and fixed options ("None of the above", refusals:
  :func:`builders.semantics.options.is_fixed_option`) are not compared;
* ``letter``: an option that carries its own letter ("A. dog", "(B) cat"), which shifts letters once shuffled;
* ``answer``: the answer is not a letter of the options (a letter past the last option, or not a letter);
* ``synonyms``: two options from one group of :data:`NEAR_SYNONYMS` ("next to" / "beside", "grey" / "gray"),
  for relation and attribute options, where both could be right.

Score: ``1 / (1 + number of faults)``, 0 when the answer is not among the options.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Sequence

from builders.items import Item, OPTION_LETTERS
from builders.lint.base import CheckResult, LintContext, normalise
from builders.semantics.format import letter_index
from builders.semantics.options import is_fixed_option

NEAR_SYNONYMS: tuple[frozenset[str], ...] = tuple(frozenset(g) for g in (
    {"next to", "beside", "near", "by", "adjacent to", "close to", "alongside"},
    {"on", "on top of", "atop", "upon", "sitting on", "lying on", "resting on"},
    {"in", "inside", "within", "inside of"},
    {"under", "below", "beneath", "underneath"},
    {"above", "over"},
    {"behind", "in back of"},
    {"in front of", "before"},
    {"holding", "carrying", "holds", "carries"},
    {"wearing", "dressed in", "wears", "has on"},
    {"looking at", "watching", "observing"},
    {"riding", "riding on"},
    {"grey", "gray"},
    {"small", "little", "tiny"},
    {"big", "large", "huge"},
    {"dotted", "spotted", "polka dot"},
    {"striped", "stripy"},
))
SYNONYM_GROUP = {word: i for i, group in enumerate(NEAR_SYNONYMS) for word in group}
OWN_LETTER = re.compile(r"^\s*(?:\(?[A-Z]\)|[A-Z][.:]\s)")


def option_faults(item: Item) -> list[str]:
    found: list[str] = []
    options = list(item.options)
    if letter_index(item.answer, options) is None:
        found.append(f"answer: {item.answer[:40]!r} is not the letter of one of {len(options)} options")
    norm = [normalise(o) for o in options]
    for text, count in Counter(norm).items():
        if count > 1 and text:
            found.append(f"repeated: {text!r} given {count} times")
    compared = [(i, n) for i, n in enumerate(norm) if len(n) > 2 and not is_fixed_option(options[i])]
    for i, a in compared:
        for j, b in compared:
            if i != j and a != b and f" {a} " in f" {b} ":
                found.append(f"contained: option {OPTION_LETTERS[i]} {options[i]!r} is inside option "
                             f"{OPTION_LETTERS[j]} {options[j]!r}")
    for i, o in enumerate(options):
        if OWN_LETTER.match(o):
            found.append(f"letter: option {OPTION_LETTERS[i]} {o[:30]!r} carries a letter of its own")
    groups: dict[int, list[int]] = {}
    for i, o in enumerate(options):
        g = SYNONYM_GROUP.get(o.strip().lower())
        if g is not None:
            groups.setdefault(g, []).append(i)
    for members in groups.values():
        if len(members) > 1:
            found.append("synonyms: " + " / ".join(f"{OPTION_LETTERS[i]} {options[i]!r}" for i in members))
    return found


def check(items: Sequence[Item], context: LintContext) -> CheckResult:
    result = CheckResult("options", [1.0] * len(items))
    per_rule: Counter[str] = Counter()
    checked = 0
    for i, it in enumerate(items):
        if not it.options:
            continue
        checked += 1
        found = option_faults(it)
        for reason in found:
            per_rule[reason.split(":", 1)[0]] += 1
            result.flag(i, reason, 0.0 if reason.startswith("answer") else 1.0)
        if found:
            result.scores[i] = min(result.scores[i], round(1.0 / (1 + len(found)), 4))
    result.summary = {"items_with_options": checked, "faults_per_rule": dict(sorted(per_rule.items()))}
    return result
