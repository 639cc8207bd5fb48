"""Spatial movement: uniform and variable motion, a trajectory around a circle, several entities at once."""

from __future__ import annotations

import math

import numpy as np

from builders.predictive.canvas import Sprite
from builders.predictive.icons import IconSet
from builders.predictive.patterns.base import (
    Board,
    Entry,
    Redraw,
    opening,
    pick,
    pick_icons,
    series,
    squares,
    where,
)
from templates.loader import with_article

DIRECTIONS: dict[str, tuple[int, int]] = {
    "right": (1, 0), "left": (-1, 0), "up": (0, -1), "down": (0, 1),
    "up and to the right": (1, -1), "up and to the left": (-1, -1),
    "down and to the right": (1, 1), "down and to the left": (-1, 1),
}
BOARD = Board(cols=8, rows=8, cell=40)
ICON = 32
STATIONS = ("top", "top-right", "right", "bottom-right", "bottom", "bottom-left", "left", "top-left")
"""The eight points of a circular track, clockwise from the top (45 degrees apart)."""
TRACK_CENTRE, TRACK_RADIUS = 120, 80


def _start(rng: np.random.Generator, d: int, travel: int, size: int) -> int:
    """A start coordinate from which ``travel`` squares in direction ``d`` (-1, 0, 1) stay on a ``size`` board."""
    if d == 0:
        return int(rng.integers(size))
    lo, hi = (0, size - 1 - travel) if d > 0 else (travel, size - 1)
    if hi < lo:
        raise Redraw("too far to travel")
    return int(rng.integers(lo, hi + 1))


def uniform(rng: np.random.Generator, icons: IconSet, n: int) -> Entry:
    """One icon moves the same number of squares in the same direction every image."""
    icon, = pick_icons(rng, icons)
    direction = pick(rng, list(DIRECTIONS))
    step = int(pick(rng, (1, 2)))
    dx, dy = DIRECTIONS[direction]
    col0, row0 = _start(rng, dx, step * n, BOARD.cols), _start(rng, dy, step * n, BOARD.rows)
    cells = [(col0 + dx * step * k, row0 + dy * step * k) for k in range(n + 1)]
    frames = [[BOARD.grid(), Sprite(icon, *BOARD.centre(c, r), ICON)] for c, r in cells]
    places = [where(c, r) for c, r in cells]
    pattern = (opening(n, f"{with_article(icon)} on an 8 by 8 board") + f" In the order of the images, the {icon} moves "
               f"{squares(step)} {direction} each time: it is at {series(places[:n], '; ')}.")
    pred = f"In the next image, the {icon} will move {squares(step)} further {direction}, to {places[n]}."
    return Entry("motion/uniform", "spatial_movement", "trajectory movements", "position",
                 {"icon": icon, "board": BOARD.as_params(), "icon_size": ICON, "direction": direction,
                  "step": step, "start": [col0, row0]},
                 240 + 80, 240 + 80, frames[:n], frames[n], pattern, pred, [icon])


VARIABLE_BOARD = Board(cols=12, rows=3, cell=40)


def variable(rng: np.random.Generator, icons: IconSet, n: int) -> Entry:
    """One icon moves along a row, each step one square longer (speeding up) or shorter (slowing down)."""
    n = min(n, 4)
    icon, = pick_icons(rng, icons)
    mode = pick(rng, ("speeds up", "slows down"))
    direction = pick(rng, ("right", "left"))
    steps = list(range(1, n + 1)) if mode == "speeds up" else list(range(n, 0, -1))
    travel = sum(steps)
    dx = 1 if direction == "right" else -1
    col0, row = _start(rng, dx, travel, VARIABLE_BOARD.cols), int(rng.integers(VARIABLE_BOARD.rows))
    cols = [col0 + dx * sum(steps[:k]) for k in range(n + 1)]
    frames = [[VARIABLE_BOARD.grid(), Sprite(icon, *VARIABLE_BOARD.centre(c, row), ICON)] for c in cols]
    moves = [str(s) for s in steps[: n - 1]]
    pattern = (opening(n, f"{with_article(icon)} on a board of 12 columns and 3 rows, in row {row + 1}") + f" In the order of the images, the {icon} "
               f"moves {direction} by {series(moves)} squares, each move one square "
               f"{'longer' if mode == 'speeds up' else 'shorter'} than the one before (it {mode}): it is in "
               f"column {series([str(c + 1) for c in cols[:n]])}.")
    pred = (f"In the next image, the {icon} will move {squares(steps[n - 1])} further {direction}, to column "
            f"{cols[n] + 1}.")
    return Entry("motion/variable", "spatial_movement", "trajectory movements", "position",
                 {"icon": icon, "board": VARIABLE_BOARD.as_params(), "icon_size": ICON, "direction": direction,
                  "mode": mode, "start": [col0, row]},
                 480, 120, frames[:n], frames[n], pattern, pred, [icon])


def station_xy(station: int, radius: float = TRACK_RADIUS, centre: float = TRACK_CENTRE) -> tuple[float, float]:
    theta = math.radians(45 * (station % 8))
    return round(centre + radius * math.sin(theta), 1), round(centre - radius * math.cos(theta), 1)


def trajectory(rng: np.random.Generator, icons: IconSet, n: int) -> Entry:
    """One icon travels around a circle, the same fraction of a turn each image."""
    icon, = pick_icons(rng, icons)
    turn = pick(rng, ("clockwise", "counterclockwise"))
    step = int(pick(rng, (1, 2, 3)))
    s0 = int(rng.integers(8))
    sign = 1 if turn == "clockwise" else -1
    stations = [(s0 + sign * step * k) % 8 for k in range(n + 1)]
    frames = [[Sprite(icon, *station_xy(s), 40)] for s in stations]
    names = [STATIONS[s] for s in stations]
    eighths = {1: "one eighth", 2: "a quarter", 3: "three eighths"}[step]
    pattern = (opening(n, f"{with_article(icon)} on an invisible circle around the centre") + f" In the order of the "
               f"images, the {icon} moves {turn} around the circle by {eighths} of a turn each time: it is at the "
               f"{series(names[:n])}.")
    pred = f"In the next image, the {icon} will move {eighths} of a turn further {turn}, to the {names[n]} of the circle."
    return Entry("motion/trajectory", "spatial_movement", "trajectory movements", "position",
                 {"icon": icon, "centre": TRACK_CENTRE, "radius": TRACK_RADIUS, "icon_size": 40, "turn": turn,
                  "step": step, "start": s0},
                 240, 240, frames[:n], frames[n], pattern, pred, [icon])


def several(rng: np.random.Generator, icons: IconSet, n: int) -> Entry:
    """Two icons on two rows move in opposite directions, one square each image."""
    a, b = pick_icons(rng, icons, 2)
    rows = sorted(int(r) for r in rng.choice(BOARD.rows, size=2, replace=False))
    ca, cb = _start(rng, 1, n, BOARD.cols), _start(rng, -1, n, BOARD.cols)
    states = [((ca + k, rows[0]), (cb - k, rows[1])) for k in range(n + 1)]
    frames = [[BOARD.grid(), Sprite(a, *BOARD.centre(*pa), ICON), Sprite(b, *BOARD.centre(*pb), ICON)]
              for pa, pb in states]
    pattern = (opening(n, f"{with_article(a)} and {with_article(b)} on an 8 by 8 board") + f" In the order of the images, "
               f"the {a} moves one square to the right and the {b} one square to the left each time: the {a} is at "
               f"{series([where(*s[0]) for s in states[:n]], '; ')}; the {b} at "
               f"{series([where(*s[1]) for s in states[:n]], '; ')}.")
    pred = (f"In the next image, the {a} will move one more square right, to {where(*states[n][0])}, and the {b} "
            f"one more square left, to {where(*states[n][1])}.")
    return Entry("motion/several", "spatial_movement", "trajectory movements", "position",
                 {"icons": [a, b], "board": BOARD.as_params(), "icon_size": ICON, "rows": rows, "start": [ca, cb]},
                 320, 320, frames[:n], frames[n], pattern, pred, [a, b])
