"""``python -m builders.mementos``: options, the summary tables, the entry point."""


from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Sequence

from rich.console import Console

from builders.cli import builder_parser, exit_on_error, print_reason_counts, run_builder, stderr, stdout, table
from builders.items import Item
from builders.mementos.builder import write_build
from builders.mementos.config import MementosConfig

# ------------------------------------------------------------------------------------------------ the CLI


def parser() -> argparse.ArgumentParser:
    return builder_parser(
        "mementos",
        "Build Mementos (descriptions of image sequences; object and behaviour hallucination). Runs on "
        "the demo world's videos unless NExT-QA, robot or comics data is given.",
        MementosConfig,
    )


def print_summary(path: Path, items: Sequence[Item], stats: dict[str, Any]) -> None:
    rows = [[d, v["items"], v["frames_mean"], v["objects_mean"], v["behaviours_mean"]] for d, v in stats["domains"].items()]
    stdout.print(table(f"Mementos build: {len(items)} items -> {path}",
                       ["domain", "items", "frames (mean)", "objects (mean)", "behaviours (mean)"], rows))
    stdout.print(table("Sources", ["source", "videos", "policy", "domain"],
                       [[s, v["videos"], v["policy"], v["domain"]] for s, v in stats["sources"].items()]))
    stdout.print(table("Text", ["what", "how"], [
        ["descriptions", ", ".join(f"{k} {v}" for k, v in stats["descriptions"].items())],
        ["keywords", stats["keywords"]],
        ["frames", ", ".join(f"{k} {v}" for k, v in stats["frames"].items()) or "-"],
    ], numeric=False))
    print_skipped(stats, stdout)


def print_skipped(stats: dict[str, Any], console: Console = stderr) -> None:
    """The videos skipped, counted by reason (nothing if none)."""
    print_reason_counts("Skipped videos", stats["skipped_by_reason"], console)


@exit_on_error
def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m builders.mementos``."""
    return run_builder(MementosConfig, parser(), argv, write_build, print_summary, print_skipped)

