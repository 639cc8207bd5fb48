"""Scene sampling for the demo world: pure data, no pixels.

The demo world stands in for COCO-like photographs with shapes standing in for object categories. What the
benchmark builders need from it, and therefore what this module is tuned to produce:

* **co-occurrence that is strongly non-uniform** - every scene has a *theme* (a weighted subset of categories,
  like kitchens and beaches in COCO), so "absent but expected" objects (hard negatives) exist;
* **counting variety** - a category appears 1..4 times in an image and many images hold <= 5 instances
  (MIOH limits counting questions to such images);
* **attribute binding** - every instance has a colour and a pattern; a few categories prefer some colours
  (hearts tend to be red or pink) so colour priors exist to be resisted, as "yellow banana" does in photos;
* **perceptual difficulty** - some instances are small, some are deliberately placed under a later shape
  (occlusion) and a few stick out of the frame (truncation).

Sampling works with approximate boxes only; :mod:`sources.demo.render` rasterises the scene, measures exact
masks and drops instances that break the visibility limits (see there). A scene depends only on
``(seed, index, width, height)``: the first 100 images of a 600-image world are the 100 images of a 100-image
world, and no global random state is ever touched.

Room for later: demo *videos* of moving shapes with an event script will live in ``sources/demo/video.py``;
they are meant to reuse :data:`CATEGORIES`, :data:`COLOURS`, :data:`PATTERNS`, :class:`ShapeSpec` and
:func:`named_rng` so that a shape looks the same in a still and in a clip.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np

WORLD_VERSION = 1
"""Bump whenever sampling or rendering changes what a seed produces: it is part of every cache key."""

CATEGORIES: tuple[str, ...] = (
    "circle", "square", "triangle", "star", "heart", "hexagon", "diamond",
    "cross", "crescent", "pentagon", "ring", "arrow", "octagon", "trapezoid",
)

COLOURS: Mapping[str, tuple[int, int, int]] = {
    "red": (214, 39, 40),
    "orange": (247, 129, 15),
    "yellow": (240, 200, 20),
    "green": (44, 160, 44),
    "blue": (31, 90, 200),
    "purple": (128, 60, 170),
    "pink": (240, 110, 180),
    "brown": (125, 75, 35),
}
"""Named colours: saturated, far from every theme background and from each other."""

PATTERNS: tuple[str, ...] = ("solid", "striped", "dotted", "checkered")
PATTERN_WEIGHTS: tuple[float, ...] = (0.4, 0.2, 0.2, 0.2)

COLOUR_PRIORS: Mapping[str, tuple[str, ...]] = {
    "heart": ("red", "pink"),
    "star": ("yellow",),
    "crescent": ("yellow",),
    "octagon": ("red",),
    "cross": ("red",),
}
"""Categories whose colour is biased (x3 weight) towards these colours, like real objects' typical colours."""
COLOUR_PRIOR_WEIGHT = 3.0


@dataclass(frozen=True)
class Theme:
    """A kind of scene: a background and the categories that usually appear in it (relative weights)."""

    name: str
    background: tuple[int, int, int]
    weights: Mapping[str, float]


THEMES: tuple[Theme, ...] = (
    Theme("sky", (200, 220, 240), {"star": 5, "crescent": 5, "circle": 3, "diamond": 2, "cross": 1}),
    Theme("party", (236, 224, 240), {"heart": 5, "star": 3, "ring": 3, "diamond": 3, "circle": 1}),
    Theme("traffic", (205, 205, 200), {"arrow": 5, "octagon": 4, "triangle": 4, "cross": 2, "diamond": 2,
                                       "square": 1}),
    Theme("blocks", (232, 224, 206), {"square": 5, "triangle": 3, "pentagon": 3, "hexagon": 3, "trapezoid": 3}),
    Theme("beach", (242, 234, 205), {"circle": 5, "ring": 4, "trapezoid": 3, "crescent": 2, "star": 2}),
    Theme("workshop", (208, 216, 206), {"hexagon": 5, "cross": 4, "ring": 4, "square": 2, "pentagon": 2,
                                        "octagon": 2}),
)

# --- sampling constants (documented in the report and the tests) ----------------------------------------
TOTAL_INSTANCES: tuple[int, ...] = (2, 3, 4, 5, 6, 7, 8)
TOTAL_WEIGHTS: tuple[float, ...] = (0.12, 0.17, 0.17, 0.16, 0.14, 0.12, 0.12)
"""Number of instances a scene aims for (before visibility limits drop any); P(<= 5) is about 0.6."""
COUNTS: tuple[int, ...] = (1, 2, 3, 4)
COUNT_WEIGHTS: tuple[float, ...] = (0.5, 0.25, 0.15, 0.10)
"""How many instances of one category a scene holds (capped by what is left of the total)."""
OFF_THEME_PROBABILITY = 0.08
"""Chance that a new category of a scene is drawn from the whole vocabulary instead of the theme."""

SIZE_CLASSES: Mapping[str, tuple[float, float, float]] = {
    # name: (probability, min, max) of the target amodal area as a fraction of the image area
    "small": (0.18, 0.0015, 0.006),
    "medium": (0.57, 0.010, 0.040),
    "large": (0.25, 0.040, 0.090),
}
SHAPE_FILL: Mapping[str, float] = {
    "circle": 0.80, "square": 0.83, "triangle": 0.46, "star": 0.32, "heart": 0.57, "hexagon": 0.67,
    "diamond": 0.32, "cross": 0.56, "crescent": 0.37, "pentagon": 0.60, "ring": 0.55, "arrow": 0.31,
    "octagon": 0.73, "trapezoid": 0.56,
}
"""Approximate share of its box a shape fills (measured from the renderer); it only steers target sizes."""

OCCLUDER_PROBABILITY = 0.3
"""Chance that an instance (not the first) is placed on purpose over an earlier, non-small one."""
TRUNCATION_PROBABILITY = 0.06
"""Chance that a non-small instance is placed across an image border (15-45% of its box outside)."""
PLACEMENT_TRIES = 30

ROTATION_JITTER: Mapping[str, float] = {
    "square": 10, "diamond": 10, "trapezoid": 10, "cross": 15, "heart": 15, "triangle": 20, "star": 25,
    "pentagon": 25, "hexagon": 25, "octagon": 20, "circle": 0, "ring": 0, "crescent": 180, "arrow": 10,
}
"""Maximum rotation (degrees, either way) per category; small enough that no shape turns into another
(a square turned by 45 degrees would read as a diamond). Arrows also point in one of four directions."""


@dataclass(frozen=True)
class ShapeSpec:
    """One shape of a scene, as sampled: everything the renderer needs, nothing measured yet.

    ``cx, cy`` is the centre and ``r`` the half side of the square box the shape is drawn in (before
    rotation), in pixels; ``z`` is the draw order (larger is drawn later, hence in front).
    """

    category: str
    colour: str
    pattern: str
    cx: float
    cy: float
    r: float
    rotation: float
    z: int
    size_class: str

    @property
    def box(self) -> tuple[float, float, float, float]:
        """Approximate box ``(x0, y0, x1, y1)`` (rotation ignored: good enough for placement)."""
        return (self.cx - self.r, self.cy - self.r, self.cx + self.r, self.cy + self.r)


@dataclass(frozen=True)
class Scene:
    """A sampled scene: theme, background gradient and shapes in draw order."""

    index: int
    theme: str
    background: tuple[int, int, int]
    gradient_angle: float
    """Direction of the light background gradient, radians."""
    width: int
    height: int
    shapes: tuple[ShapeSpec, ...]


def named_rng(seed: int, name: str) -> np.random.Generator:
    """A generator derived from ``seed`` and a name, e.g. ``"demo/scene/42"``.

    The name is hashed (SHA-256, not Python's salted ``hash``) so the stream is the same on every run and
    machine, and independent streams never share state.
    """
    digest = hashlib.sha256(name.encode("utf-8")).digest()
    words = [int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4)]
    return np.random.default_rng(np.random.SeedSequence([seed, *words]))


def sample_scene(seed: int, index: int, width: int, height: int, attempt: int = 0) -> Scene:
    """Sample scene ``index`` of the world ``seed``.

    ``attempt`` > 0 gives a fresh, equally deterministic draw; the loader uses it when the visibility limits
    left fewer than two instances.
    """
    name = f"demo/scene/{index}" if attempt == 0 else f"demo/scene/{index}/retry/{attempt}"
    rng = named_rng(seed, name)
    theme = THEMES[int(rng.integers(len(THEMES)))]
    categories = _sample_categories(rng, theme)
    rng.shuffle(categories)
    shapes: list[ShapeSpec] = []
    for z, category in enumerate(categories):
        shapes.append(_sample_shape(rng, category, z, shapes, width, height))
    return Scene(
        index=index,
        theme=theme.name,
        background=theme.background,
        gradient_angle=float(rng.uniform(0, 2 * math.pi)),
        width=width,
        height=height,
        shapes=tuple(shapes),
    )


def _sample_categories(rng: np.random.Generator, theme: Theme) -> list[str]:
    """One category name per instance: a total of 2..8, split into categories appearing 1..4 times."""
    remaining = int(rng.choice(TOTAL_INSTANCES, p=_normalised(TOTAL_WEIGHTS)))
    chosen: list[str] = []
    used: set[str] = set()
    while remaining > 0:
        category = _pick_category(rng, theme, used)
        count = min(int(rng.choice(COUNTS, p=_normalised(COUNT_WEIGHTS))), remaining)
        used.add(category)
        chosen.extend([category] * count)
        remaining -= count
    return chosen


def _pick_category(rng: np.random.Generator, theme: Theme, used: set[str]) -> str:
    """A category not yet in the scene: from the theme's weights, now and then from anywhere."""
    in_theme = [c for c in theme.weights if c not in used]
    if not in_theme or rng.random() < OFF_THEME_PROBABILITY:
        pool = [c for c in CATEGORIES if c not in used]
        return pool[int(rng.integers(len(pool)))]
    weights = np.array([theme.weights[c] for c in in_theme], dtype=float)
    return in_theme[int(rng.choice(len(in_theme), p=weights / weights.sum()))]


def _sample_shape(
    rng: np.random.Generator, category: str, z: int, placed: list[ShapeSpec], width: int, height: int
) -> ShapeSpec:
    """Size, position, rotation, colour and pattern of one new shape drawn over ``placed``."""
    size_class = _pick_size_class(rng)
    r = _radius(rng, category, size_class, width, height)
    cx, cy = _position(rng, r, size_class, placed, width, height)
    rotation = float(rng.uniform(-1, 1) * ROTATION_JITTER[category])
    if category == "arrow":
        rotation += 90.0 * int(rng.integers(4))
    colour = _pick_colour(rng, category, (cx - r, cy - r, cx + r, cy + r), placed, 3.0 * pixel_scale(width, height))
    pattern = PATTERNS[int(rng.choice(len(PATTERNS), p=_normalised(PATTERN_WEIGHTS)))]
    return ShapeSpec(category, colour, pattern, float(cx), float(cy), float(r), rotation, z, size_class)


def pixel_scale(width: int, height: int) -> float:
    """Lengths in pixels (the 4 px smallest half side, the 3 px gap kept between boxes) are set for 320x240 and
    grow in proportion with the image, so a larger rendering of a seed draws the same scenes (same random draws,
    same choices), only sharper."""
    return math.sqrt(width * height / (320 * 240))


def _pick_size_class(rng: np.random.Generator) -> str:
    names = list(SIZE_CLASSES)
    probabilities = _normalised(tuple(SIZE_CLASSES[n][0] for n in names))
    return names[int(rng.choice(len(names), p=probabilities))]


def _radius(rng: np.random.Generator, category: str, size_class: str, width: int, height: int) -> float:
    """Half box side giving a target amodal area drawn (log-uniformly) from the size class."""
    _, low, high = SIZE_CLASSES[size_class]
    fraction = math.exp(rng.uniform(math.log(low), math.log(high)))
    side = math.sqrt(fraction * width * height / SHAPE_FILL[category])
    return max(side / 2.0, 4.0 * pixel_scale(width, height))


def _position(
    rng: np.random.Generator, r: float, size_class: str, placed: list[ShapeSpec], width: int, height: int
) -> tuple[float, float]:
    """Centre of a new shape: over an earlier shape on purpose, across a border, or in free space."""
    big_enough = [s for s in placed if s.size_class != "small"]
    roll = rng.random()
    if big_enough and roll < OCCLUDER_PROBABILITY:
        return _occluding_position(rng, r, big_enough, width, height)
    if size_class != "small" and roll > 1.0 - TRUNCATION_PROBABILITY:
        return _truncated_position(rng, r, width, height)
    return _free_position(rng, r, placed, width, height)


def _occluding_position(
    rng: np.random.Generator, r: float, targets: list[ShapeSpec], width: int, height: int
) -> tuple[float, float]:
    """A centre near an earlier shape so the new one hides part of it (how much varies: 0..~70%)."""
    target = targets[int(rng.integers(len(targets)))]
    angle = rng.uniform(0, 2 * math.pi)
    distance = rng.uniform(0.45, 1.05) * (target.r + r)
    cx = min(max(target.cx + distance * math.cos(angle), r), width - r)
    cy = min(max(target.cy + distance * math.sin(angle), r), height - r)
    return cx, cy


def _truncated_position(rng: np.random.Generator, r: float, width: int, height: int) -> tuple[float, float]:
    """A centre so that 15-45% of the box lies outside one border."""
    outside = rng.uniform(0.15, 0.45) * 2 * r
    edge = int(rng.integers(4))
    along_x = rng.uniform(r, max(r, width - r))
    along_y = rng.uniform(r, max(r, height - r))
    if edge == 0:
        return r - outside, along_y
    if edge == 1:
        return width - r + outside, along_y
    if edge == 2:
        return along_x, r - outside
    return along_x, height - r + outside


def _free_position(
    rng: np.random.Generator, r: float, placed: list[ShapeSpec], width: int, height: int
) -> tuple[float, float]:
    """A centre inside the image whose box overlaps earlier boxes as little as possible (first clear wins)."""
    best: tuple[float, float] = (width / 2, height / 2)
    best_overlap = math.inf
    for _ in range(PLACEMENT_TRIES):
        cx = rng.uniform(r, max(r, width - r))
        cy = rng.uniform(r, max(r, height - r))
        box = (cx - r, cy - r, cx + r, cy + r)
        overlap = sum(_box_overlap(box, s.box, margin=3.0 * pixel_scale(width, height)) for s in placed)
        if overlap < best_overlap:
            best, best_overlap = (cx, cy), overlap
        if overlap == 0:
            break
    return best


def _pick_colour(
    rng: np.random.Generator, category: str, box: tuple[float, float, float, float], placed: list[ShapeSpec],
    margin: float,
) -> str:
    """A colour (with the category's prior) that differs from every shape whose box touches this one.

    Two touching shapes of one colour would merge into one blob on screen, and counting would be unfair.
    """
    taken = {s.colour for s in placed if _box_overlap(box, s.box, margin=margin) > 0}
    names = [c for c in COLOURS if c not in taken] or list(COLOURS)
    preferred = COLOUR_PRIORS.get(category, ())
    weights = np.array([COLOUR_PRIOR_WEIGHT if c in preferred else 1.0 for c in names])
    return names[int(rng.choice(len(names), p=weights / weights.sum()))]


def _box_overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float], margin: float) -> float:
    """Area shared by two ``(x0, y0, x1, y1)`` boxes, each grown by ``margin``."""
    w = min(a[2], b[2]) - max(a[0], b[0]) + 2 * margin
    h = min(a[3], b[3]) - max(a[1], b[1]) + 2 * margin
    return w * h if w > 0 and h > 0 else 0.0


def _normalised(weights: tuple[float, ...]) -> np.ndarray:
    array = np.asarray(weights, dtype=float)
    return array / array.sum()
