"""What a person can identify in a demo picture, restated once for the independent checkers (MIOH's, MM-SAP's).

Restated from sources/demo/legibility.py and filters/legibility.py, not imported: a checker that used the
builder's rules could not catch them being wrong. The demo world's figures: the visible share of the whole
shape a viewer needs per category (polygons are read from their corners), the size floor as sqrt(visible
area) in px at 640x480, and the look-alike pairs with their measured outline distance (told apart from
``1.97 / distance`` px, at least the floor). Directions hold only where one axis clearly dominates; "next to"
only side by side with a small gap, and is false only far apart (a band between is undecidable).
"""

from __future__ import annotations

POLYGONS = ("square", "triangle", "hexagon", "diamond", "pentagon", "octagon", "trapezoid")
MIN_SIZE = 16.0
LOOKALIKE_DISTANCE = {("circle", "octagon"): 0.041, ("circle", "hexagon"): 0.076, ("hexagon", "octagon"): 0.083,
                      ("circle", "pentagon"): 0.113, ("octagon", "pentagon"): 0.115, ("hexagon", "pentagon"): 0.122,
                      ("pentagon", "trapezoid"): 0.167, ("octagon", "square"): 0.172, ("circle", "square"): 0.182,
                      ("hexagon", "square"): 0.189, ("pentagon", "square"): 0.195}


def size(area: float, width: int, height: int) -> float:
    """sqrt(visible area) in px, as if the image were 640x480."""
    return (max(area, 0.0) * 640 * 480 / (width * height)) ** 0.5


def enough_shown(category: str, visible: float) -> bool:
    """Whether ``visible`` (the share of the whole shape in view) lets a viewer name ``category``."""
    return visible >= (0.9 if category in POLYGONS else 0.75)


def lookalikes(category: str, readable: bool, px: float) -> set[str]:
    """What a viewer might take a ``category`` shape of size ``px`` for: every look-alike when unreadable, and
    then any other polygon for a polygon (a triangle without its apex shows as a trapezoid)."""
    near = {b if category == a else a for (a, b), d in LOOKALIKE_DISTANCE.items()
            if category in (a, b) and (not readable or px < max(MIN_SIZE, 1.97 / d))}
    if not readable and category in POLYGONS:
        near |= set(POLYGONS) - {category}
    return near


def side(a: dict, b: dict) -> str | None:
    """Where box ``a`` is relative to box ``b`` when one axis clearly dominates: apart along it, sharing at least
    half the smaller extent across it; None for diagonal or overlapping pairs."""
    (ax, ay, aw, ah), (bx, by, bw, bh) = a["bbox"], b["bbox"]
    rows = min(ay + ah, by + bh) - max(ay, by)
    cols = min(ax + aw, bx + bw) - max(ax, bx)
    if cols <= 0 and rows >= min(ah, bh) / 2:
        return "left of" if ax + aw <= bx else "right of"
    if rows <= 0 and cols >= min(aw, bw) / 2:
        return "above" if ay + ah <= by else "below"
    return None


def next_to(a: dict, b: dict) -> bool | None:
    """Whether box ``a`` is next to box ``b`` with a margin both ways: True side by side (sharing half the shorter
    height) with a gap between a quarter of the narrower width of overlap and a quarter of it apart; False apart by
    at least the narrower width, or vertically by the shorter height; None in between."""
    (ax, ay, aw, ah), (bx, by, bw, bh) = a["bbox"], b["bbox"]
    gap_x = max(ax, bx) - min(ax + aw, bx + bw)
    gap_y = max(ay, by) - min(ay + ah, by + bh)
    narrow, short = min(aw, bw), min(ah, bh)
    if -gap_y >= short / 2 and -narrow / 4 <= gap_x <= narrow / 4:
        return True
    if gap_x >= narrow or gap_y >= short:
        return False
    return None
