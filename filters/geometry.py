"""How visible each object is: relative area, occlusion, truncation; and the easy / hard / drop label they give.

MIOH builds *hard positives* from "small or heavily occluded bounding box or segmentation mask" objects and keeps
"minimum bounding box size requirements to ensure object visibility" (paper, appendix "Rule-Based Filtering
Criteria"). This module measures the three quantities those rules need, per instance, with masks read only where
instances overlap (as run lengths, never decoded to pixels) and the arithmetic done in numpy:

``relative_area``
    visible area / image area (``Instance.area``, which is the mask area when there is a mask).
``occlusion``
    fraction of the object that is hidden. Exact when the full-object area is known (``amodal_area``, or the
    area of ``amodal_rle``; the demo world): ``1 - area / amodal_area``. Otherwise a *proxy* from the visible
    masks (see :func:`_proxy_occlusion`).
``truncation``
    how much of the object the image frame cuts: the fraction of the box perimeter that lies on the image border
    (see :func:`truncation`).

:func:`classify` turns these into a :class:`Difficulty` with :class:`GeometryThresholds`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Literal, Sequence

import numpy as np
from pycocotools import mask as mask_utils

from filters import mask_runs
from filters.base import FilterStats, Threshold
from sources.errors import ConfigError
from sources.records import RLE, ImageRecord, Instance

OcclusionMethod = Literal["amodal", "mask_proxy", "none"]
"""Where an occlusion value comes from: exact (``amodal``), estimated from masks, or no evidence (0.0)."""

Level = Literal["easy", "hard", "drop"]


@dataclass(frozen=True)
class InstanceGeometry:
    """The visibility measures of one instance."""

    instance_id: str
    category: str
    relative_area: float
    occlusion: float
    truncation: float
    occlusion_method: OcclusionMethod
    iscrowd: bool = False
    """Crowd regions are scored like any instance but flagged: they cannot be counted or trusted alone."""

    def scores(self) -> dict[str, float]:
        """The scores under their stored names (``<name>_score``), for provenance and later re-tuning."""
        return {
            "relative_area_score": self.relative_area,
            "occlusion_score": self.occlusion,
            "truncation_score": self.truncation,
        }


@dataclass(frozen=True)
class GeometryThresholds:
    """Where easy ends, hard begins, and an object is too invisible to use at all.

    Defaults and why:

    * ``min_visible=0.0005`` (0.05 % of the image, ~150 px in a 640x480 COCO image, a 12x12 patch): below that
      an object is a handful of pixels; nobody, human reviewer included, can confirm it is there, so it is
      neither a fair positive nor a safe negative -> ``drop``.
    * ``max_occlusion=0.9``: more than 90 % hidden leaves too little to recognise -> ``drop``.
    * ``hard_area=0.01`` (1 % of the image, ~55x55 px at 640x480): about COCO's "small" object size (32x32 px is
      0.3 %, and COCO's medium ends at 96x96 = 3 %); such objects cover few vision-encoder patches -> ``hard``.
    * ``hard_occlusion=0.4``: with 40 % or more hidden the object's typical silhouette is broken -> ``hard``.
    * ``hard_truncation=0.5``: half the box outline on the frame is an object sitting in a corner or cut along
      its long side -> ``hard``.

    All five are config options of the builders, and every instance stores its raw scores, so they can be
    re-tuned on a finished build.
    """

    min_visible: float = 0.0005
    max_occlusion: float = 0.9
    hard_area: float = 0.01
    hard_occlusion: float = 0.4
    hard_truncation: float = 0.5

    def __post_init__(self) -> None:
        if not 0 <= self.min_visible <= self.hard_area:
            raise ConfigError(
                f"geometry thresholds: need 0 <= min_visible ({self.min_visible}) <= hard_area ({self.hard_area})"
            )
        if not 0 <= self.hard_occlusion <= self.max_occlusion <= 1:
            raise ConfigError(
                f"geometry thresholds: need 0 <= hard_occlusion ({self.hard_occlusion}) <= max_occlusion "
                f"({self.max_occlusion}) <= 1"
            )

    def drop_rules(self) -> tuple[Threshold, ...]:
        """Rules an instance must pass to be usable at all."""
        return (
            Threshold("relative_area", self.min_visible, "min"),
            Threshold("occlusion", self.max_occlusion, "max"),
        )

    def easy_rules(self) -> tuple[Threshold, ...]:
        """Rules a usable instance must all pass to be easy; failing any makes it hard."""
        return (
            Threshold("relative_area", self.hard_area, "min"),
            Threshold("occlusion", self.hard_occlusion, "max", inclusive=False),
            Threshold("truncation", self.hard_truncation, "max", inclusive=False),
        )


@dataclass(frozen=True)
class Difficulty:
    """The label of one instance, why, and the scores behind it."""

    level: Level
    reason: str | None
    """All failed rules, ``"; "``-joined (``None`` when easy)."""
    geometry: InstanceGeometry
    rule: str | None = None
    """The first failed rule's stable key, for statistics."""

    @property
    def flags(self) -> tuple[str, ...]:
        return ("crowd",) if self.geometry.iscrowd else ()


def classify(geom: InstanceGeometry, thresholds: GeometryThresholds = GeometryThresholds()) -> Difficulty:
    """``drop`` if any drop rule fails, else ``hard`` if any easy rule fails, else ``easy``."""
    for level, rules in (("drop", thresholds.drop_rules()), ("hard", thresholds.easy_rules())):
        failed = [t for t in rules if not t.passes(getattr(geom, t.name))]
        if failed:
            reason = "; ".join(t.reason(getattr(geom, t.name)) for t in failed)
            return Difficulty(level, reason, geom, failed[0].rule)  # type: ignore[arg-type]
    return Difficulty("easy", None, geom)


def classify_image(
    image: ImageRecord,
    thresholds: GeometryThresholds = GeometryThresholds(),
    stats: FilterStats | None = None,
    name: str = "geometry",
) -> dict[str, Difficulty]:
    """Measure and classify every instance of ``image``; ``drop`` counts as dropped under ``name`` in ``stats``."""
    return classify_images([image], thresholds, stats, name)[0]


def classify_images(
    images: Sequence[ImageRecord],
    thresholds: GeometryThresholds = GeometryThresholds(),
    stats: FilterStats | None = None,
    name: str = "geometry",
    occlusions: Occlusions | None = None,
) -> list[dict[str, Difficulty]]:
    """:func:`classify_image` of many images at once: the rules are compared in numpy over every instance, and
    only the instances that fail one get a reason text (an easy instance needs none). ``occlusions``: the
    images' :func:`occlusions_of`, when measured elsewhere (:mod:`filters.occlusion_workers`).

    Why: a paper-scale source has a million instances, and asking each one's five rules in Python, one
    :class:`Difficulty` at a time, was a large share of a build (see ``benchmarks/bench_mioh_scale.py``)."""
    geometries = measure_images(images, occlusions)
    flat = [g for per_image in geometries for g in per_image.values()]
    levels: list[tuple[str, tuple[Threshold, ...]]] = [("drop", thresholds.drop_rules()), ("hard", thresholds.easy_rules())]
    scores = {t.name: np.array([getattr(g, t.name) for g in flat], dtype=np.float64)
              for _, rules in levels for t in rules}
    failing = {t: ~t.passes_array(scores[t.name]) for _, rules in levels for t in rules}
    # per instance: 0 when easy, else 1 + the first level whose rules it fails; only those are asked rule by rule
    fails_level = [np.logical_or.reduce([failing[t] for t in rules]) for _, rules in levels]
    first_failed = np.select(fails_level, range(1, len(levels) + 1), 0).tolist()
    dropped: Counter[str] = Counter()
    out: list[dict[str, Difficulty]] = []
    k = 0
    for per_image in geometries:
        classified: dict[str, Difficulty] = {}
        for iid, geom in per_image.items():
            if first_failed[k]:
                level, rules = levels[first_failed[k] - 1]
                failed = [t for t in rules if failing[t][k]]
                reason = "; ".join(t.reason(getattr(geom, t.name)) for t in failed)
                classified[iid] = Difficulty(level, reason, geom, failed[0].rule)  # type: ignore[arg-type]
                if level == "drop":
                    dropped[failed[0].rule] += 1
            else:
                classified[iid] = Difficulty("easy", None, geom)
            k += 1
        out.append(classified)
    if stats is not None:
        stats.record_counts(name, seen=len(flat), reasons=dropped)
    return out


# --------------------------------------------------------------------------------------------------- measures


def measure_image(image: ImageRecord) -> dict[str, InstanceGeometry]:
    """The geometry of every instance of ``image``, keyed by instance id, in instance order."""
    return measure_images([image])[0]


def measure_images(
    images: Sequence[ImageRecord], occlusions: Occlusions | None = None
) -> list[dict[str, InstanceGeometry]]:
    """:func:`measure_image` of many images, with relative areas, truncation and pixel boxes computed for all
    their instances in one numpy pass (per image, numpy's call overhead cost more than the arithmetic);
    ``occlusions`` as in :func:`classify_images`."""
    counts = [len(im.instances) for im in images]
    insts = [inst for im in images for inst in im.instances]
    if not insts:
        return [{} for _ in images]
    width, height, boxes = _instance_frames(images, counts, insts)
    image_area = (width * height).astype(np.float64)
    areas = np.array([i.area for i in insts], dtype=np.float64)
    rel = np.divide(areas, image_area, out=np.zeros_like(areas), where=image_area > 0).tolist()
    trunc = truncation(boxes, width, height).tolist()  # type: ignore[arg-type]
    if occlusions is None:
        occlusions = _occlusions(images, counts, _pixel_boxes(boxes, width, height))  # type: ignore[arg-type]
    out: list[dict[str, InstanceGeometry]] = []
    start = 0
    for image, n, (occ, methods) in zip(images, counts, occlusions):
        out.append({
            inst.id: InstanceGeometry(
                instance_id=inst.id,
                category=inst.category,
                relative_area=rel[start + k],
                occlusion=float(occ[k]),
                truncation=trunc[start + k],
                occlusion_method=methods[k],
                iscrowd=inst.iscrowd,
            )
            for k, inst in enumerate(image.instances)
        })
        start += n
    return out


Occlusions = Sequence[tuple[np.ndarray, Sequence[OcclusionMethod]]]
"""Per image: every instance's occlusion and how it was obtained (:func:`occlusion`)."""


def occlusions_of(images: Sequence[ImageRecord]) -> Occlusions:
    """:func:`occlusion` of every image, pixel boxes computed in one numpy pass: the costly part of measuring
    (masks), which :mod:`filters.occlusion_workers` runs in other processes."""
    counts = [len(im.instances) for im in images]
    insts = [inst for im in images for inst in im.instances]
    if not insts:
        return [(np.zeros(0, dtype=np.float64), []) for _ in images]
    width, height, boxes = _instance_frames(images, counts, insts)
    return _occlusions(images, counts, _pixel_boxes(boxes, width, height))  # type: ignore[arg-type]


def _instance_frames(
    images: Sequence[ImageRecord], counts: Sequence[int], insts: Sequence[Instance]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each instance's image width and height, and its box, as arrays over all instances."""
    width = np.repeat(np.array([im.width for im in images], dtype=np.int64), counts)
    height = np.repeat(np.array([im.height for im in images], dtype=np.int64), counts)
    return width, height, np.array([i.bbox for i in insts], dtype=np.float64).reshape(-1, 4)


def _occlusions(images: Sequence[ImageRecord], counts: Sequence[int], pixel_boxes: np.ndarray) -> Occlusions:
    """:func:`occlusion` of each image, the mask proxies of up to :data:`PROXY_BATCH_MASKS` masks' worth of
    images measured together (per image, numpy's call overhead cost more than the run arithmetic)."""
    out: list[tuple[np.ndarray, list[OcclusionMethod]]] = []
    batch = _ProxyBatch()
    start = 0
    for image, n in zip(images, counts):
        out.append(_exact_occlusion(image, pixel_boxes[start:start + n], batch, len(out)))
        start += n
        if batch.n_masks >= PROXY_BATCH_MASKS:
            batch.measure_into(out)
            batch = _ProxyBatch()
    batch.measure_into(out)
    return out


PROXY_BATCH_MASKS = 1000
"""Masks whose runs are decoded and compared in one pass (a few MB of run arrays): 300 and 1,000 measured
alike on the benchmark's sources, 3,000 and more slower, the arrays no longer in cache."""


def truncation(boxes: np.ndarray, width: int, height: int, tol: float = 1.0) -> np.ndarray:
    """Fraction of each box's perimeter that lies within ``tol`` px of the image border, in [0, 1].

    Why this measure: the amount of an object cut away by the frame is unknowable from the visible part, but
    the frame only cuts along the box sides that touch it, and a longer cut side means more of the outline
    was lost. Counting touching sides weighted by their length is therefore a continuous version of "how many
    of the 4 sides touch the border / 4" (equal to it for square boxes): a box along one short side scores
    little, a box in a corner scores 0.5, a box spanning the full width scores ``h / (w + h)`` for its left and
    right sides plus its top/bottom when they touch. Boxes are clipped to the image first, so a box drawn past
    the border counts as touching it. ``boxes`` is ``(n, 4)`` as ``(x, y, w, h)``.
    """
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    x0 = np.clip(b[:, 0], 0, width)
    y0 = np.clip(b[:, 1], 0, height)
    x1 = np.clip(b[:, 0] + b[:, 2], 0, width)
    y1 = np.clip(b[:, 1] + b[:, 3], 0, height)
    w, h = x1 - x0, y1 - y0
    touching = (
        h * (x0 <= tol) + h * (x1 >= width - tol) + w * (y0 <= tol) + w * (y1 >= height - tol)
    )
    perimeter = 2.0 * (w + h)
    return np.divide(touching, perimeter, out=np.zeros_like(perimeter), where=perimeter > 0)


def occlusion(image: ImageRecord, pixel_boxes: np.ndarray | None = None) -> tuple[np.ndarray, list[OcclusionMethod]]:
    """Occlusion of every instance and how it was obtained (exact from ``amodal_area``, mask proxy, or none);
    ``pixel_boxes`` are the instances' :func:`_pixel_boxes` when the caller has them already.

    Masks are read only where the proxy can be non-zero: for a target whose box overlaps another masked
    instance's box, that target's mask and the overlapping ones. A target no other mask's box touches scores 0
    from boxes alone, so an image of separate objects reads no mask (and polygon masks of such files are never
    even converted to RLE, see :class:`sources.jsonio.PolygonRLE`).
    """
    if pixel_boxes is None:
        pixel_boxes = _pixel_boxes(
            np.array([i.bbox for i in image.instances], dtype=np.float64), image.width, image.height
        )
    return _occlusions([image], [len(image.instances)], pixel_boxes)[0]


def _exact_occlusion(
    image: ImageRecord, pixel_boxes: np.ndarray, batch: _ProxyBatch, slot: int
) -> tuple[np.ndarray, list[OcclusionMethod]]:
    """:func:`occlusion` where it is exact (amodal areas); the instances that need the mask proxy are handed to
    ``batch`` as result ``slot``, which fills their values in when it is measured."""
    insts = image.instances
    occ = np.zeros(len(insts), dtype=np.float64)
    methods: list[OcclusionMethod] = ["none"] * len(insts)
    need_proxy = []
    for k, inst in enumerate(insts):
        amodal = _amodal_area(inst, image.height, image.width)
        if amodal is not None and amodal > 0:
            occ[k] = min(1.0, max(0.0, 1.0 - inst.area / amodal))
            methods[k] = "amodal"
        else:
            need_proxy.append(k)
    with_mask = [k for k, inst in enumerate(insts) if inst.rle is not None]
    if need_proxy and with_mask:
        batch.add(slot, image, need_proxy, with_mask, pixel_boxes)
        for k in need_proxy:
            methods[k] = "mask_proxy"
    return occ, methods


def _amodal_area(inst: Instance, height: int, width: int) -> float | None:
    """The whole-object area: ``amodal_area`` when given, else the area of ``amodal_rle`` (no decoding needed)."""
    if inst.amodal_area is not None:
        return float(inst.amodal_area)
    rle = getattr(inst, "amodal_rle", None)
    if rle is None:
        return None
    return float(mask_utils.area(_as_compressed(rle, height, width)))


def decode_masks(rles: Sequence[RLE], height: int, width: int) -> np.ndarray:
    """All masks at once as a boolean ``(height, width, n)`` array (one pycocotools call)."""
    objs = [_as_compressed(r, height, width) for r in rles]
    return mask_utils.decode(objs).astype(bool, copy=False).reshape(height, width, len(objs))


def _as_compressed(rle: RLE, height: int, width: int) -> dict:
    """pycocotools wants compressed counts as bytes; COCO crowd regions come uncompressed (a list)."""
    counts = rle["counts"]
    if isinstance(counts, list):
        return mask_utils.frPyObjects(dict(rle), height, width)
    return {"size": list(rle["size"]), "counts": counts.encode() if isinstance(counts, str) else counts}


def _pixel_boxes(boxes: np.ndarray, width: int, height: int) -> np.ndarray:
    """Boxes as integer pixel ranges ``[x0, y0, x1, y1)`` covering every touched pixel, clipped to the image."""
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    x0 = np.clip(np.floor(b[:, 0]), 0, width)
    y0 = np.clip(np.floor(b[:, 1]), 0, height)
    x1 = np.clip(np.ceil(b[:, 0] + b[:, 2]), 0, width)
    y1 = np.clip(np.ceil(b[:, 1] + b[:, 3]), 0, height)
    return np.stack([x0, y0, x1, y1], axis=1).astype(np.int64)


class _ProxyBatch:
    """The occlusion proxy of many images' instances, measured together: the fraction of each target's box
    covered by the union of the OTHER instances' masks.

    Why: a modal (visible-only) annotation does not say how big the whole object is, but whatever hides part of
    it is itself annotated, and it sits inside the target's box, where the hidden part would have been. So the
    share of the box painted by other objects' visible masks estimates the hidden share. Details:

    * only other instances whose box overlaps the target's box can cover it (checked on boxes first, vectorised);
      only targets with such a neighbour and those neighbours need their masks, and those are never decoded:
      the covered share is counted on run lengths, for the targets of many images at once
      (:func:`filters.mask_runs.covered_outside`);
    * pixels of the target's own mask never count as covered (they are visible by definition);
    * when both draw orders (``z``) are known, only instances in front (larger ``z``) count;
    * known bias: without ``z`` a large object *behind* the target (a bed under a person) also fills the box
      around a non-rectangular target, so the proxy over-estimates; it leans to "hard", the safer error for a
      hard-positive label, and reaching the 0.9 drop bound needs a target whose own mask fills < 10 % of its box.
    """

    def __init__(self) -> None:
        self.n_masks = 0
        """Masked instances of the images added so far (an upper bound on the masks a measure reads)."""
        self._images: list[ImageRecord] = []
        self._slots: list[int] = []
        self._targets: list[Sequence[int]] = []
        self._masked: list[Sequence[int]] = []
        self._pixel_boxes: list[np.ndarray] = []

    def add(self, slot: int, image: ImageRecord, targets: Sequence[int], with_mask: Sequence[int],
            pixel_boxes: np.ndarray) -> None:
        """Measure instances ``targets`` of ``image`` (by position), covered by those of ``with_mask``; the
        values go to result ``slot``."""
        self._images.append(image)
        self._slots.append(slot)
        self._targets.append(targets)
        self._masked.append(with_mask)
        self._pixel_boxes.append(pixel_boxes)
        self.n_masks += len(with_mask)

    def measure_into(self, results: list[tuple[np.ndarray, list[OcclusionMethod]]]) -> None:
        """Count the covered pixels of every target added and write each target's share into its result.

        Instances are numbered across the batch's images; every (target, masked instance) pair of one image is
        checked for box overlap at once, then the masks of the pairs that overlap are counted on their runs.
        """
        if not self._images:
            return
        sizes = np.array([len(im.instances) for im in self._images], dtype=np.int64)
        first = np.cumsum(sizes) - sizes
        n_targets = np.array([len(t) for t in self._targets], dtype=np.int64)
        n_masked = np.array([len(m) for m in self._masked], dtype=np.int64)
        target = np.concatenate([np.asarray(t, dtype=np.int64) for t in self._targets]) + np.repeat(first, n_targets)
        masked = np.concatenate([np.asarray(m, dtype=np.int64) for m in self._masked]) + np.repeat(first, n_masked)
        pix = np.concatenate(self._pixel_boxes)
        # every (target, masked instance of its image) pair
        per_target = np.repeat(n_masked, n_targets)
        t_of = np.repeat(np.arange(len(target)), per_target)
        m_of = np.repeat(np.repeat(np.cumsum(n_masked) - n_masked, n_targets), per_target)
        m_of += np.arange(len(t_of)) - np.repeat(np.cumsum(per_target) - per_target, per_target)
        t, o = pix[target[t_of]], pix[masked[m_of]]
        covers = (
            (t[:, 0] < o[:, 2]) & (o[:, 0] < t[:, 2]) & (t[:, 1] < o[:, 3]) & (o[:, 1] < t[:, 3])
            & (masked[m_of] != target[t_of])
            & (t[:, 2] > t[:, 0]) & (t[:, 3] > t[:, 1])  # an empty box stays 0
        )
        instances = [inst for im in self._images for inst in im.instances]
        z = _draw_orders(instances)
        if z is not None:
            zt, zo = z[target[t_of]], z[masked[m_of]]
            covers &= np.isnan(zt) | np.isnan(zo) | (zo > zt)
        t_of, m_of = t_of[covers], m_of[covers]
        active = np.unique(t_of)
        values = np.zeros(len(target), dtype=np.float64)
        if len(active):
            values[active] = self._shares(instances, target[active], np.searchsorted(active, t_of), masked[m_of], pix)
        start = 0
        for slot, targets in zip(self._slots, self._targets):
            results[slot][0][targets] = values[start:start + len(targets)]
            start += len(targets)

    def _shares(self, instances: Sequence[Instance], targets: np.ndarray, box_of_pair: np.ndarray,
                cover_of_pair: np.ndarray, pix: np.ndarray) -> np.ndarray:
        """The share of each target's box (``instances`` numbered across the batch) covered by its pairs'
        masks outside its own mask."""
        has_mask = np.fromiter((inst.rle is not None for inst in instances), dtype=bool, count=len(instances))
        own_box = np.flatnonzero(has_mask[targets])
        needed, local = np.unique(np.concatenate((cover_of_pair, targets[own_box])), return_inverse=True)
        heights = np.repeat([im.height for im in self._images], [len(im.instances) for im in self._images])
        boxes = pix[targets]
        covered = mask_runs.covered_outside(
            boxes, heights[targets],
            (box_of_pair, local[:len(box_of_pair)]), (own_box, local[len(box_of_pair):]),
            mask_runs.decode_intervals([instances[k].rle["counts"] for k in needed.tolist()]),  # type: ignore[index]
        )
        return covered / ((boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]))


def _draw_orders(instances: Sequence[Instance]) -> np.ndarray | None:
    """Every instance's ``z`` (NaN where unknown), or ``None`` when none has one."""
    if all(inst.z is None for inst in instances):
        return None
    return np.array([np.nan if i.z is None else i.z for i in instances], dtype=np.float64)
