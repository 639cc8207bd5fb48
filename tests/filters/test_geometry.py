"""Geometry on tiny synthetic images whose masks are real COCO RLEs; expectations computed by hand."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from pycocotools import mask as mask_utils

from filters import geometry, mask_runs
from filters.base import FilterStats
from filters.geometry import (
    Difficulty,
    GeometryThresholds,
    InstanceGeometry,
    classify,
    classify_image,
    measure_image,
    truncation,
)
from sources.errors import ConfigError
from sources.records import ImageRecord, Instance, RecordSet
from sources.tables import tables_of

W, H = 20, 10  # width != height, so a swapped axis shows up


def rle(x0: int, y0: int, x1: int, y1: int) -> dict:
    """Compressed RLE (str counts, as records hold them) of the rectangle [x0, x1) x [y0, y1)."""
    m = np.zeros((H, W), dtype=np.uint8)
    m[y0:y1, x0:x1] = 1
    r = mask_utils.encode(np.asfortranarray(m))
    return {"size": list(r["size"]), "counts": r["counts"].decode()}


def inst(iid: str, box, mask=None, area=None, **kw) -> Instance:
    x, y, w, h = box
    visible = float(area if area is not None else w * h)
    return Instance(iid, kw.pop("category", "thing"), (x, y, w, h), visible, mask, **kw)


def image(*instances: Instance) -> ImageRecord:
    return ImageRecord("img", "test", "img.png", W, H, tuple(instances))


# ------------------------------------------------------------------------------------------------ relative area


def test_relative_area_is_visible_area_over_image_area():
    g = measure_image(image(inst("a", (0, 0, 2, 2), area=4), inst("b", (5, 5, 10, 2), area=20)))
    assert g["a"].relative_area == pytest.approx(4 / 200)
    assert g["b"].relative_area == pytest.approx(20 / 200)


# ------------------------------------------------------------------------------------------------ occlusion


def test_exact_occlusion_from_amodal_area_wins_over_masks():
    target = inst("t", (2, 2, 4, 4), rle(2, 2, 4, 6), area=30, amodal_area=40)
    front = inst("f", (4, 2, 4, 4), rle(4, 2, 8, 6))
    g = measure_image(image(target, front))
    assert g["t"].occlusion == pytest.approx(0.25)
    assert g["t"].occlusion_method == "amodal"


def test_proxy_occlusion_is_box_share_covered_by_other_masks():
    # target box x 2..5, y 2..5 (16 px); own visible mask = x 2..3 (8 px);
    # the other object's mask covers x 4..7 -> 8 px of the target's box; a far object overlaps nothing.
    target = inst("t", (2, 2, 4, 4), rle(2, 2, 4, 6), area=8)
    other = inst("o", (4, 2, 4, 4), rle(4, 2, 8, 6))
    far = inst("far", (15, 7, 3, 3), rle(15, 7, 18, 10))
    g = measure_image(image(target, other, far))
    assert g["t"].occlusion == pytest.approx(8 / 16)
    assert g["t"].occlusion_method == "mask_proxy"
    assert g["o"].occlusion == pytest.approx(0.0)  # the target's mask lies outside o's box
    assert g["far"].occlusion == 0.0


def test_proxy_unions_overlapping_occluders_and_ignores_own_pixels():
    # two occluders overlap each other inside the target box: union, not sum
    target = inst("t", (0, 0, 10, 10), rle(0, 0, 2, 10), area=20)  # own mask x 0..1
    a = inst("a", (0, 0, 6, 10), rle(0, 0, 6, 10))  # overlaps own pixels x0..1 -> those must not count
    b = inst("b", (4, 0, 4, 10), rle(4, 0, 8, 10))
    g = measure_image(image(target, a, b))
    # covered by others, minus own: x 2..7 -> 6 columns x 10 rows = 60 of 100
    assert g["t"].occlusion == pytest.approx(0.6)


def test_proxy_respects_draw_order_when_known():
    target = inst("t", (2, 2, 4, 4), rle(2, 2, 4, 6), z=2)
    behind = measure_image(image(target, inst("o", (4, 2, 4, 4), rle(4, 2, 8, 6), z=1)))
    front = measure_image(image(target, inst("o", (4, 2, 4, 4), rle(4, 2, 8, 6), z=3)))
    assert behind["t"].occlusion == 0.0
    assert front["t"].occlusion == pytest.approx(0.5)


def test_no_masks_means_no_occlusion_evidence():
    g = measure_image(image(inst("a", (0, 0, 5, 5)), inst("b", (2, 2, 5, 5))))
    assert g["a"].occlusion == 0.0 and g["a"].occlusion_method == "none"


def test_each_overlapping_mask_is_decoded_once(monkeypatch):
    decoded = []
    real = mask_runs.decode_intervals

    def counting(counts):
        decoded.extend(counts)
        return real(counts)

    monkeypatch.setattr(mask_runs, "decode_intervals", counting)
    insts = [inst(f"i{k}", (k, 0, 3, 3), rle(k, 0, k + 3, 3)) for k in range(5)]
    measure_image(image(*insts))
    assert sorted(decoded) == sorted(i.rle["counts"] for i in insts)  # each of the five overlapping masks once


def _random_instances(rng: np.random.Generator, n: int, with_z: bool = False) -> list[Instance]:
    """Instances with random boxes and random masks that need not stay inside their boxes (annotations drift), some
    without a mask, some masks empty, some uncompressed (as COCO's crowd regions), some draw orders unknown."""
    insts = []
    for k in range(n):
        x0, y0 = int(rng.integers(0, W - 1)), int(rng.integers(0, H - 1))
        x1, y1 = int(rng.integers(x0 + 1, W + 1)), int(rng.integers(y0 + 1, H + 1))
        m = np.zeros((H, W), dtype=np.uint8, order="F")
        mx0, my0 = max(0, x0 - int(rng.integers(0, 3))), max(0, y0 - int(rng.integers(0, 3)))
        m[my0:y1, mx0:x1] = rng.random((y1 - my0, x1 - mx0)) < rng.choice([0.0, 0.3, 0.7, 1.0])
        kind = rng.random()
        if kind < 0.1:
            mask = None
        elif kind < 0.2:
            flat = m.flatten(order="F")
            change = np.flatnonzero(np.diff(np.r_[0, flat, 1 - flat[-1]]))
            mask = {"size": [H, W], "counts": np.diff(np.r_[0, change]).tolist()}
        else:
            mask = {"size": [H, W], "counts": geometry.mask_utils.encode(m)["counts"].decode("ascii")}
        z = int(rng.integers(0, 4)) if with_z and rng.random() < 0.8 else None
        insts.append(inst(f"i{k}", (x0, y0, x1 - x0, y1 - y0), mask, z=z))
    return insts


def _dense_occlusion(insts: list[Instance], k: int) -> float:
    """The proxy from decoded pixels: box share covered by the other (box-overlapping, in front) masks, own excluded."""
    def pixels(i: Instance) -> np.ndarray:
        if i.rle is None:
            return np.zeros((H, W), dtype=bool)
        return geometry.decode_masks([i.rle], H, W)[:, :, 0]

    x, y, w, h = (int(v) for v in insts[k].bbox)
    others = np.zeros((H, W), dtype=bool)
    for j, o in enumerate(insts):
        ox, oy, ow, oh = (int(v) for v in o.bbox)
        apart = ox >= x + w or x >= ox + ow or oy >= y + h or y >= oy + oh
        behind = insts[k].z is not None and o.z is not None and o.z <= insts[k].z
        if j != k and o.rle is not None and not apart and not behind:
            others |= pixels(o)
    covered = others[y:y + h, x:x + w] & ~pixels(insts[k])[y:y + h, x:x + w]
    return float(covered.sum()) / float(w * h)


@pytest.mark.parametrize("with_z", [False, True])
def test_proxy_occlusion_equals_a_dense_reference(with_z, monkeypatch):
    """The run-length arithmetic gives the share a decoded-pixel computation gives, on random overlapping masks,
    many images measured at once (in chunks of a few images, as :func:`geometry.measure` does) and one image at
    a time alike."""
    rng = np.random.default_rng(0)
    images = [image(*_random_instances(rng, int(rng.integers(1, 7)), with_z)) for _ in range(80)]
    monkeypatch.setattr(geometry, "PROXY_CHUNK", 9)
    records = RecordSet("t", "", ("thing",), tuple(replace(im, id=f"img{k}") for k, im in enumerate(images)))
    together = geometry.measure(tables_of(records))
    checked = start = 0
    for img in images:
        occ, methods = together.occlusion[start:start + len(img.instances)], together.method[start:]
        start += len(img.instances)
        alone, _ = geometry.occlusion(img)
        assert occ.tolist() == alone.tolist()
        for k, i in enumerate(img.instances):
            if geometry.METHODS[methods[k]] == "mask_proxy":
                assert occ[k] == _dense_occlusion(list(img.instances), k)
                checked += int(occ[k] > 0)
    assert checked > 50  # the comparison met many covered targets, not only zeros


def test_boxes_whose_stretches_touch_keep_their_own_counts():
    """A mask's run that starts below a box in the box's last column is the box's last number (all its pixels lie
    before it); the next box's first pixel is the first number of its own stretch. Measured together, in whatever
    order the pairs come, each box gets its own count (once, a tie between the two sent a count to the wrong box)."""
    def counts(*cells: tuple[int, slice]) -> str:
        m = np.zeros((H, W), dtype=np.uint8, order="F")
        for column, rows in cells:
            m[rows, column] = 1
        return geometry.mask_utils.encode(m)["counts"].decode("ascii")

    boxes = np.array([[2, 2, 5, 5], [10, 0, 12, 5]])  # [x0, y0, x1, y1): 3x3 at (2, 2) and 2x5 at (10, 0)
    below_and_inside = counts((3, slice(2, 5)), (4, slice(7, 10)))  # 3 pixels in box 0, then a run below it
    first_column = counts((10, slice(0, 5)))  # box 1's first column, from its first pixel
    intervals = mask_runs.decode_intervals([below_and_inside, first_column])
    for others in ((np.array([0, 1]), np.array([0, 1])), (np.array([1, 0]), np.array([1, 0]))):
        covered = mask_runs.covered_outside(boxes, np.array([H, H]), others, (np.array([], int), np.array([], int)),
                                            intervals)
        assert covered.tolist() == [3, 5]


def test_a_box_under_many_masks_equals_a_dense_reference():
    """More masks on one box than the compiled loop merges head by head (:data:`filters.mask_runs.MERGE_RUNS`):
    the union is sorted whole there, and still equals the decoded pixels' count."""
    rng = np.random.default_rng(3)
    target = inst("t", (2, 1, 14, 8), rle(3, 2, 12, 7))
    others = [inst(f"o{k}", (x, y, 3, 3), rle(x, y, x + 3, y + 3)) for k, (x, y) in
              enumerate(zip(rng.integers(0, 17, 24).tolist(), rng.integers(0, 7, 24).tolist()))]
    assert len(others) > mask_runs.MERGE_RUNS
    insts = [target, *others]
    occ, _ = geometry.occlusion(image(*insts))
    assert occ[0] == _dense_occlusion(insts, 0) > 0


def test_masks_decode_to_the_runs_pycocotools_gives():
    """:func:`filters.mask_runs.decode_counts` (many strings in one pass) against pycocotools' own decoding, on
    masks whose run lengths need several 5-bit groups and negative differences."""
    rng = np.random.default_rng(1)
    strings, expected = [], []
    for _ in range(40):
        h, w = int(rng.integers(1, 300)), int(rng.integers(1, 300))
        m = np.asfortranarray(rng.random((h, w)) < rng.choice([0.0, 0.01, 0.5, 0.99, 1.0]))
        m[:, : int(rng.integers(0, w))] = rng.random() < 0.5  # long runs
        encoded = geometry.mask_utils.encode(m.astype(np.uint8))
        strings.append(encoded["counts"])
        flat = m.flatten(order="F").astype(np.int8)
        change = np.flatnonzero(np.diff(np.r_[0, flat, 1 - flat[-1]]))
        expected.append(np.diff(np.r_[0, change]))
    runs, lengths = mask_runs.decode_counts(strings)
    assert [r.tolist() for r in np.split(runs, np.cumsum(lengths)[:-1])] == [e.tolist() for e in expected]


def test_intervals_of_compressed_and_uncompressed_masks_are_their_pixels():
    """:func:`filters.mask_runs.decode_intervals` over compressed strings (``str`` and ``bytes``) with uncompressed
    counts (crowd regions) between them: each mask's intervals, in order, are the stretches of ones of its
    column-major pixels."""
    rng = np.random.default_rng(2)
    counts, expected = [], []
    for k in range(30):
        h, w = int(rng.integers(1, 40)), int(rng.integers(1, 40))
        m = np.asfortranarray(rng.random((h, w)) < rng.choice([0.0, 0.2, 0.9, 1.0])).astype(np.uint8)
        flat = m.flatten(order="F")
        edges = np.flatnonzero(np.diff(np.r_[0, flat, 0]))
        expected.append(list(zip(edges[::2].tolist(), edges[1::2].tolist())))
        change = np.flatnonzero(np.diff(np.r_[0, flat, 1 - flat[-1]]))
        encoded = geometry.mask_utils.encode(m)["counts"]
        counts.append(np.diff(np.r_[0, change]).tolist() if k % 4 == 1 else encoded if k % 4 == 2
                      else encoded.decode("ascii"))
    starts, ends, per_mask = mask_runs.decode_intervals(counts)
    cut = np.cumsum(per_mask)[:-1]
    got = [[(s, e) for s, e in zip(a.tolist(), b.tolist()) if e > s]
           for a, b in zip(np.split(starts, cut), np.split(ends, cut))]
    assert got == expected


def test_uncompressed_crowd_rle_is_accepted_and_flagged():
    m = np.zeros((H, W), dtype=np.uint8, order="F")
    m[0:4, 0:4] = 1
    flat = m.flatten(order="F")
    # uncompressed counts: alternating runs starting with zeros
    change = np.flatnonzero(np.diff(np.r_[0, flat, 1 - flat[-1]]))
    counts = np.diff(np.r_[0, change]).tolist()
    crowd = Instance("c", "person", (0, 0, 4, 4), 16.0, {"size": [H, W], "counts": counts}, iscrowd=True)
    target = inst("t", (0, 0, 8, 4), rle(4, 0, 8, 4), area=16)
    g = measure_image(image(crowd, target))
    assert g["t"].occlusion == pytest.approx(0.5)
    assert g["c"].iscrowd and classify(g["c"]).flags == ("crowd",)


# ------------------------------------------------------------------------------------------------ truncation


@pytest.mark.parametrize(
    ("box", "expected"),
    [
        ((0, 3, 4, 2), 2 / 12),  # left side (length h=2) of perimeter 12
        ((16, 3, 4, 2), 2 / 12),  # right
        ((8, 0, 4, 2), 4 / 12),  # top (length w=4)
        ((8, 8, 4, 2), 4 / 12),  # bottom
        ((0, 0, 4, 2), 6 / 12),  # top-left corner
        ((0, 0, 20, 10), 1.0),  # the whole frame
        ((5, 3, 4, 2), 0.0),  # interior
        ((0.8, 3, 4, 2), 2 / 12),  # within 1 px of the border
        ((1.5, 3, 4, 2), 0.0),  # more than 1 px away
        ((-3, 3, 6, 2), 2 / 10),  # drawn past the border: clipped to w=3 first
        ((3, 3, 0, 0), 0.0),  # degenerate
    ],
)
def test_truncation_is_perimeter_share_on_the_border(box, expected):
    assert truncation(np.array([box]), W, H)[0] == pytest.approx(expected)


def test_measure_image_reports_truncation():
    g = measure_image(image(inst("a", (0, 0, 4, 2)), inst("b", (5, 3, 4, 2))))
    assert g["a"].truncation == pytest.approx(0.5) and g["b"].truncation == 0.0


# ------------------------------------------------------------------------------------------------ classify


def geom(area=0.5, occ=0.0, trunc=0.0, crowd=False) -> InstanceGeometry:
    return InstanceGeometry("i", "thing", area, occ, trunc, "amodal", crowd)


@pytest.mark.parametrize(
    ("g", "level"),
    [
        (geom(), "easy"),
        (geom(area=0.0005), "hard"),  # exactly min_visible: usable, but small
        (geom(area=0.00049), "drop"),
        (geom(area=0.01), "easy"),  # exactly hard_area: not small
        (geom(area=0.0099), "hard"),
        (geom(occ=0.399), "easy"),
        (geom(occ=0.4), "hard"),  # "hard when occlusion >= 0.4"
        (geom(occ=0.9), "hard"),  # exactly max_occlusion: still usable
        (geom(occ=0.901), "drop"),
        (geom(trunc=0.49), "easy"),
        (geom(trunc=0.5), "hard"),
    ],
)
def test_classify_boundaries(g, level):
    assert classify(g).level == level


def test_classify_reasons_list_every_failed_rule():
    d = classify(geom(area=0.0004, occ=0.95))
    reason = "relative_area 0.0004 < min 0.0005; occlusion 0.95 > max 0.9"
    assert d == Difficulty("drop", reason, d.geometry, "relative_area < min 0.0005")
    h = classify(geom(area=0.005, trunc=0.75))
    assert h.level == "hard"
    assert h.reason == "relative_area 0.005 < min 0.01; truncation 0.75 >= max 0.5"
    assert classify(geom()).reason is None


def test_thresholds_are_configurable_and_validated():
    assert classify(geom(area=0.02), GeometryThresholds(hard_area=0.05)).level == "hard"
    with pytest.raises(ConfigError):
        GeometryThresholds(min_visible=0.1, hard_area=0.01)
    with pytest.raises(ConfigError):
        GeometryThresholds(hard_occlusion=0.95, max_occlusion=0.9)


def test_classify_image_counts_drops_into_stats():
    img = image(
        inst("tiny", (5, 5, 0.1, 0.1), area=0.01),  # 0.01/200 = 5e-5 -> drop
        inst("big", (2, 2, 10, 6), area=60),  # 0.3, interior -> easy
        inst("corner", (0, 0, 10, 5), area=50),  # truncation 0.5 -> hard
    )
    stats = FilterStats()
    out = classify_image(img, stats=stats)
    assert {k: d.level for k, d in out.items()} == {"tiny": "drop", "big": "easy", "corner": "hard"}
    assert stats.as_dict()["geometry"] == {
        "dropped": 1,
        "kept": 2,
        "reasons": {"relative_area < min 0.0005": 1},
        "seen": 3,
    }
    assert out["big"].geometry.scores() == {"relative_area_score": 0.3, "occlusion_score": 0.0, "truncation_score": 0.0}


def test_exact_occlusion_from_amodal_mask_when_area_missing():
    # whole object x 2..7 (24 px), visible 8 px -> 1 - 8/24
    target = Instance("t", "thing", (2, 2, 2, 4), 8.0, rle(2, 2, 4, 6), amodal_rle=rle(2, 2, 8, 6))
    g = measure_image(image(target))
    assert g["t"].occlusion == pytest.approx(1 - 8 / 24) and g["t"].occlusion_method == "amodal"


def test_compiled_box_position_finds_every_column_exactly():
    """The compiled loop finds a position's column by a multiplication with ``1 / height``, corrected by one where
    rounding missed: every position's place in a box is the one integer division gives, at column boundaries
    included (where ``k * 49 * (1 / 49)`` falls just below ``k``)."""
    compiled = mask_runs.load()

    def reference(p: int, height: int, x0: int, y0: int, x1: int, tall: int) -> int:
        column, row = divmod(p, height)
        if column < x0:
            return 0
        if column >= x1:
            return (x1 - x0) * tall
        return (column - x0) * tall + min(max(row - y0, 0), tall)

    for height in (1, 7, 48, 49, 480, 427, 1000):
        positions = np.arange(0, height * 12, max(1, height // 40))
        positions = np.unique(np.concatenate((positions, np.arange(1, 13) * height, np.arange(1, 13) * height - 1)))
        x0, y0, x1, y1 = 3, min(2, height - 1), 9, height
        got = [compiled._box_position(int(p), height, 1.0 / height, x0, y0, x1, y1 - y0) for p in positions]
        assert got == [reference(int(p), height, x0, y0, x1, y1 - y0) for p in positions]


def test_compiled_loops_load_where_numba_cannot_cache(monkeypatch):
    """A read-only install leaves numba nowhere to write its cache (``cache=True`` raises): the loops are compiled
    without it, and count as before."""
    import numba

    real = numba.njit

    def nowhere_to_cache(*args, **kwargs):
        if kwargs.get("cache"):
            raise RuntimeError("cannot cache function 'decode_counts': no locator available for file")
        return real(*args, **kwargs)

    monkeypatch.setattr(numba, "njit", nowhere_to_cache)
    monkeypatch.setattr(mask_runs, "_loaded", None)
    for fn in mask_runs._KERNELS:  # the plain loops, as a fresh process has them
        monkeypatch.setattr(mask_runs, fn.__name__, fn)
    assert mask_runs.load() is not None
    runs, lengths = mask_runs.decode_counts([rle(2, 3, 5, 8)["counts"].encode("ascii")])
    assert runs.tolist() == [23, 5, 5, 5, 5, 5, 152] and lengths.tolist() == [7]  # 3 columns of 5 rows at (2, 3)
