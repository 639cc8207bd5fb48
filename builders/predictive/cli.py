"""``python -m builders.predictive``: options, the summary tables, the entry point."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from builders.cli import (add_build_arguments, builder_parser, exit_on_error, print_reason_counts, run_builder,
    stdout, table)
from builders.items import Item
from builders.predictive.builder import write_build
from builders.predictive.config import TASKS, PredictiveConfig
from filters.clip import add_clip_arguments


def parser() -> argparse.ArgumentParser:
    from sources.video import BACKENDS

    p = builder_parser(
        "predictive",
        "Build the predictive-reasoning benchmark (Giraffe-Bench): abstract pattern sequences from the "
        "pattern generator (and hand-made entries), human activity and physical interaction from the "
        "demo videos.",
    )
    d = PredictiveConfig()
    a = p.add_argument
    add_build_arguments(p, d, seed_of="the generator and the demo videos", name="demo-seed<N>",
                        cache_of="demo videos and frames",
                        demo=("videos", "demo videos for activity and physics items"))
    a("--tasks", nargs="+", metavar="TASK", help=f"tasks to build, of {', '.join(TASKS)} (default all)")
    a("--patterns", type=int, metavar="N", help=f"generated pattern sequences (default {d.patterns})")
    a("--icons", metavar="DIR", help="icon folder in Icon645's layout: one folder per category of transparent PNG "
                                     "icons (default the built-in procedural icons)")
    a("--authored", metavar="FILE", help="hand-made pattern entries: JSONL of {id, images, pattern, pred} "
                                               "(default none)")
    a("--context-frames", type=int, metavar="N", help=f"frames shown before the held-out event (default {d.context_frames})")
    a("--backend", choices=BACKENDS,
      help=f"video decoder (default {d.backend}: torchcodec where it loads, else decord, else OpenCV)")
    g = p.add_argument_group("the paper's datasets (replace the demo videos when given)").add_argument
    g("--activitynet", metavar="FILE.json", help="ActivityNet Captions file (train.json, val_1.json, ...) (default none)")
    g("--charades", metavar="FILE.csv", help="Charades CSV (Charades_v1_test.csv) (default none)")
    g("--charades-classes", metavar="FILE", help="Charades action dictionary, Charades_v1_classes.txt (default none)")
    g("--clevrer-annotations", metavar="DIR", help="CLEVRER annotation folder (annotation_*.json) (default none)")
    g("--roboset", metavar="DIR", help="RoboSet clips: <activity>/<subtask>/<variant>.mp4 or frame folders "
                                       "(default none)")
    g("--roboset-combinations", metavar="FILE", help="JSON list of consistent subtask combinations "
                                                     "(default DIR/combinations.json, else every activity whole)")
    g("--videos", metavar="DIR", help="folder holding the ActivityNet, Charades or CLEVRER videos (default none)")
    g("--max-videos", type=int, metavar="N", help="read only the first N videos of each source (default all)")
    for source in ("activitynet", "charades", "clevrer", "roboset"):
        g(f"--{source}-items", type=int, metavar="N",
          help=f"{source} items at most (default {getattr(d, source + '_items')}, the paper's size)")
    g("--segments-per-item", type=int, metavar="N",
      help=f"ActivityNet: first N segments of a video, the last held out (default {d.segments_per_item})")
    g("--min-segments", type=int, metavar="N",
      help=f"ActivityNet: videos with fewer segments are skipped (default {d.min_segments})")
    g("--clip-candidates", type=int, metavar="N",
      help=f"ActivityNet: frames per segment CLIP chooses from (default {d.clip_candidates})")
    g("--min-similarity", type=float, metavar="X",
      help=f"Charades: least cosine similarity of the verb-noun pair to an action (default {d.min_similarity})")
    g("--clevrer-no-collision-share", type=float, metavar="X",
      help=f"CLEVRER: share of items whose video has no later collision (default {d.clevrer_no_collision_share})")
    add_clip_arguments(p)
    p.set_defaults(clip_model=d.clip_model)
    return p


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
