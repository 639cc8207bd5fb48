"""Absence verified by an exhaustive source that covers the same images (``--verify-absence-with FILE``).

A scene graph (SVG, Visual Genome) names what it shows in an open vocabulary and never what is missing, so "no
cup in this image's scene graph" is not "no cup in this image". Many of those images are COCO images, and COCO
(COCO-ReM likewise) annotates every instance of its 80 categories: where COCO shows no cup, there is none.
:func:`verify_absence` adds those absences to a non-exhaustive record set's ``ImageRecord.verified_absent``.

Images are matched by file name (the base name of the record's file equals a COCO ``file_name``, or the last
component of its ``coco_url``) or, when the source says so, by COCO id (``ImageRecord.coco_id``: Visual Genome's
``image_data`` ``coco_id``, an SVG row's ``coco_id``). A bare numeric id is never taken for a COCO id: Visual
Genome ids and COCO ids overlap as numbers but name different images.

Names are mapped to COCO categories by one rule, chosen so that COCO's absence implies the name's absence (every
thing the name can denote is an instance of the COCO category; the reverse does not matter):

1. names are compared normalised: lower case, ``_`` and ``-`` as spaces, single spaces;
2. a name equal to a COCO category name maps to it (``cup`` -> ``cup``, ``dining table`` -> ``dining table``);
3. so does a name in :data:`COCO_HYPONYMS` (``man`` -> ``person``, ``sofa`` -> ``couch``): words that always
   denote an instance of the category. Broader or ambiguous words are left out on purpose (``table`` is not
   always a ``dining table``, ``bike`` may be a ``motorcycle``, ``glass`` may be a window);
4. a regular plural maps like its singular (``cups``, ``benches``, ``buses``; irregular ones such as ``knives``,
   ``men`` and ``people`` are listed).

Any other name stays unverifiable: an image missing it is undecidable for it, never a negative.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from sources import coco, tables, validate
from sources.errors import SourceError
from sources.records import RecordSet

COCO_HYPONYMS: dict[str, tuple[str, ...]] = {
    "person": ("man", "woman", "boy", "girl", "child", "lady", "guy", "people", "men", "women", "children",
               "skier", "surfer", "skateboarder", "snowboarder", "pedestrian"),
    "couch": ("sofa",),
    "tv": ("television", "tv set", "television set"),
    "motorcycle": ("motorbike",),
    "airplane": ("aeroplane", "airliner"),
    "cell phone": ("cellphone", "mobile phone", "smartphone"),
    "laptop": ("laptop computer",),
    "hair drier": ("hair dryer", "blow dryer"),
    "donut": ("doughnut",),
    "teddy bear": ("teddy",),
    "fire hydrant": ("hydrant",),
    "traffic light": ("traffic signal", "stoplight"),
    "knife": ("knives",),
    "mouse": ("computer mouse",),
}
"""Words that always denote an instance of a COCO category (hyponyms, synonyms, irregular plurals)."""


def normalise(name: str) -> str:
    """``"Dining_Table "`` -> ``"dining table"``: how names from both sources are compared."""
    return " ".join(name.lower().replace("_", " ").replace("-", " ").split())


def coco_category_of(name: str, coco_categories: frozenset[str]) -> str | None:
    """The COCO category whose absence implies the absence of ``name`` (module rule), or ``None``."""
    word = normalise(name)
    lookup = {normalise(c): c for c in coco_categories}
    for cat, words in COCO_HYPONYMS.items():
        if cat in lookup:
            for w in words:
                lookup.setdefault(w, lookup[cat])
    if word in lookup:
        return lookup[word]
    for suffix in ("es", "s"):
        if word.endswith(suffix) and word[: -len(suffix)] in lookup:
            return lookup[word[: -len(suffix)]]
    return None


@dataclass(frozen=True)
class CocoPresence:
    """Which categories each image of a COCO instances file shows (no boxes, no image files needed)."""

    path: Path
    categories: frozenset[str]
    by_file: dict[str, frozenset[str]]
    by_id: dict[str, frozenset[str]]


def read_coco_presence(annotations: str | Path) -> CocoPresence:
    """Read the ``images``, ``categories`` and ``annotations`` of a COCO file into :class:`CocoPresence`.

    Only what absence needs is validated (ids, file names, each annotation's image and category); the images
    themselves need not be on disk, and polygons are not even parsed. Raises :class:`SourceError` on bad input.
    """
    path = Path(annotations)
    sections = dict(zip(coco.SECTIONS, coco.load_sections(path, polygons=False)[1]))
    names: dict[Any, str] = {}
    for i, cat in enumerate(sections["categories"]):
        rec = validate.label("categories", i)
        validate.expect_dict(cat, path, rec)
        cid = validate.check_id(validate.require_key(cat, "id", path, rec), path, rec)
        names[cid] = validate.check_name(validate.require_key(cat, "name", path, rec), path, rec)
    files: dict[Any, str] = {}
    seen: dict[Any, str] = {}
    for i, img in enumerate(sections["images"]):
        rec = validate.label("images", i)
        validate.expect_dict(img, path, rec)
        iid = validate.check_id(validate.require_key(img, "id", path, rec), path, rec)
        validate.claim_id(seen, iid, path, rec, "image id")
        name = img.get("file_name") or (posixpath.basename(img["coco_url"]) if isinstance(img.get("coco_url"), str) else None)
        files[iid] = posixpath.basename(validate.check_name(name, path, rec, "file_name"))
    shown: dict[Any, set[str]] = {iid: set() for iid in files}
    anns = sections["annotations"]
    # the checks below, called once per annotation, take seconds on a COCO-train-sized file: asked of whole columns
    # first, and one by one only to report the first bad annotation
    if _all_pass(anns, shown, names):
        for iid, cid in zip(validate.column_of(anns, "image_id"), validate.column_of(anns, "category_id")):
            shown[iid].add(names[cid])
        return _presence(path, names, files, shown)
    for i, ann in enumerate(anns):
        rec = validate.label("annotations", i)
        validate.expect_dict(ann, path, rec)
        iid = validate.check_id(validate.require_key(ann, "image_id", path, rec), path, rec, "image_id")
        cid = validate.check_id(validate.require_key(ann, "category_id", path, rec), path, rec, "category_id")
        if iid not in shown:
            raise SourceError(path, rec, f"unknown image id {iid!r} (not in 'images')")
        if cid not in names:
            raise SourceError(path, rec, f"unknown category id {cid!r} (not in 'categories')")
        shown[iid].add(names[cid])
    return _presence(path, names, files, shown)


def _all_pass(anns: list[Any], shown: dict[Any, set[str]], names: dict[Any, str]) -> bool:
    """Whether every annotation passes :func:`read_coco_presence`'s checks (a dict whose ``image_id`` and
    ``category_id`` are identifiers of an image and a category of the file), asked of whole columns."""
    if set(map(type, anns)) - {dict}:
        return False
    for key, known in (("image_id", shown), ("category_id", names)):
        values = validate.column_of(anns, key)
        if set(map(type, values)) - {int, str} or "" in values or not set(values) <= known.keys():
            return False
    return True


def _presence(path: Path, names: dict[Any, str], files: dict[Any, str], shown: dict[Any, set[str]]) -> CocoPresence:
    """Category names by id, file names and shown category names by image id (in the file's order: of two
    images with one file name, the later is kept) as a :class:`CocoPresence`."""
    return CocoPresence(
        path=path,
        categories=frozenset(names.values()),
        by_file={files[iid]: frozenset(cats) for iid, cats in shown.items()},
        by_id={str(iid): frozenset(cats) for iid, cats in shown.items()},
    )


def verify_absence(records: RecordSet, annotations: str | Path) -> tuple[RecordSet, dict[str, Any]]:
    """:func:`verify_tables` of a record set."""
    verified, report = verify_tables(tables.tables_of(records), annotations)
    return tables.records_of(verified), report


def verify_tables(source: tables.SourceTables, annotations: str | Path) -> tuple[tables.SourceTables, dict[str, Any]]:
    """``source`` with the absences the COCO file ``annotations`` verifies, and what was matched.

    For every image matched in the COCO file, each vocabulary name of ``source`` that maps to a COCO category
    (module rule) and that neither source shows in that image is added to its ``verified_absent`` list. An
    exhaustive source is returned unchanged. The report names the file, the images matched and the names mapped.
    """
    coco = read_coco_presence(annotations)
    mapping = {name: cat for name in source.categories if (cat := coco_category_of(name, coco.categories))}
    files, coco_ids = (source.images.column(name).to_pylist() for name in ("file", "coco_id"))
    shown = [coco.by_file.get(Path(file).name) for file in files]
    shown = [found if found is not None or coco_id is None else coco.by_id.get(coco_id)
             for found, coco_id in zip(shown, coco_ids)]
    matched = [] if source.exhaustive else [i for i, found in enumerate(shown) if found is not None]
    if matched:
        names = [source.categories.index(name) for name in mapping]
        absent = np.zeros((source.n_images, len(source.categories)), dtype=bool)
        for i in matched:
            absent[i, names] = [mapping[source.categories[c]] not in shown[i] for c in names]  # type: ignore[operator]
        absent[tables.column(source.instances, "image"), tables.column(source.instances, "category")] = False
        image, category = np.nonzero(absent)
        added = pa.table({"image": image.astype(np.int32), "category": category.astype(np.int32),
                          "list": np.zeros(len(image), dtype=np.int8)}, schema=tables.LIST_SCHEMA)
        source = replace(source, lists=pa.concat_tables([source.lists, added]))
    report = {
        "file": str(annotations),
        "images_matched": len(matched),
        "images": source.n_images,
        "names_mapped": len(mapping),
        "names": len(source.categories),
        "mapping": dict(sorted(mapping.items())),
    }
    return source, report
