"""The run arithmetic of :mod:`filters.mask_runs` as compiled loops (numba), where numba is installed.

Why: the occlusion proxy is the largest single cost of a paper-scale build (a COCO-train-sized file's masks, an
SVG-sized file's regions: ~45 s of CPU on two cores), and :mod:`filters.mask_runs` does it in numpy, one pass
over all the intervals of a batch per operation: ~30 array operations, each reading and writing every interval.
Here each target's intervals are visited once, in a loop compiled to machine code, and each compressed string is
decoded in one pass over its characters, with the exact rules of pycocotools' ``rleFrString``. The results are
the same integers as the numpy path's (``tests/filters/test_geometry.py`` runs its mask tests through both and
compares them with decoded pixels). numba is optional (``pip install -e ".[fast]"``): without it
:mod:`filters.mask_runs` runs in numpy.

The loops are compiled by :func:`load` and cached next to this file (``cache=True``): the compilation (a few
seconds) is paid once per installation, and a process after that loads them in ~0.8 s.
"""

from __future__ import annotations

import importlib.util
from types import ModuleType
from typing import Any, Callable

import numpy as np

AVAILABLE = importlib.util.find_spec("numba") is not None
"""Whether the compiled loops can be used (numba is installed; it is imported only by :func:`load`)."""

MERGE_RUNS = 16
"""Up to this many masks on one box, their sorted runs are merged by taking the smallest head; more are sorted."""

_KERNELS: list[Callable[..., Any]] = []
_loaded: ModuleType | None = None


def _jit(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark ``fn`` to be compiled by :func:`load` (until then it is plain Python, and importing this module does
    not import numba: ~0.3 s a process, which small builds and most tests never need)."""
    _KERNELS.append(fn)
    return fn


def load() -> ModuleType | None:
    """This module with its loops compiled (loaded from numba's cache after the first time: ~0.5 s a process), or
    ``None`` without numba. Call it before forking workers, so that they inherit the compiled loops: they are
    compiled here, on a tiny input, for the argument types :mod:`filters.mask_runs` passes."""
    global _loaded
    if _loaded is None and AVAILABLE:
        import sys

        import numba

        module = sys.modules[__name__]
        for fn in _KERNELS:
            try:
                compiled = numba.njit(cache=True, nogil=True)(fn)
            except RuntimeError:  # nowhere to write numba's cache (a read-only install): compiled in each process
                compiled = numba.njit(nogil=True)(fn)
            setattr(module, fn.__name__, compiled)
        module.decode_counts(np.frombuffer(b"02", dtype=np.uint8), np.array([2], dtype=np.int64))
        one = np.zeros(1, dtype=np.int64)
        module.covered_outside(np.array([[0, 0, 1, 1]], dtype=np.int64), one + 1, one, one, np.zeros(1, dtype=bool),
                               one, one + 1, np.array([0, 1], dtype=np.int64))
        _loaded = module
    return _loaded


@_jit
def decode_counts(chars: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover
    """pycocotools' ``rleFrString`` of each of the concatenated strings ``chars`` (``sizes`` bytes each): their
    run lengths concatenated, and how many runs each holds (the numpy path's
    :func:`filters.mask_runs.decode_counts`).

    Each number is stored in 5-bit groups, least significant first, each character ``48 + group`` with bit
    ``0x20`` set while more groups follow; bit ``0x10`` of the last group is the sign. From the fourth number of
    a string on, a number is the difference to the number two before. Counts are kept as unsigned 32-bit
    integers, as the C code keeps them."""
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
def _box_position(p: int, height: int, inverse: float, x0: int, y0: int, x1: int, tall: int) -> int:  # pragma: no cover
    """``F(p)`` of :func:`filters.mask_runs.box_positions` for one position; ``inverse`` is ``1 / height``.

    The column is found by a multiplication and corrected by one where rounding missed (an integer division
    by a height known only at run time costs several times more, and this runs for every interval)."""
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
    """The length of the union of intervals ``[fs, fe)``, which come as runs sorted by start (one per mask, the
    ``k``-th ending at ``run_end[k]``): merged run by run, taking the smallest head each time (a box has a few
    masks), or sorted whole where a box has many."""
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
def covered_outside(boxes: np.ndarray, heights: np.ndarray, box_of: np.ndarray, mask_of: np.ndarray,
                    is_own: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                    first_interval: np.ndarray) -> np.ndarray:  # pragma: no cover
    """:func:`filters.mask_runs.covered_outside` with its pairs flattened: pair ``k`` is mask ``mask_of[k]`` on box
    ``box_of[k]``, the box's own mask where ``is_own[k]``; mask ``m``'s intervals are
    ``first_interval[m]:first_interval[m + 1]`` of ``starts``/``ends``.

    Per box: its masks' intervals that reach into its columns (binary search, each mask's intervals ascending),
    mapped onto the box's own numbering, merged (:func:`_union_length`), their union's length less the own
    mask's length."""
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
