"""Reefknot's demo scenes: the demo world's shapes with drawn, checkable *cognitive-style* relations, written as
Visual Genome v1.4 files.

Reefknot (relation hallucination) needs two kinds of relations: perceptive (where things are: the demo world's
exhaustive spatial predicates, :mod:`sources.demo.relations`) and cognitive (what one thing does to another).
Shapes do not act, but a few drawings read as actions and have exact rules (boxes are visible boxes ``(x, y, w,
h)``):

* ``a pointing at b``: ``a`` is an arrow drawn along an axis (its ``heading`` is right, down, left or up); ``b``
  is the first shape whose visible box the arrow's centre line meets in front of the arrow's box;
* ``a pointing away from b``: the same behind the arrow (the first box met going the other way);
* ``a surrounding b``: ``a`` is a ring and ``b``'s visible box lies strictly inside the ring's box with its centre
  within a tenth of the ring's width of the ring's centre (it sits in the hole);
* ``a carrying b``: ``a`` is neither a ring nor an arrow, ``b``'s visible box lies strictly inside ``a``'s box, and
  ``b`` is in front of ``a`` (it is drawn on top of it);
* ``a covering b``: ``a`` is in front of ``b``, their whole-object masks share at least :data:`COVER_SHARE` of
  ``b``'s whole-object area, and neither visible box lies strictly inside the other (that is carrying);
* ``a hiding behind b``: ``b covering a``;
* ``a standing on b``: ``a``'s box ends on the row above ``b``'s box (``a.y + a.h == b.y``), ``a``'s centre
  lies over ``b``'s box (``b.x <= a.x + a.w / 2 <= b.x + b.w``) and neither is in front of the other (a shape
  covering the top of another is not standing on it); the generator puts a pixel of ``a`` right above a pixel of
  ``b``, so the two touch.

Which relations a shape can take as the subject (:func:`abilities`): an arrow points, covers, hides and stands; a
ring surrounds, covers, hides and stands; every other shape carries, covers, hides and stands. Scenes are drawn
subject first - a shape, then one of its relations (about evenly) - so no relation can be read off the subject's name,
and no question asks a shape for a relation it cannot have (the Reefknot builder takes negatives and distractors
only among relations seen with the subject).

Every spatial and cognitive relation that holds is listed and none that does not, so a missing relation is false
(the files are *exhaustive*; :data:`EXHAUSTIVE_NOTE`). Scenes have distinct categories (every name refers to one
shape) and only medium and large shapes, so every question can name its objects.

The scenes use their own seed namespace (``reefknot/scene/<i>``) and their own cache folder: the MIOH and
Mementos demo world (``demo/scene/<i>``) is not touched, so those builds stay byte-identical. Files are written
like the VG v1.4 release (``relationships.json`` with ``names`` lists and ``synsets``, ``image_data.json`` with
``url``, ``objects.json`` with every shape), so the Reefknot builder reads the demo through the real VG reader;
arrows carry an extra ``heading`` key and every object its draw order ``z`` and whole-object mask ``amodal_rle``
(COCO RLE), for the checkers.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

import numpy as np

from ..atomic import atomic_directory
from ..errors import ConfigError
from . import render
from .relations import Geometry, relations_between
from .world import CATEGORIES, COLOURS, PATTERNS, THEMES, Scene, ShapeSpec, named_rng

VERSION = 3
"""Bump when sampling or the rules change what a seed produces (part of the cache key with the code hash)."""
COGNITIVE_PREDICATES: tuple[str, ...] = (
    "pointing at", "pointing away from", "surrounding", "carrying", "covering", "hiding behind", "standing on",
)
HEADINGS: dict[str, tuple[int, int]] = {"right": (1, 0), "down": (0, 1), "left": (-1, 0), "up": (0, -1)}
_ROTATION = {"right": 0.0, "down": 90.0, "left": 180.0, "up": 270.0}
PLAIN = tuple(c for c in CATEGORIES if c not in ("arrow", "ring"))
SHARED = ("covering", "hiding behind", "standing on")
SUBJECT_KINDS = ("arrow", "ring", "plain")
STAGING_WEIGHTS = {
    ("arrow", "pointing at"): 0.5, ("arrow", "pointing away from"): 0.5, ("arrow", "standing on"): 0.6,
    ("ring", "standing on"): 0.6, ("plain", "covering"): 0.25, ("plain", "hiding behind"): 0.25,
}
"""How often a kind of subject gets each of its relations staged, relative to 1 for the others: a pointing arrow
often points away from another shape too, a covering gives the covered shape its "hiding behind", and the shapes
of other devices add triplets too, so these weights give each subject about as many triplets of each relation."""
COVER_SHARE = 0.3
"""Share of the hidden shape's whole-object area the covering shape must overlap (the generator draws 35-60 %)."""
EXHAUSTIVE_NOTE = "every relation that holds is listed (spatial and cognitive); a missing one is false"
FILES = ("relationships.json", "image_data.json", "objects.json")
MARGIN = 8.0
"""Free space (pixels) kept between the boxes of shapes that are not part of one device."""

Progress = Callable[[int, int], None]


def abilities(category: str) -> tuple[str, ...]:
    """The cognitive relations a shape of ``category`` can take as the subject (the module docstring)."""
    if category == "arrow":
        return ("pointing at", "pointing away from", *SHARED)
    if category == "ring":
        return ("surrounding", *SHARED)
    return ("carrying", *SHARED)


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

    def spec(self, category: str, cx: float, cy: float, r: float, over: ShapeSpec | None = None) -> ShapeSpec:
        """A shape not yet placed (an arrow gets a random heading); ``over``: the shape it is drawn on."""
        rotation = 0.0
        if category == "arrow":
            rotation = _ROTATION[list(HEADINGS)[int(self.rng.integers(len(HEADINGS)))]]
        taken = {over.colour} if over is not None else set()
        colours = [c for c in COLOURS if c not in taken]
        return ShapeSpec(
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

    def place(self, spec: ShapeSpec) -> ShapeSpec:
        spec = replace(spec, z=len(self.specs))
        if spec.category == "arrow":
            self.headings[spec.z] = next(h for h, a in _ROTATION.items() if a == spec.rotation)
        self.specs.append(spec)
        self.used.add(spec.category)
        return spec

    def add(self, category: str, cx: float, cy: float, r: float, over: ShapeSpec | None = None) -> ShapeSpec:
        return self.place(self.spec(category, cx, cy, r, over))

    def aligned(self, r_range: tuple[float, float]) -> ShapeSpec | None:
        """A shape on its own in line with one already placed: in its row or its column (off by at most a fifth of
        the smaller radius), some way apart, so that the pair has a clear direction (a randomly placed pair is
        mostly diagonal, and no direction is asked of it); a free spot when no line has room."""
        category = self.category(PLAIN)
        if category is None or not self.specs:
            return self.plain(r_range)
        r = float(self.rng.uniform(*r_range))
        for _ in range(20):
            anchor = self.specs[int(self.rng.integers(len(self.specs)))]
            along = anchor.r + r + float(self.rng.uniform(12.0, 60.0))
            across = float(self.rng.uniform(-0.2, 0.2)) * min(r, anchor.r)
            sign = 1 if self.rng.random() < 0.5 else -1
            dx, dy = (sign * along, across) if self.rng.random() < 0.5 else (across, sign * along)
            if self.fits(anchor.cx + dx, anchor.cy + dy, r):
                return self.add(category, anchor.cx + dx, anchor.cy + dy, r)
        return self.plain(r_range)

    def plain(self, r_range: tuple[float, float], pool: tuple[str, ...] = PLAIN) -> ShapeSpec | None:
        category = self.category(pool)
        r = float(self.rng.uniform(*r_range))
        spot = self.free_spot(r)
        if category is None or spot is None:
            return None
        return self.add(category, spot[0], spot[1], r)


def _pointing(layout: _Layout, arrow: str, relation: str) -> None:
    """An arrow along an axis with the shape it names in front of it (``pointing at``) or behind it, and sometimes
    a shape on the other side too."""
    rng = layout.rng
    sign = 1 if relation == "pointing at" else -1
    named = layout.plain((20.0, 28.0), tuple(c for c in CATEGORIES if c != arrow))
    if named is None:
        return
    for _ in range(8):
        heading = list(HEADINGS)[int(rng.integers(len(HEADINGS)))]
        hx, hy = (sign * v for v in HEADINGS[heading])
        r = float(rng.uniform(16.0, 22.0))
        distance = named.r + r + float(rng.uniform(12.0, 40.0))
        cx, cy = named.cx - hx * distance, named.cy - hy * distance
        if layout.fits(cx, cy, r):
            spec = replace(layout.spec(arrow, cx, cy, r), rotation=_ROTATION[heading])
            layout.place(spec)
            if rng.random() < 0.5:
                rb = float(rng.uniform(18.0, 26.0))
                d = r + rb + float(rng.uniform(12.0, 30.0))
                bx, by = cx - hx * d, cy - hy * d
                category = layout.category(PLAIN)
                if category is not None and layout.fits(bx, by, rb):
                    layout.add(category, bx, by, rb)
            return


def _surrounding(layout: _Layout, ring: str, relation: str) -> None:
    """A ring with a shape in its hole."""
    r = float(layout.rng.uniform(38.0, 44.0))
    spot = layout.free_spot(r)
    inner = layout.category(CATEGORIES)
    if spot is None or inner is None:
        return
    outer = layout.add(ring, spot[0], spot[1], r)
    layout.add(inner, spot[0], spot[1], r * float(layout.rng.uniform(0.34, 0.37)), over=outer)


def _carrying(layout: _Layout, carrier: str, relation: str) -> None:
    """A large shape with a smaller one drawn on top of it (on the crescent's body, off its bite)."""
    r = float(layout.rng.uniform(34.0, 40.0))
    spot = layout.free_spot(r)
    small = layout.category(CATEGORIES)
    if spot is None or small is None:
        return
    big = layout.add(carrier, spot[0], spot[1], r)
    cx, cy = big.cx, big.cy
    if carrier == "crescent":
        cx, cy = cx - 0.35 * r, cy + 0.19 * r
    layout.add(small, cx, cy, r * float(layout.rng.uniform(0.42, 0.48)), over=big)


def _covering(layout: _Layout, subject: str, relation: str) -> None:
    """Two shapes of about one size, the later one drawn over 35-60 % of the earlier one (the subject is the
    front one for ``covering``, the back one for ``hiding behind``)."""
    rng = layout.rng
    other = layout.category(CATEGORIES)
    if other is None:
        return
    front, back = (subject, other) if relation == "covering" else (other, subject)
    rb = float(rng.uniform(22.0, 30.0))
    ra = rb * float(rng.uniform(0.85, 1.15))
    reach = ra + rb
    spot = layout.free_spot(reach)
    if spot is None:
        return
    b = layout.spec(back, spot[0], spot[1], rb)
    b_layer = render.rasterise(b)
    angle = float(rng.uniform(0, 2 * math.pi))
    for k in range(12):
        d = (0.25 + 0.05 * k) * reach
        a = layout.spec(front, b.cx + d * math.cos(angle), b.cy + d * math.sin(angle), ra, over=b)
        share = _overlap(render.rasterise(a), b_layer) / max(1, int(b_layer.mask.sum()))
        if share < 0.35:
            return
        if share <= 0.6 and not _box_inside(a, b) and not _box_inside(b, a) and layout.fits(a.cx, a.cy, ra):
            layout.place(b)
            layout.place(a)
            return


def _standing(layout: _Layout, subject: str, relation: str) -> None:
    """A shape resting on another: a pixel of its bottom row right above a pixel of the other's top row."""
    rng = layout.rng
    support = layout.category(tuple(c for c in CATEGORIES if c != subject))
    if support is None:
        return
    rb = float(rng.uniform(24.0, 32.0))
    ra = rb * float(rng.uniform(0.55, 0.8))
    spot = layout.free_spot(rb + ra)
    if spot is None:
        return
    b = layout.spec(support, spot[0], spot[1] + ra, rb)
    b_layer = render.rasterise(b)
    b_rows = np.flatnonzero(b_layer.mask.any(axis=1))
    top = b_layer.y0 + int(b_rows[0])
    top_cols = set((b_layer.x0 + np.flatnonzero(b_layer.mask[b_rows[0]])).tolist())
    for dx in (0, 1, -1, 2, -2, 3, -3, 4, -4, 6, -6, 8, -8):
        a = layout.spec(subject, b.cx + dx, b.cy - rb - ra, ra, over=b)
        layer = render.rasterise(a)
        rows = np.flatnonzero(layer.mask.any(axis=1))
        bottom = layer.y0 + int(rows[-1])
        a = replace(a, cy=a.cy + (top - 1 - bottom))
        bottom_cols = set((layer.x0 + np.flatnonzero(layer.mask[rows[-1]])).tolist())
        if bottom_cols & top_cols and layout.fits(a.cx, a.cy, ra):
            layout.place(b)
            layout.place(a)
            return


def _overlap(a: Any, b: Any) -> int:
    """Pixels two rasterised layers share."""
    x0, y0 = max(a.x0, b.x0), max(a.y0, b.y0)
    x1 = min(a.x0 + a.mask.shape[1], b.x0 + b.mask.shape[1])
    y1 = min(a.y0 + a.mask.shape[0], b.y0 + b.mask.shape[0])
    if x0 >= x1 or y0 >= y1:
        return 0
    sa = a.mask[y0 - a.y0 : y1 - a.y0, x0 - a.x0 : x1 - a.x0]
    sb = b.mask[y0 - b.y0 : y1 - b.y0, x0 - b.x0 : x1 - b.x0]
    return int(np.count_nonzero(sa & sb))


def _box_inside(a: ShapeSpec, b: ShapeSpec) -> bool:
    """``a``'s approximate box strictly inside ``b``'s."""
    return all(x > y for x, y in zip(a.box[:2], b.box[:2])) and all(x < y for x, y in zip(a.box[2:], b.box[2:]))


DEVICES: dict[str, Callable[[_Layout, str, str], None]] = {
    "pointing at": _pointing, "pointing away from": _pointing, "surrounding": _surrounding,
    "carrying": _carrying, "covering": _covering, "hiding behind": _covering, "standing on": _standing,
}
"""How a scene stages each cognitive relation for a chosen subject."""


def sample_layout(seed: int, index: int, width: int = 320, height: int = 240) -> tuple[Scene, dict[int, str]]:
    """Scene ``index`` of the Reefknot demo for ``seed`` and its arrows' headings (by draw order): two or three
    staged relations, each a subject (its kind - arrow, ring or another shape - uniformly, then a free category of
    the kind) and one of its abilities (:data:`STAGING_WEIGHTS`), then one to three shapes on their own, each in
    line with a shape placed before (:meth:`_Layout.aligned`)."""
    rng = named_rng(seed, f"reefknot/scene/{index}")
    layout = _Layout(rng, width, height)
    for _ in range(2 + int(rng.integers(2))):
        kind = SUBJECT_KINDS[int(rng.integers(len(SUBJECT_KINDS)))]
        subject = layout.category(PLAIN if kind == "plain" else (kind,))
        if subject is None:
            continue
        can = abilities(subject)
        weights = np.array([STAGING_WEIGHTS.get((kind, c), 1.0) for c in can])
        relation = can[int(rng.choice(len(can), p=weights / weights.sum()))]
        layout.used.add(subject)  # reserved: the device's other shapes take other categories
        DEVICES[relation](layout, subject, relation)
    for _ in range(1 + int(rng.integers(3))):
        layout.aligned((20.0, 30.0))
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


def _overlapping(a: Any, b: Any, spatial: set[tuple[Any, str, Any]]) -> bool:
    """The whole-object masks overlap (one is in front of the other)."""
    return (a, "in front of", b) in spatial or (b, "in front of", a) in spatial


def cognitive_relations(
    shapes: list[dict[str, Any]], spatial: set[tuple[str, str, str]], overlap: Callable[[Any, Any], int]
) -> list[tuple[str, str, str]]:
    """Every cognitive relation that holds among ``shapes`` (``{"id", "category", "box", "area", "heading"?}``,
    ``area`` the whole-object pixels), by the rules of the module docstring; ``spatial`` holds the (subject id,
    predicate, object id) spatial relations and ``overlap(id_a, id_b)`` counts the pixels two whole-object masks
    share."""
    out = []
    for a in shapes:
        others = [b for b in shapes if b["id"] != a["id"]]
        if a["category"] == "arrow" and a.get("heading") in HEADINGS:
            hx, hy = HEADINGS[a["heading"]]
            for predicate, sign in (("pointing at", 1), ("pointing away from", -1)):
                hit = _first_hit(a, others, sign * hx, sign * hy)
                if hit is not None:
                    out.append((a["id"], predicate, hit["id"]))
        ax, ay, aw, ah = a["box"]
        for b in others:
            bx, by, bw, bh = b["box"]
            if _inside(b["box"], a["box"]):
                if a["category"] == "ring":
                    if math.hypot(bx + bw / 2 - ax - aw / 2, by + bh / 2 - ay - ah / 2) <= 0.1 * aw:
                        out.append((a["id"], "surrounding", b["id"]))
                elif a["category"] != "arrow" and (b["id"], "in front of", a["id"]) in spatial:
                    out.append((a["id"], "carrying", b["id"]))
            elif (
                not _inside(a["box"], b["box"])
                and (a["id"], "in front of", b["id"]) in spatial
                and overlap(a["id"], b["id"]) >= COVER_SHARE * b["area"]
            ):
                out.append((a["id"], "covering", b["id"]))
                out.append((b["id"], "hiding behind", a["id"]))
            if ay + ah == by and bx <= ax + aw / 2 <= bx + bw and not _overlapping(a["id"], b["id"], spatial):
                out.append((a["id"], "standing on", b["id"]))
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
        name = f"reefknot-s{seed}-{image_id}.png"  # the seed in the name: another seed's scene is another picture
        (images_dir / name).write_bytes(render.encode_png(rendered.pixels))
        shapes, geometries, masks = [], [], {}
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
                "area": int(np.count_nonzero(shape.amodal_in_image)),
                "amodal_rle": _rle(shape.amodal_in_image),
            }
            masks[object_id] = shape.amodal_in_image
            original_z = next(
                k for k, s in enumerate(scene.shapes) if (s.cx, s.cy, s.category) == (spec.cx, spec.cy, spec.category)
            )
            if original_z in headings:
                entry["heading"] = headings[original_z]
            shapes.append(entry)
            geometries.append(Geometry(bbox=box, z=spec.z, amodal_rle=entry["amodal_rle"]))
            object_id += 1
        spatial = [
            (a["id"], p, b["id"])
            for a, ga in zip(shapes, geometries)
            for b, gb in zip(shapes, geometries)
            if a["id"] != b["id"]
            for p in relations_between(ga, gb)
        ]
        overlap = lambda i, j: int(np.count_nonzero(masks[i] & masks[j]))  # noqa: E731
        triples = spatial + cognitive_relations(shapes, set(spatial), overlap)
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
        out.update(attributes=[shape["colour"], shape["pattern"]], z=shape["z"], amodal_rle=shape["amodal_rle"])
        if "heading" in shape:
            out["heading"] = shape["heading"]
    return out


def _rle(mask: np.ndarray) -> dict[str, Any]:
    from pycocotools import mask as mask_util

    rle = mask_util.encode(np.asfortranarray(mask.view(np.uint8)))
    return {"size": [int(s) for s in rle["size"]], "counts": rle["counts"].decode("ascii")}
