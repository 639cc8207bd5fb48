"""Image independence: how far do answers go without looking at the images?

Blind baselines per (benchmark, task), each next to chance:

* yes/no: ``always_yes``, ``always_no``;
* MCQ: ``always_A``, ``longest_option``;
* ``language_prior`` (both): the answer the *other* questions' statistics suggest (leave-one-out, so an item never
  predicts itself). Yes/no: the majority answer of the other items asking the same normalised question ("Is there
  a dog in the image?" answered "yes" 9 times in 10 elsewhere). MCQ: the option text most often right where it was
  offered, smoothed ``(right + 1) / (offered + 2)``. This is the prior a text-only model learns from the source's
  statistics, built from the benchmark itself so it needs no corpus.

Variants of one question (MM-SAP's ``--shuffles K``: the same question with its options reordered, linked by
``provenance[VARIANT_KEY]``) are left out *together*: otherwise each variant would learn its answer from its K - 1
siblings, a leak of the lint's own making. They also count as one question in the task's test (``MIN_ITEMS`` and
the z use the number of questions, not of variants, since K copies of one answer are not K observations).

A task is flagged when a baseline beats chance by more than ``MARGIN`` with at least ``MIN_ITEMS`` questions and a
one-sided binomial z above ``Z``; an item is flagged when the language prior answers it right with a confident
prior (at least ``PRIOR_CONFIDENCE`` from ``PRIOR_SUPPORT`` other items). Its score: 1 minus that confidence when
the prior is right, else 1.

A task whose answer is fixed by the benchmark's design (MM-SAP's BeyondVisQA is answered by the refusal "Sorry,
I can't help with it" in every item: the paper's formula 1) is declared by its builder in ``build.json``
``"lint_promises": {"fixed_answers": {task: {"answer": text, "why": reason}}}``. There the baselines that find the
fixed answer are reported as *by design* (a note in the summary, the table and the card), not as a finding, and
the prior's right guesses are not flagged; an item of that task whose answer is *not* the promised one breaks the
promise and is flagged. Without the promise the same task is flagged as any other.

With ``--llm-model`` (:func:`ask_text_only`), a text-only model answers every yes/no and MCQ item from its text
alone through :mod:`builders.llm` (cached, resumable); its per-task accuracy is reported next to chance, and in a
task where it beats chance as a baseline would be flagged, the items it gets right are flagged. Open answers are not judged here (that needs the benchmark's judge).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from typing import Any, Hashable, Sequence

from builders.items import Item, OPTION_LETTERS, canonical_json
from builders.lint.base import CheckResult, LintContext, answer_text, collapse, is_mcq, is_yes_no, normalise, per_task
from builders.quality import longest_option
from sources.errors import ConfigError

MARGIN = 0.15
MIN_ITEMS = 30
Z = 3.0
PRIOR_CONFIDENCE = 0.9
PRIOR_SUPPORT = 10
VARIANT_KEY = "group"
"""Provenance key whose equal values mark variants of one question (MM-SAP's shuffles). Leaving a larger set out
of a leave-one-out prior only takes information away from it, so a key that groups more than variants can hide a
leak but never invent one."""


def _z(right: int, n: int, chance: float) -> float:
    if n == 0 or chance <= 0 or chance >= 1:
        return 0.0
    return (right - n * chance) / math.sqrt(n * chance * (1 - chance))


def variant_groups(items: Sequence[Item], members: list[int]) -> dict[int, Hashable]:
    """Item index -> the key of its question: ``provenance[VARIANT_KEY]`` for variants, else the item itself."""
    out = {}
    for i in members:
        value = items[i].provenance.get(VARIANT_KEY)
        if value is None:
            out[i] = i
        else:
            out[i] = (value if isinstance(value, str) else canonical_json(value), )  # never equal to an index
    return out


def yes_no_prior(items: Sequence[Item], members: list[int]) -> dict[int, tuple[str, float]]:
    """Item index -> (predicted answer, confidence) from the other questions with the same normalised text (its
    own variants left out with it)."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    own: dict[tuple[Hashable, str], Counter[str]] = defaultdict(Counter)
    keys = {i: normalise(items[i].question) for i in members}
    groups = variant_groups(items, members)
    for i in members:
        counts[keys[i]][items[i].answer.lower()] += 1
        own[(groups[i], keys[i])][items[i].answer.lower()] += 1
    out = {}
    for i in members:
        c = counts[keys[i]] - own[(groups[i], keys[i])]
        n = c["yes"] + c["no"]
        if n and c["yes"] != c["no"]:
            guess = "yes" if c["yes"] > c["no"] else "no"
            out[i] = (guess, c[guess] / n if n >= PRIOR_SUPPORT else 0.0)
    return out


def mcq_prior(items: Sequence[Item], members: list[int]) -> dict[int, tuple[str, float]]:
    """Item index -> (predicted letter, confidence): the option most often right in the other questions where
    offered (its own variants left out with it)."""
    offered: Counter[str] = Counter()
    right: Counter[str] = Counter()
    own_offered: dict[Hashable, Counter[str]] = defaultdict(Counter)
    own_right: dict[Hashable, Counter[str]] = defaultdict(Counter)
    norm = {i: [normalise(o) for o in items[i].options] for i in members}
    groups = variant_groups(items, members)
    for i in members:
        answer = normalise(items[i].answer_text)
        offered.update(norm[i])
        right[answer] += 1
        own_offered[groups[i]].update(norm[i])
        own_right[groups[i]][answer] += 1
    out = {}
    for i in members:
        g = groups[i]
        best, best_rate, best_support = None, -1.0, 0
        for k, o in enumerate(norm[i]):
            shown = offered[o] - own_offered[g][o]
            won = right[o] - own_right[g][o]
            rate = (won + 1) / (shown + 2)
            if rate > best_rate:
                best, best_rate, best_support = k, rate, shown
        if best is not None:
            out[i] = (OPTION_LETTERS[best], best_rate if best_support >= PRIOR_SUPPORT else 0.0)
    return out


def fixed_answers(benchmark: str, context: LintContext) -> dict[str, dict[str, str]]:
    """Task -> ``{"answer", "why"}``: the tasks whose answer the build promises is fixed by design."""
    build = context.build or {}
    if (build.get("benchmark") or benchmark) != benchmark:
        return {}
    promised = (build.get("lint_promises") or {}).get("fixed_answers") or {}
    if not isinstance(promised, dict) or not all(isinstance(p, dict) and isinstance(p.get("answer"), str)
                                                 for p in promised.values()):
        raise ConfigError(f"lint_promises.fixed_answers must map each task to "
                          f"{{\"answer\": text, \"why\": text}}, got {json.dumps(promised)[:120]}")
    return {task: {"answer": p["answer"], "why": str(p.get("why", ""))} for task, p in promised.items()}


def _same_text(a: str, b: str) -> bool:
    return collapse(a).lower() == collapse(b).lower()


def check(items: Sequence[Item], context: LintContext) -> CheckResult:
    result = CheckResult("independence", [1.0] * len(items))
    tasks: dict[str, Any] = {}
    promises: dict[str, dict[str, dict[str, str]]] = {}
    for (benchmark, task), members in per_task(items).items():
        name = f"{benchmark}/{task}"
        promise = promises.setdefault(benchmark, fixed_answers(benchmark, context)).get(task)
        for kind, subset in (("yes_no", [i for i in members if is_yes_no(items[i])]),
                             ("mcq", [i for i in members if is_mcq(items[i])])):
            if not subset:
                continue
            n = len(subset)
            questions = len(set(variant_groups(items, subset).values()))
            if kind == "yes_no":
                chance = 0.5
                guesses = {"always_yes": {i: "yes" for i in subset}, "always_no": {i: "no" for i in subset}}
                prior = yes_no_prior(items, subset)
                truth = {i: items[i].answer.lower() for i in subset}
            else:
                chance = sum(1 / len(items[i].options) for i in subset) / n
                guesses = {"always_A": {i: "A" for i in subset}, "longest_option": {i: longest_option(items[i]) for i in subset}}
                prior = mcq_prior(items, subset)
                truth = {i: items[i].answer for i in subset}
            guesses["language_prior"] = {i: g for i, (g, _) in prior.items()}
            entry: dict[str, Any] = {"items": n, "chance": round(chance, 4)}
            if questions != n:
                entry["questions"] = questions
            leaking = []
            for baseline, guess in guesses.items():
                right = sum(guess.get(i) == truth[i] for i in subset)
                if baseline == "language_prior":  # no prior (a tie, no other item): a coin's chance
                    right_f = right + chance * (n - len(guess))
                else:
                    right_f = float(right)
                acc = right_f / n
                entry[baseline] = round(acc, 4)
                if questions >= MIN_ITEMS and acc - chance > MARGIN and _z(round(acc * questions), questions, chance) > Z:
                    leaking.append(baseline)
            by_design: set[int] = set()
            if promise is not None:
                by_design = {i for i in subset if _same_text(answer_text(items[i]), promise["answer"])}
                for i in sorted(set(subset) - by_design):
                    result.flag(i, f"breaks the promise of build.json: {name} is answered {promise['answer']!r} by "
                                   f"design, this item {answer_text(items[i])!r}", 0.0)
                entry["by_design"] = {**promise, "items": len(by_design), "broken": n - len(by_design),
                                      "baselines_finding_it": leaking}
                leaking = []
            entry["leaking"] = leaking
            tasks[f"{name} ({kind})"] = entry
            for i, (guess, confidence) in prior.items():
                if guess == truth[i] and confidence >= PRIOR_CONFIDENCE and i not in by_design:
                    result.flag(i, f"the language prior answers it blind ({guess!r}, {confidence:.0%} of "
                                   "similar items elsewhere)", round(1 - confidence, 4))
    result.summary = {"margin": MARGIN, "min_items": MIN_ITEMS, "tasks": tasks,
                      "leaking_tasks": sorted(t for t, e in tasks.items() if e["leaking"]),
                      "by_design_tasks": sorted(t for t, e in tasks.items() if "by_design" in e)}
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
    beats chance by more than ``MARGIN`` (z above ``Z``, over the task's questions as in :func:`check`), the task
    leaks and the items it got right there are flagged; elsewhere a right answer is a lucky guess and only counted.
    In a task whose answer is fixed by design (``fixed_answers``) finding that answer blind is the design: noted,
    not flagged."""
    from builders.llm import LLMRequest, make_client

    client = make_client(context.llm)
    asked = [i for i, it in enumerate(items) if is_mcq(it) or is_yes_no(it)]
    requests = [LLMRequest(messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt(items[i])}])
                for i in asked]
    replies = client.complete_many(requests)
    right: dict[str, list[int]] = defaultdict(list)
    counts: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0, 0.0])  # items, right, unparsed, chance sum
    members: dict[str, list[int]] = defaultdict(list)
    for i, reply in zip(asked, replies):
        it = items[i]
        guess = parse_reply(reply.text, it)
        task = f"{it.benchmark}/{it.task}"
        members[task].append(i)
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
        questions = len(set(variant_groups(items, members[task]).values()))
        leaking = (questions >= MIN_ITEMS and r / n - chance > MARGIN
                   and _z(round(r / n * questions), questions, chance) > Z)
        tasks[task] = {"items": int(n), "right": int(r), "unparsed": int(unparsed), "accuracy": round(r / n, 4),
                       "chance": round(chance, 4), "leaking": leaking}
        benchmark, _, name = task.partition("/")
        promise = fixed_answers(benchmark, context).get(name)
        if promise is not None:
            tasks[task]["by_design"] = promise["answer"]
            tasks[task]["leaking"] = leaking = False
        if leaking:
            for i in right[task]:
                result.flag(i, f"a text-only model ({context.llm.model}) answers it without the image, "
                               f"{r / n:.0%} right on {task} (chance {chance:.0%})", 0.0)
    return {"model": context.llm.model, "usage": client.usage(), "tasks": tasks,
            "leaking_tasks": [t for t, e in tasks.items() if e["leaking"]]}
