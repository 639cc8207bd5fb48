"""Properties: colour, shape (which icon), size and numbers change by a rule while everything else stays."""

from __future__ import annotations

import numpy as np

from builders.predictive.canvas import Sprite, number_cells, number_width
from builders.predictive.icons import IconSet
from builders.predictive.patterns.base import (
    PALETTE,
    Entry,
    opening,
    pick,
    pick_icons,
    series,
)
from templates.loader import with_article

CENTRE = 120


def colour_cycle(rng: np.random.Generator, icons: IconSet, n: int) -> Entry:
    """One icon, recoloured in a repeating cycle of two or three colours."""
    icon, = pick_icons(rng, icons)
    length = int(pick(rng, (2, 3)))
    n = max(n, length + 1)
    names = [str(c) for c in rng.choice(list(PALETTE), size=length, replace=False)]
    cycle = [names[k % length] for k in range(n + 1)]
    frames = [[Sprite(icon, CENTRE, CENTRE, 120, colour=PALETTE[c])] for c in cycle]
    pattern = (opening(n, f"{with_article(icon)} filled with one colour") + f" In the order of the images, the colour "
               f"of the {icon} repeats the cycle {' -> '.join(names)}: it is {series(cycle[:n])}.")
    pred = f"In the next image, the {icon} will be {cycle[n]}."
    return Entry("properties/colour_cycle", "properties", "colour changes", "colour",
                 {"icon": icon, "centre": CENTRE, "icon_size": 120, "cycle": names,
                  "rgb": {c: list(PALETTE[c]) for c in names}}, 240, 240, frames[:n], frames[n], pattern, pred, [icon])


def shape_cycle(rng: np.random.Generator, icons: IconSet, n: int) -> Entry:
    """A repeating cycle of two or three different icons in the same place."""
    length = int(pick(rng, (2, 3)))
    n = max(n, length + 1)
    cats = pick_icons(rng, icons, length)
    cycle = [cats[k % length] for k in range(n + 1)]
    frames = [[Sprite(c, CENTRE, CENTRE, 120)] for c in cycle]
    pattern = (opening(n, "one icon in the centre") + " In the order of the images, the icon repeats the cycle "
               f"{' -> '.join(cats)}: it is {series([with_article(c) for c in cycle[:n]])}.")
    pred = f"In the next image, the icon will be {with_article(cycle[n])}."
    return Entry("properties/shape_cycle", "properties", "shape changes", "icon",
                 {"icons": cats, "centre": CENTRE, "icon_size": 120}, 240, 240, frames[:n], frames[n], pattern,
                 pred, cats)


def size(rng: np.random.Generator, icons: IconSet, n: int) -> Entry:
    """One icon grows or shrinks by the same number of pixels every image."""
    icon, = pick_icons(rng, icons)
    step = int(pick(rng, (16, 20, 24)))
    grows = bool(rng.integers(2))
    if grows:
        s0 = int(pick(rng, (24, 32, 40)))
    else:
        s0 = int(pick(rng, (220, 212, 204)))
    sizes = [s0 + (step if grows else -step) * k for k in range(n + 1)]
    frames = [[Sprite(icon, CENTRE, CENTRE, s)] for s in sizes]
    way = "grows" if grows else "shrinks"
    pattern = (opening(n, f"{with_article(icon)} in the centre") + f" In the order of the images, the {icon} {way} by "
               f"{step} pixels in width and height each time: it is {series([str(s) for s in sizes[:n]])} pixels "
               "wide.")
    pred = (f"In the next image, the {icon} will be {'bigger' if grows else 'smaller'} again, {sizes[n]} pixels "
            "wide.")
    return Entry("properties/size", "properties", "size changes", "size",
                 {"icon": icon, "centre": CENTRE, "start": s0, "step": step if grows else -step},
                 240, 240, frames[:n], frames[n], pattern, pred, [icon])


DIGIT_W, DIGIT_H, STROKE, GAP = 40, 72, 8, 12


def number_display(text: str, colour: tuple[int, int, int], width: int = 240, height: int = 240) -> list:
    x0 = (width - number_width(text, DIGIT_W, STROKE, GAP)) // 2
    return number_cells(text, x0, (height - DIGIT_H) // 2, DIGIT_W, DIGIT_H, STROKE, GAP, colour)


def numbers(rng: np.random.Generator, icons: IconSet, n: int) -> Entry:
    """A seven-segment number goes up or down by a constant, or doubles."""
    colour = str(pick(rng, list(PALETTE)))
    kind = pick(rng, ("adds", "subtracts", "doubles"))
    if kind == "doubles":
        v0 = int(rng.integers(1, 13))
        values = [v0 * 2 ** k for k in range(n + 1)]
        rule = "the number doubles each time"
        step = 2
    else:
        step = int(pick(rng, (1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 25)))
        if kind == "adds":
            v0 = int(rng.integers(0, 100))
            values = [v0 + step * k for k in range(n + 1)]
        else:
            v0 = int(rng.integers(step * n, step * n + 100))
            values = [v0 - step * k for k in range(n + 1)]
        rule = f"the number goes {'up' if kind == 'adds' else 'down'} by {step} each time"
    frames = [number_display(str(v), PALETTE[colour]) for v in values]
    pattern = (opening(n, f"{with_article(colour)} number on a digital display") + f" In the order of the images, {rule}: it "
               f"shows {series([str(v) for v in values[:n]])}.")
    pred = f"In the next image, the display will show {values[n]}."
    return Entry("properties/numbers", "properties", "numerical variations", "value",
                 {"colour": colour, "rgb": list(PALETTE[colour]), "kind": kind, "start": v0, "step": step,
                  "digit": [DIGIT_W, DIGIT_H, STROKE, GAP]}, 240, 240, frames[:n], frames[n], pattern, pred, [])
