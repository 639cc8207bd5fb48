"""MIOH's CLIP signals (paper Sec. 4.3, Appendix B): abnormally low or high image-text similarity.

A present object whose image scores abnormally *low* on "A photo of OBJECT" (relative to the other images that
show it) is a hard positive an encoder struggles to see; an absent object whose image scores abnormally *high*
(relative to the other images without it) is a hard negative. Attributes use "[attribute] [object]". The z-scores
are computed once for every image x prompt pair (one similarity matrix, embeddings cached on disk by
:mod:`filters.clip`), and the pools OR them with the geometry and co-occurrence signals. Relations get no CLIP
signal: the paper mines only objects and attributes with it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from filters.clip import column_z_scores, prompt_for, similarity_matrix
from sources.records import RecordSet


@dataclass(frozen=True)
class ClipSignals:
    """z-scores per (image, category) and per (image, attribute-object pair), NaN where undefined."""

    categories: tuple[str, ...]
    present_z: np.ndarray
    """image x category: z of the similarity among the images that show the category (NaN where absent)."""
    absent_z: np.ndarray
    """image x category: z among the images without the category (NaN where present)."""
    attribute_pairs: tuple[tuple[str, str], ...]
    attribute_present_z: np.ndarray
    attribute_absent_z: np.ndarray
    low_z: float
    high_z: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "_cat", {c: k for k, c in enumerate(self.categories)})
        object.__setattr__(self, "_pair", {p: k for k, p in enumerate(self.attribute_pairs)})

    def category_z(self, img: int, category: str) -> float | None:
        k = self._cat[category]  # type: ignore[attr-defined]
        z = self.present_z[img, k]
        if np.isnan(z):
            z = self.absent_z[img, k]
        return None if np.isnan(z) else float(z)

    def attribute_z(self, img: int, pair: tuple[str, str]) -> float | None:
        k = self._pair.get(pair)  # type: ignore[attr-defined]
        if k is None:
            return None
        z = self.attribute_present_z[img, k]
        if np.isnan(z):
            z = self.attribute_absent_z[img, k]
        return None if np.isnan(z) else float(z)

    def hard_absent_mask(self) -> np.ndarray:
        """image x category: absent and abnormally similar to the prompt."""
        with np.errstate(invalid="ignore"):
            return np.nan_to_num(self.absent_z, nan=-np.inf) >= self.high_z


def attribute_incidence(records: RecordSet) -> tuple[tuple[tuple[str, str], ...], np.ndarray]:
    """Every (attribute, category) pair shown by a non-crowd instance, and the image x pair incidence."""
    pairs = sorted({(a, inst.category) for im in records.images for inst in im.instances if not inst.iscrowd
                    for a in inst.attributes})
    index = {p: k for k, p in enumerate(pairs)}
    incidence = np.zeros((len(records.images), len(pairs)), dtype=bool)
    for i, im in enumerate(records.images):
        for inst in im.instances:
            if not inst.iscrowd:
                for a in inst.attributes:
                    incidence[i, index[(a, inst.category)]] = True
    return tuple(pairs), incidence


def compute_signals(
    scorer: Any,
    records: RecordSet,
    incidence: np.ndarray,
    low_z: float,
    high_z: float,
    with_attributes: bool = True,
) -> ClipSignals:
    """Score every image against every category prompt (and attribute prompt) and turn them into z-scores."""
    paths: Sequence[str] = [im.file for im in records.images]
    categories = tuple(records.categories)
    sim = similarity_matrix(scorer, paths, [prompt_for(c.replace("_", " ")) for c in categories])
    pairs: tuple[tuple[str, str], ...] = ()
    pair_incidence = np.zeros((len(paths), 0), dtype=bool)
    pair_sim = np.zeros((len(paths), 0), dtype=np.float32)
    if with_attributes:
        pairs, pair_incidence = attribute_incidence(records)
        if pairs:
            prompts = [prompt_for(c.replace("_", " "), a.replace("_", " ")) for a, c in pairs]
            pair_sim = similarity_matrix(scorer, paths, prompts)
    return ClipSignals(
        categories=categories,
        present_z=column_z_scores(sim, incidence),
        absent_z=column_z_scores(sim, ~incidence),
        attribute_pairs=pairs,
        attribute_present_z=column_z_scores(pair_sim, pair_incidence),
        attribute_absent_z=column_z_scores(pair_sim, ~pair_incidence),
        low_z=low_z,
        high_z=high_z,
    )
