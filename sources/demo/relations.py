"""Spatial relation rules of the demo world: exact, documented, re-derivable.

The demo world lists, for every ordered pair of distinct instances of an image, **every** predicate below that
holds and none that does not, so a consumer may read a missing relation as false. The rules use only what an
:class:`~sources.records.Instance` of the demo world carries - its visible box (``bbox``), its draw order
(``z``) and its whole-object mask (``amodal_rle``) - so an independent checker can re-derive them from the
records with :func:`geometry_of` and :func:`relations_between`.

Let ``a`` and ``b`` have visible boxes ``(x, y, w, h)`` (y grows downwards) and centres
``c = (x + w/2, y + h/2)``; ``dx = c_b.x - c_a.x`` and ``dy = c_b.y - c_a.y``.

* ``a left of b``   iff ``dx > |dy|`` (the horizontal offset dominates) and ``dx >= (w_a + w_b) / 4``
  (the boxes overlap horizontally by at most half of their mean width);
* ``a right of b``  iff ``b left of a``;
* ``a above b``     iff ``dy > |dx|`` and ``dy >= (h_a + h_b) / 4``;
* ``a below b``     iff ``b above a``;
* ``a next to b``   iff ``|dx| > |dy|`` (side by side), the boxes overlap vertically (``> 0`` rows) and the
  horizontal gap ``g = |dx| - (w_a + w_b) / 2`` lies in ``[-min(w_a, w_b) / 4, max(4, min(w_a, w_b) / 2)]``
  (they may touch or overlap a little, never be far apart). ``next to`` is symmetric and implies ``left of``
  or ``right of``;
* ``a in front of b`` iff the whole-object masks inside the image share at least one pixel and ``z_a > z_b``;
* ``a behind b``    iff ``b in front of a``.

An exact diagonal (``|dx| == |dy|``) is neither left/right nor above/below: no rule has to pick a winner. The
world never lets two shapes overlap by only a few pixels (see :mod:`sources.demo.render`), so every ``in front
of`` is visible in the picture.
"""

from __future__ import annotations

from dataclasses import dataclass

from pycocotools import mask as mask_util

from ..records import RLE, BBox, Instance

PREDICATES: tuple[str, ...] = ("left of", "right of", "above", "below", "next to", "in front of", "behind")
"""Every predicate of the demo world, in the order :func:`relations_between` returns them."""

INVERSE: dict[str, str] = {
    "left of": "right of", "right of": "left of", "above": "below", "below": "above",
    "next to": "next to", "in front of": "behind", "behind": "in front of",
}
"""``a p b`` holds exactly when ``b INVERSE[p] a`` holds."""

NEXT_TO_MIN_GAP_PX = 4.0


@dataclass(frozen=True)
class Geometry:
    """What the relation rules look at for one instance."""

    bbox: BBox
    """Visible box ``(x, y, w, h)``."""
    z: int
    """Draw order: larger is in front."""
    amodal_rle: RLE
    """Whole-object mask inside the image (compressed COCO RLE with ``str`` counts)."""


def geometry_of(instance: Instance) -> Geometry:
    """The geometry of a demo-world instance (one that carries ``z`` and ``amodal_rle``)."""
    amodal = getattr(instance, "amodal_rle", None)
    if instance.z is None or amodal is None:
        raise ValueError(f"instance {instance.id} has no z or amodal mask: relations need both")
    return Geometry(bbox=instance.bbox, z=instance.z, amodal_rle=amodal)


def relations_between(a: Geometry, b: Geometry) -> list[str]:
    """Every predicate ``p`` such that ``a p b`` holds, in :data:`PREDICATES` order."""
    held: list[str] = []
    dx, dy = _centre_offset(a.bbox, b.bbox)
    half_mean_w = (a.bbox[2] + b.bbox[2]) / 4.0
    half_mean_h = (a.bbox[3] + b.bbox[3]) / 4.0
    if dx > abs(dy) and dx >= half_mean_w:
        held.append("left of")
    if -dx > abs(dy) and -dx >= half_mean_w:
        held.append("right of")
    if dy > abs(dx) and dy >= half_mean_h:
        held.append("above")
    if -dy > abs(dx) and -dy >= half_mean_h:
        held.append("below")
    if _next_to(a.bbox, b.bbox, dx, dy):
        held.append("next to")
    if a.z != b.z and amodal_overlap(a.amodal_rle, b.amodal_rle) > 0:
        held.append("in front of" if a.z > b.z else "behind")
    return held


def amodal_overlap(a: RLE, b: RLE) -> int:
    """Number of pixels two RLE masks share."""
    merged = mask_util.merge([_bytes_rle(a), _bytes_rle(b)], intersect=True)
    return int(mask_util.area(merged))


def _centre_offset(a: BBox, b: BBox) -> tuple[float, float]:
    """``(dx, dy)`` from the centre of box ``a`` to the centre of box ``b``."""
    return (b[0] + b[2] / 2.0) - (a[0] + a[2] / 2.0), (b[1] + b[3] / 2.0) - (a[1] + a[3] / 2.0)


def _next_to(a: BBox, b: BBox, dx: float, dy: float) -> bool:
    """Side by side, sharing rows, with a small gap (or a small overlap) between the boxes."""
    if not abs(dx) > abs(dy):
        return False
    shared_rows = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
    if shared_rows <= 0:
        return False
    narrow = min(a[2], b[2])
    gap = abs(dx) - (a[2] + b[2]) / 2.0
    return -narrow / 4.0 <= gap <= max(NEXT_TO_MIN_GAP_PX, narrow / 2.0)


def _bytes_rle(rle: RLE) -> dict:
    """pycocotools wants ``bytes`` counts; records keep ``str`` so they survive JSON."""
    counts = rle["counts"]
    return {"size": list(rle["size"]), "counts": counts.encode("ascii") if isinstance(counts, str) else counts}
