"""Image independence: which items, and which whole tasks, can be answered without looking at the images?

The task-level verdict is the blind audit of :mod:`builders.lint.blind`: a text-only learner and hand rules, cell
by cell (task, task x pressure, task x question type), flagged where the learner's lower 95 % bound is above
chance + 5 points. This check adds the items to blame:

* ``language_prior``: the answer the *other* questions' statistics suggest (leave-one-out, so an item never
  predicts itself). Yes/no: the majority answer of the other items asking the same normalised question ("Is there
  a dog in the image?" answered "yes" 9 times in 10 elsewhere). MCQ: the option text most often right where it was
  offered, smoothed ``(right + 1) / (offered + 2)``. An item is flagged when this prior answers it right with
  confidence (at least ``PRIOR_CONFIDENCE`` from ``PRIOR_SUPPORT`` other items); its score is 1 minus that
  confidence. The same prior is the audit's "most frequent text" rule.
* the items the learner (or a text-only LLM) answers right in a cell where it beats chance.

Variants of one question (MM-SAP's ``--shuffles K``: the same question with its options reordered, linked by
``provenance[VARIANT_KEY]``) are left out of the prior *together*: otherwise each variant would learn its answer
from its K - 1 siblings, a leak of the lint's own making; the audit counts them as one question.

A task whose answer is fixed by the benchmark's design (MM-SAP's BeyondVisQA is answered by the refusal "Sorry,
I can't help with it" in every item: the paper's formula 1) is declared by its builder in ``build.json``
``"lint_promises": {"fixed_answers": {task: {"answer": text, "why": reason}}}``. Its cells are reported apart as
*by design* (a note in the summary, the table and the card), not as a finding, and the prior's right guesses are
not flagged; an item of that task whose answer is *not* the promised one breaks the promise and is flagged.
Without the promise the same task is flagged as any other.

With ``--llm-model`` (:func:`ask_text_only`), a text-only model answers every yes/no and MCQ item from its text
alone through :mod:`builders.llm` (cached, resumable) and joins the audit as one more strategy. Open answers are
not judged here (that needs the benchmark's judge).
"""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any, Sequence

from builders.items import Item
from builders.lint import blind
from builders.lint.base import CheckResult, LintContext, collapse, per_task
from builders.lint.priors import mcq_prior, yes_no_prior
from builders.quality import guess_chance
from builders.semantics.extract import extract, is_correct
from builders.semantics.format import answer_text, choices, is_closed, is_multiple_choice, is_yes_no, yes_no_answer
from builders.semantics.prompt import prompt_text
from sources.errors import ConfigError

PRIOR_CONFIDENCE = 0.9
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
    """The blind audit (:mod:`builders.lint.blind`) of every task, and the items to blame: an item the language
    prior answers with confidence, an item a blind strategy that beats chance in its cell answers right, an item
    that breaks a promised fixed answer."""
    result = CheckResult("independence", [1.0] * len(items))
    fixed: dict[tuple[str, str], str] = {}
    by_design: set[int] = set()
    design: dict[str, dict[str, Any]] = {}
    promises: dict[str, dict[str, dict[str, str]]] = {}
    for (benchmark, task), members in per_task(items).items():
        promise = promises.setdefault(benchmark, fixed_answers(benchmark, context)).get(task)
        if promise is None:
            continue
        fixed[(benchmark, task)] = promise["answer"]
        closed = [i for i in members if is_closed(items[i])]
        kept = {i for i in closed if _same_text(answer_text(items[i]), promise["answer"])}
        by_design |= kept
        design[f"{benchmark}/{task}"] = {**promise, "items": len(kept), "of": len(closed)}
        for i in closed:
            if i not in kept:
                result.flag(i, f"breaks the promise of build.json: {benchmark}/{task} is answered "
                               f"{promise['answer']!r} by design, this item {answer_text(items[i])!r}", 0.0)
    model = None
    extra = {}
    if context.llm is not None and getattr(context.llm, "enabled", False):
        model, extra["text_only_llm"] = ask_text_only(items, context)
    audit = blind.audit(items, fixed, extra)
    flag_blind_answers(items, audit, extra.get("text_only_llm", {}), result, context)
    for kind in ("yes_no", "mcq"):
        members = [i for i, it in enumerate(items) if (is_yes_no(it) if kind == "yes_no" else is_multiple_choice(it))]
        truth = {i: yes_no_answer(items[i]) if kind == "yes_no" else items[i].answer for i in members}
        for task_members in _by_task(items, members).values():
            prior = (yes_no_prior if kind == "yes_no" else mcq_prior)(items, task_members)
            for i, (guess, confidence) in prior.items():
                if guess == truth[i] and confidence >= PRIOR_CONFIDENCE and i not in by_design:
                    result.flag(i, f"the language prior answers it blind ({guess!r}, {confidence:.0%} of "
                                   "similar items elsewhere)", round(1 - confidence, 4))
    result.summary = {"blind": {k: v for k, v in audit.items() if k != "learned_right"},
                      "flagged_cells": audit["flagged"], "by_design_tasks": sorted(design), "by_design": design}
    if model is not None:
        result.summary["text_only_model"] = model
    return result


def _by_task(items: Sequence[Item], members: Sequence[int]) -> dict[tuple[str, str], list[int]]:
    out: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i in members:
        out[(items[i].benchmark, items[i].task)].append(i)
    return out


def flag_blind_answers(items: Sequence[Item], audit: dict[str, Any], llm_right: dict[int, bool],
                       result: CheckResult, context: LintContext) -> None:
    """Flag the items a blind strategy answers right in a cell where that strategy beats chance: the learner's
    right answers, and the text-only LLM's. (A rule's right answers are not flagged one by one: the rule is the
    finding, and the language prior has its own item flags.)"""
    learned_right = set(audit.get("learned_right", []))
    cell_members = blind.cell_members(items)
    found: dict[int, list[str]] = defaultdict(list)
    model_found: dict[int, list[str]] = defaultdict(list)
    for cell in audit["cells"]:
        above = cell["above_chance"]
        for i in cell_members.get(cell["cell"], []) if above else []:
            where = f"{cell['cell']}: {blind.pct(cell['strategies'].get('learned', {}).get('accuracy'))} vs chance " \
                    f"{blind.pct(cell['chance'])}"
            if "learned" in above and i in learned_right:
                found[i].append(where)
            if "text_only_llm" in above and llm_right.get(i):
                model_found[i].append(cell["cell"])
    for i, cells in found.items():
        result.flag(i, f"a text-only learner answers it without the image ({'; '.join(cells)})", 0.5)
    for i, cells in model_found.items():
        result.flag(i, f"a text-only model ({context.llm.model}) answers it without the image "
                       f"({'; '.join(cells)})", 0.0)


SYSTEM = ("You cannot see any image. Answer the question as best you can from its text alone. For a multiple-choice "
          "question reply with the option letter only; for a yes/no question reply yes or no.")


def prompt(item: Item) -> str:
    """The item as the text-only model reads it: :func:`builders.semantics.prompt.prompt_text` without the images'
    announcement (it is shown none) and without the instruction (:data:`SYSTEM` gives it)."""
    return prompt_text(item, announce_images=False, instruct=False)


def ask_text_only(items: Sequence[Item], context: LintContext) -> tuple[dict[str, Any], dict[int, bool]]:
    """A text-only model answers every closed item without the images. Returns its summary (model, usage, per
    task: items, right, unparsed, accuracy, chance) and item index -> right?, which joins the blind audit as one
    more strategy (its cells flagged by the audit's one rule)."""
    from builders.llm import LLMRequest, make_client

    client = make_client(context.llm)
    asked = [i for i, it in enumerate(items) if is_closed(it)]
    requests = [LLMRequest(messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt(items[i])}])
                for i in asked]
    replies = client.complete_many(requests)
    right: dict[int, bool] = {}
    counts: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0, 0.0])  # items, right, unparsed, chance sum
    for i, reply in zip(asked, replies):
        it = items[i]
        answer = extract(reply.text, it)  # the scorers' extractor: a reply is read as a model's answer is
        c = counts[f"{it.benchmark}/{it.task}"]
        right[i] = is_correct(answer, it)
        c[0] += 1
        c[1] += right[i]
        c[2] += answer.kind not in ("option", "yes_no")  # unparsed, or a refusal: no choice made
        c[3] += guess_chance(it, len(choices(it)))
    tasks = {task: {"items": int(n), "right": int(r), "unparsed": int(u), "accuracy": round(r / n, 4),
                    "chance": round(ch / n, 4)} for task, (n, r, u, ch) in sorted(counts.items())}
    return {"model": context.llm.model, "usage": client.usage(), "tasks": tasks}, right
