"""``python -m scoring BENCHMARK --release PATH --predictions FILE [--out DIR]``: score one model's predictions.

Two more commands read several models' predictions: ``python -m scoring health RELEASE --predictions A B ...``
(item health, :mod:`scoring.health_report`) and ``python -m scoring twin RELEASE TWIN ...`` (a release against its
twin, :mod:`scoring.twins`).

Reads the release (a release dir, a build dir, an items.jsonl, or ``owner/name@vX.Y.Z`` on the Hub), the
predictions (Mirage's JSONL, an lmms-eval ``--log_samples`` file, or a VLMEvalKit result sheet), hands both to the
benchmark's scorer (:mod:`scoring.registry`), prints its tables and writes ``results.json`` and its plots (PNG).
"""

from __future__ import annotations

import argparse
import sys
from importlib import import_module
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Sequence

from builders.cli import ArgumentParser, exit_on_error
from commandline.options import add_options, config_of, option
from commandline.parsing import prog
from scoring.options import PredictionsOptions
from scoring.predictions import guess_format, read_any_predictions  # noqa: F401 - guess_format re-exported
from scoring.registry import scorer, scorers
from scoring.releases import load_items
from scoring.results import write_json_atomic
from sources.errors import ConfigError

COMMANDS = {"health": "scoring.health_report", "twin": "scoring.twins"}
"""Commands over several models' predictions, beside the benchmarks' scorers (each module has ``run(argv)``)."""


@dataclass(kw_only=True)
class ScoreOptions(PredictionsOptions):
    """What the front end reads and writes, whichever benchmark; a scorer adds its own options
    (:mod:`scoring.registry`)."""

    OPTION_HELP: ClassVar[dict[str, str]] = {"cached": "release images, LLM answers"}

    benchmark: str = option(metavar="BENCHMARK", positional=True, help="which benchmark's metrics ({scorers})")
    """Its choices are the benchmarks whose spec names a scorer (:func:`scoring.registry.scorers`)."""
    release: str = option(metavar="PATH", help="release dir, build dir, items.jsonl, or a Hub repo owner/name@vX.Y.Z")
    revision: str | None = option(None, metavar="TAG", help="Hub revision when --release is a repo id (default the "
                                                            "@tag)")
    predictions: str = option(metavar="FILE",
                              help="predictions: Mirage JSONL (mirage predict), lmms-eval samples JSONL, or a "
                                   "VLMEvalKit result sheet (.xlsx/.tsv/.csv)")
    model: str = option("", metavar="NAME", help="model name for titles (default the predictions' own model field)")
    out: str | None = option(None, metavar="DIR",
                             help="where results.json and the plots go (default results/<benchmark>-<predictions "
                                  "name>)")
    plots: bool = option(True, flag="--no-plots", help="write no PNG figures (default plots written)")


def parser(benchmark: str | None = None) -> argparse.ArgumentParser:
    """The command line; with a benchmark, its scorer's own options are added."""
    p = ArgumentParser(
        prog=prog("python -m scoring"),
        description="Score a model's predictions on a Mirage benchmark: tables on stdout, results.json and plots. "
                    "Also: `mirage health RELEASE --predictions A B ...` (item health over several models) and "
                    "`mirage twin-gap RELEASE TWIN ...` (a release against its twin); each has its own --help.",
    )
    known = sorted(scorers())
    add_options(p, ScoreOptions, choices={"benchmark": known}, help_values={"scorers": ", ".join(known)})
    if benchmark is not None:
        scorer(benchmark).add_arguments(p)
    return p


def _benchmark_of(argv: Sequence[str]) -> str | None:
    for a in argv:
        if not a.startswith("-"):
            return a if a in scorers() else None
    return None


@exit_on_error
def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m scoring``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in COMMANDS:
        return import_module(COMMANDS[argv[0]]).run(argv[1:])
    args = parser(_benchmark_of(argv)).parse_args(argv)  # the scorer reads its own options from it too
    options = config_of(ScoreOptions, args)
    module = scorer(options.benchmark)
    items = [it for it in load_items(options.release, options.revision, options.cache_dir)
             if it.benchmark == options.benchmark]
    if not items:
        raise ConfigError(f"{options.release}: holds no {options.benchmark} items")
    predictions = read_any_predictions(options.predictions, options.format, options.model)
    known = {it.id for it in items}
    unknown = sorted(set(predictions) - known)
    if unknown:
        raise ConfigError(f"{options.predictions}: {len(unknown)} prediction(s) for ids that are not "
                          f"{options.benchmark} items of {options.release} (first: {unknown[0]}); wrong release?")
    if not predictions:
        raise ConfigError(f"{options.predictions}: no predictions")
    if not options.model:
        options.model = next((p.model for p in predictions.values() if p.model), "")
    results = module.run(items, predictions, args)
    results.setdefault("meta", {}).update({
        "benchmark": options.benchmark, "release": str(options.release), "revision": options.revision,
        "predictions": str(options.predictions), "model": options.model, "items": len(items),
        "predicted": len(predictions),
    })
    module.print_report(results)
    out = Path(options.out or Path("results") / f"{options.benchmark}-{Path(options.predictions).stem}")
    written = [write_json_atomic(out / "results.json", results)]
    if options.plots and hasattr(module, "plots"):
        try:
            written += module.plots(results, out)
        except ImportError:
            raise ConfigError("plots need matplotlib: pip install 'mirage-bench[release]' (or pass --no-plots)") \
                from None
    for path in written:
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
