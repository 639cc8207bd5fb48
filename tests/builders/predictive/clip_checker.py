"""An independent checker of demo activity and physics golds: it re-derives each from the context frames' pixels.

It imports no builder code and reads none of the video's script: only the item's images (the context frames, in
order), their frame numbers, and the names and colours of the shapes (``cast``). A shape is found by its exact
colour (the videos are lossless; the colours of one video are distinct; pattern ink never reaches a shape's rim),
measured by its silhouette's centroid, pixel count and extent, and then:

* **physics**: the mover is the shape that travels furthest. Its steps between frames, per frame, either hold
  steady (within :data:`STEADY`) - it keeps going - or fall clearly (the last under :data:`SLOWING` times the
  first) - it is slowing down, and with the deceleration fitted to its speeds it comes to rest before the shape
  ahead: it stops short. Keeping on, it collides with the shape ahead when its band across the run overlaps that
  shape's band (then the bigger one, by pixel count, pushes the smaller on; the smaller bounces back), and passes
  it otherwise (above, below, to the left of, to the right of it). Every other shape does not collide.
* **activity**: each shape's change between consecutive frames is one token: a move (centroid at least
  :data:`SHIFT` pixels one way, less than half that across), a size change (count by :data:`GROWTH`), or nothing.
  A shape whose tokens form a routine predicts its next one: the same move again, the move back after each
  alternation, the next turn of a square in the same turning sense, the size change opposite to the last of a
  pulse, and a steady shrink (equal steps of the square root of its count) that the next step takes to nothing:
  it disappears. The reference must be exactly the predicted sentences; a clip with no routine has no gold.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image
from scipy.ndimage import binary_fill_holes

from tests.builders.shown_checker import COLOURS

SHIFT, GROWTH = 12.0, 1.25
STEADY, SLOWING = 0.2, 0.75
CLOCKWISE = ["right", "down", "left", "up"]
AXES = {"left": (-1, 0), "right": (1, 0), "up": (0, -1), "down": (0, 1)}
BACK = {"left": "right", "right": "left", "up": "down", "down": "up"}


def way(direction: str) -> str:
    return f"to the {direction}" if direction in ("left", "right") else direction


class Shape:
    """One shape over the context frames: its masks, centroids, pixel counts."""

    def __init__(self, name: str, colour: str, frames: list[np.ndarray]) -> None:
        self.name = name
        # pattern ink inside a shape is not its colour: its silhouette is the coloured rim with the holes filled
        self.masks = [binary_fill_holes((f == np.array(COLOURS[colour], dtype=np.uint8)).all(axis=2))
                      for f in frames]
        self.counts = [int(m.sum()) for m in self.masks]
        self.always = all(self.counts)

    def centroid(self, k: int) -> np.ndarray:
        ys, xs = np.nonzero(self.masks[k])
        return np.array([xs.mean(), ys.mean()])

    def extent(self, k: int, axis: int) -> tuple[int, int]:
        """First and last pixel column (``axis`` 0) or row (1) of the shape in frame ``k``."""
        lines = np.flatnonzero(self.masks[k].any(axis=axis))
        return int(lines[0]), int(lines[-1])


def shapes_of(item: dict[str, Any], cast: list[dict[str, Any]], build: Path) -> list[Shape]:
    frames = [np.asarray(Image.open(build / rel).convert("RGB")) for rel in item["images"]]
    return [Shape(c["name"], c["colour"], frames) for c in cast]


# ------------------------------------------------------------------------------------------------- physics


def physics_reference(shapes: list[Shape], times: list[int]) -> str | None:
    """The outcome the frames predict, worded as the build words it (``None``: the frames show no run)."""
    seen = [s for s in shapes if s.always]
    if len(seen) < 2:
        return None
    last = len(times) - 1
    mover = max(seen, key=lambda s: float(np.hypot(*(s.centroid(last) - s.centroid(0)))))
    dx, dy = mover.centroid(last) - mover.centroid(0)
    direction = ("right" if dx > 0 else "left") if abs(dx) >= abs(dy) else ("down" if dy > 0 else "up")
    axis, sign = (0, AXES[direction][0]) if direction in ("left", "right") else (1, AXES[direction][1])
    along = [float(mover.centroid(k)[axis]) * sign for k in range(len(times))]
    speeds = [(b - a) / (tb - ta) for a, b, ta, tb in zip(along, along[1:], times, times[1:])]
    lead = mover.extent(last, axis)[1 if sign > 0 else 0]

    def ahead(s: Shape) -> bool:
        lo, hi = s.extent(last, axis)
        return (lo > lead) if sign > 0 else (hi < lead)

    def across(s: Shape) -> float:
        return abs(float(s.centroid(last)[1 - axis] - mover.centroid(last)[1 - axis]))

    candidates = [s for s in seen if s is not mover and ahead(s)]
    if not candidates or min(speeds) <= 0:
        return None
    target = min(candidates, key=across)
    lo_t, hi_t = target.extent(last, axis)
    gap = (lo_t - lead - 1) if sign > 0 else (lead - hi_t - 1)
    mean = float(np.mean(speeds))
    if speeds[-1] < SLOWING * speeds[0]:
        mids = [(ta + tb) / 2 for ta, tb in zip(times, times[1:])]
        slope, intercept = np.polyfit(mids, speeds, 1)
        if slope >= 0:
            return None
        v_end = max(0.0, slope * times[-1] + intercept)
        if v_end ** 2 / (-2 * slope) >= gap:
            return None  # slowing, but not enough to stop in time: no outcome this checker can state
        text = (f"The {mover.name} slows down moving {way(direction)} and stops before it reaches the "
                f"{target.name}: they do not collide.")
    elif all(abs(v - mean) <= STEADY * mean for v in speeds):
        m_lo, m_hi = mover.extent(last, 1 - axis)
        t_lo, t_hi = target.extent(last, 1 - axis)
        if m_hi < t_lo or t_hi < m_lo:
            side = (("above", "below") if axis == 0 else ("to the left of", "to the right of"))[int(m_lo > t_hi)]
            text = f"The {mover.name} passes {side} the {target.name} without touching it: they do not collide."
        elif mover.counts[last] > target.counts[last]:
            text = f"The {mover.name} collides with the {target.name}. The {target.name} is pushed {way(direction)}."
        else:
            text = f"The {mover.name} collides with the {target.name} and bounces back {way(BACK[direction])}."
    else:
        return None
    others = [s.name for s in shapes if s not in (mover, target)]
    if others:
        text += f" The {' and the '.join(others)} {'does' if len(others) == 1 else 'do'} not collide with anything."
    return text


# ------------------------------------------------------------------------------------------------ activity


def tokens(shape: Shape) -> list[str]:
    """The shape's change between each pair of consecutive frames: ``move:<way>``, ``grows``, ``shrinks``,
    ``still`` or ``unclear``."""
    out = []
    for k in range(len(shape.masks) - 1):
        dx, dy = shape.centroid(k + 1) - shape.centroid(k)
        ratio = shape.counts[k + 1] / shape.counts[k]
        if ratio >= GROWTH:
            out.append("grows")
        elif ratio * GROWTH <= 1:
            out.append("shrinks")
        elif max(abs(dx), abs(dy)) >= SHIFT and min(abs(dx), abs(dy)) < max(abs(dx), abs(dy)) / 2:
            out.append("move:" + (("right" if dx > 0 else "left") if abs(dx) > abs(dy) else ("down" if dy > 0 else "up")))
        elif max(abs(dx), abs(dy)) < 3 and abs(ratio - 1) < 0.05:
            out.append("still")
        else:
            out.append("unclear")
    return out


def next_of(shape: Shape) -> str | None:
    """The sentence the shape's routine predicts (``None``: it keeps no routine)."""
    seq = tokens(shape)
    if len(seq) < 2 or "unclear" in seq or "still" in seq:
        return None
    if all(t.startswith("move:") for t in seq):
        dirs = [t[5:] for t in seq]
        if len(set(dirs)) == 1:
            nxt = dirs[-1]
        elif all(b == BACK[a] for a, b in zip(dirs, dirs[1:])):
            nxt = BACK[dirs[-1]]
        else:
            turns = {(CLOCKWISE.index(b) - CLOCKWISE.index(a)) % 4 for a, b in zip(dirs, dirs[1:])}
            if len(turns) != 1 or turns.pop() not in (1, 3):
                return None
            nxt = CLOCKWISE[(2 * CLOCKWISE.index(dirs[-1]) - CLOCKWISE.index(dirs[-2])) % 4]
        return f"The {shape.name} moves {way(nxt)}."
    if all(t == "shrinks" for t in seq):
        roots = np.sqrt(shape.counts)
        steps = np.diff(roots)
        if np.ptp(steps) > 0.4 * abs(steps.mean()):  # small shapes rasterise coarsely
            return None
        return f"The {shape.name} {'disappears' if roots[-1] + steps.mean() <= 0.5 * abs(steps.mean()) else 'shrinks'}."
    if all(t == "grows" for t in seq):
        return f"The {shape.name} grows."
    if set(seq) == {"grows", "shrinks"} and all(a != b for a, b in zip(seq, seq[1:])):
        return f"The {shape.name} {'shrinks' if seq[-1] == 'grows' else 'grows'}."
    return None


def activity_reference(shapes: list[Shape]) -> str | None:
    """The next events the frames predict (``None``: no shape keeps a routine, or one moves without one)."""
    said = []
    for s in shapes:
        if not s.always:
            continue
        nxt = next_of(s)
        if nxt is None and set(tokens(s)) != {"still"}:
            return None  # a shape changes without a routine: nothing it does next follows from the frames
        if nxt is not None:
            said.append(nxt)
    return " ".join(said) or None


def check(build: str | Path, casts: dict[str, list[dict[str, Any]]]) -> tuple[list[str], dict[str, int]]:
    """Problems of the build's demo clip items (``casts``: video id -> its cast of names and colours) and how many
    of each task were checked."""
    build = Path(build)
    problems, counted = [], {"human_activity": 0, "physical_interaction": 0}
    for line in (build / "items.jsonl").read_text().splitlines():
        item = json.loads(line)
        if item["task"] not in counted or item["provenance"].get("source") != "demo":
            continue
        counted[item["task"]] += 1
        shapes = shapes_of(item, casts[item["provenance"]["video_id"]], build)
        if item["task"] == "physical_interaction":
            expected = physics_reference(shapes, item["provenance"]["frame_indices"])
        else:
            expected = activity_reference(shapes)
        if expected is None:
            problems.append(f"{item['id']}: the frames give no cue for {item['answer']!r}")
        elif item["answer"] != expected:
            problems.append(f"{item['id']}: reference {item['answer']!r}, the frames predict {expected!r}")
    return problems, counted


def form_shares(build: str | Path, casts: dict[str, list[dict[str, Any]]]) -> dict[str, tuple[str, float]]:
    """Per demo clip task, its commonest reference form (shape names masked to ``_``) and that form's share."""
    forms: dict[str, dict[str, int]] = {}
    for line in (Path(build) / "items.jsonl").read_text().splitlines():
        item = json.loads(line)
        if item["task"] not in ("human_activity", "physical_interaction") or \
                item["provenance"].get("source") != "demo":
            continue
        text = item["answer"]
        for c in sorted(casts[item["provenance"]["video_id"]], key=lambda c: -len(c["name"])):
            text = text.replace(c["name"], "_")
        task = forms.setdefault(item["task"], {})
        task[text] = task.get(text, 0) + 1
    return {t: max(((f, n / sum(c.values())) for f, n in c.items()), key=lambda x: x[1]) for t, c in forms.items()}
