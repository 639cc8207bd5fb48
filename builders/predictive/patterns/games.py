"""Scenes from games and devices: a digital clock, Snake and Tetris."""

from __future__ import annotations

import numpy as np

from builders.predictive.canvas import Cell
from builders.predictive.icons import IconSet
from builders.predictive.patterns.base import (
    PALETTE,
    Board,
    Entry,
    Redraw,
    number_word,
    opening,
    pick,
    series,
    squares,
    where,
)
from builders.predictive.patterns.properties import number_display
from templates.loader import with_article

CLOCK_STEPS = (1, 5, 10, 15, 20, 30, 45, 60, 90)


def clock_text(minutes: int) -> str:
    minutes %= 24 * 60
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _minutes(step: int) -> str:
    if step % 60 == 0:
        h = step // 60
        return f"{number_word(h)} hour{'s' if h > 1 else ''}"
    return f"{step} minute{'s' if step > 1 else ''}"


def digital_clock(rng: np.random.Generator, icons: IconSet, n: int) -> Entry:
    """A 24-hour digital clock advances the same number of minutes every image."""
    step = int(pick(rng, CLOCK_STEPS))
    t0 = int(rng.integers(0, 24 * 60))
    colour = str(pick(rng, ("red", "green", "blue", "black", "orange")))
    times = [clock_text(t0 + step * k) for k in range(n + 1)]
    frames = [number_display(t, PALETTE[colour], width=320, height=160) for t in times]
    pattern = (opening(n, f"{with_article(colour)} digital clock") + f" In the order of the images, the clock moves forward by "
               f"{_minutes(step)} each time: it shows {series(times[:n])}.")
    pred = f"In the next image, the clock will show {times[n]}."
    return Entry("games/digital_clock", "properties", "digital clocks", "value",
                 {"colour": colour, "rgb": list(PALETTE[colour]), "start_minutes": t0, "step_minutes": step,
                  "digit": [40, 72, 8, 12]}, 320, 160, frames[:n], frames[n], pattern, pred, [])


SNAKE_BOARD = Board(cols=8, rows=8, cell=30)
SNAKE_BODY, SNAKE_HEAD = (60, 170, 60), (20, 90, 20)
HEADINGS = {"right": (1, 0), "left": (-1, 0), "up": (0, -1), "down": (0, 1)}


def cell_box(board: Board, col: int, row: int, colour: tuple[int, int, int]) -> Cell:
    """A board square filled inside its grid lines (one pixel kept free on each side)."""
    x, y = board.x0 + col * board.cell, board.y0 + row * board.cell
    return Cell(x + 2, y + 2, x + board.cell - 1, y + board.cell - 1, colour)


def snake(rng: np.random.Generator, icons: IconSet, n: int) -> Entry:
    """Snake: the snake slides forward one square every image (same length), or grows from its head."""
    heading = pick(rng, list(HEADINGS))
    mode = pick(rng, ("slides", "grows"))
    length = int(pick(rng, (2, 3, 4)))
    dx, dy = HEADINGS[heading]
    reach = length - 1 + n  # squares from the tail to the head of the held-out image
    if reach >= SNAKE_BOARD.cols:
        raise Redraw("snake too long for the board")
    lo = 0 if (dx or dy) > 0 else reach
    hi = SNAKE_BOARD.cols - 1 - reach if (dx or dy) > 0 else SNAKE_BOARD.cols - 1
    along, across = int(rng.integers(lo, hi + 1)), int(rng.integers(SNAKE_BOARD.rows))
    tail = (along, across) if dx else (across, along)
    states = []
    for k in range(n + 1):
        size = length if mode == "slides" else length + k
        start = k if mode == "slides" else 0
        states.append([(tail[0] + dx * (start + j), tail[1] + dy * (start + j)) for j in range(size)])
    frames = [[SNAKE_BOARD.grid()] + [cell_box(SNAKE_BOARD, c, r, SNAKE_HEAD if i == len(s) - 1 else SNAKE_BODY)
                                      for i, (c, r) in enumerate(s)] for s in states]
    heads = [where(*s[-1]) for s in states]
    if mode == "slides":
        rule = f"the snake slides one square {heading} each time, staying {squares(length)} long"
        then = f"still {squares(length)} long"
    else:
        rule = f"the snake's head moves one square {heading} each time while its tail stays, so it grows by one square"
        then = f"{squares(length + n)} long"
    pattern = (opening(n, "a Snake game on an 8 by 8 board: a green snake with a dark green head") + f" In the order "
               f"of the images, {rule}: its head is at {series(heads[:n], '; ')}.")
    pred = f"In the next image, the snake's head will be at {heads[n]}, the snake {then}."
    return Entry("games/snake", "spatial_movement", "Snake", "cells",
                 {"board": SNAKE_BOARD.as_params(), "heading": heading, "mode": mode, "length": length,
                  "tail": list(tail), "body_rgb": list(SNAKE_BODY), "head_rgb": list(SNAKE_HEAD)},
                 240, 240, frames[:n], frames[n], pattern, pred, [])


TETRIS_BOARD = Board(cols=6, rows=10, cell=24, x0=48, y0=0)
TETROMINOES: dict[str, tuple[tuple[int, int], ...]] = {
    "I": ((0, 0), (1, 0), (2, 0), (3, 0)), "O": ((0, 0), (1, 0), (0, 1), (1, 1)),
    "T": ((0, 0), (1, 0), (2, 0), (1, 1)), "L": ((0, 0), (0, 1), (0, 2), (1, 2)),
    "J": ((1, 0), (1, 1), (1, 2), (0, 2)), "S": ((1, 0), (2, 0), (0, 1), (1, 1)),
    "Z": ((0, 0), (1, 0), (1, 1), (2, 1)),
}
"""Cells ``(col, row)`` of each piece from its top-left corner."""
FLOOR = (95, 95, 95)


def tetris(rng: np.random.Generator, icons: IconSet, n: int) -> Entry:
    """Tetris: a piece falls one row every image towards a partly filled bottom row."""
    piece = pick(rng, list(TETROMINOES))
    shape = TETROMINOES[piece]
    colour = str(pick(rng, ("red", "blue", "yellow", "purple", "orange", "cyan", "green")))
    w, h = max(c for c, _ in shape) + 1, max(r for _, r in shape) + 1
    col = int(rng.integers(0, TETRIS_BOARD.cols - w + 1))
    floor_row = TETRIS_BOARD.rows - 1
    top0 = int(rng.integers(0, floor_row - h - n + 1))
    gaps = sorted(int(g) for g in rng.choice(TETRIS_BOARD.cols, size=2, replace=False))
    floor = [cell_box(TETRIS_BOARD, c, floor_row, FLOOR) for c in range(TETRIS_BOARD.cols) if c not in gaps]
    tops = [top0 + k for k in range(n + 1)]
    frames = [[TETRIS_BOARD.grid(), *floor] + [cell_box(TETRIS_BOARD, col + c, t + r, PALETTE[colour])
                                                for c, r in shape] for t in tops]
    pattern = (opening(n, f"a Tetris board of 6 columns and 10 rows with {with_article(colour)} {piece}-shaped piece above a "
                          f"grey bottom row with gaps in columns {gaps[0] + 1} and {gaps[1] + 1}")
               + f" In the order of the images, the piece falls one row each time without turning, its leftmost "
               f"column staying {col + 1}: its top edge is in row {series([str(t + 1) for t in tops[:n]])}.")
    pred = (f"In the next image, the {colour} {piece} piece will fall one more row, its top edge in row {tops[n] + 1} "
            f"and its leftmost column {col + 1}.")
    return Entry("games/tetris", "spatial_movement", "Tetris", "cells",
                 {"board": TETRIS_BOARD.as_params(), "piece": piece, "cells": [list(c) for c in shape],
                  "colour": colour, "rgb": list(PALETTE[colour]), "column": col, "top": top0, "gaps": gaps,
                  "floor_rgb": list(FLOOR)}, 240, 240, frames[:n], frames[n], pattern, pred, [])
