"""Reader of COCO instances JSON (COCO 2017, COCO-ReM) and the COCO-style core PACO shares.

COCO-ReM (Singh et al. 2024, refined COCO masks) is plain COCO instances JSON, so one reader serves both. The
file is validated while it is read (see :mod:`sources.jsonio`); masks are converted to compressed RLE but never
decoded, and image files are only checked to exist.

:func:`load_coco_style` holds what COCO and LVIS-style files (PACO) have in common - ``images``,
``categories`` and ``annotations`` with ids, boxes and segmentations - so :mod:`sources.paco` adds only what
PACO has on top (attributes, parts).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, NamedTuple, Sequence

from sources import jsonio
from sources.errors import SourceError
from sources.image_headers import HeaderChecks, names_many_images
from sources.records import BBox, ImageRecord, Instance, RecordSet

DEFAULT_LICENSE = "CC BY 4.0 (annotations); Flickr terms (images)"
"""COCO's terms when the file has no ``licenses`` section."""


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


class CocoAnnotation(NamedTuple):
    """One validated entry of ``annotations`` (the raw dict stays available for format-specific fields).

    A named tuple, not a frozen dataclass: a COCO-train-sized file makes 860,000, and a frozen dataclass's
    ``__init__`` (a call per field) took 0.7 s of them where a tuple takes 0.3 s."""

    id: int | str
    record: str
    image_id: int | str
    category_id: int | str
    bbox: BBox
    raw: dict[str, Any]


@dataclass
class CocoStyle:
    """A validated COCO-style file: images (sorted by id), categories, annotations grouped by image."""

    path: Path
    data: dict[str, Any]
    images: list[CocoImage]
    categories: dict[int | str, str]
    annotations: dict[int | str, CocoAnnotation]
    by_image: dict[int | str, list[CocoAnnotation]] = field(default_factory=dict)
    """Every image's annotations, images in the file's order."""

    def images_by_id(self) -> dict[int | str, CocoImage]:
        """The images by id (``images`` is a list sorted by id)."""
        return {image.id: image for image in self.images}


SECTIONS = ("images", "categories", "annotations")
"""The top-level arrays every COCO-style file has, in the order they are checked."""


def load_sections(path: Path, polygons: bool = True) -> tuple[dict[str, Any], list[list[Any]]]:
    """The file's top-level object and its :data:`SECTIONS` arrays; a file that is not an object holding the
    three arrays is a :class:`SourceError` (shared by :func:`load_coco_style` and :mod:`sources.absence`).
    ``polygons=False`` reads polygon segmentations as ``null`` (:func:`sources.jsonio.load_json_without_polygons`)."""
    load = jsonio.load_json if polygons else jsonio.load_json_without_polygons
    data = jsonio.expect_dict(load(path), path, "", "top level")
    return data, [jsonio.expect_list(jsonio.require_key(data, key, path, ""), path, "", f"'{key}'") for key in SECTIONS]


def load_coco_style(annotations: str | Path, images_dir: str | Path) -> CocoStyle:
    """Read and validate the parts every COCO-style file shares.

    Checked: top-level object with ``images``, ``categories`` and ``annotations`` arrays; ids present, of the
    right type and unique; image sizes positive; image files present on disk, of the declared size (read from
    their headers by several processes while the annotations are checked, :mod:`sources.image_headers`); every
    annotation's image and category known; boxes of four numbers with a positive size inside their image. Unknown
    extra fields (``info``, ``licenses``, a ``source`` on annotations, ...) are ignored; LVIS's federated lists
    (``neg_category_ids``, ...) are read by :mod:`sources.paco`.
    """
    path = Path(annotations)
    with HeaderChecks(readers=names_many_images(path)) as headers:  # readers forked before the file is parsed
        data, (raw_images, raw_cats, raw_anns) = load_sections(path)
        categories = _categories(raw_cats, path)
        images = _images(raw_images, images_dir, path, headers)
        listed = list(images.values())
        headers.check(_files(listed))  # the files are read while the annotations are checked
        try:
            anns, by_image = _annotations(raw_anns, images, categories, path)
        except SourceError:
            _raise_bad_file(path, listed, headers)  # an image's bad file comes before any annotation's error
            raise
        _raise_bad_file(path, listed, headers)

    ordered = sorted(images.values(), key=lambda im: jsonio.id_sort_key(im.id))
    return CocoStyle(path, data, ordered, categories, anns, by_image)


def _categories(raw_cats: list[Any], path: Path) -> dict[int | str, str]:
    """The validated ``categories`` entries: name by id."""
    categories: dict[int | str, str] = {}
    seen: dict[int | str, str] = {}
    for i, cat in enumerate(raw_cats):
        rec = jsonio.label("categories", i, cat.get("id") if isinstance(cat, dict) else None)
        jsonio.expect_dict(cat, path, rec)
        cid = jsonio.check_id(jsonio.require_key(cat, "id", path, rec), path, rec)
        jsonio.claim_id(seen, cid, path, rec, "category id")
        categories[cid] = jsonio.check_name(jsonio.require_key(cat, "name", path, rec), path, rec)
    return categories


def _images(
    raw_images: list[Any], images_dir: str | Path, path: Path, headers: HeaderChecks
) -> dict[int | str, CocoImage]:
    """The validated ``images`` entries by id, in file order. Their files are checked by the caller
    (:func:`_raise_bad_file`), except on an error here: the files of the images before it are checked first."""
    images: dict[int | str, CocoImage] = {}
    image_path = jsonio.image_paths(images_dir)
    seen: dict[int | str, str] = {}
    try:
        for i, img in enumerate(raw_images):
            rec = jsonio.label("images", i, img.get("id") if isinstance(img, dict) else None)
            jsonio.expect_dict(img, path, rec)
            iid = jsonio.check_id(jsonio.require_key(img, "id", path, rec), path, rec)
            jsonio.claim_id(seen, iid, path, rec, "image id")
            width, height = jsonio.check_size(
                jsonio.require_key(img, "width", path, rec), jsonio.require_key(img, "height", path, rec), path, rec
            )
            name = img.get("file_name")
            if name is None and isinstance(img.get("coco_url"), str):  # LVIS images carry a URL only
                name = posixpath.basename(img["coco_url"])
            if name is None:
                raise SourceError(path, rec, "missing required key 'file_name'")
            name = jsonio.check_name(name, path, rec, "file_name")
            images[iid] = CocoImage(iid, rec, image_path(name), width, height, name)
    except SourceError:
        before = list(images.values())
        headers.check(_files(before))
        _raise_bad_file(path, before, headers)
        raise
    return images


def _annotations(
    raw_anns: list[Any], images: dict[int | str, CocoImage], categories: dict[int | str, str], path: Path
) -> tuple[dict[int | str, CocoAnnotation], dict[int | str, list[CocoAnnotation]]]:
    """The validated ``annotations`` entries by id, and grouped by image (images in file order)."""
    anns: dict[int | str, CocoAnnotation] = {}
    by_image: dict[int | str, list[CocoAnnotation]] = {iid: [] for iid in images}
    seen: dict[int | str, str] = {}
    for i, ann in enumerate(raw_anns):
        rec = jsonio.label("annotations", i, ann.get("id") if isinstance(ann, dict) else None)
        jsonio.expect_dict(ann, path, rec)
        aid = jsonio.check_id(jsonio.require_key(ann, "id", path, rec), path, rec)
        jsonio.claim_id(seen, aid, path, rec, "annotation id")
        iid = jsonio.check_id(jsonio.require_key(ann, "image_id", path, rec), path, rec, "image_id")
        img = images.get(iid)
        if img is None:
            raise SourceError(path, rec, f"unknown image id {iid!r} (not in 'images')")
        cid = jsonio.check_id(jsonio.require_key(ann, "category_id", path, rec), path, rec, "category_id")
        if cid not in categories:
            raise SourceError(path, rec, f"unknown category id {cid!r} (not in 'categories')")
        bbox = jsonio.check_bbox(jsonio.require_key(ann, "bbox", path, rec), img.width, img.height, path, rec)
        a = CocoAnnotation(aid, rec, iid, cid, bbox, ann)
        anns[aid] = a
        by_image[iid].append(a)
    return anns, by_image


def _files(images: Sequence[CocoImage]) -> list[tuple[str, int, int]]:
    """What :class:`sources.image_headers.HeaderChecks` checks of each image: its file and declared size."""
    return [(image.file, image.width, image.height) for image in images]


def _raise_bad_file(path: Path, images: Sequence[CocoImage], headers: HeaderChecks) -> None:
    """Raise the error of the first of ``images`` whose file is missing or not of its declared size, if any: the
    files the header checks found wrong are checked again here, in file order (:func:`sources.jsonio.check_image`),
    so the error is the one a check of each file in turn would raise."""
    for k in headers.mismatches():
        image = images[k]
        jsonio.check_image(image.file, image.width, image.height, path, image.record)


def build_instances(
    style: CocoStyle,
    image: CocoImage,
    anns: Sequence[CocoAnnotation],
    attributes: Callable[[CocoAnnotation], tuple[str, ...]] | None = None,
) -> tuple[Instance, ...]:
    """Instances of one image: category names, compressed RLE masks, areas, crowd flags, attributes."""
    path = style.path
    rles = jsonio.segmentations_to_rles(
        [(a.record, a.raw.get("segmentation")) for a in anns], image.height, image.width, path
    )
    area = jsonio.areas([a.raw.get("area") for a in anns], rles, [a.bbox for a in anns])
    out = []
    for a, rle, ar in zip(anns, rles, area):
        crowd = a.raw.get("iscrowd", 0)
        if crowd not in (0, 1) or type(crowd) is float:
            raise SourceError(path, a.record, f"'iscrowd' must be 0 or 1, got {crowd!r}")
        out.append(
            Instance(
                id=str(a.id),
                category=style.categories[a.category_id],
                bbox=a.bbox,
                area=ar,
                rle=rle,
                iscrowd=bool(crowd),
                attributes=attributes(a) if attributes is not None else (),
            )
        )
    return tuple(out)


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
    return coco_records(load_coco_style(annotations, images_dir), annotations, source)


def coco_records(style: CocoStyle, annotations: str | Path, source: str = "coco-rem") -> RecordSet:
    """:func:`read_coco`'s record set of the file ``annotations``, already read and validated by
    :func:`load_coco_style` (a build that also wants the file's :func:`sources.absence.presence_of` reads it
    once)."""
    images = tuple(
        ImageRecord(
            id=str(img.id),
            source=source,
            file=img.file,
            width=img.width,
            height=img.height,
            instances=build_instances(style, img, style.by_image[img.id]),
        )
        for img in style.images
    )
    return RecordSet(
        source=source,
        path=str(annotations),
        categories=tuple(sorted(set(style.categories.values()))),
        images=images,
        license=license_of(style.data, DEFAULT_LICENSE),
        exhaustive=True,  # COCO annotates every instance of its 80 categories (crowds as crowd regions)
    )
