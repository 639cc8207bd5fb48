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

:func:`measure` measures and labels every instance of a source at once (:class:`Measures`, arrays);
:func:`classify` turns one instance's measures into a :class:`Difficulty` with :class:`GeometryThresholds`.
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
from sources.records import RLE, ImageRecord
from sources.tables import Masks, SourceTables, as_compressed, column, tables_of

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

    def rules(self) -> tuple[Threshold, ...]:
        """The drop rules, then the easy rules."""
        return self.drop_rules() + self.easy_rules()

    def level_of(self, rule: Threshold) -> int:
        """The level (index into :data:`LEVELS`) an instance failing ``rule`` gets at least: 2 drop, 1 hard."""
        return 2 if rule in self.drop_rules() else 1


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


LEVELS: tuple[Level, ...] = ("easy", "hard", "drop")
"""The labels, numbered (:attr:`Measures.level`)."""

METHODS: tuple[OcclusionMethod, ...] = ("none", "amodal", "mask_proxy")
"""Where an occlusion comes from, numbered (:attr:`Measures.method`)."""


@dataclass(frozen=True)
class Measures:
    """Every instance's visibility measures and label, one entry per instance of the source (arrays)."""

    relative_area: np.ndarray
    occlusion: np.ndarray
    truncation: np.ndarray
    method: np.ndarray
    """Index into :data:`METHODS`."""
    level: np.ndarray
    """Index into :data:`LEVELS`."""
    rule: np.ndarray
    """The first failed rule of the instance's level, as an index into :meth:`GeometryThresholds.rules` (-1: easy)."""


def classify(geom: InstanceGeometry, thresholds: GeometryThresholds = GeometryThresholds()) -> Difficulty:
    """``drop`` if any drop rule fails, else ``hard`` if any easy rule fails, else ``easy``; the reason lists every
    failed rule of that level."""
    scores = {name: np.array([getattr(geom, name)]) for name in ("relative_area", "occlusion", "truncation")}
    level, rule, failing = _classified(scores, thresholds)
    if level[0] == 0:
        return Difficulty("easy", None, geom)
    rules = thresholds.rules()
    failed = [t for t, fails in zip(rules, failing) if fails[0] and thresholds.level_of(t) == level[0]]
    reason = "; ".join(t.reason(getattr(geom, t.name)) for t in failed)
    return Difficulty(LEVELS[level[0]], reason, geom, rules[rule[0]].rule)  # type: ignore[arg-type]


def _classified(scores: Mapping[str, np.ndarray], thresholds: GeometryThresholds
                ) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """The level and first failed rule (:class:`Measures`) of every instance from its ``scores``, and each rule's
    failures. The rules are :meth:`GeometryThresholds.rules`: an instance is ``drop`` where a drop rule fails,
    else ``hard`` where an easy rule fails."""
    rules = thresholds.rules()
    failing = [~t.passes_array(scores[t.name]) for t in rules]
    n = len(next(iter(scores.values())))
    level = np.zeros(n, dtype=np.int8)
    rule = np.full(n, -1, dtype=np.int8)
    for code in (1, 2):  # hard, then drop: a failed drop rule decides
        mine = [k for k, t in enumerate(rules) if thresholds.level_of(t) == code]
        fails = np.stack([failing[k] for k in mine])
        hit = fails.any(axis=0)
        level[hit] = code
        rule[hit] = np.array(mine)[fails.argmax(axis=0)[hit]]
    return level, rule, failing


def measure(source: SourceTables, thresholds: GeometryThresholds = GeometryThresholds(),
            stats: FilterStats | None = None, name: str = "geometry") -> Measures:
    """Measure and classify every instance of ``source`` at once; ``drop`` counts as dropped under ``name`` in
    ``stats``. Masks are read from ``source.masks`` only where the occlusion proxy needs them."""
    image = column(source.instances, "image").astype(np.int64)
    width = column(source.images, "width").astype(np.int64)[image]
    height = column(source.images, "height").astype(np.int64)[image]
    boxes = np.stack([column(source.instances, k) for k in "xywh"], axis=1).reshape(-1, 4)
    area = column(source.instances, "area")
    image_area = (width * height).astype(np.float64)
    scores = {"relative_area": np.divide(area, image_area, out=np.zeros_like(area), where=image_area > 0),
              "truncation": truncation(boxes, width, height)}  # type: ignore[arg-type]
    scores["occlusion"], method = _occlusions(source, image, height, _pixel_boxes(boxes, width, height), area)
    level, rule, _ = _classified(scores, thresholds)
    if stats is not None:
        rules = thresholds.rules()
        dropped = Counter(rules[k].rule for k in rule[level == 2].tolist())
        stats.record_counts(name, seen=len(level), reasons=dropped)
    return Measures(scores["relative_area"], scores["occlusion"], scores["truncation"], method, level, rule)


def classify_image(
    image: ImageRecord,
    thresholds: GeometryThresholds = GeometryThresholds(),
    stats: FilterStats | None = None,
    name: str = "geometry",
) -> dict[str, Difficulty]:
    """Measure and classify every instance of ``image``; ``drop`` counts as dropped under ``name`` in ``stats``."""
    found = measure_image(image, thresholds, stats, name)
    return {iid: classify(geom, thresholds) for iid, geom in found.items()}


def measure_image(image: ImageRecord, thresholds: GeometryThresholds = GeometryThresholds(),
                  stats: FilterStats | None = None, name: str = "geometry") -> dict[str, InstanceGeometry]:
    """The geometry of every instance of ``image``, keyed by instance id, in instance order (:func:`measure`)."""
    m = measure(_alone(image), thresholds, stats, name)
    return {
        inst.id: InstanceGeometry(inst.id, inst.category, float(m.relative_area[k]), float(m.occlusion[k]),
                                  float(m.truncation[k]), METHODS[m.method[k]], inst.iscrowd)
        for k, inst in enumerate(image.instances)
    }


def occlusion(image: ImageRecord) -> tuple[np.ndarray, list[OcclusionMethod]]:
    """Occlusion of every instance of ``image`` and how it was obtained (exact from the whole object's area, mask
    proxy, or none: :func:`_occlusions`)."""
    m = measure(_alone(image))
    return m.occlusion, [METHODS[k] for k in m.method.tolist()]


def _alone(image: ImageRecord) -> SourceTables:
    from sources.records import RecordSet

    return tables_of(RecordSet("image", "", tuple(sorted(image.categories)), (image,)))


# --------------------------------------------------------------------------------------------------- measures


def truncation(boxes: np.ndarray, width: int | np.ndarray, height: int | np.ndarray, tol: float = 1.0) -> np.ndarray:
    """Fraction of each box's perimeter that lies within ``tol`` px of the image border, in [0, 1].

    Why this measure: the amount of an object cut away by the frame is unknowable from the visible part, but
    the frame only cuts along the box sides that touch it, and a longer cut side means more of the outline
    was lost. Counting touching sides weighted by their length is therefore a continuous version of "how many
    of the 4 sides touch the border / 4" (equal to it for square boxes): a box along one short side scores
    little, a box in a corner scores 0.5, a box spanning the full width scores ``h / (w + h)`` for its left and
    right sides plus its top/bottom when they touch. Boxes are clipped to the image first, so a box drawn past
    the border counts as touching it. ``boxes`` is ``(n, 4)`` as ``(x, y, w, h)``; ``width`` and ``height`` are
    the image's, or each box's.
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


PROXY_CHUNK = 4000
"""Instances whose occlusion proxies are measured together (a few MB of pairs and run arrays)."""


def _occlusions(source: SourceTables, image: np.ndarray, height: np.ndarray, pix: np.ndarray, area: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """Every instance's occlusion and how it was obtained (an index into :data:`METHODS`).

    Exact where the whole object's area is known (``amodal_area``; the demo world): ``1 - area / amodal_area``.
    Elsewhere, in an image where some instance has a mask, the *mask proxy*: the fraction of the instance's box
    covered by the union of the OTHER instances' masks. Why: a modal (visible-only) annotation does not say how
    big the whole object is, but whatever hides part of it is itself annotated, and it sits inside the target's
    box, where the hidden part would have been. So the share of the box painted by other objects' visible masks
    estimates the hidden share. Details:

    * only other instances whose box overlaps the target's box can cover it (checked on boxes first), so only
      targets with such a neighbour and those neighbours need their masks, and those are never decoded: the
      covered share is counted on run lengths (:func:`filters.mask_runs.covered_outside`); a target no other
      mask's box touches scores 0 from boxes alone, and polygon masks of such files are never even converted;
    * pixels of the target's own mask never count as covered (they are visible by definition);
    * when both draw orders (``z``) are known, only instances in front (larger ``z``) count;
    * known bias: without ``z`` a large object *behind* the target (a bed under a person) also fills the box
      around a non-rectangular target, so the proxy over-estimates; it leans to "hard", the safer error for a
      hard-positive label, and reaching the 0.9 drop bound needs a target whose own mask fills < 10 % of its box.
    """
    amodal = column(source.instances, "amodal_area")
    exact = amodal > 0  # NaN (not known) compares false
    occ = np.zeros(len(image), dtype=np.float64)
    occ[exact] = np.minimum(1.0, np.maximum(0.0, 1.0 - area[exact] / amodal[exact]))
    method = np.where(exact, 1, 0).astype(np.int8)
    masks = source.masks
    has_mask = masks.present() if masks is not None else np.zeros(len(image), dtype=bool)
    with_masks = np.zeros(source.n_images, dtype=bool)
    with_masks[image[has_mask]] = True
    proxied = ~exact & with_masks[image]
    method[proxied] = 2
    z = column(source.instances, "z")
    ends = np.cumsum(np.bincount(image, minlength=source.n_images))  # instances are grouped by image
    cut_after = np.searchsorted(ends, np.arange(PROXY_CHUNK, len(image), PROXY_CHUNK), side="left")
    cuts = [0, *np.unique(ends[cut_after]).tolist(), len(image)]  # chunks of whole images
    for start, stop in zip(cuts[:-1], cuts[1:]):
        if stop > start:
            _proxy(np.arange(start, stop), image, pix, height, has_mask, proxied, z, masks, occ)
    return occ, method


def _proxy(rows: np.ndarray, image: np.ndarray, pix: np.ndarray, height: np.ndarray, has_mask: np.ndarray,
           proxied: np.ndarray, z: np.ndarray, masks: Masks | None, occ: np.ndarray) -> None:
    """The mask proxy (:func:`_occlusions`) of the instances ``rows`` (whole images) that need it, into ``occ``."""
    targets = rows[proxied[rows]]
    if not len(targets) or masks is None:
        return
    first = np.searchsorted(image, image[targets], side="left")  # each target's image: its instances' range
    count = np.searchsorted(image, image[targets], side="right") - first
    t_of = np.repeat(targets, count)
    o_of = np.repeat(first - np.cumsum(count) + count, count) + np.arange(int(count.sum()))
    t, o = pix[t_of], pix[o_of]
    covers = (
        has_mask[o_of] & (o_of != t_of)
        & (t[:, 0] < o[:, 2]) & (o[:, 0] < t[:, 2]) & (t[:, 1] < o[:, 3]) & (o[:, 1] < t[:, 3])
        & (t[:, 2] > t[:, 0]) & (t[:, 3] > t[:, 1])  # an empty box stays 0
        & (np.isnan(z[t_of]) | np.isnan(z[o_of]) | (z[o_of] > z[t_of]))
    )
    t_of, o_of = t_of[covers], o_of[covers]
    if not len(t_of):
        return
    active, box_of_pair = np.unique(t_of, return_inverse=True)
    own_box = np.flatnonzero(has_mask[active])
    needed, local = np.unique(np.concatenate((o_of, active[own_box])), return_inverse=True)
    boxes = pix[active]
    covered = mask_runs.covered_outside(
        boxes, height[active], (box_of_pair, local[:len(o_of)]), (own_box, local[len(o_of):]),
        mask_runs.decode_intervals(masks.counts(needed.tolist())),
    )
    occ[active] = covered / ((boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1]))


def decode_masks(rles: Sequence[RLE], height: int, width: int) -> np.ndarray:
    """All masks at once as a boolean ``(height, width, n)`` array (one pycocotools call)."""
    objs = [as_compressed(r, height, width) for r in rles]
    return mask_utils.decode(objs).astype(bool, copy=False).reshape(height, width, len(objs))


def _pixel_boxes(boxes: np.ndarray, width: int | np.ndarray, height: int | np.ndarray) -> np.ndarray:
    """Boxes as integer pixel ranges ``[x0, y0, x1, y1)`` covering every touched pixel, clipped to the image."""
    b = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    x0 = np.clip(np.floor(b[:, 0]), 0, width)
    y0 = np.clip(np.floor(b[:, 1]), 0, height)
    x1 = np.clip(np.ceil(b[:, 0] + b[:, 2]), 0, width)
    y1 = np.clip(np.ceil(b[:, 1] + b[:, 3]), 0, height)
    return np.stack([x0, y0, x1, y1], axis=1).astype(np.int64)
