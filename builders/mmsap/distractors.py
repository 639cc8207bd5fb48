"""Wrong options of the same kind as the right answer, never the right answer nor one of its synonyms.

Three kinds (``templates/mmsap/types.yaml``):

``number``
    counts near the right one (the paper's counting example offers 3 with 2, 5, 7), with the right count's rank
    among the four numbers drawn uniformly from the ranks the question allows: ``r`` wrong counts below it and
    ``3 - r`` above, the nearest integers >= 0 within :data:`MAX_NUMBER_OFFSET` that no human gave. Taking the
    nearest on both sides would make the right count the second or third smallest almost always, and "pick the
    second smallest" a blind strategy (issue 40). A right count of 0 or 1 allows fewer ranks (nothing below 0).
    The demo world's counting questions use :data:`COUNT_OPTIONS`.
``vocabulary``
    a closed list (colours), weighted by how often each is an answer of the type in the source.
``answers``
    the source's own answer statistics: the :data:`POOL_SIZE` most frequent majority answers of questions with the
    same VQAv2 ``question_type`` ("what is the man holding" -> things people hold), topped up from the whole type
    when fewer than three survive, drawn with probability proportional to frequency.

Whatever the kind, a candidate whose key (:mod:`builders.mmsap.answers`) equals the key of any of the ten human
answers is never offered.

The VQAv2 path is vectorised: answers are interned once, every question's draw is a weighted sample without
replacement by Efraimidis-Spirakis keys ``log(u) / w`` whose uniform ``u`` is a hash of (seed, question id,
candidate) - so a question gets the same options whichever other questions are selected with it - and one numpy
pass per question_type scores all candidates of all its questions.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Iterable, Mapping

import numpy as np

MAX_NUMBER_OFFSET = 6
COUNT_OPTIONS: tuple[int, ...] = (1, 2, 3, 4)
"""The options of a demo counting question: the demo world shows a category one to four times, so every option is
a count some image has, and the gold's rank among them is the count's (dealt in balanced turns by the maker)."""
POOL_SIZE = 25
N_WRONG = 3
_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


# ------------------------------------------------------------------------------------------ hashing


def string_hash(text: str) -> int:
    """A stable 32-bit hash of a string (Python's ``hash`` changes from run to run)."""
    return zlib.crc32(text.encode("utf-8"))


def mix(values: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser, elementwise on uint64 (wrapping arithmetic)."""
    z = values.astype(np.uint64, copy=True)
    with np.errstate(over="ignore"):
        z = (z + np.uint64(0x9E3779B97F4A7C15)) & _MASK
        z = ((z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)) & _MASK
        z = ((z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)) & _MASK
    return z ^ (z >> np.uint64(31))


def uniforms(seed: int, question_ids: np.ndarray, candidate_hashes: np.ndarray) -> np.ndarray:
    """``u`` in (0, 1) for every (question, candidate) pair: ``(len(question_ids), len(candidate_hashes))``."""
    q = mix(question_ids.astype(np.uint64) ^ mix(np.array([seed], dtype=np.uint64)))
    z = mix(q[:, None] ^ (candidate_hashes.astype(np.uint64)[None, :] * np.uint64(0x100000001B3)))
    return ((z >> np.uint64(11)).astype(np.float64) + 0.5) / float(1 << 53)


# ------------------------------------------------------------------------------------------ the VQAv2 batch


@dataclass(frozen=True)
class Pool:
    """Candidate answer keys (interned ids) and their weights; ``tier`` 1 marks top-ups used only when needed."""

    ids: np.ndarray
    weights: np.ndarray
    tier: np.ndarray


@dataclass(frozen=True)
class Batch:
    """Questions of one kind that share a pool: interned answer ids, one row per question."""

    question_ids: np.ndarray
    """(r,) int64."""
    answer_ids: np.ndarray
    """(r, m) int32 interned keys of the human answers, ``-1`` padded."""
    right_ids: np.ndarray
    """(r,) int32 interned key of the right answer."""


def draw_from_pool(batch: Batch, pool: Pool, candidate_hashes: np.ndarray, seed: int, k: int = N_WRONG) -> np.ndarray:
    """``(r, k)`` interned ids of the chosen wrong options (``-1`` where fewer than ``k`` are allowed)."""
    ids = pool.ids
    forbidden = (ids[None, :, None] == batch.answer_ids[:, None, :]).any(axis=2)
    forbidden |= ids[None, :] == batch.right_ids[:, None]
    u = uniforms(seed, batch.question_ids, candidate_hashes[ids])
    score = np.log(u) / pool.weights[None, :] - 1e6 * pool.tier[None, :]
    score[forbidden] = -np.inf
    order = np.argsort(-score, axis=1, kind="stable")[:, :k]
    chosen = ids[order]
    chosen[np.take_along_axis(score, order, axis=1) == -np.inf] = -1
    if chosen.shape[1] < k:
        chosen = np.pad(chosen, ((0, 0), (0, k - chosen.shape[1])), constant_values=-1)
    return chosen


def draw_numbers(batch: Batch, values: np.ndarray, seed: int, k: int = N_WRONG) -> np.ndarray:
    """``(r, k)`` integers near each right count, none equal to a human answer's number (``-1`` if too few).

    The right count's rank among the ``k + 1`` numbers is uniform over the ranks the row allows (module
    docstring); the draw, like the other kinds', is a hash of (seed, question id). ``values`` maps an interned id
    to its integer (``-1`` for non-numbers)."""
    right = values[batch.right_ids].astype(np.int64)
    steps = np.arange(1, MAX_NUMBER_OFFSET + 1, dtype=np.int64)
    answered = values[np.where(batch.answer_ids >= 0, batch.answer_ids, 0)]
    answered = np.where(batch.answer_ids >= 0, answered, -2)
    sides = []
    for sign in (-1, 1):  # nearest first on each side
        cand = right[:, None] + sign * steps[None, :]
        valid = ~(cand[:, :, None] == answered[:, None, :]).any(axis=2) & (cand >= 0)
        sides.append((cand, valid, valid.sum(axis=1)))
    (below, ok_below, n_below), (above, ok_above, n_above) = sides
    low, high = np.maximum(0, k - n_above), np.minimum(k, n_below)
    u = uniforms(seed, batch.question_ids, np.array([string_hash("mmsap/count-rank")], dtype=np.uint64))[:, 0]
    rank = low + np.floor(u * np.maximum(high - low + 1, 0)).astype(np.int64)
    take_below = ok_below & (np.cumsum(ok_below, axis=1) <= rank[:, None])
    take_above = ok_above & (np.cumsum(ok_above, axis=1) <= (k - rank)[:, None])
    out = np.full((len(right), k), -1, dtype=np.int64)
    feasible = low <= high
    for row in np.flatnonzero(feasible):
        out[row] = np.concatenate([below[row][take_below[row]], above[row][take_above[row]]])
    return out


def ranked_pool(counts: Mapping[int, int], exclude: Iterable[int], size: int = POOL_SIZE) -> list[tuple[int, int]]:
    """The ``size`` most frequent ids (ties by id, so the pool is deterministic), ``exclude`` left out."""
    banned = set(exclude)
    ranked = sorted(((c, i) for i, c in counts.items() if i not in banned), key=lambda t: (-t[0], t[1]))
    return [(i, c) for c, i in ranked[:size]]
