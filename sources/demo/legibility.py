"""Which demo shapes a person can tell apart, and from what size: the demo world's look-alike table.

A label is only fair where a person looking at the picture can check it. Two demo shapes drawn small look alike
when their outlines differ by less than a pixel or two: an octagon 35 px across reads as a circle. This module
measures how different every pair of the demo world's outlines is, once, from the outlines the renderer draws
(:func:`sources.demo.render.outline`):

``lookalike_distance(a, b)``
    both outlines scaled to the same area and centred on their centroids, ``b`` turned to the angle that fits
    ``a`` best (5 degree steps); the pixels where exactly one of them lies, as a share of the area. 0 means the
    same shape; a circle and an octagon differ by 0.041, a circle and a hexagon by 0.076, a circle and a star by
    far more.

The pixels that tell ``a`` from ``b`` lie in a band along the outline whose width grows with the shape's size
(about ``distance * sqrt(area) / 4``), so a pair can be told apart from a size on: ``LOOKALIKE_SCALE /
distance`` px of ``sqrt(visible area)`` (at 640x480; other image sizes scale it). ``LOOKALIKE_SCALE`` is set
so that a circle and an octagon need 48 px (a box of about 53 px): careful annotators found octagons of
32-40 px indistinguishable from circles (issue 40). Every pair closer than :data:`LOOKALIKE_CUTOFF` is listed in
:data:`LOOKALIKES`; no other pair is within reach of :data:`MIN_SIZE_PX` anyway.

``MIN_VISIBLE_FRACTION``: a shape whose identity is its corners (a polygon) needs nearly all of its outline in
view - a hexagon with a corner behind another shape or past the frame edge reads as a pentagon, a trapezoid cut
by the edge as a square - while a circle, heart, star, cross, crescent, ring or arrow is recognised from most of
its outline. The visible fraction counts occlusion and the frame edge together (visible area over the whole
shape's area).

The numbers are data of the demo world, kept here beside its drawing code (a test re-measures them from
:func:`~sources.demo.render.outline`); :mod:`filters.legibility` applies them to any record.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Mapping

import numpy as np

MIN_SIZE_PX = 16.0
"""Below ``sqrt(visible area)`` of 16 px (a 16x16 patch at 640x480) no demo shape can be named."""
POLYGON_FRACTION = 0.9
CURVED_FRACTION = 0.75
POLYGONS = ("square", "triangle", "hexagon", "diamond", "pentagon", "octagon", "trapezoid")
MIN_VISIBLE_FRACTION: Mapping[str, float] = {
    **{c: POLYGON_FRACTION for c in POLYGONS},
    **{c: CURVED_FRACTION for c in ("circle", "star", "heart", "cross", "crescent", "ring", "arrow")},
}
LOOKALIKE_SCALE = 1.97
"""``0.041 * 48``: a circle and an octagon (distance 0.041) are told apart from ``sqrt(area)`` = 48 px on."""
LOOKALIKE_CUTOFF = 0.2
LOOKALIKES: Mapping[tuple[str, str], float] = {
    ("circle", "octagon"): 0.041,
    ("circle", "hexagon"): 0.076,
    ("hexagon", "octagon"): 0.083,
    ("circle", "pentagon"): 0.113,
    ("octagon", "pentagon"): 0.115,
    ("hexagon", "pentagon"): 0.122,
    ("pentagon", "trapezoid"): 0.167,
    ("octagon", "square"): 0.172,
    ("circle", "square"): 0.182,
    ("hexagon", "square"): 0.189,
    ("pentagon", "square"): 0.195,
}
"""``lookalike_distance`` of every pair below :data:`LOOKALIKE_CUTOFF` (names in alphabetical order)."""
REFERENCE_AREA = 640 * 480


def unread_polygons() -> dict[str, frozenset[str]]:
    """Category -> what an unreadable instance of it may be taken for besides its look-alikes: a polygon with a
    corner hidden or cut is read as another polygon (a triangle without its apex as a trapezoid), and the outline
    table, measured on whole shapes, does not list such pairs."""
    return {c: frozenset(POLYGONS) - {c} for c in POLYGONS}


def lookalike_sizes() -> dict[frozenset[str], float]:
    """Pair -> the ``sqrt(visible area)`` in px (at 640x480) from which the two can be told apart."""
    return {frozenset(pair): max(MIN_SIZE_PX, LOOKALIKE_SCALE / d) for pair, d in LOOKALIKES.items()}


# ------------------------------------------------------------------------------------------------ measuring


def lookalike_distance(a: str, b: str, canvas: int = 256, step: float = 5.0) -> float:
    """How different two demo outlines are (see the module docstring): the better of turning ``b`` onto ``a``
    and ``a`` onto ``b`` (the two differ by the rotation grid only)."""
    return min(_fitted(a, b, canvas, step), _fitted(b, a, canvas, step))


def _fitted(a: str, b: str, canvas: int, step: float) -> float:
    base = _unit_mask(a, 0.0, canvas)
    return min(float(np.logical_xor(base, _unit_mask(b, float(angle), canvas)).sum()) / _unit_area(canvas)
               for angle in np.arange(0.0, 360.0, step))


def _unit_area(canvas: int) -> float:
    return (canvas / 4.0) ** 2


@lru_cache(maxsize=None)
def _unit_mask(category: str, angle: float, canvas: int) -> np.ndarray:
    """The outline filled, turned by ``angle`` degrees, scaled to area ``(canvas/4)^2`` and centred."""
    from PIL import Image, ImageDraw

    from .render import outline

    polygons = outline(category)
    area = sum(fill_sign * _shoelace(p) for p, fill_sign in ((p, 1 if f else -1) for p, f in polygons))
    centroid = sum((1 if f else -1) * _shoelace(p) * _centroid(p) for p, f in polygons) / area
    scale = math.sqrt(_unit_area(canvas) / area)
    theta = math.radians(angle)
    turn = np.array([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]])
    image = Image.new("L", (canvas, canvas), 0)
    draw = ImageDraw.Draw(image)
    for points, fill in polygons:
        placed = ((points - centroid) @ turn.T) * scale + canvas / 2.0
        draw.polygon([(float(x), float(y)) for x, y in placed], fill=255 * fill)
    return np.asarray(image) > 0


def _shoelace(p: np.ndarray) -> float:
    x, y = p[:, 0], p[:, 1]
    return 0.5 * abs(float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))))


def _centroid(p: np.ndarray) -> np.ndarray:
    x, y = p[:, 0], p[:, 1]
    cross = x * np.roll(y, -1) - np.roll(x, -1) * y
    signed = 0.5 * cross.sum()
    return np.array([((x + np.roll(x, -1)) * cross).sum(), ((y + np.roll(y, -1)) * cross).sum()]) / (6 * signed)
