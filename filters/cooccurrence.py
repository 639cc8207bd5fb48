"""Which objects appear together, over a whole source, and the hard negatives that co-occurrence suggests.

MIOH's hard negatives are (image, object) pairs "where the target OBJECT is absent but contextual cues
misleadingly suggest its presence": the paper "estimate[s] the co-occurrence probability between all object-pairs
from the training data" and collects images "that contain frequently co-occurring objects but not the target
OBJECT itself". This module holds those statistics, counted over the WHOLE source (every image, not one build's
sample), so a label does not depend on which images a build happened to draw:

* ``n(a)``: images containing category ``a`` (several instances count once; crowd regions count: the object is
  there);
* ``n(a, b)``: images containing both;
* ``P(b | a) = n(a, b) / n(a)`` and ``lift(a, b) = P(a, b) / (P(a) P(b)) = n(a, b) N / (n(a) n(b))``.

Counting is a matrix product: a boolean image x category incidence matrix ``M`` built from integer index arrays
in one scatter, then ``M.T @ M`` in float32 (exact for counts below 2**24, float64 beyond) - no Python loop over
annotations. ``benchmarks/bench_cooccurrence.py`` measures it against a dict/set baseline at COCO train scale.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from sources.errors import ConfigError, SourceError
from sources.records import RecordSet

_EXACT_FLOAT32 = 2**24
"""float32 represents every integer up to 2**24 exactly; pair counts never exceed the number of images."""

_CHUNK_ELEMENTS = 2**22
"""Work-buffer size (elements) for the bulk scorer: ~32 MB of float64, whatever the number of images."""


@dataclass(frozen=True)
class ContextScore:
    """How strongly the present objects of an image suggest an absent one."""

    absent: str
    p: float
    """``max P(absent | a)`` over the present categories ``a`` (0 when nothing co-occurs with it)."""
    lift: float
    """``lift(cue, absent)``."""
    cue: str | None
    """The present category giving ``p`` (lowest category index on ties); ``None`` when ``p`` is 0."""
    support: int
    """``n(cue, absent)``: images behind ``p``; small support means a noisy estimate."""


@dataclass(frozen=True)
class ContextScores:
    """:class:`ContextScore` for every category at once, as arrays shaped like the incidence input.

    ``cue`` holds category indices, ``-1`` where there is no cue. Categories present in the image are not
    negatives: they get ``p = lift = 0``, ``cue = -1``, ``support = 0``.
    """

    p: np.ndarray
    lift: np.ndarray
    cue: np.ndarray
    support: np.ndarray


@dataclass(frozen=True)
class HardNegativeThresholds:
    """When an absent object counts as a hard negative.

    * ``min_p=0.3``: among images with the cue, at least ~1 in 3 also show the absent object, a prior strong
      enough that a model leaning on context "sees" it (the paper's kitchen -> frying pan example);
    * ``min_lift=1.2``: the cue must make the object at least 20 % more likely than its base rate. Without it,
      ubiquitous categories pass ``min_p`` from any cue (``person`` is in about half of COCO's images), and
      that is frequency, not contextual bias;
    * ``min_support=1``: at least that many images must show cue and object together; raise it on large
      sources so that a rare cue seen once with the object (``P = 1``) cannot decide.

    Scores are stored with each item, so all three can be re-tuned on a finished build.
    """

    min_p: float = 0.3
    min_lift: float = 1.2
    min_support: int = 1

    def __post_init__(self) -> None:
        if not 0 <= self.min_p <= 1:
            raise ConfigError(f"hard-negative thresholds: min_p must be in [0, 1], not {self.min_p}")
        if self.min_lift < 0 or self.min_support < 0:
            raise ConfigError("hard-negative thresholds: min_lift and min_support must be >= 0")


def is_hard_negative(score: ContextScore, thresholds: HardNegativeThresholds = HardNegativeThresholds()) -> bool:
    """True when the absent object's strongest cue passes every threshold."""
    return (
        score.cue is not None
        and score.p >= thresholds.min_p
        and score.lift >= thresholds.min_lift
        and score.support >= thresholds.min_support
    )


def hard_negative_mask(
    scores: ContextScores, thresholds: HardNegativeThresholds = HardNegativeThresholds()
) -> np.ndarray:
    """Bulk :func:`is_hard_negative`: a boolean array shaped like ``scores.p``."""
    return (
        (scores.cue >= 0)
        & (scores.p >= thresholds.min_p)
        & (scores.lift >= thresholds.min_lift)
        & (scores.support >= thresholds.min_support)
    )


def record_indices(recordset: RecordSet) -> tuple[np.ndarray, np.ndarray]:
    """``(image_idx, category_idx)`` of every instance, images numbered in ``recordset.images`` order."""
    index = {c: k for k, c in enumerate(recordset.categories)}
    img: list[int] = []
    cat: list[int] = []
    for i, image in enumerate(recordset.images):
        for inst in image.instances:
            k = index.get(inst.category)
            if k is None:
                raise SourceError(
                    recordset.path,
                    f"image {image.id} instance {inst.id}",
                    f"category {inst.category!r} is not in the record set's categories",
                )
            img.append(i)
            cat.append(k)
    return np.asarray(img, dtype=np.int64), np.asarray(cat, dtype=np.int64)


def incidence_matrix(image_idx: np.ndarray, category_idx: np.ndarray, n_images: int, n_categories: int) -> np.ndarray:
    """Boolean ``(n_images, n_categories)`` matrix, True where the image has the category (one scatter)."""
    img = np.asarray(image_idx)
    cat = np.asarray(category_idx)
    if img.shape != cat.shape or img.ndim != 1:
        raise ValueError(f"image_idx and category_idx must be 1-d and of one length, got {img.shape} and {cat.shape}")
    if img.size and (img.min() < 0 or img.max() >= n_images):
        raise ValueError(f"image_idx outside [0, {n_images})")
    if cat.size and (cat.min() < 0 or cat.max() >= n_categories):
        raise ValueError(f"category_idx outside [0, {n_categories})")
    m = np.zeros((n_images, n_categories), dtype=bool)
    m[img, cat] = True
    return m


class CooccurrenceStats:
    """Image and pair counts over a whole source, with conditional probabilities and lift.

    Build with :meth:`from_records`, :meth:`from_indices` or :meth:`from_incidence`. ``pair_counts[a, b]`` is
    ``n(a, b)``, its diagonal is ``n(a)``; ``conditional[a, b]`` is ``P(b | a)`` and ``lift_matrix[a, b]`` is
    ``lift(a, b)``, both 0 where a count in the denominator is 0 (no evidence, no cue).
    """

    def __init__(self, categories: Sequence[str], n_images: int, pair_counts: np.ndarray) -> None:
        self.categories: tuple[str, ...] = tuple(categories)
        self.n_images = int(n_images)
        self.pair_counts: np.ndarray = np.asarray(pair_counts, dtype=np.int64)
        c = len(self.categories)
        if self.pair_counts.shape != (c, c):
            raise ValueError(f"pair_counts must be {(c, c)}, got {self.pair_counts.shape}")
        self._index = {name: k for k, name in enumerate(self.categories)}
        self.image_counts: np.ndarray = np.diagonal(self.pair_counts).copy()
        n = self.image_counts.astype(np.float64)
        pairs = self.pair_counts.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            self.conditional: np.ndarray = np.where(n[:, None] > 0, pairs / n[:, None], 0.0)
            expected = np.outer(n, n)
            self.lift_matrix: np.ndarray = np.where(expected > 0, pairs * self.n_images / expected, 0.0)

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_incidence(cls, incidence: np.ndarray, categories: Sequence[str]) -> CooccurrenceStats:
        """From a boolean ``(n_images, n_categories)`` matrix: ``n(a, b) = (M.T @ M)[a, b]``."""
        m = np.asarray(incidence, dtype=bool)
        dtype = np.float32 if m.shape[0] < _EXACT_FLOAT32 else np.float64
        f = m.astype(dtype)
        pairs = np.rint(f.T @ f).astype(np.int64)
        return cls(categories, m.shape[0], pairs)

    @classmethod
    def from_indices(
        cls, image_idx: np.ndarray, category_idx: np.ndarray, categories: Sequence[str], n_images: int
    ) -> CooccurrenceStats:
        """From one ``(image, category)`` index pair per annotation (duplicates are fine: presence is counted)."""
        return cls.from_incidence(incidence_matrix(image_idx, category_idx, n_images, len(categories)), categories)

    @classmethod
    def from_records(cls, recordset: RecordSet) -> CooccurrenceStats:
        """Over every image of ``recordset`` and its whole category vocabulary (never-seen categories included)."""
        img, cat = record_indices(recordset)
        return cls.from_indices(img, cat, recordset.categories, len(recordset.images))

    # ------------------------------------------------------------------ lookups

    def index(self, category: str) -> int:
        """Column of ``category``; an unknown name fails with the valid ones."""
        try:
            return self._index[category]
        except KeyError:
            known = ", ".join(sorted(self.categories)[:30]) + (", ..." if len(self.categories) > 30 else "")
            raise KeyError(f"unknown category {category!r}; known: {known}") from None

    def n(self, a: str) -> int:
        """``n(a)``: images containing ``a``."""
        return int(self.image_counts[self.index(a)])

    def n_pair(self, a: str, b: str) -> int:
        """``n(a, b)``: images containing both."""
        return int(self.pair_counts[self.index(a), self.index(b)])

    def p_given(self, b: str, a: str) -> float:
        """``P(b | a)``: share of the images with ``a`` that also have ``b``."""
        return float(self.conditional[self.index(a), self.index(b)])

    def lift(self, a: str, b: str) -> float:
        """``P(a, b) / (P(a) P(b))``: > 1 when they appear together more often than chance."""
        return float(self.lift_matrix[self.index(a), self.index(b)])

    # ------------------------------------------------------------------ hard-negative context

    def context_score(self, present: Iterable[str], absent: str) -> ContextScore:
        """The strongest cue for ``absent`` among ``present``: ``p = max_a P(absent | a)``.

        Ties go to the lowest category index, as in :meth:`context_scores`.
        """
        b = self.index(absent)
        idx = np.unique(np.array([self.index(a) for a in present], dtype=np.int64))
        if b in idx:
            raise ValueError(f"{absent!r} is among the present categories: it cannot be a negative")
        if idx.size == 0:
            return ContextScore(absent, 0.0, 0.0, None, 0)
        col = self.conditional[idx, b]
        best = int(idx[int(np.argmax(col))])
        p = float(self.conditional[best, b])
        if p <= 0:
            return ContextScore(absent, 0.0, 0.0, None, 0)
        lift = float(self.lift_matrix[best, b])
        return ContextScore(absent, p, lift, self.categories[best], int(self.pair_counts[best, b]))

    def context_scores(self, incidence_row_mask: np.ndarray) -> ContextScores:
        """:meth:`context_score` for every category of one image (``(C,)`` mask) or many (``(n, C)``) at once.

        For each image, ``p[b] = max over present a of P(b | a)``. The present rows of ``conditional`` are
        gathered per image and reduced with ``np.maximum.reduceat``, so the cost is (present instances x C),
        in chunks of bounded memory, with no Python loop over images.
        """
        mask = np.asarray(incidence_row_mask, dtype=bool)
        squeeze = mask.ndim == 1
        rows = mask[None, :] if squeeze else mask
        c = len(self.categories)
        if rows.ndim != 2 or rows.shape[1] != c:
            raise ValueError(f"incidence mask must have {c} columns, got shape {mask.shape}")
        n = rows.shape[0]
        p = np.zeros((n, c), dtype=np.float64)
        cue = np.full((n, c), -1, dtype=np.int64)
        img, cat = np.nonzero(rows)  # row-major: sorted by image, then category (lowest index wins ties)
        if img.size:
            for lo, hi in _chunks(img, max(1, _CHUNK_ELEMENTS // max(1, c))):
                self._reduce_chunk(img[lo:hi], cat[lo:hi], p, cue)
        has = cue >= 0
        lift = np.where(has, self.lift_matrix[np.where(has, cue, 0), np.arange(c)], 0.0)
        support = np.where(has, self.pair_counts[np.where(has, cue, 0), np.arange(c)], 0)
        out = ContextScores(p, lift, cue, support)
        if squeeze:
            out = ContextScores(p[0], lift[0], cue[0], support[0])
        return out

    def _reduce_chunk(self, img: np.ndarray, cat: np.ndarray, p: np.ndarray, cue: np.ndarray) -> None:
        """Fill ``p`` and ``cue`` for the images of one chunk of (sorted) present pairs."""
        starts = np.flatnonzero(np.r_[True, img[1:] != img[:-1]])
        images = img[starts]
        gathered = self.conditional[cat]  # (m, C): P(b | a) for each present a
        best = np.maximum.reduceat(gathered, starts, axis=0)  # (k, C)
        group = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, img.size]))
        pos = np.where(gathered == best[group], np.arange(img.size)[:, None], img.size)
        first = np.minimum.reduceat(pos, starts, axis=0)  # first row reaching the max
        present = np.zeros(best.shape, dtype=bool)
        present[group, cat] = True
        valid = (best > 0) & ~present
        p[images] = np.where(valid, best, 0.0)
        cue[images] = np.where(valid, cat[np.minimum(first, img.size - 1)], -1)


def _chunks(sorted_groups: np.ndarray, max_rows: int) -> Iterable[tuple[int, int]]:
    """Split a sorted group-id array into ``[lo, hi)`` ranges of about ``max_rows``, never inside a group."""
    lo, total = 0, sorted_groups.size
    while lo < total:
        hi = min(total, lo + max_rows)
        if hi < total:
            # move hi back to the start of the group it falls in (or forward if that group starts at lo)
            start = int(np.searchsorted(sorted_groups, sorted_groups[hi], side="left"))
            hi = start if start > lo else int(np.searchsorted(sorted_groups, sorted_groups[hi], side="right"))
        yield lo, hi
        lo = hi
