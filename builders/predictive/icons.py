"""Entities of the abstract pattern sequences: built-in procedural icons, or a user's Icon645-style folder.

The paper draws its entities from Icon645 (one folder per category of transparent PNG icons). ``--icons DIR``
reads that layout; without it Mirage draws its own icons, so the benchmark builds with no data at all.

Every icon is held as a square RGBA array whose alpha is **binary** (0 or 255): a pixel belongs to the icon or
not, so masks in the rendered images are exact and the pixel checker can compare shapes between frames.
User icons are thresholded at alpha 128 and padded to a square; their colours are kept.

Built-in icons are flat polygons in one colour each, never white and never the grid grey of the canvas, and
all of them are asymmetric under rotation by less than a full turn (a rotating icon must look different at
every angle, or a rotation pattern would have no visible rule).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from sources.errors import ConfigError, SourceError

ICON_SIZE = 96
"""Side of the square an icon is stored at (it is resized with nearest-neighbour sampling when drawn)."""
ALPHA_THRESHOLD = 128
MIN_ICON_SIDE = 8
"""A user icon smaller than this on either side is rejected: it would be unrecognisable when drawn."""

# Polygons in a unit box [0, 1] x [0, 1], y downwards; one colour per icon.
_BUILTIN: dict[str, tuple[tuple[int, int, int], tuple[tuple[tuple[float, float], ...], ...]]] = {
    "arrow": ((200, 40, 40), (((0.5, 0.02), (0.92, 0.45), (0.64, 0.45), (0.64, 0.98), (0.36, 0.98), (0.36, 0.45),
                                (0.08, 0.45)),)),
    "flag": ((30, 110, 200), (((0.18, 0.02), (0.28, 0.02), (0.28, 0.98), (0.18, 0.98)),
                              ((0.28, 0.04), (0.9, 0.22), (0.28, 0.44)))),
    "house": ((150, 90, 40), (((0.5, 0.04), (0.96, 0.45), (0.84, 0.45), (0.84, 0.96), (0.58, 0.96), (0.58, 0.7),
                                (0.42, 0.7), (0.42, 0.96), (0.16, 0.96), (0.16, 0.45), (0.04, 0.45)),
                               ((0.7, 0.08), (0.8, 0.08), (0.8, 0.3), (0.7, 0.2)))),
    "rocket": ((120, 60, 170), (((0.5, 0.02), (0.68, 0.3), (0.68, 0.7), (0.86, 0.92), (0.6, 0.82), (0.4, 0.82),
                                 (0.14, 0.92), (0.32, 0.7), (0.32, 0.3)),)),
    "fish": ((240, 130, 20), (((0.02, 0.5), (0.3, 0.22), (0.62, 0.3), (0.78, 0.5), (0.98, 0.25), (0.9, 0.5),
                               (0.98, 0.75), (0.78, 0.5), (0.62, 0.7), (0.3, 0.78)),)),
    "boot": ((40, 150, 70), (((0.22, 0.04), (0.52, 0.04), (0.52, 0.6), (0.92, 0.72), (0.92, 0.96), (0.22, 0.96)),)),
    "key": ((200, 160, 20), (((0.05, 0.3), (0.4, 0.3), (0.4, 0.42), (0.95, 0.42), (0.95, 0.58), (0.85, 0.58),
                              (0.85, 0.75), (0.72, 0.75), (0.72, 0.58), (0.4, 0.58), (0.4, 0.7), (0.05, 0.7)),)),
    "bell": ((20, 160, 170), (((0.46, 0.04), (0.56, 0.04), (0.56, 0.14), (0.78, 0.3), (0.82, 0.74), (0.96, 0.84),
                               (0.06, 0.84), (0.2, 0.74), (0.24, 0.3), (0.46, 0.14)),
                              ((0.4, 0.86), (0.62, 0.86), (0.62, 0.98), (0.4, 0.98)))),
    "tree": ((20, 120, 40), (((0.5, 0.02), (0.86, 0.62), (0.58, 0.62), (0.58, 0.98), (0.42, 0.98), (0.42, 0.62),
                              (0.14, 0.62)), ((0.5, 0.02), (0.7, 0.3), (0.9, 0.3)))),
    "cup": ((210, 70, 140), (((0.08, 0.18), (0.7, 0.18), (0.64, 0.92), (0.14, 0.92)),
                             ((0.7, 0.3), (0.94, 0.3), (0.94, 0.66), (0.68, 0.66), (0.69, 0.56), (0.84, 0.56),
                              (0.84, 0.4), (0.7, 0.4)))),
}
BUILTIN_ICONS: tuple[str, ...] = tuple(_BUILTIN)


def _draw_builtin(name: str) -> np.ndarray:
    colour, polygons = _BUILTIN[name]
    img = Image.new("RGBA", (ICON_SIZE, ICON_SIZE), (0, 0, 0, 0))
    draw = ImageDraw.Draw(img)
    scale = ICON_SIZE - 1
    for poly in polygons:
        draw.polygon([(x * scale, y * scale) for x, y in poly], fill=(*colour, 255))
    return np.asarray(img).copy()


@dataclass
class IconSet:
    """Icons by category: the built-in ones, or one PNG per category from a user's folder.

    ``categories`` is in a fixed order (sorted names), so a seeded choice picks the same icon on every machine.
    User icons are read when first used (Icon645 has 645k files; reading them all to build 1,000 entries would
    be wasteful); a file that cannot be used is a :class:`SourceError` naming it.
    """

    categories: tuple[str, ...]
    files: dict[str, tuple[Path, ...]] = field(default_factory=dict)
    origin: str = "builtin"
    _cache: dict[tuple[str, int], np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def builtin(self) -> bool:
        return not self.files

    def files_of(self, category: str) -> tuple[Path, ...]:
        return self.files.get(category, ())

    def image(self, category: str, variant: int = 0) -> np.ndarray:
        """The RGBA array (``ICON_SIZE`` square, binary alpha) of one icon of ``category``."""
        key = (category, variant)
        if key not in self._cache:
            if self.builtin or (category in _BUILTIN and category not in self.files):
                self._cache[key] = _builtin_icon(category)
            else:
                files = self.files[category]
                self._cache[key] = load_icon_file(files[variant % len(files)])
        return self._cache[key]



@cache
def _builtin_icon(name: str) -> np.ndarray:
    arr = _draw_builtin(name)
    arr.setflags(write=False)
    return arr


def builtin_icons() -> IconSet:
    return IconSet(categories=BUILTIN_ICONS)


def load_icon_file(path: Path) -> np.ndarray:
    """One user icon as a square binary-alpha RGBA array; :class:`SourceError` when it cannot be used."""
    try:
        with Image.open(path) as img:
            img.load()
            has_alpha = img.mode in ("RGBA", "LA", "PA") or (img.mode == "P" and "transparency" in img.info)
            if not has_alpha:
                raise SourceError(path, "", f"icon has no transparency (mode {img.mode}); Icon645 icons are RGBA PNGs")
            rgba = img.convert("RGBA")
    except SourceError:
        raise
    except (OSError, ValueError, Image.DecompressionBombError) as exc:
        raise SourceError(path, "", f"not a readable PNG icon ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from None
    w, h = rgba.size
    if min(w, h) < MIN_ICON_SIDE:
        raise SourceError(path, "", f"icon is {w}x{h} pixels; at least {MIN_ICON_SIDE}x{MIN_ICON_SIDE} is needed")
    arr = np.asarray(rgba).copy()
    opaque = arr[..., 3] >= ALPHA_THRESHOLD
    if not opaque.any():
        raise SourceError(path, "", "icon is fully transparent")
    ys, xs = np.nonzero(opaque)
    arr = arr[ys.min(): ys.max() + 1, xs.min(): xs.max() + 1]
    opaque = opaque[ys.min(): ys.max() + 1, xs.min(): xs.max() + 1]
    # near-white pixels would vanish into the canvas: darken them slightly so the mask stays visible
    rgb = arr[..., :3].astype(np.int16)
    rgb[(rgb > 240).all(axis=-1)] = 232
    arr[..., :3] = rgb.astype(np.uint8)
    arr[..., 3] = np.where(opaque, 255, 0).astype(np.uint8)
    side = max(arr.shape[:2])
    square = np.zeros((side, side, 4), dtype=np.uint8)
    y0, x0 = (side - arr.shape[0]) // 2, (side - arr.shape[1]) // 2
    square[y0: y0 + arr.shape[0], x0: x0 + arr.shape[1]] = arr
    out = np.asarray(Image.fromarray(square, "RGBA").resize((ICON_SIZE, ICON_SIZE), Image.NEAREST)).copy()
    out.setflags(write=False)
    return out


def read_icon_folder(root: str | Path) -> IconSet:
    """An Icon645-style folder: one sub-folder per category, each with PNG icons with transparency.

    Checked here: the folder exists, has at least two category folders with a PNG each (the shape-cycle and
    two-entity patterns need two categories), and category names are usable words. Each icon's pixels are
    checked when it is first drawn (:func:`load_icon_file`).
    """
    root = Path(root).expanduser()
    if not root.is_dir():
        raise ConfigError(f"{root}: --icons must be a folder of category folders of PNG icons (Icon645 layout)")
    files: dict[str, tuple[Path, ...]] = {}
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        pngs = tuple(sorted(p for p in folder.iterdir() if p.suffix.lower() == ".png" and p.is_file()))
        if not pngs:
            raise SourceError(folder, "", "category folder has no PNG icons")
        name = category_name(folder.name)
        if not name:
            raise SourceError(folder, "", "category folder name has no letters to name its icons by")
        files[name] = files.get(name, ()) + pngs
    loose = sorted(p.name for p in root.iterdir() if p.is_file() and p.suffix.lower() == ".png")
    if loose and not files:
        raise SourceError(root, loose[0], "icons must sit in one folder per category (Icon645 layout), not loose")
    if len(files) < 2:
        raise SourceError(root, "", f"found {len(files)} category folder(s) with PNG icons; at least 2 are needed")
    return IconSet(categories=tuple(sorted(files)), files=files, origin=str(root))


def category_name(folder: str) -> str:
    """``"hot_air-balloon"`` -> ``"hot air balloon"``: the words the pattern text calls the icon by."""
    words = "".join(c if c.isalpha() else " " for c in folder).split()
    return " ".join(words).lower()


UNCHANGED_PLURALS = frozenset({"fish", "sheep", "deer", "moose", "series", "species", "aircraft", "scissors"})


def plural(noun: str, n: int = 2) -> str:
    """English plural of a category noun (enough for icon names: ``"box" -> "boxes"``, ``"fly" -> "flies"``)."""
    if n == 1 or noun.split()[-1] in UNCHANGED_PLURALS:
        return noun
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in tuple("aeiou"):
        return noun[:-1] + "ies"
    if noun.endswith("f") and not noun.endswith("ff"):
        return noun[:-1] + "ves"
    return noun + "s"


VISIBLE_CHANGE = 0.05
"""A rotation or mirroring is visible when it changes at least this share of the icon's pixels, counted away from
the outline (a change only along the edges is the nearest-neighbour rasterisation of a symmetric shape: an arrow
mirrored left to right differs from itself in a few edge pixels and looks the same)."""


def changed_core(a: np.ndarray, b: np.ndarray) -> int:
    """Pixels in which two equally sized images (or masks) differ and whose four neighbours differ too: a change a
    viewer sees, not a one-pixel seam along an outline."""
    d = a != b
    if d.ndim == 3:
        d = d.any(axis=2)
    core = d.copy()
    core[1:] &= d[:-1]
    core[:-1] &= d[1:]
    core[:, 1:] &= d[:, :-1]
    core[:, :-1] &= d[:, 1:]
    core[0], core[-1], core[:, 0], core[:, -1] = False, False, False, False
    return int(core.sum())


def rotation_is_visible(icon: np.ndarray, degrees: float) -> bool:
    """True when turning the icon by ``degrees`` changes its mask noticeably (a pattern needs a visible rule)."""
    mask = icon[..., 3] > 0
    turned = np.asarray(Image.fromarray(mask.astype(np.uint8) * 255).rotate(-degrees, resample=Image.NEAREST)) > 0
    return changed_core(mask, turned) >= VISIBLE_CHANGE * max(1, int(mask.sum()))


def mirroring_is_visible(icon: np.ndarray) -> bool:
    mask = icon[..., 3] > 0
    return changed_core(mask, mask[:, ::-1]) >= VISIBLE_CHANGE * max(1, int(mask.sum()))
