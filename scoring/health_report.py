"""``python -m scoring health RELEASE --predictions A.jsonl B.jsonl ...``: the item-health report (issue 44).

Reads the release as every scorer does (:func:`scoring.releases.load_items`) and each model's predictions in any
format ``python -m scoring`` reads (:func:`scoring.predictions.read_any_predictions`), computes
:func:`scoring.health.item_health`, prints one table per task and pressure and the suspected label errors (80
columns), and writes ``health.json`` (whose ``suspected_label_errors`` ``annotation push --recheck`` reads) and
``health.png`` to ``--out``. The plot needs matplotlib (the release extra); without it the report says so and
writes the rest.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Mapping, Sequence

from builders.cli import ArgumentParser, stdout, table
from commandline.options import add_options, config_of, option
from commandline.parsing import prog
from scoring.health import DEFAULT_THRESHOLD, FLAGS, health_json, item_health
from scoring.options import PredictionsOptions
from scoring.plotting import pyplot, save_png
from scoring.predictions import Prediction, read_any_predictions
from scoring.releases import load_items
from scoring.results import write_json_atomic
from sources.errors import ConfigError

SHOWN_SUSPECTS = 20


@dataclass(kw_only=True)
class HealthOptions(PredictionsOptions):
    OPTION_HELP: ClassVar[dict[str, str]] = {"threshold": str(DEFAULT_THRESHOLD)}

    release: str = option(metavar="RELEASE", positional=True,
                          help="release dir, build dir, items.jsonl, or a Hub repo owner/name@vX.Y.Z")
    predictions: list[str] = option(metavar="FILE",
                                    help="one file per model, in any format `mirage score` reads; at least two")
    threshold: float = option(DEFAULT_THRESHOLD, metavar="P",
                              help="flag a suspected label error when the posterior probability that the gold is "
                                   "wrong is at least P (default {default})")
    revision: str | None = option(None, metavar="TAG",
                                  help="Hub revision when RELEASE is a repo id (default the @tag)")
    out: str | None = option(None, metavar="DIR",
                             help="where health.json and health.png go (default results/health-<release name>)")
    plots: bool = option(True, flag="--no-plots", help="write no PNG figure (default health.png written)")


def parser() -> argparse.ArgumentParser:
    """The command line of ``mirage health`` (``python -m scoring health``)."""
    p = ArgumentParser(
        prog=prog("python -m scoring health"),
        description="What several models' answers say about the items of a release: per item the accuracy "
                    "across models, its discrimination (corrected item-total correlation), the option the models "
                    "agree on when it is not the gold, and flags for suspected label errors (the posterior of a "
                    "one-coin Dawid-Skene model of the models as annotators), items every model answers and "
                    "negative discrimination. Writes health.json and health.png; send the suspects back to "
                    "review with `mirage review push BUILD --recheck health.json`.",
    )
    add_options(p, HealthOptions)
    return p


def read_runs(paths: Sequence[str], fmt: str | None, known: set[str]) -> dict[str, dict[str, Prediction]]:
    """``{model name: predictions}``; the name is the predictions' own model field, else the file's stem. Two
    files of one name, or predictions for ids the release lacks, are one-line errors."""
    runs: dict[str, dict[str, Prediction]] = {}
    for path in paths:
        preds = read_any_predictions(path, fmt)
        if not preds:
            raise ConfigError(f"{path}: no predictions")
        unknown = sorted(set(preds) - known)
        if unknown:
            raise ConfigError(f"{path}: {len(unknown)} prediction(s) for ids that are not items of the release "
                              f"(first: {unknown[0]}); wrong release?")
        name = next((p.model for p in preds.values() if p.model), "") or Path(path).stem
        if name in runs:
            raise ConfigError(f"{path}: a second file for model {name!r}; give each model one file")
        runs[name] = preds
    return runs


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:+.2f}"


def print_report(report: Mapping[str, Any]) -> None:
    """The models, the cells (task x pressure) and the suspected label errors, each a table at 80 columns."""
    stdout.print(table("Models", ["model", "items", "accuracy", "est. accuracy"], [
        [name, m["items"], _pct(m["accuracy"]), _pct(m["estimated_accuracy"])]
        for name, m in report["models"].items()]))
    stdout.print(table(
        "Item health per task and pressure", ["task / pressure", "items", "acc", "disc", "label?", "all",
                                              "neg"],
        [[f"{c['task']} / {c['pressure']}", c["items"], _pct(c["accuracy"]), _num(c["discrimination"]),
          c["suspected_label_error"], c["answered_by_every_model"], c["negative_discrimination"]]
         for c in report["cells"]],
        legend="acc: mean accuracy over models; disc: median corrected item-total correlation; label?: "
               "suspected label errors; all: right for every model; neg: negative discrimination"))
    suspects = report["suspected_label_errors"]
    rule = report["rule"]
    title = (f"Suspected label errors: {len(suspects)} (P(gold wrong) >= {rule['threshold']}; estimated error "
             f"rate {100 * rule['estimated_error_rate']:.1f}%)")
    if not suspects:
        stdout.print(title, markup=False, highlight=False)
        return
    rows = []
    for iid in suspects[:SHOWN_SUSPECTS]:
        e = report["items"][iid]
        rows.append([iid, f"{e['task']} / {e['pressure']}", e["gold"],
                     f"{e['likely_answer']} ({e['likely_answer_count']}/{e['models']})", f"{e['p_label_error']:.2f}"])
    more = len(suspects) - len(rows)
    stdout.print(table(title, ["item", "task / pressure", "gold", "models", "P"], rows,
                       legend=f"... and {more} more in health.json" if more > 0 else None, numeric=False))


def plot(report: Mapping[str, Any], path: Path) -> Path:
    """Accuracy across models (x) against discrimination (y), flagged items marked; a marker's area counts the
    items at that point."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    groups = {"suspected label error": ("suspected_label_error", "x", "tab:red"),
              "negative discrimination": ("negative_discrimination", "v", "tab:orange"),
              "other items": (None, "o", "tab:blue")}
    entries = [e for e in report["items"].values() if e["accuracy"] is not None]
    for label, (flag, marker, colour) in groups.items():
        def chosen(e: Mapping[str, Any]) -> bool:
            if flag is not None:
                return flag in e["flags"] and (flag != "negative_discrimination"
                                               or "suspected_label_error" not in e["flags"])
            return not {"suspected_label_error", "negative_discrimination"} & set(e["flags"])
        # few models give few distinct values: one marker per value, its area growing with the items on it
        pts = Counter((round(e["accuracy"], 3), round(e["discrimination"] or 0.0, 3)) for e in entries if chosen(e))
        if pts:
            xs, ys = zip(*pts)
            ax.scatter(xs, ys, s=[12 + 6 * n for n in pts.values()], marker=marker, color=colour, alpha=0.6,
                       label=f"{label} ({sum(pts.values())})")
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_xlabel("accuracy across models")
    ax.set_ylabel("discrimination (0 where undefined)")
    ax.set_title("Item health")
    ax.legend(loc="best", fontsize=8)
    return save_png(fig, path)


def run(argv: Sequence[str] | None = None) -> int:
    """``python -m scoring health`` (errors are turned into one line by the caller's ``exit_on_error``)."""
    args = config_of(HealthOptions, parser().parse_args(argv))
    if not 0 < args.threshold < 1:
        raise ConfigError(f"--threshold {args.threshold}: a probability between 0 and 1")
    if len(args.predictions) < 2:
        raise ConfigError("--predictions: item health needs the answers of at least two models")
    items = load_items(args.release, args.revision, args.cache_dir, with_images=False)
    runs = read_runs(args.predictions, args.format, {it.id for it in items})
    health = item_health(items, runs, args.threshold)
    if not health.items:
        raise ConfigError(f"{args.release}: no multiple-choice or yes/no items (open answers have no options "
                          "for models to agree on)")
    report = health_json(health, {"release": str(args.release), "revision": args.revision,
                                  "predictions": list(map(str, args.predictions)), "flags": list(FLAGS)})
    print_report(report)
    out = Path(args.out or Path("results") / f"health-{'-'.join(Path(str(args.release)).parts[-2:])}")
    written = [write_json_atomic(out / "health.json", report)]
    if args.plots:
        try:
            written.append(plot(report, out / "health.png"))
        except ImportError:
            print("note: no health.png: the plot needs matplotlib (pip install 'mirage-bench[release]')",
                  file=sys.stderr)
    for path in written:
        print(f"wrote {path}", file=sys.stderr)
    return 0
