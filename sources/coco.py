"""Reader of COCO instances JSON (COCO 2017, COCO-ReM) and the COCO-style core PACO shares.

COCO-ReM (Singh et al. 2024, refined COCO masks) is plain COCO instances JSON, so one reader serves both. The
file is validated while it is read (see :mod:`sources.validate`) into columns (:mod:`sources.tables`); masks are
kept as the file gives them and converted to compressed RLE only when read, and image files are checked
against their declared sizes from their headers only.

:func:`load_coco_style` holds what COCO and LVIS-style files (PACO) have in common - ``images``,
``categories`` and ``annotations`` with ids, boxes and segmentations - so :mod:`sources.paco` adds only what
PACO has on top (attributes, parts).
"""

from __future__ import annotations

import posixpath
import time
from concurrent.futures import ThreadPoolExecutor
from itertools import chain
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from sources import image_files, jsonio, tables, validate
from sources.errors import SourceError
from sources.masks import PolygonRLE, areas, polygons_valid, segmentation_mask
from sources.records import BBox, RecordSet

DEFAULT_LICENSE = "CC BY 4.0 (annotations); Flickr terms (images)"
"""COCO's terms when the file has no ``licenses`` section."""

HEADER_READERS = 32
"""Threads reading image headers that wait on the disk (:func:`_unmatched_headers`): more than the cores."""

HEADER_BLOCK = 2048
"""Image headers read in the calling thread at a time, timed (:func:`_unmatched_headers`)."""

CACHED_HEADER_SECONDS = 25e-6
"""A block of headers read faster than this per header came from the page cache (a cached header takes a few
microseconds, one that waits on the disk tens)."""


@dataclass(frozen=True)
class CocoImage:
    """One validated entry of ``images``."""

    id: int | str
    record: str
    file: str
    width: int
    height: int
    name: str = ""
    """The file name as the entry gives it (``file_name``, or the last part of an LVIS ``coco_url``)."""


@dataclass
class CocoStyle:
    """A validated COCO-style file: images (in the file's order), categories, and the annotations as columns
    (in the file's order; the raw entries stay available for format-specific fields)."""

    path: Path
    data: dict[str, Any]
    images: list[CocoImage]
    categories: dict[int | str, str]
    annotations: list[dict[str, Any]]
    ids: list[int | str]
    image_of: np.ndarray
    """Each annotation's image, as a position in :attr:`images`."""
    category_ids: list[int | str]
    boxes: np.ndarray
    """``(x, y, w, h)`` of each annotation, ``n x 4``."""

    def record(self, k: int) -> str:
        """Annotation ``k``'s name in error messages."""
        return validate.label("annotations", k, self.ids[k])

    def sorted_images(self) -> list[int]:
        """Positions of the images sorted by id (the order of the record set)."""
        return sorted(range(len(self.images)), key=lambda i: validate.id_sort_key(self.images[i].id))

    def grouped(self, rows: np.ndarray) -> np.ndarray:
        """Annotations ``rows`` grouped by image, images sorted by id, in the file's order within an image."""
        rank = np.empty(len(self.images), dtype=np.int64)
        rank[self.sorted_images()] = np.arange(len(self.images))
        return rows[np.argsort(rank[self.image_of[rows]], kind="stable")]


SECTIONS = ("images", "categories", "annotations")
"""The top-level arrays every COCO-style file has, in the order they are checked."""


def load_sections(path: Path, polygons: bool = True) -> tuple[dict[str, Any], list[list[Any]]]:
    """The file's top-level object and its :data:`SECTIONS` arrays; a file that is not an object holding the
    three arrays is a :class:`SourceError` (shared by :func:`load_coco_style` and :mod:`sources.absence`).
    ``polygons=False`` reads polygon segmentations as ``null`` (:func:`sources.jsonio.load_json_without_polygons`)."""
    load = jsonio.load_json if polygons else jsonio.load_json_without_polygons
    data = validate.expect_dict(load(path), path, "", "top level")
    return data, [validate.expect_list(validate.require_key(data, key, path, ""), path, "", f"'{key}'") for key in SECTIONS]


def load_coco_style(annotations: str | Path, images_dir: str | Path) -> CocoStyle:
    """Read and validate the parts every COCO-style file shares.

    Checked: top-level object with ``images``, ``categories`` and ``annotations`` arrays; ids present, of the
    right type and unique; image sizes positive; image files present on disk, of the declared size (read from
    their headers); every annotation's image and category known;
    boxes of four numbers with a positive size inside their image. Unknown extra fields (``info``, ``licenses``,
    a ``source`` on annotations, ...) are ignored; LVIS's federated lists (``neg_category_ids``, ...) are read by
    :mod:`sources.paco`.
    """
    path = Path(annotations)
    data, (raw_images, raw_cats, raw_anns) = load_sections(path)
    categories = _categories(raw_cats, path)
    try:
        images = _images(raw_images, images_dir, path)
    except _BadImage as bad:  # the files of the images before it are checked first
        _raise_bad_file(path, bad.before)
        raise bad.error from None
    try:
        columns = _annotations(raw_anns, images, categories, path)
    except SourceError:
        _raise_bad_file(path, images)  # an image's bad file comes before any annotation's error
        raise
    _raise_bad_file(path, images)
    return CocoStyle(path, data, images, categories, raw_anns, *columns)


class _BadImage(Exception):
    def __init__(self, error: SourceError, before: list[CocoImage]) -> None:
        self.error, self.before = error, before


def _categories(raw_cats: list[Any], path: Path) -> dict[int | str, str]:
    """The validated ``categories`` entries: name by id."""
    categories: dict[int | str, str] = {}
    seen: dict[int | str, str] = {}
    for i, cat in enumerate(raw_cats):
        rec = validate.label("categories", i, cat.get("id") if isinstance(cat, dict) else None)
        validate.expect_dict(cat, path, rec)
        cid = validate.check_id(validate.require_key(cat, "id", path, rec), path, rec)
        validate.claim_id(seen, cid, path, rec, "category id")
        categories[cid] = validate.check_name(validate.require_key(cat, "name", path, rec), path, rec)
    return categories


def _images(raw_images: list[Any], images_dir: str | Path, path: Path) -> list[CocoImage]:
    """The validated ``images`` entries, in file order (their files are checked by the caller)."""
    images: list[CocoImage] = []
    image_path = image_files.image_paths(images_dir)
    seen: dict[int | str, str] = {}
    try:
        for i, img in enumerate(raw_images):
            rec = validate.label("images", i, img.get("id") if isinstance(img, dict) else None)
            validate.expect_dict(img, path, rec)
            iid = validate.check_id(validate.require_key(img, "id", path, rec), path, rec)
            validate.claim_id(seen, iid, path, rec, "image id")
            width, height = validate.check_size(
                validate.require_key(img, "width", path, rec), validate.require_key(img, "height", path, rec), path, rec
            )
            name = img.get("file_name")
            if name is None and isinstance(img.get("coco_url"), str):  # LVIS images carry a URL only
                name = posixpath.basename(img["coco_url"])
            if name is None:
                raise SourceError(path, rec, "missing required key 'file_name'")
            name = validate.check_name(name, path, rec, "file_name")
            images.append(CocoImage(iid, rec, image_path(name), width, height, name))
    except SourceError as error:
        raise _BadImage(error, images) from None
    return images


def _annotations(
    raw_anns: list[Any], images: list[CocoImage], categories: dict[int | str, str], path: Path
) -> tuple[list[int | str], np.ndarray, list[int | str], np.ndarray]:
    """The validated ``annotations`` as columns: ids, image positions, category ids and boxes (``n x 4``).

    Checked column by column (:func:`_screen`); only where a column holds something wrong are the annotations
    checked one by one (:func:`_one_by_one`), which raises the first error in file order with its message."""
    position = {image.id: k for k, image in enumerate(images)}
    columns = _screen(raw_anns, images, position, categories)
    return columns if columns is not None else _one_by_one(raw_anns, images, position, categories, path)


_IDS = frozenset((int, str))


def _screen(
    raw_anns: list[Any], images: list[CocoImage], position: dict[int | str, int], categories: dict[int | str, str]
) -> tuple[list[int | str], np.ndarray, list[int | str], np.ndarray] | None:
    """The columns of :func:`_annotations` when every annotation passes every check, else ``None``.

    Why: a COCO-train-sized file has 860,000 annotations, and a dozen checks called per annotation took longer
    than parsing the file; asked of whole columns (types as sets, numbers as arrays) they take a fraction of it.
    Each test here passes exactly the annotations :func:`_one_by_one` passes."""
    if set(map(type, raw_anns)) - {dict}:
        return None
    ids, image_ids, category_ids, boxes = (validate.column_of(raw_anns, key)
                                           for key in ("id", "image_id", "category_id", "bbox"))
    for values in (ids, image_ids, category_ids):
        if set(map(type, values)) - _IDS or "" in values:
            return None
    if len(set(ids)) != len(ids) or not set(category_ids) <= categories.keys():
        return None
    image_of = list(map(position.get, image_ids))
    if None in image_of or set(map(type, boxes)) - {list} or set(map(len, boxes)) - {4}:
        return None
    numbers = list(chain.from_iterable(boxes))
    if set(map(type, numbers)) - {int, float}:
        return None
    box = np.array(numbers, dtype=np.float64).reshape(-1, 4)
    rows = np.array(image_of, dtype=np.int64)
    width = np.array([im.width for im in images], dtype=np.float64)[rows]
    height = np.array([im.height for im in images], dtype=np.float64)[rows]
    x, y, w, h = box.T
    tolerance = validate.BOX_TOLERANCE
    good = (np.isfinite(box.sum(axis=1)) & (w > 0) & (h > 0) & (x >= -tolerance) & (y >= -tolerance)
            & (x + w <= width + tolerance) & (y + h <= height + tolerance))
    return (ids, rows, category_ids, box) if good.all() else None


def _one_by_one(
    raw_anns: list[Any], images: list[CocoImage], position: dict[int | str, int], categories: dict[int | str, str],
    path: Path,
) -> tuple[list[int | str], np.ndarray, list[int | str], np.ndarray]:
    """:func:`_annotations` checked one annotation at a time: raises the first error, with its record."""
    ids: list[int | str] = []
    image_of: list[int] = []
    category_ids: list[int | str] = []
    boxes: list[BBox] = []
    seen: dict[int | str, str] = {}
    for i, ann in enumerate(raw_anns):
        rec = validate.label("annotations", i, ann.get("id") if isinstance(ann, dict) else None)
        validate.expect_dict(ann, path, rec)
        aid = validate.check_id(validate.require_key(ann, "id", path, rec), path, rec)
        validate.claim_id(seen, aid, path, rec, "annotation id")
        iid = validate.check_id(validate.require_key(ann, "image_id", path, rec), path, rec, "image_id")
        k = position.get(iid)
        if k is None:
            raise SourceError(path, rec, f"unknown image id {iid!r} (not in 'images')")
        cid = validate.check_id(validate.require_key(ann, "category_id", path, rec), path, rec, "category_id")
        if cid not in categories:
            raise SourceError(path, rec, f"unknown category id {cid!r} (not in 'categories')")
        img = images[k]
        boxes.append(validate.check_bbox(validate.require_key(ann, "bbox", path, rec), img.width, img.height, path, rec))
        ids.append(aid)
        image_of.append(k)
        category_ids.append(cid)
    return ids, np.array(image_of, dtype=np.int64), category_ids, np.array(boxes, dtype=np.float64).reshape(-1, 4)


def _raise_bad_file(path: Path, images: Sequence[CocoImage]) -> None:
    """Raise the error of the first of ``images`` whose file is missing or not of its declared size, if any.

    The files whose header does not match (:func:`_unmatched_headers`) are checked again here, in file order
    (:func:`sources.image_files.check_image`), so the error is the one a check of each file in turn would raise."""
    for k in _unmatched_headers(images):
        image = images[k]
        image_files.check_image(image.file, image.width, image.height, path, image.record)


def _unmatched_headers(images: Sequence[CocoImage]) -> list[int]:
    """Positions of the images whose file does not open or whose header does not give the declared size.

    Why two ways: a COCO-train-sized file names 118,000 images. Headers in the page cache take a few
    microseconds each in one thread, and threads would only contend for the interpreter lock;
    an uncached header is a small random read that waits on the disk, and threads overlap those waits.
    So blocks of :data:`HEADER_BLOCK` are read here while each comes from the cache
    (:data:`CACHED_HEADER_SECONDS`), and the rest, from the first block that did not, by :data:`HEADER_READERS`
    threads. Either way the same positions are found."""
    found: list[int] = []
    start = 0
    while start < len(images):
        block = images[start:start + HEADER_BLOCK]
        began = time.perf_counter()
        found += [start + k for k in _mismatched(block)]
        start += len(block)
        if time.perf_counter() - began > CACHED_HEADER_SECONDS * len(block):
            break
    rest = images[start:]
    if not rest:
        return found
    parts = [rest[k::HEADER_READERS] for k in range(HEADER_READERS)]
    with ThreadPoolExecutor(HEADER_READERS) as readers:
        waited = readers.map(_mismatched, parts)
        found += sorted(start + k + HEADER_READERS * j for k, part in enumerate(waited) for j in part)
    return found


def _mismatched(images: Sequence[CocoImage]) -> list[int]:
    """Positions in ``images`` of those whose header does not give their declared size (or does not open)."""
    return [k for k, im in enumerate(images) if not image_files.header_matches(im.file, im.width, im.height)]


def instance_columns(
    style: CocoStyle, rows: np.ndarray, names: Sequence[str],
    attributes: Callable[[dict[str, Any], int], list[str]] | None = None,
) -> tuple[dict[str, Any], list[Any]]:
    """The instance columns (:mod:`sources.tables`) and masks of annotations ``rows`` (in that order), image rows
    numbered as :meth:`CocoStyle.sorted_images` orders them, categories as positions in ``names``: masks
    validated, areas given or measured, crowd flags checked, attributes from ``attributes(raw, row)``."""
    rank = np.empty(len(style.images), dtype=np.int64)
    rank[style.sorted_images()] = np.arange(len(style.images))
    index = {cid: names.index(name) for cid, name in style.categories.items() if name in names}
    picked = rows.tolist()
    raws = [style.annotations[k] for k in picked]
    masks = _masks(style, picked, raws)
    boxes = style.boxes[rows]
    columns: dict[str, Any] = {
        "image": rank[style.image_of[rows]], "id": [str(style.ids[k]) for k in picked],
        "category": [index[style.category_ids[k]] for k in picked], **dict(zip("xywh", boxes.T)),
        "iscrowd": _crowd_flags(style, picked, raws),
        "area": areas(validate.column_of(raws, "area"), masks, boxes),
    }
    if attributes is not None:
        columns["attributes"] = [attributes(raw, k) for raw, k in zip(raws, picked)]
    return columns, masks


def _masks(style: CocoStyle, rows: list[int], raws: list[dict[str, Any]]) -> list[Any]:
    """Each annotation's mask (:func:`sources.masks.segmentation_mask`); polygons checked all at once where
    every polygon of the file is well formed (most of a COCO-style file is polygons)."""
    segmentations = validate.column_of(raws, "segmentation")
    of = style.image_of[rows]
    sizes = zip(np.array([im.height for im in style.images])[of].tolist(),
                np.array([im.width for im in style.images])[of].tolist())
    if polygons_valid([seg for seg in segmentations if type(seg) is list]):
        return [None if seg is None or seg == [] else PolygonRLE(seg, h, w) if type(seg) is list
                else segmentation_mask(seg, h, w, style.path, lambda k=k: style.record(k))  # type: ignore[misc]
                for seg, (h, w), k in zip(segmentations, sizes, rows)]
    return [segmentation_mask(seg, h, w, style.path, lambda k=k: style.record(k))
            for seg, (h, w), k in zip(segmentations, sizes, rows)]


def _crowd_flags(style: CocoStyle, rows: list[int], raws: list[dict[str, Any]]) -> list[bool]:
    """Each annotation's ``iscrowd`` (0 or 1, default 0) as a flag; anything else is an error."""
    flags = validate.column_of(raws, "iscrowd")
    if set(map(type, flags)) - {int, bool, type(None)} or set(flags) - {0, 1, None}:
        for k, flag in zip(rows, flags):
            if flag is not None and (flag not in (0, 1) or type(flag) is float):
                raise SourceError(style.path, style.record(k), f"'iscrowd' must be 0 or 1, got {flag!r}")
    return [bool(flag) for flag in flags]


def image_columns(style: CocoStyle) -> dict[str, list]:
    """The image columns (:mod:`sources.tables`), images sorted by id."""
    ordered = [style.images[i] for i in style.sorted_images()]
    return {"id": [str(im.id) for im in ordered], "file": [im.file for im in ordered],
            "width": [im.width for im in ordered], "height": [im.height for im in ordered]}


def license_of(data: dict[str, Any], default: str) -> str:
    """The names in a file's ``licenses`` section (sorted, ``; ``-joined), else ``default``."""
    names = sorted(
        {
            lic["name"].strip()
            for lic in data.get("licenses") or ()
            if isinstance(lic, dict) and isinstance(lic.get("name"), str) and lic["name"].strip()
        }
    )
    return "; ".join(names) if names else default


def read_coco(annotations: str | Path, images_dir: str | Path, source: str = "coco-rem") -> RecordSet:
    """Read a COCO / COCO-ReM instances file into a :class:`RecordSet`.

    ``Instance.category`` is the category name; ``RecordSet.categories`` lists every category of the file,
    annotated or not (absent categories are the negatives of existence questions). Images are sorted by id and
    their ``file`` is ``images_dir/file_name`` exactly as joined. Raises :class:`SourceError` on bad input.
    """
    return tables.records_of(coco_tables(load_coco_style(annotations, images_dir), annotations, source))


def coco_tables(style: CocoStyle, annotations: str | Path, source: str = "coco-rem") -> tables.SourceTables:
    """The columns of the COCO / COCO-ReM file ``annotations``, already read and validated by
    :func:`load_coco_style`."""
    names = tuple(sorted(set(style.categories.values())))
    columns, masks = instance_columns(style, style.grouped(np.arange(len(style.ids))), names)
    return tables.build(source, str(annotations), names, image_columns(style), columns, {}, {}, masks,
                        license=license_of(style.data, DEFAULT_LICENSE),
                        exhaustive=True)  # COCO annotates every instance of its 80 categories (crowds as regions)
