"""``python -m builders.predictive``: options, the summary tables, the entry point."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from builders.cli import builder_parser, exit_on_error, print_reason_counts, run_builder, stdout, table
from builders.items import Item
from builders.predictive.builder import write_build
from builders.predictive.config import PredictiveConfig


def parser() -> argparse.ArgumentParser:
    return builder_parser(
        "predictive",
        "Build the predictive-reasoning benchmark (Giraffe-Bench): abstract pattern sequences from the "
        "pattern generator (and hand-made entries), human activity and physical interaction from the "
        "demo videos.",
        PredictiveConfig,
    )


def print_summary(path: Path, items: Sequence[Item], stats: dict[str, Any]) -> None:
    stdout.print(table(f"Predictive build: {len(items)} items -> {path}", ["task", "items"],
                       list(stats["tasks"].items())))
    if stats.get("scenarios"):
        stdout.print(table(f"Pattern scenarios (icons: {stats['icons']})", ["scenario", "entries"],
                           list(stats["scenarios"].items())))
    if stats.get("sources"):
        stdout.print(table("Sources", ["source", "read", "items", "skipped"],
                           [(k, v["read"], v["items"], v["skipped"]) for k, v in stats["sources"].items()]))
    print_reason_counts("Videos without an item", stats["skipped_by_reason"], stdout)


@exit_on_error
def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m builders.predictive``."""
    return run_builder(PredictiveConfig, parser(), argv, write_build, print_summary)
