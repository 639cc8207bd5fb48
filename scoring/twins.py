"""``python -m scoring twin RELEASE TWIN --predictions A.jsonl ... --twin-predictions A2.jsonl ...``: does a model
do better on a release than on its twin (issue 44)?

A twin (``python -m builders.twin BUILD``) is the same build's config run from a derived seed: the same cells
(task, question type, pressure, counts) and difficulty rules, other draws (other images where the source has
them). A model that saw the release in training is right on it more often than on its twin; one that did not is
right about equally often on both. Per model: the accuracy on each (closed items, read by
:mod:`builders.semantics.extract` as every scorer reads them), the gap, and its confidence interval by Newcombe's hybrid
score method for the difference of two independent proportions
(:func:`statsmodels.stats.proportion.confint_proportions_2indep`, ``method="newcomb"``), with the score test's
p-value. The gap is **larger than chance** when the interval lies wholly above zero. The two sets' items are
different questions, so the proportions are independent; items are not paired.

The median gap of the models is printed with them: if every model drops on the twin, the twin came out harder
(a difficulty drift between draws), not every model memorised; a memorising model stands out from the others.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from builders.cli import ArgumentParser, stdout, table
from builders.items import Item
from builders.semantics.extract import extract, is_correct
from commandline.options import add_options, config_of, option
from commandline.parsing import prog
from scoring.health import choices_of
from scoring.health_report import read_runs
from scoring.options import PredictionsOptions
from scoring.predictions import Prediction
from scoring.releases import load_items
from scoring.results import write_json_atomic
from sources.errors import ConfigError

DEFAULT_CONFIDENCE = 0.95


@dataclass(frozen=True)
class Gap:
    """One model's accuracy on a release and on its twin, and what the difference says."""

    model: str
    right: int
    n: int
    twin_right: int
    twin_n: int
    low: float
    high: float
    p_value: float

    @property
    def accuracy(self) -> float:
        return self.right / self.n

    @property
    def twin_accuracy(self) -> float:
        return self.twin_right / self.twin_n

    @property
    def gap(self) -> float:
        return self.accuracy - self.twin_accuracy

    @property
    def larger_than_chance(self) -> bool:
        return self.low > 0

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "right": self.right, "items": self.n, "accuracy": self.accuracy,
                "twin_right": self.twin_right, "twin_items": self.twin_n, "twin_accuracy": self.twin_accuracy,
                "gap": self.gap, "ci": [self.low, self.high], "p_value": self.p_value,
                "larger_than_chance": self.larger_than_chance}


def hits(items: Sequence[Item], predictions: Mapping[str, Prediction | str]) -> tuple[int, int]:
    """(right, closed items) of one model; an item without a prediction counts as wrong, as in every scorer."""
    closed = [it for it in items if choices_of(it) is not None]
    right = sum(is_correct(extract(getattr(p, "output", p), it), it)
                for it in closed if (p := predictions.get(it.id)) is not None)
    return right, len(closed)


def compare(model: str, release: tuple[int, int], twin: tuple[int, int], confidence: float = DEFAULT_CONFIDENCE) -> Gap:
    """The gap of ``model`` between ``release`` and ``twin`` (each ``(right, items)``) with its interval."""
    try:
        from statsmodels.stats.proportion import confint_proportions_2indep, test_proportions_2indep
    except ImportError:
        raise ConfigError("the intervals need statsmodels: pip install 'mirage-bench[release]'") from None

    (r1, n1), (r2, n2) = release, twin
    if not n1 or not n2:
        raise ConfigError(f"{model}: no multiple-choice or yes/no items to compare")
    with np.errstate(divide="ignore"):  # statsmodels also computes an odds ratio, infinite at 100% accuracy
        low, high = confint_proportions_2indep(r1, n1, r2, n2, method="newcomb", compare="diff",
                                               alpha=1 - confidence)
        p = test_proportions_2indep(r1, n1, r2, n2, method="score", compare="diff").pvalue
    return Gap(model, r1, n1, r2, n2, float(low), float(high), float(p))


def cell_counts(items: Sequence[Item]) -> Counter[tuple[str, str, str]]:
    return Counter((it.task, it.question_type, it.pressure) for it in items)


@dataclass(kw_only=True)
class TwinGapOptions(PredictionsOptions):
    release: str = option(metavar="RELEASE", positional=True,
                          help="the release (dir, build dir, items.jsonl or Hub repo@tag)")
    twin: str = option(metavar="TWIN", positional=True, help="its twin, in any of the same forms")
    predictions: list[str] = option(metavar="FILE",
                                    help="each model's predictions on RELEASE, in any format `mirage score` reads")
    twin_predictions: list[str] = option(metavar="FILE", help="the same models' predictions on TWIN, in the same order")
    confidence: float = option(DEFAULT_CONFIDENCE, metavar="X",
                               help="confidence level of the intervals (default {default})")
    out: str | None = option(None, metavar="DIR", help="where twin.json goes (default results/twin-<release name>)")


def parser() -> argparse.ArgumentParser:
    """The command line of ``mirage twin-gap`` (``python -m scoring twin``)."""
    p = ArgumentParser(
        prog=prog("python -m scoring twin"),
        description="Compare each model's accuracy on a release and on its twin (the same cells built from "
                    "another seed, mirage twin): the gap, its confidence interval (Newcombe) and "
                    "whether it is larger than chance, as a model that saw the release in training would show.",
    )
    add_options(p, TwinGapOptions)
    return p


def print_report(gaps: Sequence[Gap], confidence: float) -> None:
    median = statistics.median(g.gap for g in gaps)
    rows = [[g.model, f"{100 * g.accuracy:.1f}%", f"{100 * g.twin_accuracy:.1f}%", f"{100 * g.gap:+.1f}",
             f"{100 * g.low:+.1f} .. {100 * g.high:+.1f}", f"{g.p_value:.3g}",
             "yes" if g.larger_than_chance else "no"] for g in gaps]
    stdout.print(table(f"Release vs twin ({100 * confidence:.0f}% intervals; median gap {100 * median:+.1f})",
                       ["model", "release", "twin", "gap", "interval", "p", "> chance"], rows,
                       legend="gap, interval: points of accuracy, release minus twin; > chance: the interval "
                              "lies above 0 (right on the release more often than on fresh items)"))


def run(argv: Sequence[str] | None = None) -> int:
    """``python -m scoring twin`` (one-line errors come from the caller's ``exit_on_error``)."""
    args = config_of(TwinGapOptions, parser().parse_args(argv))
    if not 0 < args.confidence < 1:
        raise ConfigError(f"--confidence {args.confidence}: a level between 0 and 1 (e.g. 0.95)")
    if len(args.predictions) != len(args.twin_predictions):
        raise ConfigError(f"{len(args.predictions)} --predictions but {len(args.twin_predictions)} "
                          "--twin-predictions: give one of each per model, in the same order")
    items = load_items(args.release, None, args.cache_dir, with_images=False)
    twin_items = load_items(args.twin, None, args.cache_dir, with_images=False)
    if {it.id for it in items} & {it.id for it in twin_items}:
        shared = len({it.id for it in items} & {it.id for it in twin_items})
        print(f"note: {shared} item(s) are in both {args.release} and {args.twin}; a twin should hold new items", file=sys.stderr)
    if set(cell_counts(items)) != set(cell_counts(twin_items)):
        missing = sorted(set(cell_counts(items)) ^ set(cell_counts(twin_items)))
        print(f"note: the two sets' cells differ (first: {' / '.join(missing[0])}); is {args.twin} a twin?", file=sys.stderr)
    runs = read_runs(args.predictions, args.format, {it.id for it in items})
    twin_runs = read_runs(args.twin_predictions, args.format, {it.id for it in twin_items})
    gaps = [compare(name, hits(items, runs[name]), hits(twin_items, twin_runs[twin_name]), args.confidence)
            for name, twin_name in zip(runs, twin_runs)]
    print_report(gaps, args.confidence)
    out = Path(args.out or Path("results") / f"twin-{'-'.join(Path(str(args.release)).parts[-2:])}")
    path = write_json_atomic(out / "twin.json", {
        "release": str(args.release), "twin": str(args.twin), "confidence": args.confidence,
        "method": "Newcombe hybrid score interval of the difference of two independent proportions",
        "models": [g.to_json() for g in gaps]})
    print(f"wrote {path}", file=sys.stderr)
    return 0
