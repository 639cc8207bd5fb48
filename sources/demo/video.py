"""Demo videos: short clips of the demo world's shapes moving, with the script of what happens as ground truth.

They stand in for NExT-QA and robot videos when a user gives no data (the Mementos builder runs on them by
default) and serve as the fixture of its tests. A video is 60..150 frames of 320x240 pixels at 15 fps (4-10 s: the
``robotics``, ``uniform:N`` for ``N <= 60`` and ``last_per_second`` policies all apply; ``daily_life`` asks for 400+
frames and deliberately does not). Shapes look exactly as in the stills - same categories, colours, patterns,
rasteriser and painter (:mod:`sources.demo.render`) - and one to three of them act out a script:

* ``{"frame": k, "object": "red circle", "action": "appears"}`` - drawn from frame ``k`` on (``k = 0``: there from
  the start); ``"disappears"``: not drawn from frame ``k`` on;
* ``{"start": s, "end": e, "object": ..., "action": "moves", "direction": "left|right|up|down", "pixels": d}`` -
  at frame ``s`` the shape is where it was, at ``e`` it is ``d`` pixels further, linearly in between (with
  ``"easing": "out"``: slowing down at a constant rate to a stop at ``e``);
* ``"jumps"`` (``height``: up and back down on a parabola), ``"rotates"`` (``direction`` clockwise or
  counterclockwise, ``degrees``), ``"grows"`` / ``"shrinks"`` (``scale`` of the size at ``e`` over ``s``);
* ``{"frame": t, "object": A, "action": "collides with", "target": B}`` - A has moved until its pixels touch B's
  (adjacent, never overlapping) at frame ``t``; B then moves on in the same direction (it was pushed).

A video with two or more shapes may stage an interaction (``meta["interaction"]``, :data:`OUTCOMES`) whose end
its frames foretell, and its free shape keeps a routine (``meta["routine"]``, :data:`ROUTINES`) whose next step
its frames foretell; the other shapes keep still until both are over. The predictive builder holds these out.

Every sampled script is simulated and checked before it is rendered: shapes stay wholly inside the frame and
never overlap (collisions touch), otherwise the script is re-drawn (deterministically). The script is also turned
into what Mementos has people write for a real video: ``meta["description"]`` (sentences in time order),
``meta["objects"]`` (object keywords: the shapes' category nouns) and ``meta["behaviours"]`` (behaviour keywords:
verb lemmas - ``move``, ``jump``, ``collide``, ...), plus ``meta["cast"]`` and ``meta["events"]``.

Videos are written losslessly (FFV1 in ``.avi`` via OpenCV), so decoded pixels equal painted pixels exactly - a
lossy codec would make sampled frames depend on the encoder build. Without an FFV1 encoder (or without OpenCV) a
video is a folder of PNG frames instead, which :func:`sources.video.sample_video` reads the same way. Like the
stills, videos are rendered once into ``<cache>/demo-video/<hash of parameters and code>/`` (temporary folder,
then rename) and read back from ``records.json`` later. Randomness comes only from
:func:`~sources.demo.world.named_rng` (``"demo/video/<index>"``): video ``i`` depends on ``(seed, i)`` alone.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
from scipy.ndimage import binary_fill_holes

from ..errors import ConfigError
from ..records import VideoRecord
from ..video_backends import write_video
from ..atomic import atomic_directory
from . import RECORDS_FILE, default_cache_dir, render
from .world import COLOURS, PATTERNS, PATTERN_WEIGHTS, THEMES, WORLD_VERSION, Scene, ShapeSpec, named_rng

__all__ = ["load_demo_videos", "VIDEO_VERSION", "WIDTH", "HEIGHT", "FPS", "BEHAVIOUR_LEMMAS", "object_name"]

VIDEO_VERSION = 4
"""Bump whenever the script sampler or the rendering of videos changes what a seed produces."""
SOURCE = "demo"
WIDTH, HEIGHT, FPS = 320, 240, 15.0
SCALE = 2
"""Lengths in pixels (radii, moves, jumps, pushes, margins) were first chosen for 160x120 frames; they are drawn
the same way and multiplied by this, so a video shows the same script at a size a person can judge."""
MIN_FRAMES, MAX_FRAMES = 60, 150
OBJECT_COUNTS, OBJECT_WEIGHTS = (1, 2, 3), (0.2, 0.45, 0.35)
MAX_ACTIONS = 5
"""A shape acts until its timeline is nearly full (at most this many actions), so no stretch of a video is still
for long: sampled frames of a still video would show nothing to describe."""
GAP = (2, 7)
"""Still frames between two actions of a shape (drawn in this range)."""
RADIUS = (9.0 * SCALE, 14.0 * SCALE)
"""Half side of a shape's box in pixels (the stills' "medium" sizes at this resolution)."""
COLLISION_PROBABILITY = 0.8
"""Chance that a video with two or more shapes stages an interaction (afterwards its two shapes act in place
only: moving again they would mostly bump into each other)."""
OUTCOMES, OUTCOME_WEIGHTS = ("pushed", "bounces back", "stops short", "passes"), (0.25, 0.25, 0.25, 0.25)
"""How a staged interaction ends, each following what the frames before it show: a mover running at constant
speed along the other shape's row (or column) collides with it and then pushes it on when it is the bigger
(:data:`PUSH_AREA_RATIO`) or bounces back off it when it is the smaller; a mover that visibly slows down (its
steps shrink linearly: constant deceleration) stops short of it; a mover on a parallel line that clears the other
shape passes it by. The mover starts on either side and runs along either axis."""
PUSH_AREA_RATIO = 1.6
"""Pixels of the mover over those of the other shape when it pushes it on (the inverse when it bounces back)."""
ROUTINES = ("repeat", "alternate", "turns", "vanish", "pulse")
"""What the routine of a video's free shape shows, step after step, so that its next step follows from the frames:
the same move again (``repeat``), back and forth (``alternate``), round a square turning the same way
(``turns``), shrinking by the same amount until nothing is left (``vanish``: the next event is its
disappearance), growing and shrinking in turn (``pulse``). Videos take them in turn (from a seeded offset)."""
ROUTINE_STEPS = 6
"""Steps of a routine shown before the held-out one: a context of 3 to 7 frames, one after each step."""
LATE_APPEARANCE_PROBABILITY = 0.25
"""Chance that a shape other than the first (and not one of a collision) appears after frame 0."""
DISAPPEARANCE_PROBABILITY = 0.25
MAX_ATTEMPTS = 60
MARGIN = 2 * SCALE
"""Pixels kept free between a shape and the frame border."""
NO_ROTATION = ("circle", "ring")
SYMMETRY_STEP: dict[str, float] = {
    "square": 90, "diamond": 180, "cross": 90, "star": 72, "pentagon": 72, "hexagon": 60, "octagon": 45,
    "triangle": 120,
}
"""The smallest turn (degrees) that maps a shape onto itself; 360 for shapes not listed (heart, arrow, ...).
Circles and rings (:data:`NO_ROTATION`) never rotate: no pixel would change."""
ACTION_WEIGHTS: dict[str, float] = {"moves": 0.4, "jumps": 0.15, "rotates": 0.15, "grows": 0.15, "shrinks": 0.15}
BEHAVIOUR_LEMMAS: dict[str, str] = {
    "appears": "appear", "disappears": "disappear", "moves": "move", "jumps": "jump", "rotates": "rotate",
    "grows": "grow", "shrinks": "shrink", "collides with": "collide",
}
"""Event action -> the behaviour keyword (verb lemma) a person's keyword list would hold."""
DIRECTIONS: dict[str, tuple[int, int]] = {"left": (-1, 0), "right": (1, 0), "up": (0, -1), "down": (0, 1)}
VIDEO_FOURCC, VIDEO_SUFFIX = "FFV1", ".avi"

Progress = Callable[[int, int], None]


def object_name(colour: str, category: str) -> str:
    """How scripts and descriptions name a shape: ``"red circle"`` (unique within a video)."""
    return f"{colour} {category}"


def load_demo_videos(
    seed: int = 0,
    n_videos: int = 12,
    cache_dir: str | Path | None = None,
    progress: Progress | None = None,
) -> list[VideoRecord]:
    """The demo videos of world ``seed``: ``n_videos`` records (``id`` ``demo-video-0000``, ...), rendered on the
    first call and read from the cache afterwards. ``progress(done, total)`` is called while rendering (once with
    ``(total, total)`` on a cache hit)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ConfigError(f"demo seed must be a non-negative integer, got {seed!r}")
    if isinstance(n_videos, bool) or not isinstance(n_videos, (int, np.integer)) or n_videos < 1:
        raise ConfigError(f"demo n_videos must be a positive integer, got {n_videos!r}")
    params = {"seed": int(seed), "n_videos": int(n_videos), "version": VIDEO_VERSION, "world": WORLD_VERSION}
    root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    target = root / "demo-video" / _cache_key(params)
    records = _read_cache(target, int(n_videos))
    if records is None:
        records = _render_into_cache(target, params, progress)
    elif progress is not None:
        progress(int(n_videos), int(n_videos))
    return records


# --- the script -----------------------------------------------------------------------------------------


@dataclass
class _Actor:
    """A shape with its script: initial state, timed segments, and when it is on screen."""

    name: str
    category: str
    colour: str
    pattern: str
    cx: float
    cy: float
    r: float
    rotation: float = 0.0
    appear: int = 0
    disappear: int | None = None
    segments: list[dict[str, Any]] = field(default_factory=list)

    def visible(self, t: int) -> bool:
        return t >= self.appear and (self.disappear is None or t < self.disappear)

    def state(self, t: int) -> tuple[float, float, float, float]:
        """``(cx, cy, r, rotation)`` at frame ``t``: segments applied in order, the current one partly."""
        cx, cy, r, rot = self.cx, self.cy, self.r, self.rotation
        for seg in self.segments:
            if t <= seg["start"]:
                break
            u = min(1.0, (t - seg["start"]) / (seg["end"] - seg["start"]))
            if seg.get("easing") == "out":  # slowing down at a constant rate to a stop at the end
                u = 1 - (1 - u) ** 2
            action = seg["action"]
            if action == "moves":
                dx, dy = DIRECTIONS[seg["direction"]]
                cx, cy = cx + dx * seg["pixels"] * u, cy + dy * seg["pixels"] * u
            elif action == "jumps":
                cy -= seg["height"] * 4 * u * (1 - u)
            elif action == "rotates":
                rot += (1 if seg["direction"] == "clockwise" else -1) * seg["degrees"] * u
            elif action in ("grows", "shrinks"):
                r *= 1 + (seg["scale"] - 1) * u
        return cx, cy, r, rot

    def spec(self, t: int, z: int) -> ShapeSpec:
        cx, cy, r, rot = self.state(t)
        return ShapeSpec(category=self.category, colour=self.colour, pattern=self.pattern, cx=cx, cy=cy, r=r,
                         rotation=rot, z=z, size_class="medium")


@dataclass
class _Script:
    index: int
    theme: str
    background: tuple[int, int, int]
    gradient_angle: float
    n_frames: int
    actors: list[_Actor]
    collisions: list[dict[str, Any]]
    interaction: dict[str, Any] = field(default_factory=dict)
    """The staged interaction of two shapes (``{}`` when none): who moves towards whom, when and how it ends."""
    routine: dict[str, Any] = field(default_factory=dict)
    """The routine of the free shape (``{}`` when none): :func:`_routine`."""


def _choice(rng: np.random.Generator, options: tuple[Any, ...] | list[Any], weights: Any = None) -> Any:
    if weights is None:
        return options[int(rng.integers(len(options)))]
    p = np.asarray(weights, dtype=float)
    return options[int(rng.choice(len(options), p=p / p.sum()))]


def _sample_script(seed: int, index: int, attempt: int) -> _Script:
    """Draw a script (not yet checked: :func:`_frames` does that; raises :class:`_Invalid` when a staged
    interaction cannot show its cue)."""
    rng = named_rng(seed, f"demo/video/{index}" if attempt == 0 else f"demo/video/{index}/retry/{attempt}")
    theme = _choice(rng, THEMES)
    n_frames = int(rng.integers(MIN_FRAMES, MAX_FRAMES + 1))
    n_objects = int(_choice(rng, OBJECT_COUNTS, OBJECT_WEIGHTS))
    categories = list(theme.weights)
    weights = np.array([theme.weights[c] for c in categories], dtype=float)
    chosen = rng.choice(len(categories), size=min(n_objects, len(categories)), replace=False, p=weights / weights.sum())
    colours = rng.choice(len(COLOURS), size=len(chosen), replace=False)
    collision = len(chosen) >= 2 and rng.random() < COLLISION_PROBABILITY
    lanes = len(chosen) - (1 if collision else 0)
    actors: list[_Actor] = []
    for k, (ci, co) in enumerate(zip(chosen, colours)):
        category, colour = categories[int(ci)], list(COLOURS)[int(co)]
        lane = max(0, k - 1) if collision else k
        r = float(rng.uniform(*RADIUS))
        actors.append(_Actor(
            name=object_name(colour, category), category=category, colour=colour,
            pattern=str(_choice(rng, PATTERNS, PATTERN_WEIGHTS)),
            cx=float(rng.uniform(r * 1.3 + MARGIN, WIDTH - r * 1.3 - MARGIN)),
            cy=float(round(HEIGHT * (lane + 1) / (lanes + 1))), r=r,
        ))
    interaction: dict[str, Any] = {}
    if collision:
        interaction = _stage_interaction(rng, actors[0], actors[1], n_frames)
    collisions = [{k: interaction[k] for k in ("frame", "object", "action", "target")}] \
        if interaction.get("action") == "collides with" else []
    pair = actors[:2] if collision else []
    staged_end = max([s["end"] for x in pair for s in x.segments], default=0)
    free = actors[2 if collision else 0] if len(actors) > (2 if collision else 0) else None
    routine: dict[str, Any] = {}
    if free is not None:
        turn = named_rng(seed, "demo/video/routines").integers(len(ROUTINES), size=2)
        kind = ROUTINES[(index + int(turn[0])) % len(ROUTINES)]
        towards = CLOCKWISE[(index + int(turn[1])) % len(CLOCKWISE)]
        routine = _routine(rng, free, staged_end + int(rng.integers(2, 8)), kind, towards)
        n_frames = max(n_frames, routine["frames"][-1] + 3 * SCALE + 8)
        if n_frames > MAX_FRAMES:
            raise _Invalid(f"the routine of the {free.name} does not fit in {MAX_FRAMES} frames")
    # other shapes keep still until the staged interaction and the routine are over: their frames show those alone
    quiet = max([staged_end] + ([s["end"] for s in free.segments] if free is not None else []))
    for k, actor in enumerate(actors):
        if actor is free and routine.get("kind") == "vanish":
            continue
        if actor not in pair and actor is not free and rng.random() < LATE_APPEARANCE_PROBABILITY \
                and quiet + 5 < n_frames // 2:
            actor.appear = int(rng.integers(quiet + 1, n_frames // 2))
        _sample_actions(rng, actor, n_frames, still=actor in pair, after=quiet)
        last = max([actor.appear, quiet] + [s["end"] for s in actor.segments])
        if rng.random() < DISAPPEARANCE_PROBABILITY and last + 4 < n_frames - 4:
            actor.disappear = int(rng.integers(last + 4, n_frames - 4))
    return _Script(index, theme.name, theme.background, float(rng.uniform(0, 2 * math.pi)), n_frames, actors,
                   collisions, interaction, routine)


OPPOSITE = {"left": "right", "right": "left", "up": "down", "down": "up"}
SIDES = {0: ("above", "below"), 1: ("to the left of", "to the right of")}
"""Where a mover passing the other shape runs, by the axis of its run: across a row it is above or below it."""


def _area(actor: _Actor) -> int:
    """Pixels of the shape's silhouette (a ring's hole counted in: a viewer judges sizes by outlines)."""
    return int(binary_fill_holes(render.rasterise(actor.spec(0, 0)).mask).sum())


def _stage_interaction(rng: np.random.Generator, a: _Actor, b: _Actor, n_frames: int) -> dict[str, Any]:
    """Put ``a`` and ``b`` on one line (a row or a column), or for ``passes`` on two parallel lines that clear
    each other, and move ``a`` towards ``b`` as :data:`OUTCOMES` draws, each with its cue in the frames."""
    a.rotation = b.rotation = 0.0
    direction = str(_choice(rng, tuple(DIRECTIONS)))
    outcome = str(_choice(rng, OUTCOMES, OUTCOME_WEIGHTS))
    dx, dy = DIRECTIONS[direction]
    axis, sign = (0, dx) if dx else (1, dy)
    if outcome in ("pushed", "bounces back"):  # the bigger shape pushes, the smaller bounces back
        small, big = (b, a) if outcome == "pushed" else (a, b)
        small.r = RADIUS[0]
        big.r = float(big.r * math.sqrt(PUSH_AREA_RATIO * _area(small) / _area(big)))
        if big.r > RADIUS[1] * 1.4:
            raise _Invalid(f"the {big.name} would be drawn {big.r:.0f} pixels wide to show the size cue")
    size = WIDTH if axis == 0 else HEIGHT
    near = float(round(rng.uniform(a.r * 1.3 + MARGIN, size * 0.3)))
    far = float(round(rng.uniform(size * 0.55, size * 0.7)))
    if sign < 0:
        near, far = size - near, size - far
    if axis == 0:
        a.cx, b.cx = near, far
        a.cy = b.cy = float(round(a.cy))
    else:
        a.cy, b.cy = near, far
        a.cx = b.cx = float(round(rng.uniform(WIDTH * 0.3, WIDTH * 0.7)))
    staged: dict[str, Any] = {"object": a.name, "target": b.name, "direction": direction, "outcome": outcome}
    if outcome == "passes":  # a parallel line that clears b by 10..20 pixels, on either side
        lo_a, hi_a = _extent(a.spec(0, 0), 1 - axis)
        lo_b, hi_b = _extent(b.spec(0, 0), 1 - axis)
        clear = int(rng.integers(5, 11)) * SCALE
        side = int(rng.integers(2))
        shift = (lo_b - clear - 1 - hi_a) if side == 0 else (hi_b + clear + 1 - lo_a)
        if axis == 0:
            a.cy += shift
        else:
            a.cx += shift
        staged["side"] = SIDES[axis][side]
    lo_a, hi_a = _extent(a.spec(0, 0), axis)
    lo_b, hi_b = _extent(b.spec(0, 0), axis)
    touch = (lo_b - 1 - hi_a) if sign > 0 else (lo_a - 1 - hi_b)  # pixels a moves until it touches b
    start = int(rng.integers(2, 10))
    t = start + int(rng.integers(12, 28))
    run = {"start": start, "end": t, "action": "moves", "direction": direction}
    if outcome == "stops short":
        gap = int(rng.integers(12, 21)) * SCALE
        a.segments.append({**run, "pixels": float(touch - gap), "easing": "out"})
        return {**staged, "frame": t, "action": "stops short of", "gap": gap}
    if outcome == "passes":  # at the same speed on until a has cleared b along the line
        beyond = (hi_b - lo_b) + (hi_a - lo_a) + 2
        end = start + int(math.ceil((t - start) * (touch + beyond) / touch))
        a.segments.append({**run, "end": end, "pixels": float(touch + beyond)})
        return {**staged, "frame": t, "action": "passes"}
    a.segments.append({**run, "pixels": float(touch)})
    after = {"start": t, "end": t + int(rng.integers(8, 16)), "action": "moves"}
    if outcome == "pushed":
        b.segments.append({**after, "direction": direction, "pixels": float(rng.integers(10, 25) * SCALE)})
    else:
        a.segments.append({**after, "direction": OPPOSITE[direction], "pixels": float(rng.integers(8, 18) * SCALE)})
    return {**staged, "frame": t, "action": "collides with"}


CLOCKWISE = ("right", "down", "left", "up")


def _routine(rng: np.random.Generator, actor: _Actor, start: int, kind: str, towards: str) -> dict[str, Any]:
    """Give ``actor`` the :data:`ROUTINES` ``kind`` from frame ``start``: :data:`ROUTINE_STEPS` steps and the one
    that follows them (a move ``towards`` that way, so that videos in turn hold out each way), one every
    ``period`` frames, each over before the next sampling frame (``frames``: the frame before the first step and
    after each step). Returns the routine's record (``next``: the held-out event)."""
    period = int(rng.integers(8, 12))
    frames = [start + j * period for j in range(ROUTINE_STEPS + 1)]
    steps: list[dict[str, Any]] = []
    if kind == "repeat":
        axis = 0 if towards in ("left", "right") else 1
        pixels = float(rng.integers(9, 13) * SCALE) if axis == 0 else float(rng.integers(7, 10) * SCALE)
        size = WIDTH if axis == 0 else HEIGHT
        room = size - 2 * (actor.r * 1.3 + MARGIN) - (ROUTINE_STEPS + 1) * pixels
        low = actor.r * 1.3 + MARGIN + float(rng.uniform(0, max(room, 0.0)))
        place = low if towards in ("right", "down") else size - low
        if axis == 0:
            actor.cx = place
        else:
            actor.cy = place
        steps = [{"action": "moves", "direction": towards, "pixels": pixels}] * (ROUTINE_STEPS + 1)
        cue = f"moves {_way(towards)} by the same distance after each pause"
    elif kind == "alternate":
        pixels = float(rng.integers(12, 21) * SCALE)
        steps = [{"action": "moves", "direction": towards if j % 2 == ROUTINE_STEPS % 2 else OPPOSITE[towards],
                  "pixels": pixels} for j in range(ROUTINE_STEPS + 1)]
        cue = "moves back and forth"
    elif kind == "turns":
        pixels = float(rng.integers(10, 17) * SCALE)
        turn = str(_choice(rng, ("clockwise", "counterclockwise")))
        order = CLOCKWISE if turn == "clockwise" else tuple(reversed(CLOCKWISE))
        k0 = order.index(towards) - ROUTINE_STEPS
        steps = [{"action": "moves", "direction": order[(k0 + j) % 4], "pixels": pixels}
                 for j in range(ROUTINE_STEPS + 1)]
        cue = f"moves round a square, turning {turn} after each side"
    elif kind == "vanish":
        actor.r = float(rng.uniform(RADIUS[1], RADIUS[1] * 1.15))
        n = ROUTINE_STEPS + 1
        steps = [{"action": "shrinks", "scale": (n - j - 1) / (n - j)} for j in range(ROUTINE_STEPS)]
        cue = "shrinks by the same amount after each pause"
    else:
        scale = float(_choice(rng, (1.4, 1.5)))
        grows = bool(rng.integers(2))
        actor.r = float(RADIUS[0] if grows else RADIUS[0] * scale)
        steps = [{"action": "grows" if (j % 2 == 0) == grows else "shrinks",
                  "scale": scale if (j % 2 == 0) == grows else 1 / scale} for j in range(ROUTINE_STEPS + 1)]
        cue = "grows and shrinks in turn"
    for j, step in enumerate(steps):
        actor.segments.append({"start": frames[j] + 1, "end": frames[j] + period - 1, **step})
    if kind == "vanish":
        actor.disappear = frames[-1] + period // 2
        held = {"frame": actor.disappear, "object": actor.name, "action": "disappears"}
    else:
        held = {"object": actor.name, **actor.segments[-1]}
    return {"object": actor.name, "kind": kind, "cue": cue, "period": period, "frames": frames, "next": held}


def _way(direction: str) -> str:
    return f"to the {direction}" if direction in ("left", "right") else direction


def _extent(spec: ShapeSpec, axis: int = 0) -> tuple[int, int]:
    """First and last pixel columns (``axis`` 0) or rows (1) of a shape's rasterised mask."""
    layer = render.rasterise(spec)
    lines = np.flatnonzero(layer.mask.any(axis=axis))
    origin = layer.x0 if axis == 0 else layer.y0
    return origin + int(lines[0]), origin + int(lines[-1])


def rotation_degrees(rng: np.random.Generator, category: str) -> float:
    """How far a shape turns: 25 to 33 % of its symmetry step, so the shape at the end is visibly turned (a star
    turned by a multiple of 72 degrees looks unturned) and the turn seen from the first look to the last cannot be
    read the other way round (the other way is at least twice as far: a 5-point star turned 32 degrees clockwise
    looks like one turned 40 degrees counterclockwise, one turned 20 degrees does not). For shapes without a
    rotational symmetry that is 90..119 degrees."""
    step = SYMMETRY_STEP.get(category, 360.0)
    return float(round(step * float(_choice(rng, (0.25, 0.29, 0.33))), 1))


def _sample_actions(rng: np.random.Generator, actor: _Actor, n_frames: int, still: bool = False,
                    after: int = 0) -> None:
    """Append actions after the actor's existing segments (and frame ``after``), with short still gaps between
    them, until its timeline is nearly full (:data:`MAX_ACTIONS`); ``still``: actions in place only (the two shapes
    of an interaction, once it is over: moving again they would mostly bump into each other)."""
    t = max([actor.appear, after] + [s["end"] for s in actor.segments])
    for _ in range(MAX_ACTIONS):
        start = t + int(rng.integers(*GAP))
        kinds = [k for k in ACTION_WEIGHTS if not (k == "rotates" and actor.category in NO_ROTATION)
                 and not (still and k == "moves")]
        action = str(_choice(rng, kinds, [ACTION_WEIGHTS[k] for k in kinds]))
        segment: dict[str, Any] = {"start": start, "action": action}
        cx, cy, r, _ = actor.state(start)
        if action == "moves":
            pixels = float(rng.integers(20, 50) * SCALE)
            room = {"left": cx - r * 1.3 - MARGIN, "right": WIDTH - MARGIN - r * 1.3 - cx,
                    "up": cy - r * 1.3 - MARGIN, "down": HEIGHT - MARGIN - r * 1.3 - cy}
            possible = [d for d in DIRECTIONS if room[d] >= pixels]
            if not possible:
                continue
            segment.update(direction=str(_choice(rng, possible)), pixels=pixels)
            duration = int(rng.integers(10, 26))
        elif action == "jumps":
            segment.update(height=float(rng.integers(12, 26) * SCALE))
            duration = int(rng.integers(8, 15))
        elif action == "rotates":
            segment.update(direction=str(_choice(rng, ("clockwise", "counterclockwise"))),
                           degrees=rotation_degrees(rng, actor.category))
            duration = int(rng.integers(10, 26))
        else:
            segment.update(scale=float(_choice(rng, (1.4, 1.6))) if action == "grows" else
                           float(_choice(rng, (0.55, 0.7))))
            duration = int(rng.integers(8, 18))
        segment["end"] = start + duration
        if segment["end"] >= n_frames - 2:
            break
        actor.segments.append(segment)
        t = segment["end"]


# --- simulation, checks and pixels ----------------------------------------------------------------------


def _frames(script: _Script) -> Iterator[np.ndarray]:
    """The frames of a script; raises :class:`_Invalid` at the first frame that breaks the checks."""
    scene = Scene(index=script.index, theme=script.theme, background=script.background,
                  gradient_angle=script.gradient_angle, width=WIDTH, height=HEIGHT, shapes=())
    background = render.background_pixels(scene)
    for t in range(script.n_frames):
        pixels = background.copy()
        occupied = np.zeros((HEIGHT, WIDTH), dtype=bool)
        for z, actor in enumerate(script.actors):
            if not actor.visible(t):
                continue
            layer = render.rasterise(actor.spec(t, z))
            h, w = layer.mask.shape
            if layer.x0 < MARGIN or layer.y0 < MARGIN or layer.x0 + w > WIDTH - MARGIN or \
                    layer.y0 + h > HEIGHT - MARGIN:
                raise _Invalid(f"{actor.name} leaves the frame at {t}")
            mask = layer.in_image(WIDTH, HEIGHT)
            if (mask & occupied).any():
                raise _Invalid(f"{actor.name} overlaps another shape at {t}")
            occupied |= mask
            render.paint(pixels, render.RenderedShape(spec=layer.spec, amodal_area=int(layer.mask.sum()),
                                                       amodal_in_image=mask, visible=mask,
                                                       region=layer.region(WIDTH, HEIGHT)))
        yield pixels


class _Invalid(Exception):
    """A sampled script breaks a check (a shape leaves the frame or overlaps another)."""


def _valid_script(seed: int, index: int) -> tuple[_Script, list[np.ndarray]]:
    """The first sampled script that passes every check, with its frames."""
    for attempt in range(MAX_ATTEMPTS):
        try:
            script = _sample_script(seed, index, attempt)
            return script, list(_frames(script))
        except _Invalid:
            continue
    raise RuntimeError(f"demo video {index}: no valid script in {MAX_ATTEMPTS} attempts (seed {seed})")


# --- events, description and keywords --------------------------------------------------------------------

_ORDER = {"appears": 0, "collides with": 1, "disappears": 3}


def _events(script: _Script) -> list[dict[str, Any]]:
    """Every event in time order (ties: appearances, then collisions, then actions, then disappearances)."""
    events: list[dict[str, Any]] = []
    for actor in script.actors:
        events.append({"frame": actor.appear, "object": actor.name, "action": "appears"})
        for seg in actor.segments:
            events.append({"start": seg["start"], "end": seg["end"], "object": actor.name,
                           **{k: v for k, v in seg.items() if k not in ("start", "end")}})
        if actor.disappear is not None:
            events.append({"frame": actor.disappear, "object": actor.name, "action": "disappears"})
    events += script.collisions
    names = [a.name for a in script.actors]
    return sorted(events, key=lambda e: (e.get("frame", e.get("start")), _ORDER.get(e["action"], 2),
                                         names.index(e["object"])))


def _sentence(event: dict[str, Any]) -> str:
    subject = f"The {event['object']}"
    action = event["action"]
    if action == "appears":
        return f"{'An' if event['object'][0] in 'aeiou' else 'A'} {event['object']} appears."
    if action == "moves":
        way = f"to the {event['direction']}" if event["direction"] in ("left", "right") else event["direction"]
        return f"{subject} moves {way}."
    if action == "rotates":
        return f"{subject} rotates {event['direction']}."
    if action == "collides with":
        return f"{subject} collides with the {event['target']}."
    return f"{subject} {action}."


def _article_list(phrases: list[str]) -> str:
    items = [f"{'an' if p[0] in 'aeiou' else 'a'} {p}" for p in phrases]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _describe(script: _Script, events: list[dict[str, Any]]) -> list[str]:
    """Sentences a person might write, in time order: who is there at the start, then every event."""
    present = [a for a in script.actors if a.appear == 0]
    looks = [f"{a.colour} {a.pattern + ' ' if a.pattern != 'solid' else ''}{a.category}" for a in present]
    sentences = [f"At the start, there {'is' if len(looks) == 1 else 'are'} {_article_list(looks)}."]
    sentences += [_sentence(e) for e in events if not (e["action"] == "appears" and e["frame"] == 0)]
    return sentences


def _behaviours(events: list[dict[str, Any]]) -> list[str]:
    """Behaviour keywords (verb lemmas) in order of first occurrence; being there from frame 0 is no behaviour."""
    lemmas: list[str] = []
    for e in events:
        if e["action"] == "appears" and e["frame"] == 0:
            continue
        lemma = BEHAVIOUR_LEMMAS[e["action"]]
        if lemma not in lemmas:
            lemmas.append(lemma)
    return lemmas


def _meta(script: _Script) -> dict[str, Any]:
    events = _events(script)
    objects: list[str] = []
    for a in script.actors:
        if a.category not in objects:
            objects.append(a.category)
    return {
        "theme": script.theme,
        "cast": [{"name": a.name, "category": a.category, "colour": a.colour, "pattern": a.pattern,
                  "start": {"cx": a.cx, "cy": a.cy, "r": a.r, "rotation": a.rotation}} for a in script.actors],
        "interaction": script.interaction,
        "routine": script.routine,
        "events": events,
        "description": _describe(script, events),
        "objects": objects,
        "behaviours": _behaviours(events),
    }


# --- cache ----------------------------------------------------------------------------------------------


def video_id_of(index: int) -> str:
    return f"demo-video-{index:04d}"


def _cache_key(params: dict[str, int]) -> str:
    """Hash of the parameters and of the code that draws the videos (an older checkout's cache is a miss)."""
    digest = hashlib.sha256(json.dumps(params, sort_keys=True).encode())
    here = Path(__file__).parent
    for name in ("video.py", "world.py", "render.py"):
        digest.update((here / name).read_bytes())
    return digest.hexdigest()[:16]


def _render_into_cache(target: Path, params: dict[str, int], progress: Progress | None) -> list[VideoRecord]:
    with atomic_directory(target, lambda t: (t / RECORDS_FILE).exists()) as tmp:
        entries = []
        total = params["n_videos"]
        for index in range(total):
            script, frames = _valid_script(params["seed"], index)
            name = _write(tmp, video_id_of(index), frames)
            entries.append({"id": video_id_of(index), "file": name, "frame_count": len(frames), "meta": _meta(script)})
            if progress is not None:
                progress(index + 1, total)
        (tmp / RECORDS_FILE).write_text(json.dumps({"params": params, "videos": entries}, indent=1))
    return _records(target, entries)


def _write(folder: Path, video_id: str, frames: list[np.ndarray]) -> str:
    """Write a lossless video (FFV1); without an FFV1 encoder, a folder of PNG frames. Returns the name."""
    name = video_id + VIDEO_SUFFIX
    try:
        write_video(folder / name, frames, FPS, VIDEO_FOURCC)
        return name
    except ConfigError:
        (folder / name).unlink(missing_ok=True)
    frames_dir = folder / video_id
    frames_dir.mkdir()
    for t, pixels in enumerate(frames):
        (frames_dir / f"{t:04d}.png").write_bytes(render.encode_png(pixels))
    return video_id


def _records(target: Path, entries: list[dict[str, Any]]) -> list[VideoRecord]:
    return [
        VideoRecord(id=e["id"], source=SOURCE, file=str(target / e["file"]), frame_count=e["frame_count"],
                    fps=FPS, width=WIDTH, height=HEIGHT, meta=e["meta"])
        for e in entries
    ]


def _read_cache(target: Path, n_videos: int) -> list[VideoRecord] | None:
    """The cached records, or ``None`` when absent, stale or damaged (it is then removed)."""
    path = target / RECORDS_FILE
    if not path.exists():
        return None
    try:
        entries = json.loads(path.read_text())["videos"]
        if len(entries) == n_videos and all((target / e["file"]).exists() for e in entries):
            return _records(target, entries)
    except (OSError, ValueError, KeyError, TypeError):
        pass
    shutil.rmtree(target, ignore_errors=True)
    return None
