"""An independent checker: does every event a demo reference names show in the frames it is judged against?

It imports no builder code. It reads a demo video's raw event script (``meta``: cast and events) and looks at
frames as pixels: a shape is found by its exact colour (the videos are lossless, the colours of one video are
distinct, pattern ink never reaches a shape's rim). Each sentence of a reference is matched to its event in the
script by the words the script's sentences use ("The red circle moves to the left.", "A red circle appears.",
"The red circle collides with the blue square."); the event must then show (``before``: the last frame given at or
before the event starts where the shape is seen; ``after``: the first one at or after it ends):

* appears / disappears: a frame given without the shape, then one with it (or the reverse);
* moves: the shape's pixels move their centroid at least 12 pixels the stated way, more than across it, from
  ``before`` to ``after`` or between two consecutive frames given in that span;
* jumps: a frame given inside the jump shows the shape at least 16 pixels above both ``before`` and ``after``;
* grows / shrinks: the shape's pixel count changes by a factor of at least 1.25 the stated way (likewise);
* rotates: the shape's pixels, centred on each other, differ in at least a tenth, and between consecutive frames
  given the script's angle changes by at most a third of the shape's symmetry step the stated way;
* collides with: the mover is seen approaching (its centroid comes nearer the other shape's, by the last frame
  before the touch or, with one frame before it, the first after) and afterwards the
  other shape is seen pushed on or the mover seen back off, by at least 12 pixels (from the last frame before the
  touch to the last frame, or between two consecutive frames after it).

``frame(t)`` gives the RGB pixels of frame ``t``: a build's sampled images for Mementos, decoded video frames for a
prediction (whose event comes after the context). :func:`missing` checks the other way: every change the frames
show is described.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence

import numpy as np
from scipy.ndimage import binary_fill_holes

COLOURS = {
    "red": (214, 39, 40), "orange": (247, 129, 15), "yellow": (240, 200, 20), "green": (44, 160, 44),
    "blue": (31, 90, 200), "purple": (128, 60, 170), "pink": (240, 110, 180), "brown": (125, 75, 35),
}
"""The demo world's shape colours (its specification, restated)."""
STEP = {"square": 90, "diamond": 180, "cross": 90, "star": 72, "pentagon": 72, "hexagon": 60, "octagon": 45,
        "triangle": 120}
"""Smallest turn mapping a shape onto itself (360 for the others)."""
SHIFT, RISE, GROWTH, TURN_CHANGE = 12.0, 16.0, 1.25, 0.10
MISSING_SHIFT, MISSING_GROWTH = 22.0, 1.45
"""A change at least this large must be described: above what a description needs to state it (the builder's
14-pixel move, 18-pixel jump and x1.3 size), so that nothing on the border is both required and left out."""
AXIS = {"left": (-1, 0), "right": (1, 0), "up": (0, -1), "down": (0, 1)}

Frame = Callable[[int], np.ndarray]


def sentences(text: str) -> list[str]:
    return [s.strip().rstrip(".") + "." for s in re.split(r"(?<=\.)\s+", text.strip()) if s.strip().rstrip(".")]


def event_of(sentence: str, meta: dict[str, Any]) -> dict[str, Any] | None:
    """The first script event a sentence states (``None``: it states none)."""
    found = events_of(sentence, meta)
    return found[0] if found else None


def events_of(sentence: str, meta: dict[str, Any]) -> list[dict[str, Any]]:
    """Every script event a sentence states (a shape may do the same twice)."""
    out = []
    for e in meta["events"]:
        name, action = e["object"], e["action"]
        if action == "appears":
            said = f"{'An' if name[0] in 'aeiou' else 'A'} {name} appears."
        elif action == "moves":
            way = f"to the {e['direction']}" if e["direction"] in ("left", "right") else e["direction"]
            said = f"The {name} moves {way}."
        elif action == "rotates":
            said = f"The {name} rotates {e['direction']}."
        elif action == "collides with":
            said = f"The {name} collides with the {e['target']}."
        else:
            said = f"The {name} {action}."
        if said == sentence:
            out.append(e)
    return out


class ShownChecker:
    def __init__(self, meta: dict[str, Any], indices: Sequence[int], frame: Frame) -> None:
        self.meta, self.indices, self.frame = meta, sorted(indices), frame
        self.colour = {c["name"]: c["colour"] for c in meta["cast"]}
        self.category = {c["name"]: c["category"] for c in meta["cast"]}

    def mask(self, name: str, t: int) -> np.ndarray:
        return (self.frame(t) == np.array(COLOURS[self.colour[name]], dtype=np.uint8)).all(axis=2)

    def seen(self, name: str, t: int) -> bool:
        return int(self.mask(name, t).sum()) > 0

    def centroid(self, name: str, t: int) -> tuple[float, float]:
        ys, xs = np.nonzero(self.mask(name, t))
        return float(xs.mean()), float(ys.mean())

    def angle(self, name: str, t: int) -> float:
        """The script's angle of the shape at frame ``t`` (start rotation and the turns before ``t``)."""
        start = next(c for c in self.meta["cast"] if c["name"] == name)["start"]["rotation"]
        for e in self.meta["events"]:
            if e["object"] == name and e["action"] == "rotates" and t > e["start"]:
                u = min(1.0, (t - e["start"]) / (e["end"] - e["start"]))
                start += (1 if e["direction"] == "clockwise" else -1) * e["degrees"] * u
        return start

    def shows(self, e: dict[str, Any]) -> bool:
        name, action = e["object"], e["action"]
        if action in ("appears", "disappears"):
            k = e["frame"]
            early = [self.seen(name, i) for i in self.indices if i < k]
            late = [self.seen(name, i) for i in self.indices if i >= k]
            want = (False, True) if action == "appears" else (True, False)
            return want[0] in early and want[1] in late
        if action == "collides with":
            return self._collision(e)
        before = [i for i in self.indices if i <= e["start"] and self.seen(name, i)]
        after = [i for i in self.indices if i >= e["end"] and self.seen(name, i)]
        if not before or not after:
            return False
        b, a = before[-1], after[0]
        (x0, y0), (x1, y1) = self.centroid(name, b), self.centroid(name, a)
        seen = [i for i in self.indices if b <= i <= a and self.seen(name, i)]
        pairs = [(b, a)] + list(zip(seen, seen[1:]))
        if action == "moves":
            dx, dy = AXIS[e["direction"]]

            def moved(p: int, q: int) -> bool:
                (px, py), (qx, qy) = self.centroid(name, p), self.centroid(name, q)
                along, across = (qx - px) * dx + (qy - py) * dy, abs((qx - px) * dy) + abs((qy - py) * dx)
                return along >= SHIFT and along > across

            return any(moved(p, q) for p, q in pairs)
        if action == "jumps":
            inside = [i for i in self.indices if e["start"] < i < e["end"] and self.seen(name, i)]
            return any(min(y0, y1) - self.centroid(name, i)[1] >= RISE for i in inside)
        n0 = int(self.mask(name, b).sum())
        count = lambda t: int(self.mask(name, t).sum())  # noqa: E731
        if action == "grows":
            return any(count(q) >= GROWTH * count(p) for p, q in pairs)
        if action == "shrinks":
            return any(count(q) * GROWTH <= count(p) for p, q in pairs)
        if action == "rotates":
            sign = 1 if e["direction"] == "clockwise" else -1
            frames = [b] + [i for i in self.indices if b < i < a] + [a]
            turns = [sign * (self.angle(name, y) - self.angle(name, x)) for x, y in zip(frames, frames[1:])]
            limit = STEP.get(self.category[name], 360) / 3
            if any(t < 0 or t > limit + 1e-6 for t in turns) or sum(turns) <= 0:
                return False
            return _centred_xor(self.mask(name, b), self.mask(name, a)) >= TURN_CHANGE * n0
        return False

    def _collision(self, e: dict[str, Any]) -> bool:
        mover, other, t = e["object"], e["target"], e["frame"]
        early = [i for i in self.indices if i <= t and self.seen(mover, i)]
        late = [i for i in self.indices if i > t and self.seen(mover, i) and self.seen(other, i)]
        if not early or not late:
            return False
        near = early[-1] if len(early) >= 2 else late[0]  # one frame before the touch: the approach seen after it
        gap = lambda t: float(np.hypot(*np.subtract(self.centroid(mover, t), self.centroid(other, t))))  # noqa: E731
        approach = gap(near) + SHIFT <= gap(early[0])
        both = [i for i in self.indices if i >= early[-1] and self.seen(mover, i) and self.seen(other, i)]
        for p, q in [(early[-1], late[-1])] + [(p, q) for p, q in zip(both, both[1:]) if q > t]:
            (mx, my), (ox, oy) = self.centroid(mover, p), self.centroid(other, p)
            (qx, qy), (px, py) = self.centroid(mover, q), self.centroid(other, q)
            pushed = np.hypot(px - ox, py - oy) >= SHIFT
            bounced = np.hypot(qx - ox, qy - oy) >= np.hypot(mx - ox, my - oy) + SHIFT
            if approach and (pushed or bounced):
                return True
        return False

    def problems(self, reference: str, opening: bool = True) -> list[str]:
        """Sentences of ``reference`` that state no script event or an event these frames do not show (the
        first sentence, when ``opening``, must name exactly the shapes seen in the first frame given)."""
        out = []
        said = sentences(reference)
        if opening and said:
            first = said.pop(0)
            seen = [c for c in self.meta["cast"] if self.seen(c["name"], self.indices[0])]
            for c in self.meta["cast"]:
                if (c in seen) != (f" {c['colour']} " in f" {first} " and c["category"] in first):
                    out.append(f"opening {first!r}: the {c['name']} is {'' if c in seen else 'not '}in the first frame")
        for s in said:
            found = events_of(s, self.meta)
            if not found:
                out.append(f"{s!r} states no event of the script")
            elif not any(self.shows(e) for e in found):
                out.append(f"{s!r} does not show in frames {self.indices}")
        return out


def missing(check: ShownChecker, reference: str) -> list[str]:
    """Changes the frames show that no sentence of ``reference`` accounts for (the other way round from
    :meth:`ShownChecker.problems`). Between each two consecutive frames given, a shape that appears or disappears,
    whose silhouette's centroid moves :data:`MISSING_SHIFT` pixels or more, or whose silhouette grows or shrinks by
    :data:`MISSING_GROWTH` or more, must be the subject of a stated event overlapping that interval that explains
    it (a move that way, a jump for up and down, a turn or a size change for a centroid shifted by them; an
    appearance or disappearance in it; a size change that way). Turns themselves are not looked for (an angle is
    not measured from pixels here)."""
    stated = [e for s in sentences(reference) for e in events_of(s, check.meta)]
    out = []
    for i, j in zip(check.indices, check.indices[1:]):
        for c in check.meta["cast"]:
            name = c["name"]
            mine = [e for e in stated if e["object"] == name  # a span [start, end] or a frame k in (i, j]
                    and e.get("start", e.get("frame", 0) - 1) < j and e.get("end", e.get("frame")) > i]
            kinds = {e["action"] for e in mine}
            seen_i, seen_j = check.seen(name, i), check.seen(name, j)
            if seen_i != seen_j:
                want = "disappears" if seen_i else "appears"
                if want not in kinds:
                    out.append(f"the {name} {want} between frames {i} and {j}: no sentence says so")
                continue
            if not seen_i:
                continue
            a, b = binary_fill_holes(check.mask(name, i)), binary_fill_holes(check.mask(name, j))
            ratio = b.sum() / a.sum()
            if ratio >= MISSING_GROWTH and "grows" not in kinds or ratio * MISSING_GROWTH <= 1 and "shrinks" not in kinds:
                out.append(f"the {name} {'grows' if ratio > 1 else 'shrinks'} between frames {i} and {j}: "
                           f"no sentence says so")
            (ax, ay), (bx, by) = [np.argwhere(m).mean(axis=0)[::-1] for m in (a, b)]
            dx, dy = bx - ax, by - ay
            if max(abs(dx), abs(dy)) < MISSING_SHIFT:
                continue
            way = ("right" if dx > 0 else "left") if abs(dx) >= abs(dy) else ("down" if dy > 0 else "up")
            explained = any(e["action"] == "moves" and e["direction"] == way for e in mine) or \
                (way in ("up", "down") and "jumps" in kinds) or bool(kinds & {"rotates", "grows", "shrinks"})
            if not explained:
                out.append(f"the {name} moves {way} {max(abs(dx), abs(dy)):.0f} pixels between frames {i} and {j}: "
                           f"no sentence says so")
    return out


def _centred_xor(a: np.ndarray, b: np.ndarray) -> int:
    pts = []
    for m in (a, b):
        ys, xs = np.nonzero(m)
        pts.append({(int(y - round(ys.mean())), int(x - round(xs.mean()))) for y, x in zip(ys, xs)})
    return len(pts[0] ^ pts[1])
