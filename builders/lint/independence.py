"""Image independence: how far do answers go without looking at the images?

Blind baselines per (benchmark, task), each next to chance:

* yes/no: ``always_yes``, ``always_no``;
* MCQ: ``always_A``, ``longest_option``;
* ``language_prior`` (both): the answer the *other* items' statistics suggest (leave-one-out, so an item never
  predicts itself). Yes/no: the majority answer of the other items asking the same normalised question ("Is there
  a dog in the image?" answered "yes" 9 times in 10 elsewhere). MCQ: the option text most often right where it was
  offered, smoothed ``(right + 1) / (offered + 2)``. This is the prior a text-only model learns from the source's
  statistics, built from the benchmark itself so it needs no corpus.

A task is flagged when a baseline beats chance by more than ``MARGIN`` with at least ``MIN_ITEMS`` items and a
one-sided binomial z above ``Z``; an item is flagged when the language prior answers it right with a confident
prior (at least ``PRIOR_CONFIDENCE`` from ``PRIOR_SUPPORT`` other items). Its score: 1 minus that confidence when
the prior is right, else 1.

With ``--llm-model`` (:func:`ask_text_only`), a text-only model answers every yes/no and MCQ item from its text
alone through :mod:`builders.llm` (cached, resumable); its per-task accuracy is reported next to chance, and in a
task where it beats chance as a baseline would be flagged, the items it gets right are flagged. Open answers are not judged here (that needs the benchmark's judge).
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from typing import Any, Sequence

from builders.items import Item, OPTION_LETTERS
from builders.lint.base import CheckResult, LintContext, is_mcq, is_yes_no, normalise, per_task

MARGIN = 0.15
MIN_ITEMS = 30
Z = 3.0
PRIOR_CONFIDENCE = 0.9
PRIOR_SUPPORT = 10


def _z(right: int, n: int, chance: float) -> float:
    if n == 0 or chance <= 0 or chance >= 1:
        return 0.0
    return (right - n * chance) / math.sqrt(n * chance * (1 - chance))


def yes_no_prior(items: Sequence[Item], members: list[int]) -> dict[int, tuple[str, float]]:
    """Item index -> (predicted answer, confidence) from the other items with the same normalised question."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    keys = {i: normalise(items[i].question) for i in members}
    for i in members:
        counts[keys[i]][items[i].answer.lower()] += 1
    out = {}
    for i in members:
        c = counts[keys[i]].copy()
        c[items[i].answer.lower()] -= 1
        n = c["yes"] + c["no"]
        if n and c["yes"] != c["no"]:
            guess = "yes" if c["yes"] > c["no"] else "no"
            out[i] = (guess, c[guess] / n if n >= PRIOR_SUPPORT else 0.0)
    return out


def mcq_prior(items: Sequence[Item], members: list[int]) -> dict[int, tuple[str, float]]:
    """Item index -> (predicted letter, confidence): the option most often right elsewhere where offered."""
    offered: Counter[str] = Counter()
    right: Counter[str] = Counter()
    norm = {i: [normalise(o) for o in items[i].options] for i in members}
    for i in members:
        offered.update(norm[i])
        right[normalise(items[i].answer_text)] += 1
    out = {}
    for i in members:
        own = normalise(items[i].answer_text)
        best, best_rate, best_support = None, -1.0, 0
        for k, o in enumerate(norm[i]):
            shown = offered[o] - 1
            won = right[o] - (1 if o == own else 0)
            rate = (won + 1) / (shown + 2)
            if rate > best_rate:
                best, best_rate, best_support = k, rate, shown
        if best is not None:
            out[i] = (OPTION_LETTERS[best], best_rate if best_support >= PRIOR_SUPPORT else 0.0)
    return out


def _longest(it: Item) -> str:
    lengths = [len(o) for o in it.options]
    return OPTION_LETTERS[lengths.index(max(lengths))]


def check(items: Sequence[Item], context: LintContext) -> CheckResult:
    result = CheckResult("independence", [1.0] * len(items))
    tasks: dict[str, Any] = {}
    for (benchmark, task), members in per_task(items).items():
        name = f"{benchmark}/{task}"
        for kind, subset in (("yes_no", [i for i in members if is_yes_no(items[i])]),
                             ("mcq", [i for i in members if is_mcq(items[i])])):
            if not subset:
                continue
            n = len(subset)
            if kind == "yes_no":
                chance = 0.5
                guesses = {"always_yes": {i: "yes" for i in subset}, "always_no": {i: "no" for i in subset}}
                prior = yes_no_prior(items, subset)
                truth = {i: items[i].answer.lower() for i in subset}
            else:
                chance = sum(1 / len(items[i].options) for i in subset) / n
                guesses = {"always_A": {i: "A" for i in subset}, "longest_option": {i: _longest(items[i]) for i in subset}}
                prior = mcq_prior(items, subset)
                truth = {i: items[i].answer for i in subset}
            guesses["language_prior"] = {i: g for i, (g, _) in prior.items()}
            entry: dict[str, Any] = {"items": n, "chance": round(chance, 4)}
            leaking = []
            for baseline, guess in guesses.items():
                right = sum(guess.get(i) == truth[i] for i in subset)
                if baseline == "language_prior":  # no prior (a tie, no other item): a coin's chance
                    right_f = right + chance * (n - len(guess))
                else:
                    right_f = float(right)
                acc = right_f / n
                entry[baseline] = round(acc, 4)
                if n >= MIN_ITEMS and acc - chance > MARGIN and _z(round(right_f), n, chance) > Z:
                    leaking.append(baseline)
            entry["leaking"] = leaking
            tasks[f"{name} ({kind})"] = entry
            for i, (guess, confidence) in prior.items():
                if guess == truth[i] and confidence >= PRIOR_CONFIDENCE:
                    result.flag(i, f"the language prior answers it blind ({guess!r}, {confidence:.0%} of "
                                   "similar items elsewhere)", round(1 - confidence, 4))
    result.summary = {"margin": MARGIN, "min_items": MIN_ITEMS, "tasks": tasks,
                      "leaking_tasks": sorted(t for t, e in tasks.items() if e["leaking"])}
    if context.llm is not None and getattr(context.llm, "enabled", False):
        result.summary["text_only_model"] = ask_text_only(items, context, result)
    return result


LETTER_RE = re.compile(r"\b([A-Z])\b")
YES_NO_RE = re.compile(r"\b(yes|no)\b", re.I)
SYSTEM = ("You cannot see any image. Answer the question as best you can from its text alone. For a multiple-choice "
          "question reply with the option letter only; for a yes/no question reply yes or no.")


def prompt(item: Item) -> str:
    parts = [item.context, item.question]
    parts += [f"{OPTION_LETTERS[k]}. {o}" for k, o in enumerate(item.options)]
    return "\n".join(p for p in parts if p)


def parse_reply(text: str, item: Item) -> str | None:
    """The option letter or yes/no a reply gives (the first one written), ``None`` if it gives none."""
    if item.options:
        m = LETTER_RE.search(text.strip())
        return m.group(1) if m and m.group(1) in OPTION_LETTERS[: len(item.options)] else None
    m = YES_NO_RE.search(text)
    return m.group(1).lower() if m else None


def ask_text_only(items: Sequence[Item], context: LintContext, result: CheckResult) -> dict[str, Any]:
    """A text-only model answers without the images, and its accuracy per task is set next to chance. Where it
    beats chance by more than ``MARGIN`` (z above ``Z``), the task leaks and the items it got right there are
    flagged; elsewhere a right answer is a lucky guess and only counted."""
    from builders.llm import LLMRequest, make_client

    client = make_client(context.llm)
    asked = [i for i, it in enumerate(items) if is_mcq(it) or is_yes_no(it)]
    requests = [LLMRequest(messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt(items[i])}])
                for i in asked]
    replies = client.complete_many(requests)
    right: dict[str, list[int]] = defaultdict(list)
    counts: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0, 0.0])  # items, right, unparsed, chance sum
    for i, reply in zip(asked, replies):
        it = items[i]
        guess = parse_reply(reply.text, it)
        task = f"{it.benchmark}/{it.task}"
        c = counts[task]
        c[0] += 1
        c[2] += guess is None
        c[3] += 1 / len(it.options) if it.options else 0.5
        if guess is not None and guess == (it.answer if it.options else it.answer.lower()):
            c[1] += 1
            right[task].append(i)
    tasks = {}
    for task, (n, r, unparsed, chance_sum) in sorted(counts.items()):
        chance = chance_sum / n
        leaking = n >= MIN_ITEMS and r / n - chance > MARGIN and _z(int(r), int(n), chance) > Z
        tasks[task] = {"items": int(n), "right": int(r), "unparsed": int(unparsed), "accuracy": round(r / n, 4),
                       "chance": round(chance, 4), "leaking": leaking}
        if leaking:
            for i in right[task]:
                result.flag(i, f"a text-only model ({context.llm.model}) answers it without the image, "
                               f"{r / n:.0%} right on {task} (chance {chance:.0%})", 0.0)
    return {"model": context.llm.model, "usage": client.usage(), "tasks": tasks,
            "leaking_tasks": [t for t, e in tasks.items() if e["leaking"]]}
