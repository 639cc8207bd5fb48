"""Wrong options of the same kind as the right answer, never the right answer nor one of its synonyms.

Three kinds (``templates/mmsap/types.yaml``):

``number``
    counts near the right one: the closest integers >= 0 within :data:`MAX_NUMBER_OFFSET`, ties broken at random
    (the paper's counting example offers 3 with 2, 5, 7).
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
POOL_SIZE = 25
N_WRONG = 3
_MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


# ------------------------------------------------------------------------------------------ scalar helpers


def near_numbers(n: int, forbidden: Iterable[int], generator: np.random.Generator, k: int = N_WRONG) -> list[int]:
    """The ``k`` integers >= 0 closest to ``n`` that are not ``n`` nor ``forbidden`` (random order among ties)."""
    banned = set(forbidden) | {n}
    candidates = [c for d in range(1, MAX_NUMBER_OFFSET + 1) for c in (n - d, n + d) if c >= 0 and c not in banned]
    jitter = generator.random(len(candidates))
    ranked = sorted(range(len(candidates)), key=lambda i: (abs(candidates[i] - n), jitter[i]))
    return [candidates[i] for i in ranked[:k]]


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

    ``values`` maps an interned id to its integer (``-1`` for non-numbers)."""
    right = values[batch.right_ids].astype(np.int64)
    offsets = np.array([s * d for d in range(1, MAX_NUMBER_OFFSET + 1) for s in (-1, 1)], dtype=np.int64)
    cand = right[:, None] + offsets[None, :]
    answered = values[np.where(batch.answer_ids >= 0, batch.answer_ids, 0)]
    answered = np.where(batch.answer_ids >= 0, answered, -2)
    forbidden = (cand[:, :, None] == answered[:, None, :]).any(axis=2) | (cand < 0)
    u = uniforms(seed, batch.question_ids, offsets.astype(np.uint64) + np.uint64(1 << 20))
    score = -np.abs(offsets)[None, :] + 0.5 * u
    score = np.where(forbidden, -np.inf, score)
    order = np.argsort(-score, axis=1, kind="stable")[:, :k]
    out = np.take_along_axis(cand, order, axis=1)
    out[np.take_along_axis(score, order, axis=1) == -np.inf] = -1
    return out


def ranked_pool(counts: Mapping[int, int], exclude: Iterable[int], size: int = POOL_SIZE) -> list[tuple[int, int]]:
    """The ``size`` most frequent ids (ties by id, so the pool is deterministic), ``exclude`` left out."""
    banned = set(exclude)
    ranked = sorted(((c, i) for i, c in counts.items() if i not in banned), key=lambda t: (-t[0], t[1]))
    return [(i, c) for c, i in ranked[:size]]
