"""What the frames of a demo video show: the events whose effect a person can see in a given set of frames.

A Mementos description or a predictive reference may name an event only when the frames it is judged against
show it happening; an event that starts and ends between two sampled frames, a jump caught only at its foot, or a
turn whose direction the shape's symmetry hides is not there for a viewer. This is decided from the generator's
ground truth - every shape's own mask, rasterised at the frames given (shapes never overlap, so this is exactly
the shape's pixels in the decoded frame) - with these pixel tests (``before``: the last frame given at or before
the event starts where the shape is drawn; ``after``: the first one at or after it ends):

* ``appears`` at ``k``: a frame given before ``k`` without the shape and one from ``k`` on with it;
  ``disappears``: the reverse;
* ``moves``: from ``before`` to ``after``, or between two consecutive frames given in that span, the mask's centroid
  goes at least :data:`MIN_SHIFT` pixels the stated way, more than across it (a move undone by the next one before
  ``after`` was still seen);
* ``jumps``: a frame given strictly inside the jump shows the centroid at least :data:`MIN_RISE` pixels above
  where it is at ``before`` and at ``after``;
* ``grows`` / ``shrinks``: the mask's area at ``after`` is at least :data:`MIN_GROWTH` times (at most its inverse
  times) the area at ``before``, or so between two consecutive frames given in that span;
* ``rotates``: the masks at ``before`` and ``after``, centred on each other, differ in at least
  :data:`MIN_TURN_CHANGE` of the shape's pixels, and between any two consecutive frames given the shape turns at
  most a third of its symmetry step the stated way (the other way round would be at least twice as far, so the
  direction is the one a viewer reads);
* ``collides with``: the mover's run up to the touch and what follows it (the other shape pushed on, or the mover
  bouncing back) are both shown.

The opening sentence names the shapes drawn in the first frame given; keywords are the categories drawn in any
frame given and the behaviours of the shown events.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from . import render
from .video import BEHAVIOUR_LEMMAS, DIRECTIONS, SCALE, SYMMETRY_STEP, _Actor, _article_list, _sentence

MIN_SHIFT = 7.0 * SCALE
"""Pixels a move must carry a shape between the frames given (a fifth of a medium shape's width)."""
MIN_RISE = 9.0 * SCALE
"""Pixels above its ground a jumping shape must be seen (a 10-pixel rise does not read as a jump)."""
MIN_GROWTH = 1.3
MIN_TURN_CHANGE = 0.12
"""The thresholds sit a little above what the tests' independent pixel checker demands (12 and 16 pixels, x1.25,
10 %), so the two never disagree over a borderline event."""
MAX_TURN_SHARE = 1 / 3
"""Largest turn between two consecutive frames given, as a share of the symmetry step, whose direction shows."""


@dataclass(frozen=True)
class Look:
    """One shape at one frame: its mask's centroid and area."""

    cx: float
    cy: float
    area: int
    mask: np.ndarray
    rotation: float


def actors_of(meta: dict[str, Any]) -> dict[str, _Actor]:
    """The shapes of a demo video rebuilt from its ``meta`` (cast with starting geometry, and events)."""
    actors = {}
    for c in meta["cast"]:
        start = c["start"]
        actors[c["name"]] = _Actor(name=c["name"], category=c["category"], colour=c["colour"], pattern=c["pattern"],
                                   cx=start["cx"], cy=start["cy"], r=start["r"], rotation=start["rotation"])
    for e in meta["events"]:
        actor = actors[e["object"]]
        if e["action"] == "appears":
            actor.appear = e["frame"]
        elif e["action"] == "disappears":
            actor.disappear = e["frame"]
        elif "start" in e:
            actor.segments.append({k: v for k, v in e.items() if k != "object"})
    return actors


def look(actor: _Actor, t: int) -> Look | None:
    """The shape at frame ``t`` (``None`` when it is not drawn)."""
    if not actor.visible(t):
        return None
    layer = render.rasterise(actor.spec(t, 0))
    ys, xs = np.nonzero(layer.mask)
    return Look(layer.x0 + float(xs.mean()), layer.y0 + float(ys.mean()), int(layer.mask.sum()), layer.mask,
                actor.state(t)[3])


class Shown:
    """Which events of one video the frames ``indices`` show."""

    def __init__(self, meta: dict[str, Any], indices: Sequence[int], memo: dict[str, Any] | None = None) -> None:
        """``memo``: a dict shared by the :class:`Shown` of one video (the shapes are rebuilt and rasterised once)."""
        memo = {} if memo is None else memo
        self.meta = meta
        self.indices = sorted(int(i) for i in indices)
        if "actors" not in memo:
            memo["actors"], memo["looks"] = actors_of(meta), {}
        self.actors: dict[str, _Actor] = memo["actors"]
        self._looks: dict[tuple[str, int], Look | None] = memo["looks"]

    def at(self, name: str, t: int) -> Look | None:
        key = (name, t)
        if key not in self._looks:
            self._looks[key] = look(self.actors[name], t)
        return self._looks[key]

    def _before(self, name: str, t: int) -> int | None:
        drawn = [i for i in self.indices if i <= t and self.at(name, i) is not None]
        return drawn[-1] if drawn else None

    def _after(self, name: str, t: int) -> int | None:
        return next((i for i in self.indices if i >= t and self.at(name, i) is not None), None)

    def event(self, e: dict[str, Any]) -> bool:
        """True when the frames given show event ``e``."""
        name, action = e["object"], e["action"]
        if action == "appears":
            k = e["frame"]
            return any(i < k for i in self.indices) and any(
                i >= k and self.at(name, i) is not None for i in self.indices)
        if action == "disappears":
            k = e["frame"]
            return any(i < k and self.at(name, i) is not None for i in self.indices) and any(
                i >= k for i in self.indices)
        if action == "collides with":
            t = e["frame"]
            run = [s for s in self.actors[name].segments if s["action"] == "moves" and s["end"] == t]
            then = [(n, s) for n in (e["target"], name) for s in self.actors[n].segments
                    if s["action"] == "moves" and s["start"] == t]
            return bool(run and then) and self.event({"object": name, **run[0]}) and \
                self.event({"object": then[0][0], **then[0][1]})
        before, after = self._before(name, e["start"]), self._after(name, e["end"])
        if before is None or after is None:
            return False
        a, b = self.at(name, before), self.at(name, after)
        assert a is not None and b is not None
        pairs = self._pairs(name, before, after)
        if action == "moves":
            dx, dy = DIRECTIONS[e["direction"]]

            def moved(p: Look, q: Look) -> bool:
                along = (q.cx - p.cx) * dx + (q.cy - p.cy) * dy
                return along >= MIN_SHIFT and along > abs((q.cx - p.cx) * dy) + abs((q.cy - p.cy) * dx)

            return any(moved(p, q) for p, q in pairs)
        if action == "jumps":
            inside = [self.at(name, i) for i in self.indices if e["start"] < i < e["end"]]
            ground = min(a.cy, b.cy)
            return any(x is not None and ground - x.cy >= MIN_RISE for x in inside)
        if action == "grows":
            return any(q.area >= MIN_GROWTH * p.area for p, q in pairs)
        if action == "shrinks":
            return any(q.area * MIN_GROWTH <= p.area for p, q in pairs)
        if action == "rotates":
            return self._turn_shown(name, e, before, after, a, b)
        return False

    def _pairs(self, name: str, before: int, after: int) -> list[tuple[Look, Look]]:
        """The shape's looks at ``before`` and ``after``, and at each two consecutive frames given between them
        where it is drawn: a change is visible between the endpoints or between any two consecutive frames (a move
        undone by the next one before ``after`` was still seen)."""
        drawn = [i for i in self.indices if before <= i <= after and self.at(name, i) is not None]
        looks = [self.at(name, i) for i in drawn]
        ends = (self.at(name, before), self.at(name, after))
        return [ends] + list(zip(looks, looks[1:]))  # type: ignore[list-item]

    def _turn_shown(self, name: str, e: dict[str, Any], before: int, after: int, a: Look, b: Look) -> bool:
        step = SYMMETRY_STEP.get(self.actors[name].category, 360.0)
        sign = 1 if e["direction"] == "clockwise" else -1
        frames = [before] + [i for i in self.indices if before < i < after] + [after]
        looks = [self.at(name, i) for i in frames]
        if any(x is None for x in looks):
            return False
        turns = [sign * (y.rotation - x.rotation) for x, y in zip(looks, looks[1:])]  # type: ignore[union-attr]
        if any(t < 0 or t > MAX_TURN_SHARE * step for t in turns) or sum(turns) <= 0:
            return False
        return _centred_difference(a.mask, b.mask) >= MIN_TURN_CHANGE * a.area

    def events(self) -> list[dict[str, Any]]:
        """The shown events in time order (shapes drawn in the first frame given are no event)."""
        first = self.indices[0]
        return [e for e in self.meta["events"]
                if not (e["action"] == "appears" and e["frame"] <= first) and self.event(e)]

    def present(self) -> list[str]:
        """The shapes drawn in the first frame given, in cast order."""
        return [c["name"] for c in self.meta["cast"] if self.at(c["name"], self.indices[0]) is not None]

    def description(self) -> list[str]:
        """Sentences a viewer of the frames could write: who is there at first, then every shown event."""
        cast = {c["name"]: c for c in self.meta["cast"]}
        present = [cast[n] for n in self.present()]
        looks = [f"{c['colour']} {c['pattern'] + ' ' if c['pattern'] != 'solid' else ''}{c['category']}"
                 for c in present]
        opening = (f"At the start, there {'is' if len(looks) == 1 else 'are'} {_article_list(looks)}." if looks
                   else "At the start, the picture is empty.")
        return [opening] + [_sentence(e) for e in self.events()]

    def keywords(self) -> dict[str, list[str]]:
        """Object keywords (categories drawn in any frame given) and behaviour keywords (of the shown events)."""
        cast = self.meta["cast"]
        objects = list(dict.fromkeys(c["category"] for c in cast
                                     if any(self.at(c["name"], i) is not None for i in self.indices)))
        behaviours = list(dict.fromkeys(BEHAVIOUR_LEMMAS[e["action"]] for e in self.events()))
        return {"objects": objects, "behaviours": behaviours}


def _centred_difference(a: np.ndarray, b: np.ndarray) -> int:
    """Pixels in which two masks differ once their centroids are put on each other."""
    h, w = max(a.shape[0], b.shape[0]) + 4, max(a.shape[1], b.shape[1]) + 4
    out = []
    for m in (a, b):
        ys, xs = np.nonzero(m)
        canvas = np.zeros((2 * h, 2 * w), dtype=bool)
        canvas[ys - int(round(ys.mean())) + h, xs - int(round(xs.mean())) + w] = True
        out.append(canvas)
    return int(np.count_nonzero(out[0] ^ out[1]))


def static_pairs(frames: Sequence[np.ndarray]) -> int:
    """How many consecutive frames are pixel for pixel the same (nothing moved between them)."""
    return sum(1 for x, y in zip(frames, frames[1:]) if np.array_equal(x, y))


def mostly_static(paths: Sequence[str | Path]) -> str | None:
    """Why the frame files ``paths`` show nearly nothing happening ("5 of 7 consecutive frames are the same"), or
    ``None`` when fewer than half of their consecutive pairs are equal, pixel for pixel."""
    from PIL import Image

    frames = []
    for path in paths:
        with Image.open(path) as im:
            frames.append(np.asarray(im.convert("RGB")))
    same = static_pairs(frames)
    if 2 * same > len(frames) - 1:
        return f"{same} of {len(frames) - 1} consecutive frames are the same"
    return None
