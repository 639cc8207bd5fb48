"""Reefknot's demo scenes: the demo world's shapes with drawn, checkable *cognitive-style* relations, written as
Visual Genome v1.4 files.

Reefknot (relation hallucination) needs two kinds of relations: perceptive (where things are: the demo world's
exhaustive spatial predicates, :mod:`sources.demo.relations`) and cognitive (what one thing does to another).
Shapes do not act, but three drawings read as actions and have exact rules:

* ``a pointing at b``: ``a`` is an arrow drawn along an axis (its ``heading`` is right, down, left or up); ``b``
  is the first shape whose visible box the arrow's centre line meets in front of the arrow's box;
* ``a pointing away from b``: the same behind the arrow (the first box met going the other way);
* ``a surrounding b``: ``a`` is a ring and ``b``'s visible box lies strictly inside the ring's box with its centre
  within a tenth of the ring's width of the ring's centre (it sits in the hole);
* ``a carrying b``: ``a`` is neither a ring nor an arrow, ``b``'s visible box lies strictly inside ``a``'s box, and
  ``b`` is in front of ``a`` (it is drawn on top of it).

Every spatial and cognitive relation that holds is listed and none that does not, so a missing relation is false
(the files are *exhaustive*; :data:`EXHAUSTIVE_NOTE`). Scenes have distinct categories (every name refers to one
shape) and only medium and large shapes plus the devices, so every question can name its objects.

The scenes use their own seed namespace (``reefknot/scene/<i>``) and their own cache folder: the MIOH and
Mementos demo world (``demo/scene/<i>``) is not touched, so those builds stay byte-identical. Files are written
like the VG v1.4 release (``relationships.json`` with ``names`` lists and ``synsets``, ``image_data.json`` with
``url``, ``objects.json`` with every shape), so the Reefknot builder reads the demo through the real VG reader;
arrows carry an extra ``heading`` key and every object its draw order ``z``, for the checkers.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..atomic import atomic_directory
from ..errors import ConfigError
from . import render
from .relations import Geometry, relations_between
from .world import CATEGORIES, COLOURS, PATTERNS, THEMES, Scene, ShapeSpec, named_rng

VERSION = 1
"""Bump when sampling or the rules change what a seed produces (part of the cache key with the code hash)."""
COGNITIVE_PREDICATES: tuple[str, ...] = ("pointing at", "pointing away from", "surrounding", "carrying")
HEADINGS: dict[str, tuple[int, int]] = {"right": (1, 0), "down": (0, 1), "left": (-1, 0), "up": (0, -1)}
_ROTATION = {"right": 0.0, "down": 90.0, "left": 180.0, "up": 270.0}
PLAIN = tuple(c for c in CATEGORIES if c not in ("arrow", "ring"))
CARRIERS = ("circle", "square", "hexagon", "octagon", "pentagon")
"""Shapes that fill their box well enough to carry a smaller one visibly on top."""
DEVICES = ("pointing", "surrounding", "carrying")
EXHAUSTIVE_NOTE = "every relation that holds is listed (spatial and cognitive); a missing one is false"
FILES = ("relationships.json", "image_data.json", "objects.json")
MARGIN = 8.0
"""Free space (pixels) kept between the boxes of shapes that are not part of one device."""

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class DemoFiles:
    """Where the demo scenes were written (VG v1.4 layout)."""

    relationships: str
    image_data: str
    objects: str
    images_dir: str
    path: str
    """A label for build records: ``reefknot-demo:seed=S,n=N,v=V``."""


def load_reefknot_demo(
    seed: int = 0, n_images: int = 160, cache_dir: str | Path | None = None, progress: Progress | None = None
) -> DemoFiles:
    """Render (once, cached) ``n_images`` Reefknot demo scenes for ``seed``; returns the files' paths."""
    from . import default_cache_dir

    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ConfigError(f"demo seed must be a non-negative integer, got {seed!r}")
    if n_images < 1:
        raise ConfigError(f"demo images must be at least 1, got {n_images!r}")
    params = {"seed": int(seed), "n_images": int(n_images), "version": VERSION, "code": _code_fingerprint()}
    key = hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()[:16]
    root = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    target = root / "reefknot-demo" / key
    if not all((target / name).exists() for name in FILES):
        with atomic_directory(target, lambda t: all((t / name).exists() for name in FILES)) as tmp:
            _write_scenes(tmp, int(seed), int(n_images), progress)
    elif progress is not None:
        progress(n_images, n_images)
    return DemoFiles(
        relationships=str(target / "relationships.json"),
        image_data=str(target / "image_data.json"),
        objects=str(target / "objects.json"),
        images_dir=str(target / "images"),
        path=f"reefknot-demo:seed={seed},n={n_images},v={VERSION}",
    )


def _code_fingerprint() -> str:
    digest = hashlib.sha256()
    for name in ("reefknot.py", "render.py", "relations.py", "world.py"):
        digest.update((Path(__file__).parent / name).read_bytes())
    return digest.hexdigest()[:16]


# --- sampling -------------------------------------------------------------------------------------------------


class _Layout:
    """Shapes being placed: specs in draw order, arrow headings, and the boxes that must stay apart."""

    def __init__(self, rng: np.random.Generator, width: int, height: int) -> None:
        self.rng, self.width, self.height = rng, width, height
        self.specs: list[ShapeSpec] = []
        self.headings: dict[int, str] = {}
        self.used: set[str] = set()

    def category(self, pool: tuple[str, ...]) -> str | None:
        free = [c for c in pool if c not in self.used]
        return free[int(self.rng.integers(len(free)))] if free else None

    def fits(self, cx: float, cy: float, r: float) -> bool:
        if cx - r < 2 or cy - r < 2 or cx + r > self.width - 2 or cy + r > self.height - 2:
            return False
        return all(abs(cx - s.cx) > r + s.r + MARGIN or abs(cy - s.cy) > r + s.r + MARGIN for s in self.specs)

    def free_spot(self, r: float) -> tuple[float, float] | None:
        for _ in range(80):
            cx, cy = self.rng.uniform(r, self.width - r), self.rng.uniform(r, self.height - r)
            if self.fits(cx, cy, r):
                return float(cx), float(cy)
        return None

    def add(
        self, category: str, cx: float, cy: float, r: float, rotation: float = 0.0, over: ShapeSpec | None = None
    ) -> ShapeSpec:
        taken = {over.colour} if over is not None else set()
        colours = [c for c in COLOURS if c not in taken]
        spec = ShapeSpec(
            category=category,
            colour=colours[int(self.rng.integers(len(colours)))],
            pattern=PATTERNS[int(self.rng.integers(len(PATTERNS)))] if over is None else "solid",
            cx=cx,
            cy=cy,
            r=r,
            rotation=rotation,
            z=len(self.specs),
            size_class="medium" if r < 30 else "large",
        )
        self.specs.append(spec)
        self.used.add(category)
        return spec

    def plain(self, r_range: tuple[float, float], pool: tuple[str, ...] = PLAIN) -> ShapeSpec | None:
        category = self.category(pool)
        r = float(self.rng.uniform(*r_range))
        spot = self.free_spot(r)
        if category is None or spot is None:
            return None
        return self.add(category, spot[0], spot[1], r)


def _pointing(layout: _Layout) -> None:
    """A target shape, an arrow aimed at it along an axis, and sometimes a shape behind the arrow."""
    target = layout.plain((20.0, 28.0))
    if target is None:
        return
    rng = layout.rng
    names = list(HEADINGS)
    for _ in range(8):
        heading = names[int(rng.integers(len(names)))]
        hx, hy = HEADINGS[heading]
        r = float(rng.uniform(16.0, 22.0))
        distance = target.r + r + float(rng.uniform(12.0, 40.0))
        cx, cy = target.cx - hx * distance, target.cy - hy * distance
        if layout.fits(cx, cy, r):
            arrow = layout.add("arrow", cx, cy, r, _ROTATION[heading])
            layout.headings[arrow.z] = heading
            if rng.random() < 0.6:
                rb = float(rng.uniform(18.0, 26.0))
                d = r + rb + float(rng.uniform(12.0, 30.0))
                bx, by = cx - hx * d, cy - hy * d
                category = layout.category(PLAIN)
                if category is not None and layout.fits(bx, by, rb):
                    layout.add(category, bx, by, rb)
            return


def _surrounding(layout: _Layout) -> None:
    """A ring with a shape in its hole."""
    r = float(layout.rng.uniform(38.0, 44.0))
    spot = layout.free_spot(r)
    inner = layout.category(PLAIN)
    if spot is None or inner is None or "ring" in layout.used:
        return
    ring = layout.add("ring", spot[0], spot[1], r)
    layout.add(inner, spot[0], spot[1], r * float(layout.rng.uniform(0.34, 0.37)), over=ring)


def _carrying(layout: _Layout) -> None:
    """A large shape with a smaller one drawn on top of it."""
    carrier = layout.plain((34.0, 40.0), CARRIERS)
    if carrier is None:
        return
    small = layout.category(PLAIN)
    if small is not None:
        layout.add(small, carrier.cx, carrier.cy, carrier.r * float(layout.rng.uniform(0.42, 0.48)), over=carrier)


def sample_layout(seed: int, index: int, width: int = 320, height: int = 240) -> tuple[Scene, dict[int, str]]:
    """Scene ``index`` of the Reefknot demo for ``seed`` and its arrows' headings (by draw order)."""
    rng = named_rng(seed, f"reefknot/scene/{index}")
    layout = _Layout(rng, width, height)
    order = [DEVICES[i] for i in rng.permutation(len(DEVICES))][: 1 + int(rng.integers(2))]
    for device in order:
        {"pointing": _pointing, "surrounding": _surrounding, "carrying": _carrying}[device](layout)
    for _ in range(1 + int(rng.integers(3))):
        layout.plain((20.0, 30.0))
    theme = THEMES[int(rng.integers(len(THEMES)))]
    scene = Scene(
        index=index,
        theme=theme.name,
        background=theme.background,
        gradient_angle=float(rng.uniform(0, 2 * math.pi)),
        width=width,
        height=height,
        shapes=tuple(layout.specs),
    )
    return scene, layout.headings


# --- rules ----------------------------------------------------------------------------------------------------


def _inside(inner: tuple[float, ...], outer: tuple[float, ...]) -> bool:
    return (
        inner[0] > outer[0]
        and inner[1] > outer[1]
        and inner[0] + inner[2] < outer[0] + outer[2]
        and inner[1] + inner[3] < outer[1] + outer[3]
    )


def _first_hit(arrow: dict[str, Any], others: list[dict[str, Any]], hx: int, hy: int) -> dict[str, Any] | None:
    """The first shape whose box the arrow's centre line meets beyond the arrow's box in direction (hx, hy)."""
    x, y, w, h = arrow["box"]
    cx, cy = x + w / 2.0, y + h / 2.0
    best, best_d = None, math.inf
    for o in others:
        ox, oy, ow, oh = o["box"]
        if hx:
            if not oy <= cy <= oy + oh:
                continue
            d = ox - (x + w) if hx > 0 else x - (ox + ow)
        else:
            if not ox <= cx <= ox + ow:
                continue
            d = oy - (y + h) if hy > 0 else y - (oy + oh)
        if d >= 0 and d < best_d:
            best, best_d = o, d
    return best


def cognitive_relations(shapes: list[dict[str, Any]], spatial: set[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """Every cognitive relation that holds among ``shapes`` (``{"id", "category", "box", "heading"?}``), by the
    rules of the module docstring; ``spatial`` holds the (subject id, predicate, object id) spatial relations."""
    out = []
    for a in shapes:
        others = [b for b in shapes if b["id"] != a["id"]]
        if a["category"] == "arrow" and a.get("heading") in HEADINGS:
            hx, hy = HEADINGS[a["heading"]]
            for predicate, sign in (("pointing at", 1), ("pointing away from", -1)):
                hit = _first_hit(a, others, sign * hx, sign * hy)
                if hit is not None:
                    out.append((a["id"], predicate, hit["id"]))
        for b in others:
            if not _inside(b["box"], a["box"]):
                continue
            ax, ay, aw, ah = a["box"]
            bx, by, bw, bh = b["box"]
            if a["category"] == "ring":
                if math.hypot(bx + bw / 2 - ax - aw / 2, by + bh / 2 - ay - ah / 2) <= 0.1 * aw:
                    out.append((a["id"], "surrounding", b["id"]))
            elif a["category"] != "arrow" and (b["id"], "in front of", a["id"]) in spatial:
                out.append((a["id"], "carrying", b["id"]))
    return out


# --- writing --------------------------------------------------------------------------------------------------


def _write_scenes(directory: Path, seed: int, n_images: int, progress: Progress | None) -> None:
    images_dir = directory / "images"
    images_dir.mkdir()
    relationships, image_data, objects = [], [], []
    object_id = 1
    for index in range(n_images):
        image_id = index + 1
        scene, headings = sample_layout(seed, index)
        rendered = render.render_scene(scene)
        name = f"{image_id}.png"
        (images_dir / name).write_bytes(render.encode_png(rendered.pixels))
        shapes, geometries = [], []
        for shape in rendered.shapes:
            spec = shape.spec
            ys, xs = np.nonzero(shape.visible)
            box = (float(xs.min()), float(ys.min()), float(xs.max() - xs.min() + 1), float(ys.max() - ys.min() + 1))
            entry: dict[str, Any] = {
                "id": object_id,
                "category": spec.category,
                "box": box,
                "z": spec.z,
                "colour": spec.colour,
                "pattern": spec.pattern,
            }
            original_z = next(
                k for k, s in enumerate(scene.shapes) if (s.cx, s.cy, s.category) == (spec.cx, spec.cy, spec.category)
            )
            if original_z in headings:
                entry["heading"] = headings[original_z]
            shapes.append(entry)
            geometries.append(Geometry(bbox=box, z=spec.z, amodal_rle=_rle(shape.amodal_in_image)))
            object_id += 1
        spatial = [
            (a["id"], p, b["id"])
            for a, ga in zip(shapes, geometries)
            for b, gb in zip(shapes, geometries)
            if a["id"] != b["id"]
            for p in relations_between(ga, gb)
        ]
        triples = spatial + cognitive_relations(shapes, set(spatial))
        by_id = {s["id"]: s for s in shapes}
        relationships.append(
            {
                "image_id": image_id,
                "relationships": [
                    {
                        "relationship_id": 100 * object_id + k,
                        "predicate": p,
                        "synsets": [],
                        "subject": _vg_object(by_id[s]),
                        "object": _vg_object(by_id[o]),
                    }
                    for k, (s, p, o) in enumerate(triples)
                ],
            }
        )
        objects.append(
            {
                "image_id": image_id,
                "image_url": f"demo://reefknot/{name}",
                "objects": [_vg_object(s, with_extras=True) for s in shapes],
            }
        )
        image_data.append(
            {
                "image_id": image_id,
                "width": scene.width,
                "height": scene.height,
                "url": f"demo://reefknot/{name}",
                "coco_id": None,
                "flickr_id": None,
            }
        )
        if progress is not None:
            progress(index + 1, n_images)
    for file_name, data in zip(FILES, (relationships, image_data, objects)):
        (directory / file_name).write_text(json.dumps(data, separators=(",", ":")))


def _vg_object(shape: dict[str, Any], with_extras: bool = False) -> dict[str, Any]:
    x, y, w, h = shape["box"]
    out: dict[str, Any] = {
        "object_id": shape["id"],
        "x": int(x),
        "y": int(y),
        "w": int(w),
        "h": int(h),
        "names": [shape["category"]],
        "synsets": [],
    }
    if with_extras:
        out.update(attributes=[shape["colour"], shape["pattern"]], z=shape["z"])
        if "heading" in shape:
            out["heading"] = shape["heading"]
    return out


def _rle(mask: np.ndarray) -> dict[str, Any]:
    from pycocotools import mask as mask_util

    rle = mask_util.encode(np.asfortranarray(mask.view(np.uint8)))
    return {"size": [int(s) for s in rle["size"]], "counts": rle["counts"].decode("ascii")}
