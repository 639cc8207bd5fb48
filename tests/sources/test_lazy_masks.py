"""Masks are paid for only where they are read: polygons become RLE on first access, occlusion decodes only masks
whose boxes overlap, and both give exactly what the eager conversion gives."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest
from pycocotools import mask as mask_utils

from filters import geometry, mask_runs
from sources import image_files, masks, validate
from sources.coco import read_coco
from sources.records import ImageRecord, Instance
from tests.fixtures import real_formats as rf


def _eager(seg, h: int, w: int) -> dict:
    """The compressed RLE pycocotools gives for a segmentation, converted at once (the reference)."""
    if isinstance(seg, dict):
        rle = mask_utils.frPyObjects(seg, h, w)
    else:
        rles = mask_utils.frPyObjects(seg, h, w)
        rle = rles[0] if len(rles) == 1 else mask_utils.merge(rles)
    return {"size": [h, w], "counts": rle["counts"].decode("ascii")}


def test_polygons_convert_on_first_access_to_the_eager_rle(tmp_path: Path) -> None:
    one = [[2.0, 2.0, 20.0, 2.0, 20.0, 15.0, 2.0, 15.0]]
    two = [[30.0, 5.0, 40.0, 5.0, 40.0, 20.0], [42.0, 30.0, 60.0, 30.0, 60.0, 45.0, 42.0, 45.0]]
    crowd = {"size": [48, 64], "counts": [100, 20, 28, 20, 48 * 64 - 168]}
    got = masks.segmentations_to_rles([("a", one), ("b", two), ("c", crowd), ("d", [])], 48, 64, "f.json")
    assert got[3] is None
    lazy = got[0]
    assert isinstance(lazy, masks.PolygonRLE) and lazy._rle is None  # nothing converted yet
    for seg, rle in zip((one, two, crowd), got):
        assert dict(rle) == _eager(seg, 48, 64)
        assert rle == _eager(seg, 48, 64)
    assert pickle.loads(pickle.dumps(got[1])) == _eager(two, 48, 64)


def test_bad_polygons_are_still_errors_at_read_time() -> None:
    with pytest.raises(Exception, match="polygons must be lists"):
        masks.segmentations_to_rles([("annotations[0]", [[1.0, 2.0, 3.0]])], 48, 64, "f.json")


def test_coco_reader_converts_no_polygon_until_a_mask_is_read(tmp_path: Path) -> None:
    fx = rf.make_coco(tmp_path)
    given_area = {str(a["id"]): validate.is_number(a.get("area")) and a["area"] > 0
                  for a in json.loads(fx.annotations.read_text())["annotations"]}
    records = read_coco(fx.annotations, fx.images_dir)
    lazy = {i.id: i.rle for im in records.images for i in im.instances if isinstance(i.rle, masks.PolygonRLE)}
    # only an annotation without an area in the file needs its mask (for the area), at read time
    assert any(given_area[k] for k in lazy)
    assert all((r._rle is None) == given_area[k] for k, r in lazy.items())


def _square(iid: str, x: float, y: float, size: float, triangle: bool = False) -> Instance:
    poly = [[x, y, x + size, y, x, y + size]] if triangle else [[x, y, x + size, y, x + size, y + size, x, y + size]]
    return Instance(iid, "box", (x, y, size, size), size * size, rle=masks.PolygonRLE(poly, 48, 64))


def test_occlusion_reads_only_masks_whose_boxes_overlap(monkeypatch: pytest.MonkeyPatch) -> None:
    decoded: list[str] = []
    real = mask_runs.decode_intervals

    def counting(counts):
        decoded.extend(counts)
        return real(counts)

    monkeypatch.setattr(mask_runs, "decode_intervals", counting)
    apart = ImageRecord("1", "t", "x.png", 64, 48, (_square("a", 1, 1, 8), _square("b", 30, 30, 8)))
    occ, methods = geometry.occlusion(apart)
    assert decoded == [] and occ.tolist() == [0.0, 0.0] and methods == ["mask_proxy", "mask_proxy"]
    assert all(i.rle._rle is None for i in apart.instances)  # type: ignore[union-attr]

    # a overlaps b; c is apart: only a and b are read, and c's score stays 0 from boxes alone
    overlapping = ImageRecord("2", "t", "x.png", 64, 48,
                              (_square("a", 1, 1, 10, triangle=True), _square("b", 6, 6, 10), _square("c", 40, 30, 6)))
    occ, _ = geometry.occlusion(overlapping)
    assert len(decoded) == 2 and overlapping.instances[2].rle._rle is None  # type: ignore[union-attr]
    # b covers the lower right of a's box, where the triangle a is not; a covers none of b's box outside b
    bitmaps = geometry.decode_masks([i.rle for i in overlapping.instances], 48, 64)  # type: ignore[misc]
    a, b = bitmaps[:, :, 0], bitmaps[:, :, 1]
    expect_a = float((b[1:11, 1:11] & ~a[1:11, 1:11]).sum()) / 100.0
    expect_b = float((a[6:16, 6:16] & ~b[6:16, 6:16]).sum()) / 100.0
    assert occ.tolist() == [expect_a, expect_b, 0.0]
    assert expect_a > 0.15 and expect_b == 0.0


def test_image_header_sizes_match_pil(tmp_path: Path) -> None:
    """The PNG/JPEG header parser behind the declared-size check reads what PIL reads; other formats go to PIL."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    for w, h in ((64, 48), (17, 33), (1000, 3)):
        arr = rng.integers(0, 255, (h, w, 3), dtype=np.uint8)
        for name, fmt, kw in (("a.png", "png", {}), ("b.jpg", "jpeg", {}), ("c.jpg", "jpeg", {"progressive": True}),
                              ("d.jpg", "jpeg", {"exif": Image.Exif().tobytes()}), ("e.gif", "gif", {})):
            path = tmp_path / f"{w}-{name}"
            Image.fromarray(arr).save(path, format=fmt, **kw)
            expected = None if fmt == "gif" else (w, h)
            assert image_files.header_size(str(path)) == expected, path
            assert image_files.image_size_from_file(str(path), "f.json", "images[0]") == (w, h)
    (tmp_path / "cut.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    with pytest.raises(Exception, match="cannot read image size"):
        image_files.image_size_from_file(str(tmp_path / "cut.png"), "f.json", "images[0]")
