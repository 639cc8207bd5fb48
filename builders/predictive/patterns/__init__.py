"""The abstract pattern generator (paper Sec. 3.1.1, App. D.1): scripted scenarios with random factors.

Four dimensions - spatial movement, rotation, quantity, properties - and the paper's named scenarios (digital
clocks, Snake, item quantity changes, numerical variations, object rotations, trajectory movements, Tetris,
shadow rotations; colour, shape and size changes make up the rest). Each scenario changes exactly one
attribute by one rule (:attr:`Entry.rule`); see :mod:`builders.predictive.patterns.base` for how text and pixels
come from the same parameters.

Entry ``i`` is drawn by scenario ``SCENARIOS[i % len(SCENARIOS)]`` (so 1,000 entries are spread evenly: 38 or 39
per scenario) from ``rng(seed, "predictive/pattern/<i>")``; its number of images is drawn there too (3-5, the
paper's range). A draw that cannot make a valid sequence, or that repeats an earlier entry's parameters, is
drawn again from ``".../retry/<attempt>"``, so every entry is unique and entry ``i`` depends only on
``(seed, i)`` and the entries before it that it might repeat.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

from builders.predictive.icons import IconSet
from builders.predictive.patterns import games, motion, properties, quantity, rotation
from builders.predictive.patterns.base import DIMENSIONS, Entry, Redraw, Scenario
from builders.seeding import rng

SCENARIOS: dict[str, Scenario] = {
    "motion/uniform": motion.uniform,
    "motion/variable": motion.variable,
    "motion/trajectory": motion.trajectory,
    "motion/several": motion.several,
    "rotation/clockwise": rotation.steady("clockwise"),
    "rotation/counterclockwise": rotation.steady("counterclockwise"),
    "rotation/half_turn": rotation.half_turn,
    "rotation/accelerating": rotation.accelerating,
    "rotation/decelerating": rotation.decelerating,
    "rotation/opposite_pair": rotation.opposite_pair,
    "rotation/row": rotation.row,
    "rotation/shadow": rotation.shadow,
    "rotation/revolution": rotation.revolution,
    "rotation/clock_hand": rotation.clock_hand,
    "rotation/flip": rotation.flip,
    "quantity/increase": quantity.increase,
    "quantity/decrease": quantity.decrease,
    "quantity/doubling": quantity.doubling,
    "quantity/halving": quantity.halving,
    "properties/colour_cycle": properties.colour_cycle,
    "properties/shape_cycle": properties.shape_cycle,
    "properties/size": properties.size,
    "properties/numbers": properties.numbers,
    "games/digital_clock": games.digital_clock,
    "games/snake": games.snake,
    "games/tetris": games.tetris,
}
IMAGE_COUNTS = (3, 4, 5)
MAX_ATTEMPTS = 200

__all__ = ["DIMENSIONS", "SCENARIOS", "Entry", "generate", "params_key"]


def params_key(entry: Entry) -> str:
    """What makes an entry unique: its scenario, parameters and number of images."""
    return json.dumps([entry.scenario, entry.params, entry.n_images], sort_keys=True)


def generate(seed: int, count: int, icons: IconSet, scenarios: list[str] | None = None,
             progress: Callable[[int, int], None] | None = None) -> Iterator[Entry]:
    """``count`` unique entries, spread evenly over ``scenarios`` (default: all)."""
    names = list(scenarios or SCENARIOS)
    seen: set[str] = set()
    for i in range(count):
        name = names[i % len(names)]
        for attempt in range(MAX_ATTEMPTS):
            r = rng(seed, f"predictive/pattern/{i}" + (f"/retry/{attempt}" if attempt else ""))
            n = int(IMAGE_COUNTS[int(r.integers(len(IMAGE_COUNTS)))])
            try:
                entry = SCENARIOS[name](r, icons, n)
            except Redraw:
                continue
            key = params_key(entry)
            if key not in seen:
                seen.add(key)
                break
        else:
            raise RuntimeError(f"pattern {i} ({name}): no new valid entry in {MAX_ATTEMPTS} draws; the scenario "
                               "has too few random factors for this many entries")
        if progress is not None:
            progress(i + 1, count)
        yield entry
