"""Masks as runs of pixels, in numpy: how much of a box the union of some masks covers, minus another mask.

Why: the occlusion proxy (:class:`filters.geometry._ProxyBatch`) asks, for every instance that another
instance's box overlaps, how many pixels of its box the other instances' masks paint outside its own mask. Asked
of pycocotools one target at a time (``merge`` the others, ``merge`` with a box made into an RLE, ``area``, once
more for the own mask) it cost five library calls per target, each decoding and re-encoding compressed strings:
most of a paper-scale build's CPU. Here the targets of many images are answered at once, on the masks' run lengths,
with a handful of numpy calls and no mask ever decoded to pixels. The counts are the same integers pycocotools
gives (the tests compare them on random masks).

The method, in three steps:

* A mask's compressed counts (COCO's string: 5-bit groups, offset by 48, counts after the third stored as the
  difference to the count two before) become the intervals ``[start, end)`` of its ones in column-major pixel
  order (:func:`decode_intervals`), for many masks in one pass.
* A box is mapped onto ``0 .. w*h`` by ``F(p)`` = the number of box pixels before pixel ``p`` in that order.
  ``F`` never decreases, so an interval ``[s, e)`` holds exactly ``F(e) - F(s)`` box pixels and lands on the
  interval ``[F(s), F(e))`` of the box's own numbering: a two-dimensional clip becomes a one-dimensional one
  (:func:`box_positions`).
* Pixels of the box covered by the others and not by the target's own mask number ``|others | own| - |own|``,
  and the length of a union of intervals needs no merge: sorted by start, each interval adds what reaches past
  the furthest end before it (:func:`union_lengths`). Each target's box gets its own stretch of the number line,
  so every target of a batch is one sort.
"""

from __future__ import annotations

from types import ModuleType
from typing import Sequence

import numpy as np

from filters import mask_runs_jit

JIT_MIN_MASKS = 200
"""Batches of at least this many masks are decoded and counted in compiled loops (:mod:`filters.mask_runs_jit`,
where numba is installed): the same integers as the numpy code here, which serves smaller batches and machines
without numba. Loading the loops costs a process ~0.8 s, which a small build (the demo world, a test) would not
win back. The tests set it to 0 or past any batch to run either path."""


def _compiled(n_masks: int) -> ModuleType | None:
    """The compiled loops for a batch of ``n_masks`` masks, or ``None`` for the numpy path."""
    return mask_runs_jit.load() if n_masks >= JIT_MIN_MASKS else None

OFFSET = 48
"""COCO's compressed counts: each character is ``48 + 6 bits`` (5 value bits and a continuation bit)."""


def decode_intervals(counts: Sequence[str | bytes | Sequence[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ones of each mask as intervals of column-major pixel positions: ``(starts, ends, per_mask)``, the
    intervals of mask ``i`` being the ``per_mask[i]`` ones after those of the masks before it.

    ``counts`` are RLE counts as COCO stores them: a compressed string (``str`` or ``bytes``, decoded exactly as
    pycocotools' ``rleFrString``) or the uncompressed list of run lengths (crowd regions). Runs alternate, zeros
    first, so the ones are runs 1, 3, 5, ...; an empty run decodes to an empty interval, which counts for nothing.
    """
    runs, lengths = _runs(counts)
    first = np.cumsum(lengths) - lengths
    index = np.arange(len(runs)) - np.repeat(first, lengths)  # each run's number within its mask
    ends_at = _segmented_cumsum(runs, lengths)  # where each run ends
    is_one = index % 2 == 1
    ones_before = np.concatenate(([0], np.cumsum(is_one)))
    return ends_at[np.flatnonzero(is_one) - 1], ends_at[is_one], ones_before[first + lengths] - ones_before[first]


def _runs(counts: Sequence[str | bytes | Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Every mask's run lengths, concatenated, and how many each has; compressed strings decoded in one pass."""
    compressed = [c.encode("ascii") if isinstance(c, str) else c for c in counts if isinstance(c, (str, bytes))]
    runs, lengths = decode_counts(compressed)
    if len(compressed) == len(counts):
        return runs, lengths
    # uncompressed counts (crowd regions, rare) interleaved with the decoded strings, in order
    decoded = iter(np.split(runs, np.cumsum(lengths)[:-1]) if len(compressed) else [])
    parts = [next(decoded) if isinstance(c, (str, bytes)) else np.asarray(c, dtype=np.int64) for c in counts]
    lengths = np.array([len(p) for p in parts], dtype=np.int64)
    return (np.concatenate(parts) if parts else np.zeros(0, np.int64)), lengths


def decode_counts(strings: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray]:
    """pycocotools' ``rleFrString`` in numpy, for many strings in one pass: their run lengths concatenated, and
    how many runs each string holds.

    Each number is stored in 5-bit groups, least significant first, each character ``48 + group`` with bit
    ``0x20`` set while more groups follow; bit ``0x10`` of the last group is the sign. From the fourth number of
    a string on, a number is the difference to the run two before (runs of one kind vary little from column to
    column), undone here by running sums over every other number, restarted at each string.
    """
    sizes = np.fromiter((len(s) for s in strings), dtype=np.int64, count=len(strings))
    jit = _compiled(len(strings))
    if jit is not None:
        return jit.decode_counts(np.frombuffer(b"".join(strings), dtype=np.uint8), sizes)
    if not sizes.sum():
        return np.zeros(0, np.int64), np.zeros(len(strings), np.int64)
    chars = np.frombuffer(b"".join(strings), dtype=np.uint8).astype(np.int64) - OFFSET
    ends_number = (chars & 0x20) == 0
    last = np.flatnonzero(ends_number)  # the last group of each number
    begin = np.empty_like(last)
    begin[0] = 0
    begin[1:] = last[:-1] + 1
    groups = last - begin + 1
    shift = 5 * (np.arange(len(chars)) - np.repeat(begin, groups))
    values = np.add.reduceat((chars & 0x1F) << shift, begin)
    negative = (chars[last] & 0x10) != 0
    values = np.where(negative, values - (np.int64(1) << (5 * groups)), values)
    numbers_before = np.concatenate(([0], np.cumsum(ends_number)))
    string_end = np.cumsum(sizes)
    lengths = numbers_before[string_end] - numbers_before[string_end - sizes]
    index = np.arange(len(values)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    # number m >= 3 adds number m - 2: runs 1, 3, 5, ... and runs 2, 4, 6, ... are running sums within a string
    odd = index % 2 == 1
    values[odd] = _segmented_cumsum(values[odd], lengths // 2)
    even = (index % 2 == 0) & (index >= 2)
    values[even] = _segmented_cumsum(values[even], np.maximum(lengths - 1, 0) // 2)
    return values & 0xFFFFFFFF, lengths  # the C code keeps counts as unsigned 32-bit integers


def _segmented_cumsum(values: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The running sum of ``values`` restarted at the start of each of the consecutive segments of ``lengths``."""
    total = np.cumsum(values)
    ends = np.cumsum(lengths)
    before = np.concatenate(([0], total))[ends - lengths]  # the running sum before each segment
    return total - np.repeat(before, lengths)


def box_positions(
    positions: np.ndarray, heights: np.ndarray, x0: np.ndarray, y0: np.ndarray, x1: np.ndarray, tall: np.ndarray
) -> np.ndarray:
    """``F(p)``: how many pixels of the box lie before column-major position ``p`` of an image ``heights`` tall.

    ``positions``, ``heights`` and the boxes' ``[x0, x1)`` columns, first row ``y0`` and height ``tall`` (integer
    pixels) are aligned arrays: one box per position. Pixels of columns before the box count none, of columns
    after it all, and in the box's columns the rows from ``y0`` up to the position's row. (A floor division and
    a product rather than ``divmod``, and ``minimum``/``maximum`` rather than ``clip`` with array bounds: each
    about twice as fast in numpy.)"""
    column = positions // heights
    row = positions - column * heights
    inside = (column >= x0) & (column < x1)
    partial = np.minimum(np.maximum(row - y0, 0), tall)
    partial *= inside
    return (np.minimum(np.maximum(column, x0), x1) - x0) * tall + partial


def union_lengths(starts: np.ndarray, ends: np.ndarray, owners: np.ndarray, n_owners: int) -> np.ndarray:
    """For each owner, the length of the union of its intervals ``[starts, ends)`` (all owners' coordinates
    must lie on disjoint closed stretches of the number line, ascending with the owner: the caller offsets them).

    Sorted by start, an interval adds the part of it past the furthest end of the intervals before it. Sorted so,
    the owners ascend too: their order is their counts, not a third array to reorder.
    """
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    reach = np.maximum.accumulate(e)
    before = np.empty_like(reach)
    before[:1] = s[:1]
    before[1:] = reach[:-1]
    added = e - np.maximum(s, before)
    np.maximum(added, 0, out=added)
    who = np.repeat(np.arange(n_owners), np.bincount(owners, minlength=n_owners))
    return np.bincount(who, weights=added, minlength=n_owners).astype(np.int64)


def covered_outside(
    boxes: np.ndarray,
    heights: np.ndarray,
    others: tuple[np.ndarray, np.ndarray],
    own: tuple[np.ndarray, np.ndarray],
    intervals: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> np.ndarray:
    """For each box ``t``: its pixels inside the union of masks ``others`` and outside mask ``own``.

    ``others`` and ``own`` are ``(box, mask)`` pairs (rows of ``boxes``, indices of masks in ``intervals``, the
    :func:`decode_intervals` of the masks); a box may have any number of each, none included.
    """
    starts, ends, per_mask = intervals
    box_of = np.concatenate((others[0], own[0])).astype(np.int64)
    mask_of = np.concatenate((others[1], own[1])).astype(np.int64)
    is_own = np.zeros(len(box_of), dtype=bool)
    is_own[len(others[0]):] = True
    jit = _compiled(len(per_mask))
    if jit is not None:
        first = np.concatenate(([0], np.cumsum(per_mask)))
        return jit.covered_outside(np.ascontiguousarray(boxes, dtype=np.int64), heights.astype(np.int64),
                                   box_of, mask_of, is_own, starts, ends, first)
    # only a mask's intervals that reach into the box's columns can hold box pixels: found by binary search on
    # (mask, position) keys, which ascend because each mask's intervals do
    span = int(max(ends.max(initial=0), (boxes[:, 2] * heights).max(initial=0))) + 1  # past every position
    owner = np.repeat(np.arange(len(per_mask)), per_mask) * span
    column_start = boxes[box_of, 0] * heights[box_of] + mask_of * span
    column_end = boxes[box_of, 2] * heights[box_of] + mask_of * span
    lo = np.searchsorted(owner + ends, column_start, side="right")
    rows = np.maximum(np.searchsorted(owner + starts, column_end, side="left") - lo, 0)
    pair = np.repeat(np.arange(len(box_of)), rows)
    interval = np.arange(int(rows.sum())) - np.repeat(np.cumsum(rows) - rows, rows) + lo[pair]
    box = box_of[pair]
    x0, y0, x1, y1 = (np.ascontiguousarray(boxes[:, k]) for k in range(4))
    tall = y1 - y0
    columns = (x0[box], y0[box], x1[box], tall[box])
    h = heights[box]
    s = box_positions(starts[interval], h, *columns)
    e = box_positions(ends[interval], h, *columns)
    areas = (x1 - x0) * tall
    # each box its own stretch of the number line, [offset, offset + area]: F runs from 0 to the area inclusive,
    # and a stretch that shared its end with the next one's start would tie their intervals in the sort
    offset = (np.cumsum(areas + 1) - (areas + 1))[box]
    n = len(boxes)
    union = union_lengths(s + offset, e + offset, box, n)
    own_only = is_own[pair]
    own_length = np.bincount(box[own_only], weights=(e - s)[own_only], minlength=n).astype(np.int64)
    return union - own_length
