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
from pathlib import Path
from typing import Sequence

from builders.cli import ArgumentParser, exit_on_error
from commandline.parsing import prog
from scoring.predictions import FORMATS, guess_format, read_any_predictions  # noqa: F401 - guess_format re-exported
from scoring.registry import SCORERS, scorer
from scoring.releases import load_items
from scoring.results import write_json_atomic
from sources.errors import ConfigError

COMMANDS = {"health": "scoring.health_report", "twin": "scoring.twins"}
"""Commands over several models' predictions, beside the benchmarks' scorers (each module has ``run(argv)``)."""


def parser(benchmark: str | None = None) -> argparse.ArgumentParser:
    """The command line; with a benchmark, its scorer's own options are added."""
    p = ArgumentParser(
        prog=prog("python -m scoring"),
        description="Score a model's predictions on a Mirage benchmark: tables on stdout, results.json and plots. "
                    "Also: `python -m scoring health RELEASE --predictions A B ...` (item health over several "
                    "models) and `python -m scoring twin RELEASE TWIN ...` (a release against its twin); each "
                    "has its own --help.",
    )
    p.add_argument("benchmark", metavar="BENCHMARK", choices=sorted(SCORERS),
                   help=f"which benchmark's metrics ({', '.join(sorted(SCORERS))})")
    p.add_argument("--release", required=True, metavar="PATH",
                   help="release dir, build dir, items.jsonl, or a Hub repo owner/name@vX.Y.Z")
    p.add_argument("--revision", metavar="TAG", help="Hub revision when --release is a repo id (default the @tag)")
    p.add_argument("--predictions", required=True, metavar="FILE",
                   help="predictions: Mirage JSONL (python -m scoring.run), lmms-eval samples JSONL, or a "
                        "VLMEvalKit result sheet (.xlsx/.tsv/.csv)")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="predictions format (default guessed: .xlsx/.tsv/.csv -> vlmevalkit, samples_*.jsonl -> "
                        "lmms-eval, else mirage)")
    p.add_argument("--model", default="", metavar="NAME",
                   help="model name for titles (default the predictions' own model field)")
    p.add_argument("--out", metavar="DIR",
                   help="where results.json and the plots go (default results/<benchmark>-<predictions name>)")
    p.add_argument("--no-plots", action="store_true", help="write no PNG figures (default plots written)")
    p.add_argument("--cache-dir", metavar="DIR",
                   help="Mirage cache (release images, LLM answers) (default $MIRAGE_CACHE_DIR or ~/.cache/mirage)")
    if benchmark is not None:
        scorer(benchmark).add_arguments(p)
    return p


def _benchmark_of(argv: Sequence[str]) -> str | None:
    for a in argv:
        if not a.startswith("-"):
            return a if a in SCORERS else None
    return None


@exit_on_error
def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m scoring``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in COMMANDS:
        return import_module(COMMANDS[argv[0]]).run(argv[1:])
    args = parser(_benchmark_of(argv)).parse_args(argv)
    module = scorer(args.benchmark)
    items = [it for it in load_items(args.release, args.revision, args.cache_dir) if it.benchmark == args.benchmark]
    if not items:
        raise ConfigError(f"{args.release}: holds no {args.benchmark} items")
    predictions = read_any_predictions(args.predictions, args.format, args.model)
    known = {it.id for it in items}
    unknown = sorted(set(predictions) - known)
    if unknown:
        raise ConfigError(f"{args.predictions}: {len(unknown)} prediction(s) for ids that are not {args.benchmark} "
                          f"items of {args.release} (first: {unknown[0]}); wrong release?")
    if not predictions:
        raise ConfigError(f"{args.predictions}: no predictions")
    if not args.model:
        args.model = next((p.model for p in predictions.values() if p.model), "")
    results = module.run(items, predictions, args)
    results.setdefault("meta", {}).update({
        "benchmark": args.benchmark, "release": str(args.release), "revision": args.revision,
        "predictions": str(args.predictions), "model": args.model, "items": len(items),
        "predicted": len(predictions),
    })
    module.print_report(results)
    out = Path(args.out or Path("results") / f"{args.benchmark}-{Path(args.predictions).stem}")
    written = [write_json_atomic(out / "results.json", results)]
    if not args.no_plots and hasattr(module, "plots"):
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
