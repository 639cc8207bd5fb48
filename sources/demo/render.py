"""Drawing and exact masks for demo scenes.

Every shape is a list of polygons filled with 1 (body) or 0 (holes: the ring's hole, the crescent's bite),
rasterised by PIL **without anti-aliasing**, so a pixel either belongs to a shape or does not. Shapes are
painted in draw order (``z``); a later shape overwrites the pixels of earlier ones. Hence, exactly:

* the **amodal** mask of a shape is its rasterised polygon set (``amodal_area`` counts it in full, also the
  part outside the image; ``amodal_in_image`` is what lies inside);
* the **visible** mask is the in-image amodal mask minus the amodal masks of every later shape, and the
  rendered pixels on it are the shape's colour (solid) or colour and pattern ink (other patterns).

Visibility limits (why: an object nobody can see is not a "hard positive", it is a wrong label). The scene is
walked from the front shape to the back one and a shape is dropped when

* less than :data:`MIN_VISIBLE_FRACTION` (30%) of its whole area is visible (occlusion and truncation
  together), or less than :data:`MIN_VISIBLE_FRACTION_SMALL` (70%) for small shapes (amodal area below
  :data:`SMALL_AREA_FRACTION` = 1% of the image): a tiny shape that is also hidden is unrecognisable;
* fewer than :data:`MIN_VISIBLE_PIXELS` of it are visible;
* it overlaps a kept shape in front of it by only a sliver (``0 < overlap < max(8 px, 3% of the smaller
  in-image area)``): every "in front of" relation must be visible in the picture.

Walking front to back makes each decision final: dropping a shape only uncovers the shapes behind it, which
are decided later. Kept shapes are renumbered ``z = 0..n-1``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from PIL import Image, ImageDraw

from .world import COLOURS, Scene, ShapeSpec

MIN_VISIBLE_FRACTION = 0.30
MIN_VISIBLE_FRACTION_SMALL = 0.70
SMALL_AREA_FRACTION = 0.01
MIN_VISIBLE_PIXELS = 20
MIN_OVERLAP_PIXELS = 8
MIN_OVERLAP_FRACTION = 0.03
REFERENCE_AREA = 320 * 240
"""The image area the pixel-count limits are stated for (the demo world's first size)."""

DARK_INK = (35, 35, 35)
LIGHT_INK = (250, 250, 250)
BACKGROUND_GRADIENT = 0.07
"""Relative brightness change across the image (a light gradient keeps backgrounds from looking flat)."""

Polygon = np.ndarray
"""``(n, 2)`` float array of unit-box vertices (``[-1, 1]``, y downwards)."""


@dataclass(frozen=True)
class RenderedShape:
    """One kept shape with its exact masks (full-image boolean arrays)."""

    spec: ShapeSpec
    """The sampled spec; its ``z`` is renumbered among kept shapes."""
    amodal_area: int
    """Pixels of the whole shape, including any part outside the image."""
    amodal_in_image: np.ndarray
    visible: np.ndarray
    region: tuple[int, int, int, int]
    """``(x0, y0, x1, y1)``: the part of the image the shape's box covers (bounds array work)."""


@dataclass(frozen=True)
class RenderedScene:
    """Pixels (``(h, w, 3)`` uint8) and kept shapes in draw order."""

    scene: Scene
    pixels: np.ndarray
    shapes: tuple[RenderedShape, ...]
    dropped: int
    """Sampled shapes removed by the visibility limits."""


@dataclass(frozen=True)
class _Layer:
    """A rasterised shape: its full mask in a local box whose top-left image pixel is ``(x0, y0)``."""

    spec: ShapeSpec
    x0: int
    y0: int
    mask: np.ndarray

    def region(self, width: int, height: int) -> tuple[int, int, int, int]:
        """``(x0, y0, x1, y1)`` of the local box clipped to the image (may be empty)."""
        h, w = self.mask.shape
        return max(self.x0, 0), max(self.y0, 0), min(self.x0 + w, width), min(self.y0 + h, height)

    def in_image(self, width: int, height: int) -> np.ndarray:
        """The part of the mask inside the image, as a full-image boolean array."""
        full = np.zeros((height, width), dtype=bool)
        ix0, iy0, ix1, iy1 = self.region(width, height)
        if ix0 < ix1 and iy0 < iy1:
            full[iy0:iy1, ix0:ix1] = self.mask[iy0 - self.y0:iy1 - self.y0, ix0 - self.x0:ix1 - self.x0]
        return full


def render_scene(scene: Scene) -> RenderedScene:
    """Rasterise, apply the visibility limits and paint ``scene``."""
    layers = [rasterise(spec) for spec in scene.shapes]
    shapes = _apply_visibility_limits(layers, scene.width, scene.height)
    pixels = background_pixels(scene)
    for shape in shapes:
        paint(pixels, shape)
    return RenderedScene(scene=scene, pixels=pixels, shapes=shapes, dropped=len(layers) - len(shapes))


def encode_png(pixels: np.ndarray) -> bytes:
    """PNG bytes of an RGB array (no metadata, so equal pixels give equal bytes)."""
    import io

    buffer = io.BytesIO()
    Image.fromarray(pixels, mode="RGB").save(buffer, format="PNG", compress_level=1)
    return buffer.getvalue()


# --- shapes ---------------------------------------------------------------------------------------------


def _regular(n: int, radius: float = 1.0, phase: float = -math.pi / 2) -> Polygon:
    """A regular ``n``-gon (first vertex straight up by default)."""
    angles = phase + 2 * math.pi * np.arange(n) / n
    return np.stack([radius * np.cos(angles), radius * np.sin(angles)], axis=1)


def _disc(radius: float, cx: float = 0.0, cy: float = 0.0, n: int = 96) -> Polygon:
    return _regular(n, radius, 0.0) + np.array([cx, cy])


def _star() -> Polygon:
    outer, inner = _regular(5, 1.0), _regular(5, 0.42, -math.pi / 2 + math.pi / 5)
    return np.stack([outer, inner], axis=1).reshape(-1, 2)


def _heart() -> Polygon:
    t = np.linspace(0, 2 * math.pi, 96, endpoint=False)
    x = 16 * np.sin(t) ** 3
    y = -(13 * np.cos(t) - 5 * np.cos(2 * t) - 2 * np.cos(3 * t) - np.cos(4 * t))
    return np.stack([x / 17.0, (y + 2.5) / 15.0], axis=1)


def _cross(arm: float = 0.32) -> Polygon:
    a = arm
    return np.array([(-a, -1), (a, -1), (a, -a), (1, -a), (1, a), (a, a), (a, 1), (-a, 1), (-a, a), (-1, a),
                     (-1, -a), (-a, -a)], dtype=float)


def _arrow() -> Polygon:
    return np.array([(-1, -0.25), (0.15, -0.25), (0.15, -0.7), (1, 0), (0.15, 0.7), (0.15, 0.25), (-1, 0.25)],
                    dtype=float)


@lru_cache(maxsize=None)
def outline(category: str) -> tuple[tuple[Polygon, int], ...]:
    """The polygons of a category in unit-box coordinates, each with its fill (1 body, 0 hole)."""
    square = np.array([(-1, -1), (1, -1), (1, 1), (-1, 1)], dtype=float)
    shapes: dict[str, tuple[tuple[Polygon, int], ...]] = {
        "circle": ((_disc(1.0), 1),),
        "square": ((square * 0.9, 1),),
        "triangle": ((np.array([(0, -1), (1, 0.8), (-1, 0.8)], dtype=float), 1),),
        "star": ((_star(), 1),),
        "heart": ((_heart(), 1),),
        "hexagon": ((_regular(6, 1.0, 0.0), 1),),
        "diamond": ((np.array([(0, -1), (0.62, 0), (0, 1), (-0.62, 0)], dtype=float), 1),),
        "cross": ((_cross(), 1),),
        "crescent": ((_disc(1.0), 1), (_disc(0.82, 0.45, -0.25), 0)),
        "pentagon": ((_regular(5, 1.0), 1),),
        "ring": ((_disc(1.0), 1), (_disc(0.55), 0)),
        "arrow": ((_arrow(), 1),),
        "octagon": ((_regular(8, 1.0, math.pi / 8), 1),),
        "trapezoid": ((np.array([(-0.55, -0.7), (0.55, -0.7), (1, 0.7), (-1, 0.7)], dtype=float), 1),),
    }
    return shapes[category]


def rasterise(spec: ShapeSpec) -> _Layer:
    """The full (amodal) mask of a shape in a local box around it."""
    theta = math.radians(spec.rotation)
    rotation = np.array([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]])
    polygons = [((poly @ rotation.T) * spec.r + (spec.cx, spec.cy), fill) for poly, fill in outline(spec.category)]
    every = np.concatenate([p for p, _ in polygons])
    x0, y0 = math.floor(every[:, 0].min()) - 1, math.floor(every[:, 1].min()) - 1
    x1, y1 = math.ceil(every[:, 0].max()) + 2, math.ceil(every[:, 1].max()) + 2
    canvas = Image.new("L", (x1 - x0, y1 - y0), 0)
    draw = ImageDraw.Draw(canvas)
    for points, fill in polygons:
        draw.polygon([(float(x - x0), float(y - y0)) for x, y in points], fill=255 * fill)
    return _Layer(spec=spec, x0=x0, y0=y0, mask=np.asarray(canvas) > 0)


# --- visibility -----------------------------------------------------------------------------------------


def _apply_visibility_limits(layers: list[_Layer], width: int, height: int) -> tuple[RenderedShape, ...]:
    """Drop shapes that break the limits (front to back, see the module docstring); renumber ``z``."""
    covered = np.zeros((height, width), dtype=bool)
    kept: list[_Kept] = []
    for layer in sorted(layers, key=lambda l: l.spec.z, reverse=True):
        amodal_area = int(layer.mask.sum())
        in_image = layer.in_image(width, height)
        visible = in_image & ~covered
        candidate = _Kept(layer, amodal_area, in_image, visible, layer.region(width, height),
                          int(np.count_nonzero(in_image)))
        if not _visible_enough(amodal_area, int(np.count_nonzero(visible)), width * height):
            continue
        if any(_sliver_overlap(candidate, other, width * height) for other in kept):
            continue
        kept.append(candidate)
        covered |= in_image
    kept.reverse()
    return tuple(
        RenderedShape(spec=_renumbered(k.layer.spec, z), amodal_area=k.amodal_area, amodal_in_image=k.in_image,
                      visible=k.visible, region=k.region)
        for z, k in enumerate(kept)
    )


@dataclass(frozen=True)
class _Kept:
    """A shape while the visibility limits are applied."""

    layer: _Layer
    amodal_area: int
    in_image: np.ndarray
    visible: np.ndarray
    region: tuple[int, int, int, int]
    in_image_area: int


def _visible_enough(amodal_area: int, visible_area: int, image_area: int) -> bool:
    small = amodal_area < SMALL_AREA_FRACTION * image_area
    limit = MIN_VISIBLE_FRACTION_SMALL if small else MIN_VISIBLE_FRACTION
    return visible_area >= MIN_VISIBLE_PIXELS * area_scale(image_area) and visible_area >= limit * amodal_area


def area_scale(image_area: int) -> float:
    """How many times :data:`REFERENCE_AREA` an image is: the pixel-count limits above are set for 320x240 and
    grow with the image, so a larger rendering of a seed keeps (nearly) the same scenes, hence the same items."""
    return image_area / REFERENCE_AREA


def _sliver_overlap(shape: _Kept, in_front: _Kept, image_area: int) -> bool:
    """True when ``shape`` overlaps ``in_front`` by a few pixels only (counted inside the image)."""
    x0, y0 = max(shape.region[0], in_front.region[0]), max(shape.region[1], in_front.region[1])
    x1, y1 = min(shape.region[2], in_front.region[2]), min(shape.region[3], in_front.region[3])
    if x0 >= x1 or y0 >= y1:
        return False
    overlap = int(np.count_nonzero(shape.in_image[y0:y1, x0:x1] & in_front.in_image[y0:y1, x0:x1]))
    smaller = min(shape.in_image_area, in_front.in_image_area)
    limit = max(MIN_OVERLAP_PIXELS * area_scale(image_area), MIN_OVERLAP_FRACTION * smaller)
    return 0 < overlap < limit


def _renumbered(spec: ShapeSpec, z: int) -> ShapeSpec:
    from dataclasses import replace

    return replace(spec, z=z)


# --- painting -------------------------------------------------------------------------------------------


def ink_colour(colour: str) -> tuple[int, int, int]:
    """The pattern ink for a colour: dark on light colours, white on dark ones."""
    r, g, b = COLOURS[colour]
    return DARK_INK if 0.299 * r + 0.587 * g + 0.114 * b > 150 else LIGHT_INK


def background_pixels(scene: Scene) -> np.ndarray:
    """The theme colour with a light linear gradient in the scene's direction.

    The gradient position ``t`` in ``[-1, 1]`` is quantised to 256 levels and looked up in a colour table:
    cheaper than colour arithmetic on every pixel, and invisible at this amplitude.
    """
    ca, sa = math.cos(scene.gradient_angle), math.sin(scene.gradient_angle)
    extent = 0.5 * (scene.width * abs(ca) + scene.height * abs(sa)) or 1.0
    xs = (np.arange(scene.width, dtype=np.float32) - scene.width / 2) * np.float32(127.5 * ca / extent)
    ys = (np.arange(scene.height, dtype=np.float32) - scene.height / 2) * np.float32(127.5 * sa / extent)
    level = np.clip(ys[:, None] + xs[None, :] + np.float32(127.5), 0, 255).astype(np.uint8)
    t = np.linspace(-1.0, 1.0, 256)[:, None]
    table = np.asarray(scene.background, dtype=np.float64)[None, :] * (1.0 + BACKGROUND_GRADIENT * t)
    table = np.clip(np.round(table), 0, 255).astype(np.uint8)
    return np.take(table, level, axis=0)


def paint(pixels: np.ndarray, shape: RenderedShape) -> None:
    """Paint a shape's whole in-image mask (later shapes overwrite it where they are in front).

    Pattern ink stays off the shape's one-pixel rim, so a white dot or stripe never reads as a notch in the
    outline; the rim is part of the mask like every other pixel of the shape.
    """
    x0, y0, x1, y1 = shape.region
    local = shape.amodal_in_image[y0:y1, x0:x1]
    ys, xs = np.nonzero(local)
    if len(xs) == 0:
        return
    spec = shape.spec
    ink = pattern_ink(spec, xs + x0, ys + y0) & _interior(local)[ys, xs]
    colours = np.where(ink[:, None], np.array(ink_colour(spec.colour), np.uint8),
                       np.array(COLOURS[spec.colour], np.uint8))
    pixels[ys + y0, xs + x0] = colours


def _interior(mask: np.ndarray) -> np.ndarray:
    """Pixels of ``mask`` whose four neighbours are in ``mask`` too (a one-pixel erosion)."""
    padded = np.pad(mask, 1, constant_values=False)
    return (mask & padded[:-2, 1:-1] & padded[2:, 1:-1] & padded[1:-1, :-2] & padded[1:-1, 2:])


def pattern_period(spec: ShapeSpec) -> int:
    """Pattern period in pixels: scales with the shape (4..10 px) so small shapes still show their pattern."""
    return int(min(max(round(spec.r / 3.0), 4), 10))


def pattern_ink(spec: ShapeSpec, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Which of the pixels ``(xs, ys)`` of a shape get the pattern ink (all ``False`` for solid)."""
    u = xs - int(round(spec.cx))
    v = ys - int(round(spec.cy))
    p = pattern_period(spec)
    if spec.pattern == "solid":
        return np.zeros(len(xs), dtype=bool)
    if spec.pattern == "striped":
        return ((u + v) % p) < (p // 2)
    if spec.pattern == "checkered":
        cell = max(2, (p + 1) // 2)
        return ((u // cell) + (v // cell)) % 2 == 0
    if spec.pattern == "dotted":
        q = max(p, 5)
        du = (u % q) - (q - 1) / 2.0
        dv = (v % q) - (q - 1) / 2.0
        return du * du + dv * dv <= (0.3 * q) ** 2 + 0.5
    raise ValueError(f"unknown pattern {spec.pattern!r}")
