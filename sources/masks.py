"""Instance masks of the real-format readers: segmentations validated as they are read, converted to compressed RLE
only when a mask is read (:class:`PolygonRLE`), and instance areas from the file, the mask or the box."""

from __future__ import annotations

import math
from itertools import chain
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from sources.errors import SourceError
from sources.records import BBox
from sources.validate import NUMBER_TYPES, is_number, type_name


def _is_polygon(poly: Any) -> bool:
    # set(map(type, ...)) and sum() run in C: a per-coordinate Python check costs seconds on a COCO split
    return (
        type(poly) is list
        and len(poly) >= 6
        and len(poly) % 2 == 0
        and set(map(type, poly)) <= NUMBER_TYPES
        and math.isfinite(sum(poly))
    )


class PolygonRLE(Mapping[str, Any]):
    """A compressed RLE (``{"size": [h, w], "counts": str}``) made from polygons or uncompressed counts on
    first access.

    Why lazy: converting a COCO-train-sized file's 860,000 polygons to RLE costs about a minute in pycocotools,
    yet a build reads most annotations for their boxes and given areas only; a mask is needed where a filter
    measures pixels (occlusion, where instances overlap) or the file gives no area.
    The segmentation is validated when the file is read, so a bad polygon is still an error at read time; only
    the conversion waits. The result is the one an eager ``frPyObjects`` (and ``merge`` for several polygons)
    gives, so a record compares equal to an eagerly converted one.
    """

    __slots__ = ("_segmentation", "_height", "_width", "_rle")

    def __init__(self, segmentation: Any, height: int, width: int) -> None:
        self._segmentation = segmentation
        self._height = height
        self._width = width
        self._rle: dict[str, Any] | None = None

    def _converted(self) -> dict[str, Any]:
        if self._rle is None:
            from pycocotools import mask as mask_utils

            seg, h, w = self._segmentation, self._height, self._width
            if isinstance(seg, dict):  # uncompressed counts
                rle = mask_utils.frPyObjects(seg, h, w)
            else:
                rles = mask_utils.frPyObjects(seg, h, w)
                rle = rles[0] if len(rles) == 1 else mask_utils.merge(rles)
            self._rle = {"size": [h, w], "counts": rle["counts"].decode("ascii")}
            self._segmentation = None
        return self._rle

    def __getitem__(self, key: str) -> Any:
        return self._converted()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(("size", "counts"))

    def __len__(self) -> int:
        return 2

    def __repr__(self) -> str:
        return repr(self._converted())

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (self._converted(),))


def polygons_valid(segmentations: Sequence[list[Any]]) -> bool:
    """Whether every polygon of these polygon segmentations passes :func:`segmentation_mask`'s check, asked of
    all their coordinates at once (types as a set, sums as an array)."""
    polygons = list(chain.from_iterable(segmentations))
    if set(map(type, polygons)) - {list}:
        return False
    lengths = np.fromiter(map(len, polygons), dtype=np.int64, count=len(polygons))
    if ((lengths < 6) | (lengths % 2 == 1)).any():
        return False
    coordinates = list(chain.from_iterable(polygons))
    if set(map(type, coordinates)) - NUMBER_TYPES:
        return False
    sums = np.add.reduceat(np.array(coordinates, dtype=np.float64), np.cumsum(lengths) - lengths) if len(lengths) else ()
    return bool(np.isfinite(sums).all())


def segmentations_to_rles(
    items: Sequence[tuple[str, Any]], height: int, width: int, file: str | Path
) -> list[Mapping[str, Any] | None]:
    """Compressed RLE (``{"size": [h, w], "counts": str}``) for each ``(record label, segmentation)`` of one image
    (:func:`segmentation_mask` of each)."""
    return [segmentation_mask(seg, height, width, file, lambda record=record: record) for record, seg in items]


def segmentation_mask(
    seg: Any, height: int, width: int, file: str | Path, record: Callable[[], str]
) -> Mapping[str, Any] | None:
    """The compressed RLE (``{"size": [h, w], "counts": str}``) of one segmentation of an image ``height`` x
    ``width``; ``record()`` names it in an error.

    A segmentation may be polygons (a list of flat ``[x1, y1, x2, y2, ...]`` lists), an RLE with uncompressed
    counts (a list of run lengths) or an RLE with compressed counts (a string); an empty list or ``null`` means
    no mask (``None``). The segmentation is validated here; polygons and uncompressed counts become a
    :class:`PolygonRLE`, converted only when the mask is read (most never are).
    """
    if seg is None or (isinstance(seg, list) and not seg):
        return None
    if isinstance(seg, list):
        if not all(_is_polygon(p) for p in seg):
            raise SourceError(file, record(), "'segmentation' polygons must be lists of at least 3 (x, y) number pairs")
        return PolygonRLE(seg, height, width)
    if not isinstance(seg, dict):
        raise SourceError(file, record(), f"'segmentation' must be polygons or an RLE object, got {type_name(seg)}")
    size, counts = seg.get("size"), seg.get("counts")
    if size != [height, width]:
        raise SourceError(file, record(), f"'segmentation' size {size!r} differs from the image's [{height}, {width}]")
    if isinstance(counts, str):
        return {"size": [height, width], "counts": counts}
    if not isinstance(counts, list):
        raise SourceError(file, record(), f"'segmentation' RLE counts must be a string or a list, got {type_name(counts)}")
    if not all(type(c) is int and c >= 0 for c in counts) or sum(counts) != height * width:
        raise SourceError(file, record(), "'segmentation' uncompressed RLE counts must be non-negative integers "
                                          f"summing to {height}*{width}")
    return PolygonRLE(seg, height, width)


def rle_areas(rles: Sequence[Mapping[str, Any]]) -> list[float]:
    """Pixel areas of compressed RLEs, without decoding them to bitmaps."""
    from pycocotools import mask as mask_utils

    if not rles:
        return []
    encoded = [{"size": list(r["size"]), "counts": r["counts"].encode("ascii")} for r in rles]
    return [float(a) for a in mask_utils.area(encoded)]


def areas(
    given: Sequence[Any], rles: Sequence[Mapping[str, Any] | None], boxes: Sequence[BBox]
) -> list[float]:
    """Area of each instance: the file's value when it is a positive number, else the mask's, else the box's."""
    result: list[float] = [0.0] * len(given)
    need_mask: list[int] = []
    for i, a in enumerate(given):
        if is_number(a) and a > 0:
            result[i] = float(a)
        elif rles[i] is not None:
            need_mask.append(i)
        else:
            result[i] = boxes[i][2] * boxes[i][3]
    for i, a in zip(need_mask, rle_areas([rles[i] for i in need_mask])):
        result[i] = a
    return result
