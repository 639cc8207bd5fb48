"""Rotation: eleven variants of turning, from a steady clockwise turn to a shadow circling its object.

Angles are degrees clockwise from the icon's upright (as drawn in its file), reduced modulo 360 in the texts.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from builders.predictive.canvas import SHADOW, Cell, Sprite, draw
from builders.predictive.icons import VISIBLE_CHANGE, IconSet, changed_core, mirroring_is_visible, rotation_is_visible
from builders.predictive.patterns.base import (
    Entry,
    Redraw,
    degrees,
    number_word,
    opening,
    pick,
    pick_icons,
    series,
)
from builders.predictive.patterns.motion import STATIONS, station_xy
from templates.loader import with_article

CENTRE = 120
STEPS = (30, 45, 60, 90, 120)


def _turnable(rng: np.random.Generator, icons: IconSet, step: int, k: int = 1) -> list[str]:
    chosen = pick_icons(rng, icons, k)
    if not all(rotation_is_visible(icons.image(c), step) for c in chosen):
        raise Redraw("the icon looks the same turned")
    return chosen


def _frames_differ(icons: IconSet, a: list, b: list) -> bool:
    """The two frames as drawn differ in more than an outline seam (:func:`changed_core`)."""
    pa, pb = (np.asarray(draw(240, 240, f, icons)) for f in (a, b))
    return changed_core(pa, pb) >= VISIBLE_CHANGE * max(1, int((pa != 255).any(axis=2).sum()))


def _angles_text(angles: list[float]) -> str:
    return series([str(int(a) % 360) for a in angles]) + " degrees clockwise from upright"


def _single(scenario: str, icon: str, a0: int, angles: list[float], rule_text: str, next_text: str,
            params: dict, n: int) -> Entry:
    frames = [[Sprite(icon, CENTRE, CENTRE, 120, angle=a)] for a in angles]
    pattern = (opening(n, f"{with_article(icon)} in the centre") + f" In the order of the images, the {icon} {rule_text}: "
               f"it is turned {_angles_text(angles[:n])}.")
    pred = f"In the next image, the {icon} will {next_text}, to {degrees(angles[n])} clockwise from upright."
    return Entry(f"rotation/{scenario}", "rotation", "object rotations", "angle",
                 {"icon": icon, "centre": CENTRE, "icon_size": 120, "start_angle": a0, **params},
                 240, 240, frames[:n], frames[n], pattern, pred, [icon])


def steady(turn: str) -> Callable[[np.random.Generator, IconSet, int], Entry]:
    def scenario(rng: np.random.Generator, icons: IconSet, n: int) -> Entry:
        step = int(pick(rng, STEPS))
        icon, = _turnable(rng, icons, step)
        a0 = int(pick(rng, range(0, 360, 15)))
        sign = 1 if turn == "clockwise" else -1
        angles = [a0 + sign * step * k for k in range(n + 1)]
        return _single(turn, icon, a0, angles, f"turns {step} degrees {turn} each time",
                       f"turn another {step} degrees {turn}", {"turn": turn, "step": step}, n)
    scenario.__doc__ = f"One icon turns {turn} by the same angle every image."
    return scenario


def half_turn(rng: np.random.Generator, icons: IconSet, n: int) -> Entry:
    """One icon turns upside down and back, half a turn every image."""
    icon, = _turnable(rng, icons, 180)
    a0 = int(pick(rng, range(0, 180, 15)))
    angles = [a0 + 180 * k for k in range(n + 1)]
    return _single("half_turn", icon, a0, angles, "turns half a turn (upside down) each time",
                   "turn half a turn again", {"step": 180}, n)


def accelerating(rng: np.random.Generator, icons: IconSet, n: int) -> Entry:
    """The turn grows by the same angle every image (step, 2 step, 3 step, ...)."""
    step = int(pick(rng, (15, 30, 45)))
    icon, = _turnable(rng, icons, step)
    a0 = int(pick(rng, range(0, 360, 15)))
    turn = pick(rng, ("clockwise", "counterclockwise"))
    sign = 1 if turn == "clockwise" else -1
    angles = [a0 + sign * step * k * (k + 1) // 2 for k in range(n + 1)]
    turns = series([str(step * (k + 1)) for k in range(n - 1)])
    return _single("accelerating", icon, a0, angles,
                   f"turns {turn} by {turns} degrees, each turn {step} degrees more than the one before",
                   f"turn {step * n} degrees {turn}", {"turn": turn, "step": step}, n)


def decelerating(rng: np.random.Generator, icons: IconSet, n: int) -> Entry:
    """The turn shrinks by the same angle every image, the next one being the smallest."""
    step = int(pick(rng, (15, 20, 30)))
    icon, = _turnable(rng, icons, step)
    a0 = int(pick(rng, range(0, 360, 15)))
    turn = pick(rng, ("clockwise", "counterclockwise"))
    sign = 1 if turn == "clockwise" else -1
    turns = [step * (n - j) for j in range(n)]
    angles = [a0 + sign * sum(turns[:k]) for k in range(n + 1)]
    return _single("decelerating", icon, a0, angles,
                   f"turns {turn} by {series([str(t) for t in turns[:n - 1]])} degrees, each turn {step} degrees "
                   "less than the one before", f"turn only {turns[n - 1]} degrees {turn}",
                   {"turn": turn, "step": step}, n)


def opposite_pair(rng: np.random.Generator, icons: IconSet, n: int) -> Entry:
    """Two icons side by side turn in opposite directions by the same angle."""
    step = int(pick(rng, STEPS))
    a, b = _turnable(rng, icons, step, 2)
    a0 = int(pick(rng, range(0, 360, 15)))
    states = [(a0 + step * k, a0 - step * k) for k in range(n + 1)]
    frames = [[Sprite(a, 65, CENTRE, 80, angle=x), Sprite(b, 175, CENTRE, 80, angle=y)] for x, y in states]
    pattern = (opening(n, f"{with_article(a)} on the left and {with_article(b)} on the right") + f" In the order of the "
               f"images, the {a} turns {step} degrees clockwise and the {b} {step} degrees counterclockwise each "
               f"time: the {a} is turned {_angles_text([s[0] for s in states[:n]])}, the {b} "
               f"{_angles_text([s[1] for s in states[:n]])}.")
    pred = (f"In the next image, the {a} will turn to {degrees(states[n][0])} and the {b} to "
            f"{degrees(states[n][1])} clockwise from upright.")
    return Entry("rotation/opposite_pair", "rotation", "object rotations", "angle",
                 {"icons": [a, b], "centres": [[65, CENTRE], [175, CENTRE]], "icon_size": 80, "start_angle": a0,
                  "step": step}, 240, 240, frames[:n], frames[n], pattern, pred, [a, b])


ROW_X = (44, 120, 196)


def row(rng: np.random.Generator, icons: IconSet, n: int) -> Entry:
    """Three copies of an icon in a row turn together."""
    step = int(pick(rng, STEPS))
    icon, = _turnable(rng, icons, step)
    a0 = int(pick(rng, range(0, 360, 15)))
    turn = pick(rng, ("clockwise", "counterclockwise"))
    sign = 1 if turn == "clockwise" else -1
    angles = [a0 + sign * step * k for k in range(n + 1)]
    frames = [[Sprite(icon, x, CENTRE, 52, angle=a) for x in ROW_X] for a in angles]
    pattern = (opening(n, f"a row of three identical {icon} icons") + f" In the order of the images, all three "
               f"turn {step} degrees {turn} together each time: they are turned {_angles_text(angles[:n])}.")
    pred = f"In the next image, all three {icon} icons will turn to {degrees(angles[n])} clockwise from upright."
    return Entry("rotation/row", "rotation", "object rotations", "angle",
                 {"icon": icon, "xs": list(ROW_X), "y": CENTRE, "icon_size": 52, "start_angle": a0, "turn": turn,
                  "step": step}, 240, 240, frames[:n], frames[n], pattern, pred, [icon])


SHADOW_RADIUS, SHADOW_SIZE = 84, 56


def shadow(rng: np.random.Generator, icons: IconSet, n: int) -> Entry:
    """An icon stands still while its shadow circles around it, like the shadow of a sundial."""
    icon, = pick_icons(rng, icons)
    turn = pick(rng, ("clockwise", "counterclockwise"))
    step = int(pick(rng, (1, 2)))
    s0 = int(rng.integers(8))
    sign = 1 if turn == "clockwise" else -1
    stations = [(s0 + sign * step * k) % 8 for k in range(n + 1)]
    frames = [[Sprite(icon, *station_xy(s, SHADOW_RADIUS, CENTRE), SHADOW_SIZE, colour=SHADOW),
               Sprite(icon, CENTRE, CENTRE, SHADOW_SIZE)] for s in stations]
    part = {1: "one eighth", 2: "a quarter"}[step]
    names = [STATIONS[s] for s in stations]
    pattern = (opening(n, f"{with_article(icon)} in the centre with its grey shadow beside it") + f" In the order of the "
               f"images, the {icon} stays still and its shadow rotates {turn} around it by {part} of a turn each "
               f"time: the shadow is at the {series(names[:n])}.")
    pred = f"In the next image, the shadow will rotate {part} of a turn further {turn}, to the {names[n]} of the {icon}."
    return Entry("rotation/shadow", "rotation", "shadow rotations", "shadow_position",
                 {"icon": icon, "centre": CENTRE, "radius": SHADOW_RADIUS, "icon_size": SHADOW_SIZE,
                  "shadow_colour": list(SHADOW), "turn": turn, "step": step, "start": s0},
                 240, 240, frames[:n], frames[n], pattern, pred, [icon])


def revolution(rng: np.random.Generator, icons: IconSet, n: int) -> Entry:
    """A small icon revolves around a central one, always facing outwards (it turns as it goes round)."""
    sun, moon = pick_icons(rng, icons, 2)
    turn = pick(rng, ("clockwise", "counterclockwise"))
    s0 = int(rng.integers(8))
    sign = 1 if turn == "clockwise" else -1
    stations = [(s0 + sign * k) % 8 for k in range(n + 1)]
    frames = [[Sprite(sun, CENTRE, CENTRE, 56), Sprite(moon, *station_xy(s, 84, CENTRE), 44, angle=45 * s)]
              for s in stations]
    names = [STATIONS[s] for s in stations]
    pattern = (opening(n, f"{with_article(moon)} next to {with_article(sun)} in the centre") + f" In the order of the images, "
               f"the {moon} revolves {turn} around the {sun} by one eighth of a turn each time, turning with it so "
               f"that it always faces outwards: it is at the {series(names[:n])}.")
    pred = (f"In the next image, the {moon} will revolve one eighth of a turn further {turn}, to the {names[n]} of "
            f"the {sun}, turned {degrees(45 * stations[n])} clockwise from upright.")
    return Entry("rotation/revolution", "rotation", "object rotations", "orbit",
                 {"icons": [sun, moon], "centre": CENTRE, "radius": 84, "sizes": [56, 44], "turn": turn,
                  "start": s0}, 240, 240, frames[:n], frames[n], pattern, pred, [sun, moon])


DIAL_RADIUS, MARK = 108, 8


def dial_marks() -> list[Cell]:
    out = []
    for h in range(12):
        x = CENTRE + DIAL_RADIUS * math.sin(math.radians(30 * h))
        y = CENTRE - DIAL_RADIUS * math.cos(math.radians(30 * h))
        out.append(Cell(int(round(x)) - MARK // 2, int(round(y)) - MARK // 2, int(round(x)) + MARK // 2,
                        int(round(y)) + MARK // 2, (25, 25, 25)))
    return out


def clock_hand(rng: np.random.Generator, icons: IconSet, n: int) -> Entry:
    """The hand of a dial (a built-in arrow) advances the same number of hours every image."""
    step = int(pick(rng, (1, 2, 3, 4)))
    h0 = int(rng.integers(12))
    hours = [(h0 + step * k) % 12 for k in range(n + 1)]
    frames = [dial_marks() + [Sprite("arrow", CENTRE, CENTRE, 140, angle=30 * h)] for h in hours]
    said = [str(h or 12) for h in hours]
    pattern = (opening(n, "a dial with twelve marks and an arrow for a hand") + f" In the order of the images, the "
               f"hand turns clockwise by {number_word(step)} hour{'s' if step > 1 else ''} ({30 * step} degrees) "
               f"each time: it points at {series(said[:n])} o'clock.")
    pred = f"In the next image, the hand will point at {said[n]} o'clock."
    return Entry("rotation/clock_hand", "rotation", "object rotations", "angle",
                 {"icon": "arrow", "centre": CENTRE, "icon_size": 140, "dial_radius": DIAL_RADIUS, "mark": MARK,
                  "step_hours": step, "start_hour": h0}, 240, 240, frames[:n], frames[n], pattern, pred, ["arrow"])


def flip(rng: np.random.Generator, icons: IconSet, n: int) -> Entry:
    """One icon is mirrored left to right in every image (a half turn about its vertical axis)."""
    icon, = pick_icons(rng, icons)
    if not mirroring_is_visible(icons.image(icon)) or not _frames_differ(icons, [Sprite(icon, CENTRE, CENTRE, 120)],
                                                                         [Sprite(icon, CENTRE, CENTRE, 120,
                                                                                 mirrored=True)]):
        raise Redraw("the icon looks the same mirrored")
    m0 = bool(rng.integers(2))
    states = [(m0 + k) % 2 == 1 for k in range(n + 1)]
    frames = [[Sprite(icon, CENTRE, CENTRE, 120, mirrored=m)] for m in states]
    looks = ["mirrored" if m else "as drawn" for m in states]
    pattern = (opening(n, f"{with_article(icon)} in the centre") + f" In the order of the images, the {icon} flips over "
               f"left to right each time, so it alternates between its two mirror images: it is "
               f"{series(looks[:n])}.")
    pred = (f"In the next image, the {icon} will flip again and look as in the {'first' if n % 2 == 0 else 'second'} "
            f"image ({looks[n]}).")
    return Entry("rotation/flip", "rotation", "object rotations", "mirror",
                 {"icon": icon, "centre": CENTRE, "icon_size": 120, "start_mirrored": m0},
                 240, 240, frames[:n], frames[n], pattern, pred, [icon])
