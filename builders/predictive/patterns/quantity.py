"""Quantity: items added or removed by a rule (a fixed number, doubling, halving), laid out row by row."""

from __future__ import annotations

import numpy as np

from builders.predictive.canvas import Sprite
from builders.predictive.icons import IconSet, plural
from builders.predictive.patterns.base import (
    Board,
    Entry,
    Redraw,
    number_word,
    opening,
    pick,
    pick_icons,
    series,
)

SLOTS = Board(cols=5, rows=5, cell=48)
"""Items fill this 5 x 5 layout row by row from the top left (no lines drawn)."""
ICON = 36


def layout(icon: str, count: int) -> list[Sprite]:
    return [Sprite(icon, *SLOTS.centre(i % SLOTS.cols, i // SLOTS.cols), ICON) for i in range(count)]


def _entry(scenario: str, icon: str, counts: list[int], rule_text: str, params: dict, n: int) -> Entry:
    if min(counts) < 1 or max(counts) > SLOTS.cols * SLOTS.rows:
        raise Redraw("count out of range")
    frames = [layout(icon, c) for c in counts]
    said = [str(c) for c in counts]
    pattern = (opening(n, f"a number of {plural(icon)}") + f" In the order of the images, {rule_text}: there are "
               f"{series(said[:n])} {plural(icon)}.")
    spelled = f" ({number_word(counts[n])})" if number_word(counts[n]) != str(counts[n]) else ""
    pred = f"In the next image, there will be {counts[n]} {plural(icon, counts[n])}{spelled}."
    return Entry(f"quantity/{scenario}", "quantity", "item quantity changes", "count",
                 {"icon": icon, "slots": SLOTS.as_params(), "icon_size": ICON, **params},
                 240, 240, frames[:n], frames[n], pattern, pred, [icon])


def increase(rng: np.random.Generator, icons: IconSet, n: int) -> Entry:
    """The same number of items is added every image."""
    icon, = pick_icons(rng, icons)
    step, c0 = int(pick(rng, (1, 2, 3, 4))), int(rng.integers(1, 5))
    counts = [c0 + step * k for k in range(n + 1)]
    return _entry("increase", icon, counts, f"{number_word(step)} more {plural(icon, step)} {'appears' if step == 1 else 'appear'} each time",
                  {"start": c0, "step": step}, n)


def decrease(rng: np.random.Generator, icons: IconSet, n: int) -> Entry:
    """The same number of items is removed every image."""
    icon, = pick_icons(rng, icons)
    step = int(pick(rng, (1, 2, 3, 4)))
    c0 = int(rng.integers(step * n + 1, SLOTS.cols * SLOTS.rows + 1))
    counts = [c0 - step * k for k in range(n + 1)]
    return _entry("decrease", icon, counts, f"{number_word(step)} {plural(icon, step)} {'disappears' if step == 1 else 'disappear'} each time",
                  {"start": c0, "step": -step}, n)


def doubling(rng: np.random.Generator, icons: IconSet, n: int) -> Entry:
    """The number of items doubles every image."""
    icon, = pick_icons(rng, icons)
    n = min(n, 4)
    c0 = 1 if n == 4 else int(pick(rng, (1, 2, 3)))
    counts = [c0 * 2 ** k for k in range(n + 1)]
    return _entry("doubling", icon, counts, "the number doubles each time", {"start": c0, "factor": 2}, n)


def halving(rng: np.random.Generator, icons: IconSet, n: int) -> Entry:
    """The number of items halves every image."""
    icon, = pick_icons(rng, icons)
    n = min(n, 4)
    last = 1 if n == 4 else int(pick(rng, (1, 2, 3)))
    c0 = last * 2 ** n
    counts = [c0 // 2 ** k for k in range(n + 1)]
    return _entry("halving", icon, counts, "half of them disappear each time", {"start": c0, "factor": 0.5}, n)
