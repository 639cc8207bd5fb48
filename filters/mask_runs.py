"""Masks as runs of pixels: how much of a box the union of some masks covers, minus another mask.

Why: the occlusion proxy (:func:`filters.geometry._occlusions`) asks, for every instance that another instance's
box overlaps, how many pixels of its box the other instances' masks paint outside its own mask. Asked of
pycocotools one target at a time it costs five library calls per target, each decoding and re-encoding
compressed strings; here the targets of many images are answered at once on the masks' run lengths, no mask
decoded to pixels, with the integers pycocotools gives (``tests/filters/test_geometry.py`` compares them with
decoded pixels). The method:

* a mask's compressed counts become the intervals ``[start, end)`` of its ones in column-major pixel order
  (:func:`decode_intervals`, decoded as pycocotools' ``rleFrString`` decodes them);
* a box is mapped onto ``0 .. w*h`` by ``F(p)``, the number of box pixels before pixel ``p`` in that order: ``F``
  never decreases, so an interval ``[s, e)`` holds exactly ``F(e) - F(s)`` box pixels, and a two-dimensional
  clip becomes a one-dimensional one;
* the box pixels covered by the others and not by the target's own mask number ``|others | own| - |own|``, a
  union's length being a walk in start order.

The per-interval work runs in loops compiled by numba (numpy array passes over the same intervals take several
times as long), compiled on first use and cached next to this file (``cache=True``).
"""

from __future__ import annotations

import sys
from itertools import compress
from types import ModuleType
from typing import Any, Callable, Sequence

import numpy as np

MERGE_RUNS = 16
"""Up to this many masks on one box, their sorted runs are merged by taking the smallest head; more are sorted."""

_KERNELS: list[Callable[..., Any]] = []
_loaded: ModuleType | None = None


def decode_intervals(counts: Sequence[str | bytes | Sequence[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ones of each mask as intervals of column-major pixel positions: ``(starts, ends, per_mask)``, the
    intervals of mask ``i`` being the ``per_mask[i]`` ones after those of the masks before it.

    ``counts`` are RLE counts as COCO stores them: a compressed string (``str`` or ``bytes``, decoded exactly as
    pycocotools' ``rleFrString``) or the uncompressed list of run lengths (crowd regions). Runs alternate, zeros
    first, so the ones are runs 1, 3, 5, ...; an empty run decodes to an empty interval, which counts for nothing.
    """
    return load()._intervals(*_runs(counts))


def _runs(counts: Sequence[str | bytes | Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Every mask's run lengths, concatenated, and how many each has; compressed strings decoded in one pass."""
    kinds = [isinstance(c, (str, bytes)) for c in counts]
    runs, decoded = decode_counts([c.encode("ascii") if isinstance(c, str) else c for c in compress(counts, kinds)])
    if all(kinds):
        return runs, decoded
    # uncompressed counts (crowd regions, rare) between the decoded strings, in order
    is_string = np.array(kinds, dtype=bool)
    plain = [np.asarray(c, dtype=np.int64) for c, string in zip(counts, kinds) if not string]
    lengths = np.zeros(len(counts), dtype=np.int64)
    lengths[is_string] = decoded
    lengths[~is_string] = [len(p) for p in plain]
    from_string = np.repeat(is_string, lengths)
    out = np.empty(len(from_string), dtype=np.int64)
    out[from_string] = runs
    out[~from_string] = np.concatenate(plain)
    return out, lengths


def decode_counts(strings: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """pycocotools' ``rleFrString`` of many strings in one pass: their run lengths concatenated, and how many runs
    each string holds."""
    sizes = np.fromiter((len(s) for s in strings), dtype=np.int64, count=len(strings))
    return load()._decode_counts(np.frombuffer(b"".join(strings), dtype=np.uint8), sizes)


def covered_outside(
    boxes: np.ndarray,
    heights: np.ndarray,
    others: tuple[np.ndarray, np.ndarray],
    own: tuple[np.ndarray, np.ndarray],
    intervals: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> np.ndarray:
    """For each box ``t`` (``[x0, y0, x1, y1)`` in integer pixels, in an image ``heights[t]`` tall): its pixels
    inside the union of masks ``others`` and outside mask ``own``.

    ``others`` and ``own`` are ``(box, mask)`` pairs (rows of ``boxes``, indices of masks in ``intervals``, the
    :func:`decode_intervals` of the masks); a box may have any number of each, none included.
    """
    starts, ends, per_mask = intervals
    box_of = np.concatenate((others[0], own[0])).astype(np.int64)
    mask_of = np.concatenate((others[1], own[1])).astype(np.int64)
    is_own = np.zeros(len(box_of), dtype=bool)
    is_own[len(others[0]):] = True
    first = np.concatenate(([0], np.cumsum(per_mask))).astype(np.int64)
    return load()._covered_outside(np.ascontiguousarray(boxes, dtype=np.int64), np.asarray(heights, dtype=np.int64),
                                   box_of, mask_of, is_own, starts.astype(np.int64), ends.astype(np.int64), first)


# ------------------------------------------------------------------------------------------- compiled loops


def _jit(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark ``fn`` to be compiled by :func:`load` (until then it is plain Python: importing this module does not
    import numba, which most builds, measuring no mask, never need)."""
    _KERNELS.append(fn)
    return fn


def load() -> ModuleType:
    """This module with its loops compiled (from numba's cache after the first time) for the argument types the
    functions above pass; the compiled loops replace the plain ones under their names, to call one another."""
    global _loaded
    if _loaded is None:
        import numba

        module = sys.modules[__name__]
        for fn in _KERNELS:
            try:
                compiled = numba.njit(cache=True, nogil=True)(fn)
            except RuntimeError:  # nowhere to write numba's cache (a read-only install): compiled in each process
                compiled = numba.njit(nogil=True)(fn)
            setattr(module, fn.__name__, compiled)
        module._decode_counts(np.frombuffer(b"02", dtype=np.uint8), np.array([2], dtype=np.int64))
        module._intervals(np.array([0, 2], dtype=np.int64), np.array([2], dtype=np.int64))
        one = np.zeros(1, dtype=np.int64)
        module._covered_outside(np.array([[0, 0, 1, 1]], dtype=np.int64), one + 1, one, one, np.zeros(1, dtype=bool),
                                one, one + 1, np.array([0, 1], dtype=np.int64))
        _loaded = module
    return _loaded


@_jit
def _decode_counts(chars: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
    """pycocotools' ``rleFrString`` of each of the concatenated strings ``chars`` (``sizes`` bytes each): their
    run lengths concatenated, and how many runs each holds. A number is 5-bit groups, least significant first,
    each character ``48 + group``, bit ``0x20`` set while more follow, bit ``0x10`` of the last the sign; from the
    fourth number on, the difference to the number two before; counts kept as unsigned 32-bit integers."""
    runs = np.empty(len(chars), dtype=np.int64)  # a number takes at least one character
    lengths = np.zeros(len(sizes), dtype=np.int64)
    p = 0
    m_all = 0
    for i in range(len(sizes)):
        end = p + sizes[i]
        first = m_all
        while p < end:
            x = np.int64(0)
            k = 0
            more = True
            while more:
                c = np.int64(chars[p]) - 48
                x |= (c & 0x1F) << (5 * k)
                more = (c & 0x20) != 0
                p += 1
                k += 1
                if not more and (c & 0x10) != 0:
                    x -= np.int64(1) << (5 * k)
            m = m_all - first
            if m > 2:
                x += runs[m_all - 2]
            runs[m_all] = x & 0xFFFFFFFF
            m_all += 1
        lengths[i] = m_all - first
    return runs[:m_all], lengths


@_jit
def _intervals(runs: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover
    """:func:`decode_intervals` of masks whose run lengths are ``runs``, ``lengths[i]`` of them for mask ``i``: the
    odd runs' ``[start, end)``, and how many each mask has."""
    per_mask = lengths // 2
    starts = np.empty(per_mask.sum(), dtype=np.int64)
    ends = np.empty(len(starts), dtype=np.int64)
    at = 0
    k = 0
    for i in range(len(lengths)):
        position = 0
        for j in range(lengths[i]):
            end = position + runs[at + j]
            if j % 2 == 1:
                starts[k] = position
                ends[k] = end
                k += 1
            position = end
        at += lengths[i]
    return starts, ends, per_mask


@_jit
def _box_position(p: int, height: int, inverse: float, x0: int, y0: int, x1: int, tall: int) -> int:  # pragma: no cover
    """``F(p)``: how many pixels of the box ``[x0, x1)`` x ``[y0, y0 + tall)`` lie before column-major position
    ``p`` of an image ``height`` tall (``inverse``: ``1 / height``). The column is found by a multiplication,
    corrected by one where rounding missed: an integer division by a height known only at run time costs
    several times more, for every interval."""
    column = np.int64(p * inverse)
    if column * height > p:
        column -= 1
    elif (column + 1) * height <= p:
        column += 1
    if column < x0:
        return 0
    if column >= x1:
        return (x1 - x0) * tall
    return (column - x0) * tall + min(max(p - column * height - y0, 0), tall)


@_jit
def _union_length(fs: np.ndarray, fe: np.ndarray, run_end: np.ndarray) -> int:  # pragma: no cover
    """The length of the union of intervals ``[fs, fe)``, runs sorted by start (one per mask, the ``k``-th ending at
    ``run_end[k]``), merged by taking the smallest head each time, or sorted whole where a box has many masks."""
    union = 0
    reach = -1
    n_runs = len(run_end)
    if n_runs > MERGE_RUNS:
        for i in np.argsort(fs):
            if fe[i] > reach:
                union += fe[i] - max(fs[i], reach)
                reach = fe[i]
        return union
    head = np.empty(n_runs, dtype=np.int64)
    for r in range(n_runs):
        head[r] = run_end[r - 1] if r else 0
    while True:
        best = -1
        for r in range(n_runs):
            if head[r] < run_end[r] and (best < 0 or fs[head[r]] < fs[head[best]]):
                best = r
        if best < 0:
            return union
        i = head[best]
        head[best] += 1
        if fe[i] > reach:
            union += fe[i] - max(fs[i], reach)
            reach = fe[i]


@_jit
def _covered_outside(boxes: np.ndarray, heights: np.ndarray, box_of: np.ndarray, mask_of: np.ndarray,
                     is_own: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                     first_interval: np.ndarray) -> np.ndarray:  # pragma: no cover
    """:func:`covered_outside` with its pairs flattened: pair ``k`` is mask ``mask_of[k]`` on box ``box_of[k]`` (the
    box's own where ``is_own[k]``), mask ``m``'s intervals ``first_interval[m]:first_interval[m + 1]``. Per box: its
    masks' intervals reaching into its columns (binary search), mapped onto the box's numbering, merged, less the
    own mask's length."""
    n = len(boxes)
    order = np.argsort(box_of, kind="mergesort")
    out = np.zeros(n, dtype=np.int64)
    k = 0
    while k < len(order):
        b = box_of[order[k]]
        end = k
        while end < len(order) and box_of[order[end]] == b:
            end += 1
        h = heights[b]
        x0, y0, x1, y1 = boxes[b, 0], boxes[b, 1], boxes[b, 2], boxes[b, 3]
        tall = y1 - y0
        inverse = 1.0 / h
        lows = np.empty(end - k, dtype=np.int64)
        highs = np.empty(end - k, dtype=np.int64)
        total = 0
        for j in range(k, end):
            m = mask_of[order[j]]
            lo_all, hi_all = first_interval[m], first_interval[m + 1]
            lows[j - k] = lo_all + np.searchsorted(ends[lo_all:hi_all], x0 * h, side="right")
            highs[j - k] = lo_all + np.searchsorted(starts[lo_all:hi_all], x1 * h, side="left")
            total += max(highs[j - k] - lows[j - k], 0)
        fs = np.empty(total, dtype=np.int64)
        fe = np.empty(total, dtype=np.int64)
        run_end = np.empty(end - k, dtype=np.int64)  # mask j's mapped intervals end at run_end[j], ascending
        own = 0
        t = 0
        for j in range(k, end):
            mine = is_own[order[j]]
            for i in range(lows[j - k], highs[j - k]):
                s = _box_position(starts[i], h, inverse, x0, y0, x1, tall)
                e = _box_position(ends[i], h, inverse, x0, y0, x1, tall)
                if e > s:
                    fs[t] = s
                    fe[t] = e
                    t += 1
                    if mine:
                        own += e - s
            run_end[j - k] = t
        out[b] = _union_length(fs[:t], fe[:t], run_end) - own
        k = end
    return out
