"""``python -m builders.mementos``: options, the summary tables, the entry point."""


from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Sequence

from rich.console import Console

from builders.cli import (add_build_arguments, builder_parser, exit_on_error, print_reason_counts, run_builder,
    stderr, stdout, table)
from builders.items import Item
from builders.llm import add_llm_arguments
from builders.mementos.builder import write_build
from builders.mementos.config import MementosConfig
from sources.executors import add_executor_arguments

# ------------------------------------------------------------------------------------------------ the CLI


def parser() -> argparse.ArgumentParser:
    from sources.video import BACKENDS, policy_names

    p = builder_parser(
        "mementos",
        "Build Mementos (descriptions of image sequences; object and behaviour hallucination). Runs on "
        "the demo world's videos unless NExT-QA, robot or comics data is given.",
    )
    d = MementosConfig()
    a = p.add_argument
    add_build_arguments(p, d, seed_of="the demo world and of --max-videos sampling", name="demo-seed<S> or data-seed<S>",
                        cache_of="frames, demo videos and LLM answers",
                        demo=("videos", "number of demo videos when no data is given"))
    a("--nextqa", metavar="FILE", help="NExT-QA question CSV (val.csv / test.csv / train.csv): daily-life domain")
    a("--videos", metavar="DIR", help="directory of the NExT-QA videos")
    a("--nextqa-map", metavar="FILE", help="map_vid_vidorID.json (default looked up beside the CSV and the videos)")
    a("--robot", metavar="DIR", help="robot episodes: video files, frame folders or a LeRobot v2 dataset (robotics domain)")
    a("--comics", metavar="DIR", help="comics: one folder of panel images per comic (comics domain)")
    a("--policy", metavar="NAME", help=f"frame sampling for every video source, one of {', '.join(policy_names())} "
                       "(default daily_life for NExT-QA, robotics for robots, uniform:8 for the demo)")
    a("--backend", choices=BACKENDS,
      help=f"video decoder (default {d.backend}: torchcodec where it loads, else decord, else OpenCV)")
    a("--on-error", choices=("skip", "fail"), help="an unreadable video is skipped with its reason, or stops the build "
                                                   f"(default {d.on_error})")
    a("--max-videos", type=int, metavar="N", help="a seeded sample of at most N videos per source (default all)")
    add_executor_arguments(p, "frame sampling tasks", clip=False)
    add_llm_arguments(p)
    return p


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

