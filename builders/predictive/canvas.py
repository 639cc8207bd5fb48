"""Drawing one image of a pattern sequence from its state: icons (sprites), filled cells and seven-segment digits.

A frame is a list of primitives drawn in order onto a white canvas. Nothing is anti-aliased - icons are resized
and rotated with nearest-neighbour sampling and pasted through their binary alpha - so every pixel is either
background, grid line or exactly the colour of one primitive; the pixel checker relies on that.

Angles are degrees **clockwise** (how the pattern text speaks); PIL rotates counter-clockwise, hence the sign.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from PIL import Image

from builders.predictive.icons import IconSet

BACKGROUND = (255, 255, 255)
GRID = (215, 215, 215)
SHADOW = (110, 110, 110)


@dataclass(frozen=True)
class Sprite:
    """An icon centred at ``(cx, cy)`` in a ``size`` x ``size`` box, turned ``angle`` degrees clockwise,
    optionally mirrored left-right, recoloured to one flat ``colour`` (``None``: its own colours)."""

    icon: str
    cx: float
    cy: float
    size: int
    angle: float = 0.0
    colour: tuple[int, int, int] | None = None
    mirrored: bool = False
    variant: int = 0


@dataclass(frozen=True)
class Cell:
    """A filled axis-aligned rectangle ``[x0, x1) x [y0, y1)``."""

    x0: int
    y0: int
    x1: int
    y1: int
    colour: tuple[int, int, int]


@dataclass(frozen=True)
class Grid:
    """Grid lines: ``cols`` x ``rows`` cells of ``cell`` pixels from ``(x0, y0)``."""

    x0: int
    y0: int
    cols: int
    rows: int
    cell: int


Primitive = Sprite | Cell | Grid

# Seven-segment layout in a digit box of width w and height h with stroke t:
#   a: top, b: top right, c: bottom right, d: bottom, e: bottom left, f: top left, g: middle.
SEGMENTS_OF_DIGIT = {
    0: "abcdef", 1: "bc", 2: "abdeg", 3: "abcdg", 4: "bcfg", 5: "acdfg", 6: "acdefg", 7: "abc", 8: "abcdefg",
    9: "abcdfg",
}


def segment_boxes(x0: int, y0: int, w: int, h: int, t: int) -> dict[str, tuple[int, int, int, int]]:
    """The rectangle ``(x0, y0, x1, y1)`` of each segment of a digit whose box starts at ``(x0, y0)``."""
    mid = y0 + (h - t) // 2
    return {
        "a": (x0 + t, y0, x0 + w - t, y0 + t),
        "b": (x0 + w - t, y0 + t, x0 + w, mid),
        "c": (x0 + w - t, mid + t, x0 + w, y0 + h - t),
        "d": (x0 + t, y0 + h - t, x0 + w - t, y0 + h),
        "e": (x0, mid + t, x0 + t, y0 + h - t),
        "f": (x0, y0 + t, x0 + t, mid),
        "g": (x0 + t, mid, x0 + w - t, mid + t),
    }


def digit_cells(digit: int, x0: int, y0: int, w: int, h: int, t: int, colour: tuple[int, int, int]) -> list[Cell]:
    boxes = segment_boxes(x0, y0, w, h, t)
    return [Cell(*boxes[s], colour) for s in SEGMENTS_OF_DIGIT[digit]]


def number_cells(text: str, x0: int, y0: int, w: int, h: int, t: int, gap: int,
                 colour: tuple[int, int, int]) -> list[Cell]:
    """Seven-segment cells of a string of digits and colons, left to right from ``(x0, y0)``."""
    out: list[Cell] = []
    x = x0
    for ch in text:
        if ch == ":":
            out += [Cell(x, y0 + h // 3 - t // 2, x + t, y0 + h // 3 + t - t // 2, colour),
                    Cell(x, y0 + 2 * h // 3 - t // 2, x + t, y0 + 2 * h // 3 + t - t // 2, colour)]
            x += t + gap
        else:
            out += digit_cells(int(ch), x, y0, w, h, t, colour)
            x += w + gap
    return out


def number_width(text: str, w: int, t: int, gap: int) -> int:
    return sum((t if ch == ":" else w) + gap for ch in text) - gap


def _sprite_rgba(icons: IconSet, s: Sprite) -> Image.Image:
    arr = icons.image(s.icon, s.variant)
    img = Image.fromarray(np.ascontiguousarray(arr), "RGBA").resize((s.size, s.size), Image.NEAREST)
    if s.colour is not None:
        flat = np.asarray(img).copy()
        flat[..., :3] = s.colour
        img = Image.fromarray(flat, "RGBA")
    if s.mirrored:
        img = img.transpose(Image.FLIP_LEFT_RIGHT)
    if s.angle % 360:
        img = img.rotate(-s.angle, resample=Image.NEAREST, expand=True)
    return img


def draw(width: int, height: int, primitives: Sequence[Primitive], icons: IconSet) -> Image.Image:
    """The RGB image of one frame."""
    canvas = Image.new("RGB", (width, height), BACKGROUND)
    pixels = None
    for p in primitives:
        if isinstance(p, Grid):
            pixels = np.asarray(canvas).copy()
            x1, y1 = p.x0 + p.cols * p.cell, p.y0 + p.rows * p.cell
            for c in range(p.cols + 1):
                pixels[p.y0:y1 + 1, min(width - 1, p.x0 + c * p.cell)] = GRID
            for r in range(p.rows + 1):
                pixels[min(height - 1, p.y0 + r * p.cell), p.x0:x1 + 1] = GRID
            canvas = Image.fromarray(pixels, "RGB")
        elif isinstance(p, Cell):
            canvas.paste(p.colour, (p.x0, p.y0, p.x1, p.y1))
        else:
            img = _sprite_rgba(icons, p)
            x0 = int(round(p.cx - img.width / 2))
            y0 = int(round(p.cy - img.height / 2))
            canvas.paste(img.convert("RGB"), (x0, y0), img.getchannel("A"))
    return canvas


def png_bytes(image: Image.Image) -> bytes:
    """PNG with fast compression (the images are flat colour, so level 1 is already small)."""
    buf = io.BytesIO()
    image.save(buf, format="PNG", compress_level=1)
    return buf.getvalue()
