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
from sources.tables import SourceTables, column, flat_lists


@dataclass(frozen=True)
class ClipSignals:
    """z-scores per (image, category) and per (image, attribute-object pair), NaN where undefined."""

    present_z: np.ndarray
    """image x category: z of the similarity among the images that show the category (NaN where absent)."""
    absent_z: np.ndarray
    """image x category: z among the images without the category (NaN where present)."""
    attribute_pairs: tuple[tuple[str, str], ...]
    attribute_present_z: np.ndarray
    attribute_absent_z: np.ndarray
    low_z: float
    high_z: float

    def category_z_matrix(self) -> np.ndarray:
        """Image x category: the z of each pair among the images that show the category where the image shows
        it, among those that do not elsewhere (NaN where undefined)."""
        return np.where(np.isnan(self.present_z), self.absent_z, self.present_z)

    def attribute_z_cells(self, images: np.ndarray, probes: Sequence[tuple[str, str]], cells: np.ndarray) -> np.ndarray:
        """The z of attribute probe ``probes[cells[k]]`` in image ``images[k]`` (NaN where undefined)."""
        number = {pair: k for k, pair in enumerate(self.attribute_pairs)}
        of_probe = np.array([number.get(tuple(p), -1) for p in probes], dtype=np.int64)[cells]
        z = np.where(np.isnan(self.attribute_present_z), self.attribute_absent_z, self.attribute_present_z)
        found = z[images, np.maximum(of_probe, 0)] if z.size else np.full(len(cells), np.nan)
        return np.where(of_probe >= 0, found, np.nan)

    def hard_absent_mask(self) -> np.ndarray:
        """image x category: absent and abnormally similar to the prompt."""
        with np.errstate(invalid="ignore"):
            return np.nan_to_num(self.absent_z, nan=-np.inf) >= self.high_z


def attribute_incidence(source: SourceTables) -> tuple[tuple[tuple[str, str], ...], np.ndarray]:
    """Every (attribute, category) pair shown by a non-crowd instance, and the image x pair incidence."""
    parent, names = flat_lists(source.instances, "attributes")
    keep = ~column(source.instances, "iscrowd")[parent]
    category = column(source.instances, "category")[parent[keep]].tolist()
    image = column(source.instances, "image")[parent[keep]].tolist()
    shown = [(a, source.categories[c]) for a, c in zip(np.array(names, dtype=object)[keep].tolist(), category)]
    pairs = sorted(set(shown))
    index = {p: k for k, p in enumerate(pairs)}
    incidence = np.zeros((source.n_images, len(pairs)), dtype=bool)
    incidence[image, [index[p] for p in shown]] = True
    return tuple(pairs), incidence


def compute_signals(
    scorer: Any,
    source: SourceTables,
    incidence: np.ndarray,
    low_z: float,
    high_z: float,
    with_attributes: bool = True,
) -> ClipSignals:
    """Score every image against every category prompt (and attribute prompt) and turn them into z-scores."""
    paths: Sequence[str] = source.images.column("file").to_pylist()
    sim = similarity_matrix(scorer, paths, [prompt_for(c.replace("_", " ")) for c in source.categories])
    pairs: tuple[tuple[str, str], ...] = ()
    pair_incidence = np.zeros((len(paths), 0), dtype=bool)
    pair_sim = np.zeros((len(paths), 0), dtype=np.float32)
    if with_attributes:
        pairs, pair_incidence = attribute_incidence(source)
        if pairs:
            prompts = [prompt_for(c.replace("_", " "), a.replace("_", " ")) for a, c in pairs]
            pair_sim = similarity_matrix(scorer, paths, prompts)
    return ClipSignals(
        present_z=column_z_scores(sim, incidence),
        absent_z=column_z_scores(sim, ~incidence),
        attribute_pairs=pairs,
        attribute_present_z=column_z_scores(pair_sim, pair_incidence),
        attribute_absent_z=column_z_scores(pair_sim, ~pair_incidence),
        low_z=low_z,
        high_z=high_z,
    )
