"""Could a person check this label in the picture? What an object is, how many there are, where one is.

:mod:`filters.geometry` says how visible an object is; this module says what a viewer can *tell* from it, so a
builder labels only what a person looking at the picture could confirm, and leaves the rest undecidable
(neither a positive nor a negative):

**Reading an instance** (:func:`read_instance`). Its category can be named (``legible``) when

* its visible fraction - visible area over the whole object's area, occlusion and the frame edge together
  (``1 - occlusion`` of :mod:`filters.geometry`; exact where the whole object's area is known, the demo world)
  - reaches the category's minimum (``min_fraction``); where the whole object's area is unknown the frame cut is
  measured on the box instead (``truncation`` below ``max_truncation``);
* its visible size ``sqrt(visible area)``, in pixels of an image of ``reference_area`` (other image sizes are
  scaled), reaches ``min_size``;
* it is large enough to be told from every look-alike category (``lookalikes``: pair -> the size from which the
  two can be told apart).

An instance that fails is read as *possibly* each look-alike of its category (``could_be``): the ones whose size
it does not reach, or all of them, and the categories it may be misread as when only part of it shows
(``unread_as``: a demo polygon as any other polygon), when it is too hidden or too small to read at all.

**Labels** (:class:`ImageReading`):

* an instance's own facts (its colour, its shape, where it is) only for a legible instance;
* ``count(c)``: only when every instance of ``c`` is legible and no other instance could be read as ``c``;
* ``absent(c)``: no instance of ``c``, and none that could be read as ``c``;
* ``clear_direction(a, b)``: left of / right of / above / below only where one axis clearly dominates: the two
  boxes are apart along it and overlap across it by at least half the smaller extent. A pair apart on both axes
  (diagonal) or overlapping on both is undecidable: annotators disagree on "above" for a shape higher up but far
  to the right;
* ``next_to_states(a, b)``: "next to" with a margin both ways: next to where the boxes sit side by side (sharing
  half the smaller height, as for left / right) with a horizontal gap from a quarter of the narrower width of
  overlap to :data:`NEXT_TO_NEAR` of it; not next to where they are apart by at least :data:`NEXT_TO_FAR` of the
  narrower width (or of the shorter height, vertically); undecidable in between, so that no answer rests on a
  few pixels (issue 53: a fixed bound split same-row pairs a viewer could not tell apart).

The rules are data (:class:`LegibilityRules`); :meth:`LegibilityRules.demo` holds the demo world's, measured from
its outlines in :mod:`sources.demo.legibility`. Other sources get the general defaults (no look-alike table).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from filters.geometry import InstanceGeometry
from sources.records import BBox, ImageRecord, Instance

DIRECTIONS = ("left of", "right of", "above", "below")
MIN_CROSS_OVERLAP = 0.5
"""Share of the smaller extent two boxes must share across the axis of a direction (rows for left/right)."""
NEXT_TO_NEAR = 0.25
"""Largest gap, as a share of the narrower box's width, between two boxes side by side that are next to each other."""
NEXT_TO_FAR = 1.0
"""Smallest gap, as a share of the narrower width (shorter height), at which two boxes are not next to each other."""
NEXT_TO, NOT_NEXT_TO, UNDECIDED = 1, 0, -1


@dataclass(frozen=True)
class LegibilityRules:
    """When a viewer can name an instance's category (see the module docstring)."""

    min_fraction: Mapping[str, float] = field(default_factory=dict)
    """Per category; categories not listed need ``default_fraction``."""
    default_fraction: float = 0.6
    """The geometry filter's "easy" bound (occlusion below 0.4) for sources without a table of their own."""
    min_size: float = 16.0
    lookalikes: Mapping[frozenset[str], float] = field(default_factory=dict)
    unread_as: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Category -> what an instance of it that cannot be read may be taken for, besides its look-alikes."""
    reference_area: int = 640 * 480
    max_truncation: float = 0.5

    @classmethod
    def demo(cls) -> "LegibilityRules":
        """The demo world's rules (:mod:`sources.demo.legibility`)."""
        from sources.demo import legibility as table

        return cls(min_fraction=dict(table.MIN_VISIBLE_FRACTION), min_size=table.MIN_SIZE_PX,
                   lookalikes=table.lookalike_sizes(), unread_as=table.unread_polygons(),
                   reference_area=table.REFERENCE_AREA)

    def fraction_needed(self, category: str) -> float:
        return self.min_fraction.get(category, self.default_fraction)

    def partners(self, category: str) -> dict[str, float]:
        """Look-alike category -> the size from which it is told from ``category``."""
        return {next(iter(pair - {category})): size for pair, size in self.lookalikes.items() if category in pair}


@dataclass(frozen=True)
class Reading:
    """What a viewer can tell about one instance."""

    category: str
    fraction: float
    """Visible share of the whole object."""
    size: float
    """``sqrt(visible area)`` in pixels of the reference image."""
    legible: bool
    could_be: frozenset[str]
    """Other categories a viewer might take it for (empty when legible)."""
    reason: str | None
    """Why it is not legible (``None`` when it is)."""


def read_instance(inst: Instance, geometry: InstanceGeometry, width: int, height: int,
                  rules: LegibilityRules) -> Reading:
    """The reading of one instance under ``rules`` (``geometry`` from :mod:`filters.geometry`)."""
    fraction = 1.0 - geometry.occlusion
    size = math.sqrt(max(inst.area, 0.0) * rules.reference_area / (width * height))
    partners = rules.partners(inst.category)
    reason = None
    if fraction < rules.fraction_needed(inst.category):
        reason = f"{fraction:.0%} visible < {rules.fraction_needed(inst.category):.0%}"
    elif geometry.occlusion_method != "amodal" and geometry.truncation >= rules.max_truncation:
        reason = f"cut by the frame ({geometry.truncation:.0%} of the box outline)"
    elif size < rules.min_size:
        reason = f"{size:.0f} px < {rules.min_size:.0f} px"
    if reason is not None:
        misread = frozenset(partners) | rules.unread_as.get(inst.category, frozenset())
        return Reading(inst.category, fraction, size, False, misread, reason)
    near = frozenset(c for c, needed in partners.items() if size < needed)
    if near:
        return Reading(inst.category, fraction, size, False, near,
                       f"{size:.0f} px: could be {', '.join(sorted(near))}")
    return Reading(inst.category, fraction, size, True, frozenset(), None)


def read_columns(categories: Sequence[str], category: np.ndarray, area: np.ndarray, width: np.ndarray,
                 height: np.ndarray, occlusion: np.ndarray, amodal: np.ndarray, truncation: np.ndarray,
                 rules: LegibilityRules) -> tuple[np.ndarray, np.ndarray]:
    """:func:`read_instance` over columns, for builders that keep a source as arrays (MIOH): per instance whether
    it is legible, and an instances x categories matrix of what it could be taken for (``could_be``).
    ``category`` indexes ``categories``; ``width``/``height`` are each instance's image size; ``amodal`` says
    where ``occlusion`` is exact (else the frame cut is read on the box, ``truncation``). The same rules as
    :func:`read_instance`, in the same order (a test holds the two to the same readings)."""
    n = len(categories)
    fraction = 1.0 - occlusion
    size = np.sqrt(np.maximum(area, 0.0) * rules.reference_area / (width * height))
    needed_fraction = np.array([rules.fraction_needed(c) for c in categories], dtype=np.float64)[category]
    unreadable = ((fraction < needed_fraction) | (~amodal & (truncation >= rules.max_truncation))
                  | (size < rules.min_size))
    index = {c: k for k, c in enumerate(categories)}
    told_apart = np.zeros((n, n), dtype=np.float64)  # 0: not look-alikes
    for pair, needed in rules.lookalikes.items():
        a, b = sorted(pair)
        if a in index and b in index:
            told_apart[index[a], index[b]] = told_apart[index[b], index[a]] = needed
    unread_as = np.zeros((n, n), dtype=bool)
    for c, others in rules.unread_as.items():
        if c in index:
            unread_as[index[c], [index[o] for o in others if o in index]] = True
    could_be = np.zeros((len(category), n), dtype=bool)
    rows = np.flatnonzero(((told_apart > 0).any(axis=1) | unread_as.any(axis=1))[category])  # with look-alikes
    kind, unread = category[rows], unreadable[rows, None]
    could_be[rows] = ((told_apart[kind] > 0) & (unread | (size[rows, None] < told_apart[kind]))
                      | (unread_as[kind] & unread))
    return ~unreadable & ~could_be.any(axis=1), could_be


class ImageReading:
    """The readings of every instance of one image and the labels they allow."""

    def __init__(self, image: ImageRecord, geometries: Mapping[str, InstanceGeometry], rules: LegibilityRules):
        self.image = image
        self.readings = {i.id: read_instance(i, geometries[i.id], image.width, image.height, rules)
                         for i in image.instances}

    def legible(self, inst: Instance) -> bool:
        return self.readings[inst.id].legible and not inst.iscrowd

    def count(self, category: str) -> int | None:
        """How many ``category`` the image shows, or ``None`` when a viewer could not be sure."""
        own = [i for i in self.image.instances if i.category == category]
        if not own or not all(self.legible(i) for i in own):
            return None
        if any(category in self.readings[i.id].could_be for i in self.image.instances):
            return None
        return len(own)

    def absent(self, category: str) -> bool:
        """No ``category`` in the image, and nothing a viewer could take for one."""
        return all(i.category != category and category not in self.readings[i.id].could_be
                   for i in self.image.instances)


def clear_directions(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """:func:`clear_direction` over arrays of boxes (rows ``(x, y, w, h)``): the index into :data:`DIRECTIONS`
    of where each ``a`` is relative to its ``b``, -1 where no axis clearly dominates."""
    ax0, ay0, aw, ah = (a[:, k] for k in range(4))
    bx0, by0, bw, bh = (b[:, k] for k in range(4))
    rows = np.minimum(ay0 + ah, by0 + bh) - np.maximum(ay0, by0)
    cols = np.minimum(ax0 + aw, bx0 + bw) - np.maximum(ax0, bx0)
    sideways = (rows >= MIN_CROSS_OVERLAP * np.minimum(ah, bh)) & (cols <= 0)
    upright = (cols >= MIN_CROSS_OVERLAP * np.minimum(aw, bw)) & (rows <= 0)
    return np.select([sideways & (ax0 + aw <= bx0), sideways, upright & (ay0 + ah <= by0), upright],
                     [0, 1, 2, 3], -1).astype(np.int64)


def clear_direction(a: BBox, b: BBox) -> str | None:
    """Where box ``a`` is relative to box ``b`` when one axis clearly dominates (module docstring), else ``None``:
    :func:`clear_directions` for one pair, so that the rule is stated once."""
    k = int(clear_directions(np.asarray([a], dtype=np.float64), np.asarray([b], dtype=np.float64))[0])
    return DIRECTIONS[k] if k >= 0 else None


def next_to_states(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether each box ``a`` is next to its ``b`` (rows ``(x, y, w, h)``; module docstring): :data:`NEXT_TO`,
    :data:`NOT_NEXT_TO` or :data:`UNDECIDED`."""
    ax0, ay0, aw, ah = (a[:, k] for k in range(4))
    bx0, by0, bw, bh = (b[:, k] for k in range(4))
    rows = np.minimum(ay0 + ah, by0 + bh) - np.maximum(ay0, by0)
    cols = np.minimum(ax0 + aw, bx0 + bw) - np.maximum(ax0, bx0)
    narrow, short = np.minimum(aw, bw), np.minimum(ah, bh)
    side_by_side = (rows >= MIN_CROSS_OVERLAP * short) & (-cols >= -narrow / 4) & (-cols <= NEXT_TO_NEAR * narrow)
    apart = (-cols >= NEXT_TO_FAR * narrow) | (-rows >= NEXT_TO_FAR * short)
    return np.select([side_by_side, apart], [NEXT_TO, NOT_NEXT_TO], UNDECIDED).astype(np.int64)
