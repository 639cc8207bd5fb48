"""Simulated models for the item-health and twin tests: seeded answer patterns of known strength.

A model is right on an item with probability ``skill`` (against the item's *true* answer, which a planted label
error hides from the gold); otherwise it names another option, uniformly. Models may share a wrong belief: on the
"trap" items each believer names the trap option with probability ``belief``. A memorising model answers the
gold of every item of the release it saw, and at its true skill elsewhere (the twin). Outputs are free text the
real extractor reads ("The answer is (B).", "yes", now and then an unparsable "Hard to say."), and a model's
predictions are written in Mirage's JSONL, as ``python -m scoring.run`` writes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from builders.items import OPTION_LETTERS, Item, make_item
from builders.semantics.format import answer_format
from builders.seeding import rng
from scoring.predictions import Prediction, write_predictions

UNPARSED_RATE = 0.02


@dataclass(frozen=True)
class SimModel:
    name: str
    skill: float
    believes_traps: float = 0.0
    memorised: frozenset[str] = field(default_factory=frozenset)
    """Item ids whose gold the model saw in training: it answers their gold whatever its skill."""


def choices(item: Item) -> list[str]:
    return ["yes", "no"] if answer_format(item) == "yes_no" else list(OPTION_LETTERS[: len(item.options)])


def say(item: Item, choice: str) -> str:
    return f"{choice.capitalize()}." if choice in ("yes", "no") else f"The answer is ({choice})."


def answer(model: SimModel, item: Item, truth: str, trap: str | None, seed: int) -> str:
    """One output of ``model`` for ``item`` (``truth``: the real answer; ``trap``: a shared wrong belief)."""
    r = rng(seed, f"sim/{model.name}/{item.id}")
    if item.id in model.memorised:
        return say(item, item.answer)
    if r.random() < UNPARSED_RATE:
        return "Hard to say."
    if trap is not None and model.believes_traps and r.random() < model.believes_traps:
        return say(item, trap)
    if r.random() < model.skill:
        return say(item, truth)
    others = [c for c in choices(item) if c != truth]
    return say(item, others[int(r.integers(len(others)))])


def predictions(model: SimModel, items: Sequence[Item], truths: Mapping[str, str],
                traps: Mapping[str, str], seed: int) -> dict[str, Prediction]:
    return {it.id: Prediction(it.id, answer(model, it, truths.get(it.id, it.answer), traps.get(it.id), seed),
                              model.name) for it in items}


def write_model(path: Path, model: SimModel, items: Sequence[Item], truths: Mapping[str, str],
                traps: Mapping[str, str], seed: int) -> Path:
    return write_predictions(path, predictions(model, items, truths, traps, seed).values())


def plant_errors(items: Sequence[Item], share: float, seed: int) -> tuple[list[Item], dict[str, str]]:
    """A copy of ``items`` where a ``share`` of them carry a wrong gold (the id stays: it hashes what a model sees,
    not the answer), and ``{id: true answer}`` of those."""
    from dataclasses import replace

    r = rng(seed, "sim/plant")
    picked = set(r.choice(len(items), size=max(1, round(share * len(items))), replace=False).tolist())
    out, truths = [], {}
    for k, it in enumerate(items):
        if k in picked:
            wrong = [c for c in choices(it) if c != it.answer]
            truths[it.id] = it.answer
            it = replace(it, answer=wrong[int(r.integers(len(wrong)))])
        out.append(it)
    return out, truths


def pick_traps(items: Sequence[Item], share: float, seed: int, skip: Sequence[str] = ()) -> dict[str, str]:
    """``{id: trap option}`` for a ``share`` of the items (never one in ``skip``): a wrong option that some
    models believe in."""
    r = rng(seed, "sim/traps")
    out = {}
    for it in items:
        if it.id not in skip and r.random() < share:
            wrong = [c for c in choices(it) if c != it.answer]
            out[it.id] = wrong[int(r.integers(len(wrong)))]
    return out


def synthetic_items(n: int, seed: int, tasks: Sequence[str] = ("existence", "counting"),
                    pressures: Sequence[str] = ("easy", "hard_negative"), tag: str = "sim") -> list[Item]:
    """``n`` MCQ items (five options, one in five a yes/no question) spread over tasks and pressures; no images
    are drawn (the health report never looks at pixels); ``tag`` names the images, so a twin set (another tag)
    holds other items in the same cells."""
    r = rng(seed, "sim/items")
    out = []
    for k in range(n):
        task, pressure = tasks[k % len(tasks)], pressures[(k // len(tasks)) % len(pressures)]
        if k % 5 == 4:
            options: tuple[str, ...] = ()
            answer_ = "yes" if r.random() < 0.5 else "no"
        else:
            options = ("cat", "dog", "cow", "bird", "None of the above")
            answer_ = OPTION_LETTERS[int(r.integers(5))]
        out.append(make_item(benchmark="mioh", task=task, question_type="comprehensive", pressure=pressure,
                             images=[f"images/{tag}-{k:04d}.png"], question=f"Question {k}: which animal?",
                             options=options, answer=answer_, provenance={}))
    return out


FIVE = (SimModel("strong", 0.95), SimModel("good", 0.9), SimModel("middling", 0.8, believes_traps=0.9),
        SimModel("weak", 0.7, believes_traps=0.9), SimModel("weakest", 0.6))
"""Five models of different strengths; two of them share a wrong belief: on a trap item each names the trap
option nine times in ten."""


def accuracy_of(outputs: Mapping[str, Prediction], items: Sequence[Item]) -> float:
    from builders.semantics.extract import extract, is_correct

    return float(np.mean([is_correct(extract(outputs[it.id].output, it), it) for it in items]))
