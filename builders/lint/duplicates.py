"""Duplicates: the same question asked twice.

* exact: the same images, context, question and options (whitespace collapsed), score 0;
* near: equal once case, punctuation, articles and "picture"/"photo"/"image" are normalised
  (:func:`builders.lint.base.normalise`), with the same images and the same options in the same order, score 0.2.
  Options keep their order so MM-SAP's shuffled variants of one question (same options, another order, on
  purpose) are not duplicates; a second text with one word changed ("dog" -> "cat") is a new question, not a
  near-duplicate, so no edit distance is used. A near group whose items answer differently is one question with
  two answers: the contradictions check reports it, and this check does not call it a near-duplicate.
* shared: one question asked once in each of several settings that each item names in ``provenance.shared_by``
  (POPE's splits ask the same "yes" questions: :mod:`builders.imports.pope`) is counted, not flagged.

Speed: each item is hashed once into its exact and its normalised key (a dict of groups), so 100,000 items take a
few seconds where comparing every pair would take hours (``benchmarks/bench_lint.py``).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

from builders.items import Item
from builders.lint.base import CheckResult, LintContext, collapse, image_names, normalise
from builders.lint.contradictions import answers_differ


def exact_key(item: Item) -> tuple:
    return (image_names(item), collapse(item.context), collapse(item.question), tuple(map(collapse, item.options)))


def near_key(item: Item) -> tuple:
    return (image_names(item), normalise(item.context), normalise(item.question), tuple(map(normalise, item.options)))


def shared(items: Sequence[Item], members: Sequence[int]) -> bool:
    """Whether ``members`` are one question asked once per setting, every setting declared shared by each."""
    settings = [items[i].pressure for i in members]
    return len(set(settings)) == len(settings) and all(
        set(settings) <= set(items[i].provenance.get("shared_by", ())) for i in members)


def check(items: Sequence[Item], context: LintContext) -> CheckResult:
    result = CheckResult("duplicates", [1.0] * len(items))
    exact: dict[tuple, list[int]] = defaultdict(list)
    near: dict[tuple, list[int]] = defaultdict(list)
    for i, it in enumerate(items):
        exact[exact_key(it)].append(i)
        near[near_key(it)].append(i)
    counts = {"exact_groups": 0, "exact_items": 0, "near_groups": 0, "near_items": 0, "shared_groups": 0}
    for members in exact.values():
        if len(members) > 1 and shared(items, members):
            counts["shared_groups"] += 1
        elif len(members) > 1:
            counts["exact_groups"] += 1
            counts["exact_items"] += len(members)
            for i in members:
                others = [items[j].id for j in members if j != i]
                result.flag(i, f"exact duplicate of {', '.join(others[:3])}", 0.0)
    for members in near.values():
        fresh = [i for i in members if i not in result.reasons]
        if len(members) > 1 and fresh and not answers_differ(items, members) and not shared(items, members):
            counts["near_groups"] += 1
            counts["near_items"] += len(fresh)
            for i in fresh:
                others = [items[j].id for j in members if j != i]
                result.flag(i, f"near-duplicate of {', '.join(others[:3])} (same once case, punctuation and "
                               "articles are normalised)", 0.2)
    result.summary = counts
    return result
