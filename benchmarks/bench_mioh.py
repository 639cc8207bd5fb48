"""MIOH at paper scale: 20k questions from prepared pools, and co-occurrence statistics at COCO train scale.

Two measurements, printed side by side (issue #2):

1. question generation: pools of the demo world are prepared first (geometry, co-occurrence, per-probe image
   splits are built lazily, so the first pass over every cell warms them and is timed apart), then the whole
   paper-scale question set (~20,518 questions: 4 tasks x 3 types x 6 pressures) is generated on one core and
   timed; target < 30 s;
2. co-occurrence counts over 860,000 synthetic annotations (``bench_cooccurrence``): numpy vs plain Python;
   target < 5 s.

    python benchmarks/bench_mioh.py [--questions 20518] [--n-images 4] [--skip-cooccurrence]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from builders.mioh import MiohConfig  # noqa: E402
from builders.mioh.builder import MiohBuilder  # noqa: E402
from builders.mioh.pools import Pools  # noqa: E402
from builders.mioh.questions import IMAGE_LADDER, PRESSURES, QUESTION_TYPES, TASKS  # noqa: E402
from filters.geometry import measure  # noqa: E402
from sources.demo import load_demo  # noqa: E402
from sources.tables import tables_of  # noqa: E402

TARGET_QUESTIONS_S = 30.0


def items_per_round(n_images: int) -> int:
    """Items one question per cell yields (an ``n_images`` family yields one item per ladder size)."""
    family = len([s for s in IMAGE_LADDER if s <= n_images])
    cells_per_task = len(QUESTION_TYPES) * (len(PRESSURES) - 1 + family)
    return len(TASKS) * cells_per_task


def generate(n_questions: int, n_images: int, seed: int) -> dict[str, Any]:
    """Prepare pools, warm them, then time generating ``n_questions`` items on this core."""
    t0 = time.process_time()
    tables = tables_of(load_demo(seed=seed, n_images=600))
    rules = MiohConfig(n_images=n_images, seed=seed, progress=False).pool_config(exhaustive_relations=True)
    pools = Pools.build(tables, measure(tables, rules.geometry), rules, TASKS)
    prepare_s = time.process_time() - t0

    per_cell = max(1, round(n_questions / items_per_round(n_images)))
    warm = MiohConfig(n_images=n_images, seed=seed + 1, n_questions=2, progress=False)
    t0 = time.process_time()
    for task in TASKS:
        builder = MiohBuilder(warm, task, pools)
        for qtype in QUESTION_TYPES:
            for pressure in PRESSURES:
                builder.build_cell(qtype, pressure)
    warm_s = time.process_time() - t0

    config = MiohConfig(n_images=n_images, seed=seed, n_questions=per_cell, progress=False)
    made = 0
    t0 = time.process_time()
    for task in TASKS:
        builder = MiohBuilder(config, task, pools)
        for qtype in QUESTION_TYPES:
            for pressure in PRESSURES:
                made += len(builder.build_cell(qtype, pressure).items)
    gen_s = time.process_time() - t0
    return {"prepare_s": prepare_s, "warm_s": warm_s, "generate_s": gen_s, "items": made,
            "per_s": made / gen_s if gen_s else float("inf")}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=20_518, help="questions to generate (default 20,518, the paper's count)")
    parser.add_argument("--n-images", type=int, default=4, choices=IMAGE_LADDER, help="images per question (default 4)")
    parser.add_argument("--seed", type=int, default=0, help="seed (default 0)")
    parser.add_argument("--skip-cooccurrence", action="store_true", help="only time question generation")
    args = parser.parse_args(argv)
    os.environ.setdefault("MIRAGE_CACHE_DIR", str(Path.home() / ".cache" / "mirage"))

    gen = generate(args.questions, args.n_images, args.seed)
    table = Table(title=f"MIOH question generation ({args.n_images} images per question, one core, CPU seconds)")
    for col in ("stage", "seconds", "items", "items/s", "target"):
        table.add_column(col, justify="left" if col == "stage" else "right")
    table.add_row("prepare pools (600 demo scenes)", f"{gen['prepare_s']:.2f}", "", "", "")
    table.add_row("warm per-probe splits", f"{gen['warm_s']:.2f}", "", "", "")
    table.add_row("generate questions", f"{gen['generate_s']:.2f}", f"{gen['items']:,}", f"{gen['per_s']:,.0f}",
                  f"< {TARGET_QUESTIONS_S:.0f} s: {'met' if gen['generate_s'] < TARGET_QUESTIONS_S else 'MISSED'}")
    Console().print(table)

    if not args.skip_cooccurrence:
        import bench_cooccurrence  # type: ignore[import-not-found]

        bench_cooccurrence.print_table(bench_cooccurrence.run())
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    raise SystemExit(main())
