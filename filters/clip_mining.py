"""CLIP-based hard-pair mining for MIOH (paper Sec. 4.3 and Appendix B), as pure functions over a scorer.

Hard positives are (image, object) pairs where the object is present but the image is abnormally *unlike*
"A photo of OBJECT"; hard negatives are pairs where the object is absent but the image is abnormally *like*
the prompt. "Abnormally" is relative to the category: raw CLIP similarities are not comparable across prompts
(some words score high everywhere), so each similarity becomes a z-score among the pairs of the same prompt,
and the thresholds (``low_z``, ``high_z``) are in standard deviations.

The scorer is injected (anything with ``similarity(image_paths, prompts) -> [n_images, n_prompts]``), so the
selection logic is tested with a deterministic fake and needs neither torch nor weights.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Hashable, Protocol, Sequence

import numpy as np

MIN_GROUP_SIZE = 3
"""Fewer pairs than this in a prompt's group give no z-score (NaN): "abnormal" needs a population."""

IMAGE_BLOCK = 2048
"""Images scored per ``similarity`` call: bounds the matrix at IMAGE_BLOCK x n_prompts floats."""


def prompt_for(obj: str, attribute: str | None = None) -> str:
    """The paper's prompts (Appendix B): ``"A photo of [object]"``, or ``"[attribute] [object]"``."""
    obj = obj.strip()
    if attribute:
        return f"{attribute.strip()} {obj}"
    return f"A photo of {obj}"


class SimilarityScorer(Protocol):
    """What mining needs from a scorer; :class:`filters.clip.ClipScorer` is one."""

    def similarity(self, image_paths: Sequence[str], prompts: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class ClipPair:
    """One (image, object) pair to judge. ``attribute`` switches the prompt to ``"[attribute] [object]"``."""

    image: str
    object: str
    attribute: str | None = None

    @property
    def prompt(self) -> str:
        return prompt_for(self.object, self.attribute)


@dataclass(frozen=True)
class MinedPair:
    """A pair with its CLIP evidence: what provenance and the quality report record."""

    pair: ClipPair
    similarity: float
    """Cosine similarity between the image and ``pair.prompt``."""
    z: float
    """z-score of ``similarity`` among the pairs with the same prompt; NaN when the group is too small."""
    chosen: bool
    """True when ``z`` passed the threshold (below ``low_z`` for positives, above ``high_z`` for negatives)."""


def category_z_scores(
    sim_values: Sequence[float] | np.ndarray,
    groups: Sequence[Hashable],
    min_group_size: int = MIN_GROUP_SIZE,
) -> np.ndarray:
    """z-score of each similarity among the values of its group (population std).

    A group smaller than ``min_group_size`` or with zero spread yields NaN: nothing is abnormal there, and NaN
    compares false with every threshold, so such pairs are never chosen.
    """
    values = np.asarray(sim_values, dtype=np.float64)
    if values.ndim != 1 or len(values) != len(groups):
        raise ValueError(f"need one group per value: {values.shape} values, {len(groups)} groups")
    z = np.full(len(values), np.nan)
    members: dict[Hashable, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(g, []).append(i)
    for idx in members.values():
        if len(idx) < min_group_size:
            continue
        v = values[idx]
        std = v.std()
        if std > 1e-12 * max(1.0, float(np.abs(v).max())):
            z[idx] = (v - v.mean()) / std
    return z


def pair_similarities(pairs: Sequence[ClipPair], scorer: SimilarityScorer) -> np.ndarray:
    """Similarity of each pair's image with its own prompt, in input order.

    Calls ``scorer.similarity`` once per block of distinct images with the distinct prompts that block needs,
    so each image is encoded (or fetched from the cache) once however many objects it is paired with.
    """
    out = np.empty(len(pairs), dtype=np.float64)
    images = list(dict.fromkeys(p.image for p in pairs))
    block_of = {img: i // IMAGE_BLOCK for i, img in enumerate(images)}
    by_block: dict[int, list[int]] = {}
    for i, p in enumerate(pairs):
        by_block.setdefault(block_of[p.image], []).append(i)
    for b, idx in sorted(by_block.items()):
        block_images = images[b * IMAGE_BLOCK : (b + 1) * IMAGE_BLOCK]
        prompts = list(dict.fromkeys(pairs[i].prompt for i in idx))
        sim = np.asarray(scorer.similarity(block_images, prompts), dtype=np.float64)
        if sim.shape != (len(block_images), len(prompts)):
            raise ValueError(f"scorer returned {sim.shape}, expected {(len(block_images), len(prompts))}")
        row = {img: r for r, img in enumerate(block_images)}
        col = {pr: c for c, pr in enumerate(prompts)}
        for i in idx:
            out[i] = sim[row[pairs[i].image], col[pairs[i].prompt]]
    return out


def similarity_matrix(
    scorer: SimilarityScorer, image_paths: Sequence[str], prompts: Sequence[str], block: int | None = None
) -> np.ndarray:
    """The full ``[n_images, n_prompts]`` similarity matrix, asked for in blocks of images.

    For builders that hold an image x category incidence matrix (MIOH's pools): one call scores every pair.
    """
    block = block or IMAGE_BLOCK
    out = np.empty((len(image_paths), len(prompts)), dtype=np.float32)
    for start in range(0, len(image_paths), block):
        part = list(image_paths[start : start + block])
        sim = np.asarray(scorer.similarity(part, list(prompts)), dtype=np.float32)
        if sim.shape != (len(part), len(prompts)):
            raise ValueError(f"scorer returned {sim.shape}, expected {(len(part), len(prompts))}")
        out[start : start + len(part)] = sim
    return out


def column_z_scores(sim: np.ndarray, mask: np.ndarray, min_group_size: int = MIN_GROUP_SIZE) -> np.ndarray:
    """z-score of each masked entry among the masked entries of its column; NaN elsewhere.

    With ``mask = incidence`` the z of a present pair is relative to the other images showing that category
    (hard positives: ``z <= low_z``); with ``mask = ~incidence`` relative to the images without it (hard
    negatives: ``z >= high_z``). Same rules as :func:`category_z_scores`, for whole matrices at once.
    """
    sim = np.asarray(sim, dtype=np.float64)
    mask = np.asarray(mask, dtype=bool)
    if sim.shape != mask.shape:
        raise ValueError(f"similarity {sim.shape} and mask {mask.shape} differ")
    n = mask.sum(axis=0)
    safe_n = np.maximum(n, 1)
    mean = np.where(mask, sim, 0.0).sum(axis=0) / safe_n
    std = np.sqrt(np.where(mask, (sim - mean) ** 2, 0.0).sum(axis=0) / safe_n)
    scale = np.where(mask, np.abs(sim), 0.0).max(axis=0, initial=0.0)
    valid = (n >= min_group_size) & (std > 1e-12 * np.maximum(1.0, scale))
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (sim - mean) / std
    return np.where(mask & valid, z, np.nan)


def _mine(
    pairs: Sequence[ClipPair], scorer: SimilarityScorer, select, min_group_size: int
) -> list[MinedPair]:
    sims = pair_similarities(pairs, scorer)
    z = category_z_scores(sims, [p.prompt for p in pairs], min_group_size)
    return [MinedPair(p, float(s), float(zi), bool(select(zi))) for p, s, zi in zip(pairs, sims, z)]


def mine_hard_positives(
    pairs: Sequence[ClipPair], scorer: SimilarityScorer, low_z: float = -1.5, min_group_size: int = MIN_GROUP_SIZE
) -> list[MinedPair]:
    """Judge pairs whose object IS in the image: chosen when the image is abnormally unlike the prompt.

    Pass all present pairs of a category together: the z-score is taken among them (per prompt).
    """
    return _mine(pairs, scorer, lambda z: z <= low_z, min_group_size)


def mine_hard_negatives(
    pairs: Sequence[ClipPair], scorer: SimilarityScorer, high_z: float = 1.5, min_group_size: int = MIN_GROUP_SIZE
) -> list[MinedPair]:
    """Judge pairs whose object is NOT in the image: chosen when the image is abnormally like the prompt.

    Pass all absent candidates of a category together: the z-score is taken among them (per prompt).
    """
    return _mine(pairs, scorer, lambda z: z >= high_z, min_group_size)
