"""Item health: what several models' answers say about the items of a release (issue 44).

Every model's raw output is read with :mod:`builders.semantics.extract`, the extractor every scorer uses, so an item is
"right" here exactly when ``python -m scoring BENCHMARK`` counts it right. Per item:

* **accuracy**: the share of the models that answered it right (an unparsed answer or a refusal is wrong, as in
  every scorer; a model with no prediction for the item is left out of that item);
* **discrimination**: the corrected item-total correlation, i.e. the point-biserial correlation
  (:func:`scipy.stats.pointbiserialr`) over the models between being right on the item and the model's accuracy
  on *the other* items (the rest score, so the item does not correlate with itself). Positive: stronger models get
  it right more often. Undefined (``None``) with fewer than three models or when every model gave the same
  verdict. With a handful of models it is noisy; it is a pointer, not a verdict;
* **models' answer**: the option most models chose, with how many chose it;
* **p_label_error**: the probability that another option than the gold is the right one, under the model below.

**Suspected label errors: the rule.** Northcutt et al.'s confident learning flags an example when a model is more
confident in another class than it usually is in the given label. Models answering a benchmark give votes, not
calibrated probabilities, and there are several of them of different strengths; so the models are treated as the
noisy annotators of Dawid & Skene (1979, the one-coin model): model *m* names the true option with probability
``a_m`` and each other option with ``(1 - a_m) / (k - 1)`` (``k`` the item's number of choices), and the gold is
right with probability ``1 - pi``, any given other option with ``pi / (k - 1)``. EM estimates each ``a_m`` and the
error rate ``pi`` from the answers themselves (started from the accuracies against the gold); the posterior over
each item's options follows by Bayes' rule. An item is a **suspected label error** when the posterior of one
other option is at least ``threshold`` (0.5 by default: that option is more likely right than all others
together). So a strong model's dissent weighs more than a weak one's, two weak models sharing a wrong belief do
not outvote the strong ones, and agreement is judged against how often each model is right in general: the
Northcutt idea with the models' accuracies in place of per-class confidence thresholds.

Flags: ``suspected_label_error``, ``answered_by_every_model`` (every model right: the item may need no image, or
be too easy to tell models apart), ``negative_discrimination`` (stronger models fail it more: it measures
something else). Open-answer items (no options, no yes/no) are left out and counted.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from builders.items import OPTION_LETTERS, Item
from builders.semantics.extract import extract, is_correct
from builders.semantics.format import YES_NO, answer_format, yes_no_answer
from scoring.predictions import Prediction

FLAGS = ("suspected_label_error", "answered_by_every_model", "negative_discrimination")
DEFAULT_THRESHOLD = 0.5
EM_ROUNDS = 100
PI_BOUNDS = (1e-3, 0.5)
"""The error rate EM may estimate: never zero (no item could be flagged), never above one half (the gold would
stop being the best guess for an item with no dissent)."""
ACCURACY_BOUNDS = (0.01, 0.99)
"""A model's estimated accuracy is kept off 0 and 1, so one answer never makes a likelihood zero."""


@dataclass(frozen=True)
class Choices:
    """The closed choices of an item and its gold among them."""

    values: tuple[str, ...]
    gold: str


def choices_of(item: Item) -> Choices | None:
    """The item's choices (option letters, or yes/no) and its gold; ``None`` for an open answer."""
    fmt = answer_format(item)
    if fmt == "yes_no":
        return Choices(YES_NO, yes_no_answer(item))
    if fmt == "option":
        return Choices(tuple(OPTION_LETTERS[: len(item.options)]), item.answer)
    return None


@dataclass
class Matrix:
    """Who answered what: ``chosen[m][i]`` the choice model ``m`` made on item ``i`` (``None``: unparsed or a
    refusal without a letter), ``right[m][i]`` 1/0, both ``nan``/absent where the model has no prediction."""

    models: list[str]
    items: list[Item]
    choices: list[Choices]
    right: np.ndarray  # models x items, float (nan: no prediction)
    chosen: list[list[str | None]]
    open_items: int = 0


def answer_matrix(items: Sequence[Item], runs: Mapping[str, Mapping[str, Prediction | str]]) -> Matrix:
    """Extract every model's answer to every closed item (``runs``: model name -> ``{item id: prediction}``)."""
    closed = [(it, c) for it in items if (c := choices_of(it)) is not None]
    models = list(runs)
    right = np.full((len(models), len(closed)), np.nan)
    chosen: list[list[str | None]] = [[None] * len(closed) for _ in models]
    for m, name in enumerate(models):
        preds = runs[name]
        for i, (it, _) in enumerate(closed):
            if it.id not in preds:
                continue
            answer = extract(getattr(preds[it.id], "output", preds[it.id]), it)
            right[m, i] = float(is_correct(answer, it))
            if answer.kind in ("option", "yes_no"):
                chosen[m][i] = answer.value
    return Matrix(models, [it for it, _ in closed], [c for _, c in closed], right, chosen,
                  open_items=len(items) - len(closed))


def discrimination(right: np.ndarray) -> list[float | None]:
    """Per item, the corrected item-total (point-biserial) correlation over the models (module docstring)."""
    from scipy.stats import pointbiserialr

    answered = ~np.isnan(right)
    hits = np.where(answered, right, 0.0)
    totals, counts = hits.sum(axis=1), answered.sum(axis=1)
    out: list[float | None] = []
    for i in range(right.shape[1]):
        who = answered[:, i] & (counts > 1)
        if who.sum() < 3:
            out.append(None)
            continue
        x = hits[who, i]
        rest = (totals[who] - x) / (counts[who] - 1)
        if x.min() == x.max() or rest.min() == rest.max():
            out.append(None)
            continue
        out.append(float(pointbiserialr(x.astype(bool), rest).statistic))
    return out


@dataclass
class Posterior:
    """The label-error model's fit: per item the posterior of each choice, the models' estimated accuracies and
    the estimated share of label errors."""

    per_item: list[dict[str, float]]
    accuracy: dict[str, float]
    error_rate: float
    rounds: int


def label_posterior(matrix: Matrix, rounds: int = EM_ROUNDS) -> Posterior:
    """One-coin Dawid-Skene EM with the gold as the prior's favourite (module docstring)."""
    n_models = len(matrix.models)
    votes = [[(m, matrix.chosen[m][i]) for m in range(n_models)
              if matrix.chosen[m][i] in matrix.choices[i].values] for i in range(len(matrix.items))]
    acc = np.array([_accuracy_vs_gold(matrix, m) for m in range(n_models)])
    pi = 0.05
    per_item: list[dict[str, float]] = []
    done = 0
    for done in range(1, rounds + 1):
        per_item = [_item_posterior(matrix.choices[i], votes[i], acc, pi) for i in range(len(matrix.items))]
        new_acc = np.array(acc)
        for m in range(n_models):
            weights = [post.get(matrix.chosen[m][i], 0.0) for i, post in enumerate(per_item)
                       if matrix.chosen[m][i] in matrix.choices[i].values]
            if weights:
                new_acc[m] = float(np.clip(np.mean(weights), *ACCURACY_BOUNDS))
        new_pi = float(np.clip(np.mean([1.0 - p[c.gold] for p, c in zip(per_item, matrix.choices)])
                               if per_item else pi, *PI_BOUNDS))
        converged = np.max(np.abs(new_acc - acc), initial=0.0) < 1e-6 and abs(new_pi - pi) < 1e-6
        acc, pi = new_acc, new_pi
        if converged:
            break
    per_item = [_item_posterior(matrix.choices[i], votes[i], acc, pi) for i in range(len(matrix.items))]
    return Posterior(per_item, dict(zip(matrix.models, map(float, acc))), pi, done)


def _accuracy_vs_gold(matrix: Matrix, m: int) -> float:
    """The start of EM: how often model ``m``'s parsed answers match the gold."""
    hits = [matrix.chosen[m][i] == c.gold for i, c in enumerate(matrix.choices) if matrix.chosen[m][i] in c.values]
    return float(np.clip(np.mean(hits), *ACCURACY_BOUNDS)) if hits else 0.5


def _item_posterior(choices: Choices, votes: Sequence[tuple[int, str | None]], acc: np.ndarray,
                    pi: float) -> dict[str, float]:
    """P(choice is right | the models' votes) for every choice of one item, in log space."""
    k = len(choices.values)
    log_post = {}
    for truth in choices.values:
        prior = 1.0 - pi if truth == choices.gold else pi / (k - 1)
        lp = np.log(prior)
        for m, vote in votes:
            lp += np.log(acc[m] if vote == truth else (1.0 - acc[m]) / (k - 1))
        log_post[truth] = lp
    top = max(log_post.values())
    weights = {c: float(np.exp(v - top)) for c, v in log_post.items()}
    total = sum(weights.values())
    return {c: w / total for c, w in weights.items()}


@dataclass
class Health:
    """The report of :func:`item_health`: one entry per closed item, the summaries per task and pressure."""

    items: dict[str, dict[str, Any]]
    cells: list[dict[str, Any]]
    models: dict[str, dict[str, Any]]
    error_rate: float
    threshold: float
    open_items: int
    flagged: dict[str, list[str]] = field(default_factory=dict)


def item_health(items: Sequence[Item], runs: Mapping[str, Mapping[str, Prediction | str]],
                threshold: float = DEFAULT_THRESHOLD) -> Health:
    """Accuracy, discrimination, the models' answer and the flags of every closed item (module docstring)."""
    matrix = answer_matrix(items, runs)
    disc = discrimination(matrix.right)
    post = label_posterior(matrix)
    out: dict[str, dict[str, Any]] = {}
    flagged: dict[str, list[tuple[float, str]]] = {f: [] for f in FLAGS}
    for i, (it, ch) in enumerate(zip(matrix.items, matrix.choices)):
        col = matrix.right[:, i]
        answered = ~np.isnan(col)
        n = int(answered.sum())
        picks = Counter(matrix.chosen[m][i] for m in range(len(matrix.models))
                        if answered[m] and matrix.chosen[m][i] is not None)
        top, top_n = max(sorted(picks.items()), key=lambda kv: kv[1], default=(None, 0))
        other = max(((c, p) for c, p in post.per_item[i].items() if c != ch.gold), key=lambda cp: cp[1])
        entry: dict[str, Any] = {
            "task": it.task, "pressure": it.pressure, "question_type": it.question_type, "gold": ch.gold,
            "models": n, "accuracy": float(np.nanmean(col)) if n else None, "discrimination": disc[i],
            "models_answer": top, "models_answer_count": top_n,
            "p_label_error": 1.0 - post.per_item[i][ch.gold], "likely_answer": other[0],
            "p_likely_answer": other[1], "likely_answer_count": picks.get(other[0], 0),
            "answers": {name: matrix.chosen[m][i] for m, name in enumerate(matrix.models) if answered[m]},
        }
        flags = []
        if entry["p_label_error"] >= threshold:
            flags.append("suspected_label_error")
        if n and n == len(matrix.models) and col[answered].min() == 1.0:
            flags.append("answered_by_every_model")
        if disc[i] is not None and disc[i] < 0:
            flags.append("negative_discrimination")
        entry["flags"] = flags
        out[it.id] = entry
        for f in flags:
            flagged[f].append((-entry["p_label_error"], it.id))
    models = {name: {"accuracy": float(np.nanmean(matrix.right[m])) if (~np.isnan(matrix.right[m])).any() else None,
                     "items": int((~np.isnan(matrix.right[m])).sum()),
                     "estimated_accuracy": post.accuracy[name]}
              for m, name in enumerate(matrix.models)}
    return Health(out, cell_summary(out), models, post.error_rate, threshold, matrix.open_items,
                  {f: [iid for _, iid in sorted(v)] for f, v in flagged.items()})


def cell_summary(entries: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per task and pressure: items, mean accuracy, median discrimination and how many items carry each flag."""
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for e in entries.values():
        groups[(e["task"], e["pressure"])].append(e)
    rows = []
    for (task, pressure), group in sorted(groups.items()):
        accs = [e["accuracy"] for e in group if e["accuracy"] is not None]
        discs = [e["discrimination"] for e in group if e["discrimination"] is not None]
        rows.append({
            "task": task, "pressure": pressure, "items": len(group),
            "accuracy": float(np.mean(accs)) if accs else None,
            "discrimination": float(np.median(discs)) if discs else None,
            **{f: sum(f in e["flags"] for e in group) for f in FLAGS},
        })
    return rows


def health_json(health: Health, meta: Mapping[str, Any]) -> dict[str, Any]:
    """The content of ``health.json``: the flagged ids at the top (``suspected_label_errors`` first, most
    probable first), then the rule, the models, the cells and every item."""
    return {
        "suspected_label_errors": health.flagged["suspected_label_error"],
        "answered_by_every_model": health.flagged["answered_by_every_model"],
        "negative_discrimination": health.flagged["negative_discrimination"],
        "rule": {"model": "one-coin Dawid-Skene, gold as the prior's favourite", "threshold": health.threshold,
                 "estimated_error_rate": health.error_rate},
        "models": health.models,
        "cells": health.cells,
        "open_items_left_out": health.open_items,
        "items": health.items,
        "meta": dict(meta),
    }
