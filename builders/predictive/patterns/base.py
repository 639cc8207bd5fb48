"""What every pattern scenario returns, and the wording helpers their texts share.

A scenario is a function ``(rng, icons, n_images) -> Entry``. It draws its random factors once into ``params``
(JSON values only), computes the state of image ``k`` for ``k = 0..n`` from those parameters alone (``n`` is the
held-out next image), and renders both the frames and the texts from those same states: the ``pattern`` text
describes every shown image and the rule, the ``pred`` text the state of image ``n``. Text and pixels therefore
cannot disagree, and a checker that knows the rule can re-derive everything from ``params``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from builders.predictive.canvas import Primitive
from builders.predictive.icons import IconSet

DIMENSIONS = ("spatial_movement", "rotation", "quantity", "properties")

PALETTE: dict[str, tuple[int, int, int]] = {
    "red": (215, 35, 35), "blue": (35, 75, 215), "green": (30, 150, 55), "yellow": (235, 195, 20),
    "purple": (135, 55, 180), "orange": (240, 125, 20), "pink": (235, 95, 170), "brown": (125, 75, 35),
    "black": (25, 25, 25), "cyan": (20, 175, 195),
}
"""Named colours of the property patterns: far apart, none white, grid grey or shadow grey."""

NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                "twelve")
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth")


@dataclass
class Entry:
    """One generated sequence: its frames (``n_images`` lists of primitives), the held-out next state and texts."""

    scenario: str
    dimension: str
    named: str
    """The paper's name for the kind of scenario (App. D.1) it belongs to."""
    rule: str
    """The one attribute that changes from image to image (``position``, ``angle``, ``count``, ...)."""
    params: dict[str, Any]
    width: int
    height: int
    frames: list[list[Primitive]]
    next_frame: list[Primitive]
    pattern: str
    pred: str
    icons: list[str] = field(default_factory=list)

    @property
    def n_images(self) -> int:
        return len(self.frames)


Scenario = Callable[[np.random.Generator, IconSet, int], Entry]


class Redraw(Exception):
    """The random factors drawn cannot make a valid sequence (e.g. the icon looks the same turned); draw again."""


def pick(rng: np.random.Generator, options: Sequence[Any]) -> Any:
    return options[int(rng.integers(len(options)))]


def pick_icons(rng: np.random.Generator, icons: IconSet, k: int = 1) -> list[str]:
    idx = rng.choice(len(icons.categories), size=k, replace=False)
    return [icons.categories[int(i)] for i in idx]


def number_word(n: int) -> str:
    return NUMBER_WORDS[n] if 0 <= n < len(NUMBER_WORDS) else str(n)


def series(values: Sequence[str], sep: str = ", ") -> str:
    """``"a, b and c"`` (``sep="; "`` for items that hold commas themselves: ``"row 1, column 2; row 1, ..."``)."""
    values = list(values)
    if len(values) == 1:
        return values[0]
    return sep.join(values[:-1]) + (";" if sep == "; " else "") + " and " + values[-1]


def squares(n: int) -> str:
    return f"{number_word(n)} square{'s' if n != 1 else ''}"


def degrees(d: float) -> str:
    return f"{int(round(d)) % 360} degrees"


def opening(n: int, what: str) -> str:
    """``"Each of these four images shows ..."`` - the paper's ``pattern`` annotations open this way (Fig. 6)."""
    return f"Each of these {number_word(n)} images shows {what}."


@dataclass(frozen=True)
class Board:
    """A ``cols`` x ``rows`` board of ``cell``-pixel squares whose top-left corner is ``(x0, y0)``; rows and
    columns are numbered from 1 (top, left) in the texts and from 0 in ``params``."""

    cols: int
    rows: int
    cell: int
    x0: int = 0
    y0: int = 0

    def centre(self, col: int, row: int) -> tuple[float, float]:
        return self.x0 + col * self.cell + self.cell / 2, self.y0 + row * self.cell + self.cell / 2

    def grid(self) -> Primitive:
        from builders.predictive.canvas import Grid

        return Grid(self.x0, self.y0, self.cols, self.rows, self.cell)

    def as_params(self) -> dict[str, int]:
        return {"cols": self.cols, "rows": self.rows, "cell": self.cell, "x0": self.x0, "y0": self.y0}


def where(col: int, row: int) -> str:
    return f"row {row + 1}, column {col + 1}"
