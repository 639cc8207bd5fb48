"""The toy builder: a tiny generated world (white 64x64 images with 1 to 4 red squares on a 4x4 grid, counts dealt
in shuffled blocks so each answer letter is as frequent) and one counting question per image."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from PIL import Image

from builders.cli import builder_parser, exit_on_error, run_builder, stdout, table
from builders.items import Item, make_item
from builders.run import write_items_build
from builders.seeding import rng

from .config import BENCHMARK, ToyConfig

OPTIONS = ("1", "2", "3", "4")
QUESTION = "How many red squares are in the image?"
CELL, SIDE = 16, 10


def draw(path: Path, cells: Sequence[int]) -> None:
    """A white image with a red square in each grid cell of ``cells`` (0..15, row by row)."""
    image = Image.new("RGB", (4 * CELL, 4 * CELL), "white")
    for c in cells:
        x, y = (c % 4) * CELL + 3, (c // 4) * CELL + 3
        image.paste((220, 20, 20), (x, y, x + SIDE, y + SIDE))
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path)


def build(config: ToyConfig, stats: dict[str, Any] | None = None) -> list[Item]:
    """The items, their images drawn under the cache dir (the build copies them in)."""
    gen = rng(config.seed, "toy/world")
    counts = [1 + k % 4 for k in range(-(-config.n_images // 4) * 4)]
    gen.shuffle(counts)
    folder = Path(config.resolved_cache_dir()) / "toy" / f"seed{config.seed}"
    items = []
    for k, count in enumerate(counts[: config.n_images]):
        path = folder / f"toy-{config.seed}-{k:03d}.png"
        draw(path, sorted(int(c) for c in gen.choice(16, size=count, replace=False)))
        items.append(make_item(benchmark=BENCHMARK, task="counting", question_type="count", pressure="easy",
                               images=[str(path)], question=QUESTION, options=OPTIONS,
                               answer="ABCD"[count - 1], provenance={"count": count, "answer_slots": 4}))
    if stats is not None:
        stats.update(input_hashes={}, skipped=[], generated_sources=["demo"])
    return items


def write_build(config: ToyConfig) -> tuple[Path, list[Item], dict[str, Any]]:
    stats: dict[str, Any] = {}
    items = build(config, stats)
    path, written = write_items_build(config, BENCHMARK, items, stats, [{"name": "demo", "path": "generated"}],
                                      localise=True)
    return path, written, stats


def print_summary(path: Path, items: Sequence[Item], stats: Any) -> None:
    stdout.print(table(f"toy build {path}", ["items"], [[len(items)]]))


@exit_on_error
def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the toy builder, as every builder's."""
    return run_builder(ToyConfig, builder_parser(BENCHMARK, "the toy benchmark", ToyConfig), argv, write_build,
                       print_summary)
