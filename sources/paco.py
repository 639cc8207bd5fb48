"""Reader of PACO (Parts and Attributes of Common Objects, Ramanathan et al. 2023), LVIS-style JSON.

PACO-LVIS is COCO-style (``images``, ``categories``, ``annotations``) plus an ``attributes`` vocabulary and, on
each annotation, ``attribute_ids``. Objects and their parts share one annotation list: a part points to its
object through ``obj_ann_id`` and its category is named ``object:part`` (``"mug:handle"``). Mirage asks about
objects and their attributes only, so parts are validated (a dangling part is a broken file) but not emitted.

The 59 attributes come in four types by id: colour 0-29, pattern/marking 30-40, material 41-54,
transparency 55-58. A vocabulary entry's own ``type`` wins, then the file's ``attr_type_to_attr_idxs``, then
those id ranges.

PACO-LVIS is annotated the LVIS (federated) way, and the reader keeps what the file says about absence:

* ``neg_category_ids`` -> ``ImageRecord.verified_absent`` (looked for, not there); a category neither
  annotated nor listed there is *unknown* in that image, not absent (``RecordSet.exhaustive`` is False);
* ``not_exhaustive_category_ids`` -> ``ImageRecord.not_exhaustive`` (present, not every instance annotated);
* ``neg_category_ids_attrs`` / ``not_exhaustive_category_ids_attrs`` -> ``attributes_verified_absent`` /
  ``attributes_not_exhaustive``, the same two lists from the attribute annotation pass;
* ``unknown_color``, ``unknown_pattern_marking``, ``unknown_material``, ``unknown_transparency`` (0/1) on an
  object -> ``Instance.unknown_attribute_types``.

The lists hold object category ids, as ``PACO_DATASET.md`` documents them. Ids the file's ``categories`` do not
define (LVIS ids copied over from LVIS, outside PACO's 75 objects) and part categories (``mug:handle``) are
skipped: no question is asked about them. Evaluation-ready files that carry ``joint_obj_attribute_categories``
hold joint (object, attribute) ids in the two ``_attrs`` lists instead: a joint id in the not-exhaustive list
marks its object category not exhaustive (cautious), and joint ids in the negative list are not used (a missing
pair is not a missing category).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from sources import tables, validate
from sources.coco import CocoStyle, image_columns, instance_columns, license_of, load_coco_style
from sources.errors import SourceError
from sources.records import RecordSet

SOURCE = "paco"
DEFAULT_LICENSE = (
    "PACO annotations: see https://github.com/facebookresearch/paco; images: Flickr terms (LVIS/COCO)"
)

ATTRIBUTE_TYPES = ("colour", "pattern", "material", "transparency")
"""The attribute types Mirage uses, in PACO's order."""

_ID_RANGES = ((range(0, 30), "colour"), (range(30, 41), "pattern"), (range(41, 55), "material"),
              (range(55, 59), "transparency"))

_TYPE_SPELLINGS = {
    "colour": "colour",
    "color": "colour",
    "pattern": "pattern",
    "marking": "pattern",
    "pattern_marking": "pattern",
    "pattern/marking": "pattern",
    "material": "material",
    "transparency": "transparency",
    "reflectance": "transparency",  # PACO's name for it before release
}


UNKNOWN_FLAGS = {
    "unknown_color": "colour",
    "unknown_pattern_marking": "pattern",
    "unknown_material": "material",
    "unknown_transparency": "transparency",
}
"""PACO's per-object flags "this attribute type could not be determined", and the type each one covers."""

FEDERATED_LISTS = {
    "neg_category_ids": "verified_absent",
    "not_exhaustive_category_ids": "not_exhaustive",
    "neg_category_ids_attrs": "attributes_verified_absent",
    "not_exhaustive_category_ids_attrs": "attributes_not_exhaustive",
}
"""The four per-image LVIS/PACO lists and the :class:`~sources.records.ImageRecord` field each one fills."""


def _type_from_id(attr_id: Any) -> str | None:
    if type(attr_id) is int:
        for ids, kind in _ID_RANGES:
            if attr_id in ids:
                return kind
    return None


def _attribute_vocabulary(data: dict[str, Any], path: Path) -> tuple[dict[Any, str], dict[str, str]]:
    """``({attribute id: name}, {name: type})`` from ``attributes`` (and ``attr_type_to_attr_idxs``)."""
    by_index: dict[Any, str] = {}
    table = data.get("attr_type_to_attr_idxs")
    if table is not None:
        validate.expect_dict(table, path, "attr_type_to_attr_idxs", "'attr_type_to_attr_idxs'")
        for kind, ids in table.items():
            norm = _TYPE_SPELLINGS.get(validate.normalise_text(kind).replace(" ", "_"))
            if norm is None:
                raise SourceError(path, "attr_type_to_attr_idxs", f"unknown attribute type {kind!r}")
            for attr_id in validate.expect_list(ids, path, f"attr_type_to_attr_idxs[{kind!r}]", "the id list"):
                by_index[attr_id] = norm

    names: dict[Any, str] = {}
    types: dict[str, str] = {}
    seen: dict[Any, str] = {}
    raw = validate.expect_list(data.get("attributes", []), path, "", "'attributes'")
    for i, entry in enumerate(raw):
        rec = validate.label("attributes", i, entry.get("id") if isinstance(entry, dict) else None)
        validate.expect_dict(entry, path, rec)
        aid = validate.check_id(validate.require_key(entry, "id", path, rec), path, rec)
        validate.claim_id(seen, aid, path, rec, "attribute id")
        name = validate.check_name(validate.require_key(entry, "name", path, rec), path, rec)
        given = entry.get("type")
        if given is not None:
            kind = _TYPE_SPELLINGS.get(validate.normalise_text(str(given)).replace(" ", "_"))
            if kind is None:
                raise SourceError(path, rec, f"unknown attribute type {given!r} (expected one of {ATTRIBUTE_TYPES})")
        else:
            kind = by_index.get(aid) or _type_from_id(aid)
            if kind is None:
                raise SourceError(
                    path, rec, f"attribute id {aid!r} has no 'type' and is outside PACO's id ranges 0-58"
                )
        if types.get(name, kind) != kind:
            raise SourceError(path, rec, f"attribute {name!r} listed with two types ({types[name]}, {kind})")
        names[aid] = name
        types[name] = kind
    return names, types


def _joint_attribute_objects(data: dict[str, Any], path: Path) -> dict[Any, Any] | None:
    """``{joint (object, attribute) id: object category id}`` of an evaluation-ready file, else ``None``."""
    joint = data.get("joint_obj_attribute_categories")
    if joint is None:
        return None
    out = {}
    for i, entry in enumerate(validate.expect_list(joint, path, "", "'joint_obj_attribute_categories'")):
        rec = validate.label("joint_obj_attribute_categories", i)
        validate.expect_dict(entry, path, rec)
        out[validate.check_id(validate.require_key(entry, "obj-attr", path, rec), path, rec, "obj-attr")] = (
            validate.check_id(validate.require_key(entry, "obj", path, rec), path, rec, "obj")
        )
    return out


def _federated_lists(
    raw_image: dict[str, Any], record: str, objects: dict[Any, str], joint: dict[Any, Any] | None, path: Path
) -> dict[str, list[str]]:
    """The image's four federated lists as category names (file order, repeats dropped), keyed by
    :class:`~sources.records.ImageRecord` field."""
    out = {}
    for key, field_name in FEDERATED_LISTS.items():
        ids = [validate.check_id(i, path, record, key) for i in validate.expect_list(raw_image.get(key, []), path, record, f"'{key}'")]
        if joint is not None and key.endswith("_attrs"):
            ids = [joint[i] for i in ids if i in joint] if key.startswith("not_") else []
        out[field_name] = list(dict.fromkeys(objects[i] for i in ids if i in objects))
    return out


def _unknown_types(style: CocoStyle, rows: list[int]) -> list[list[str]]:
    """The attribute types PACO flags as undeterminable (``unknown_color: 1``, ...) for each object of ``rows``,
    sorted; a flag that is neither 0 nor 1 is an error."""
    flags = {flag: [style.annotations[k].get(flag, 0) for k in rows] for flag in UNKNOWN_FLAGS}
    for flag, values in flags.items():
        for k, value in zip(rows, values):
            if value not in (0, 1) or type(value) not in (int, bool):
                raise SourceError(style.path, style.record(k), f"'{flag}' must be 0 or 1, got {value!r}")
    kinds = list(UNKNOWN_FLAGS.values())
    return [sorted(kind for kind, value in zip(kinds, values) if value) if any(values) else []
            for values in zip(*flags.values())]


def read_paco(annotations: str | Path, images_dir: str | Path) -> RecordSet:
    """Read a PACO-LVIS (or PACO-Ego4D frames) JSON file into a :class:`RecordSet` (:func:`paco_tables`)."""
    return tables.records_of(paco_tables(annotations, images_dir))


def paco_tables(annotations: str | Path, images_dir: str | Path) -> tables.SourceTables:
    """Read a PACO-LVIS (or PACO-Ego4D frames) JSON file into columns (:mod:`sources.tables`).

    Instances are the object-level annotations, with their attribute names (sorted); ``attribute_types`` maps
    each attribute name to ``colour``, ``pattern``, ``material`` or ``transparency``; ``categories`` lists the
    object categories (``object:part`` names excluded). Raises :class:`SourceError` on bad input, including a
    part whose ``obj_ann_id`` names no object annotation of the same image.
    """
    style = load_coco_style(annotations, images_dir)
    path = style.path
    attr_names, attr_types = _attribute_vocabulary(style.data, path)
    row_of = {aid: k for k, aid in enumerate(style.ids)}

    def is_part(k: int) -> bool:
        owner = style.annotations[k].get("obj_ann_id")
        return ":" in style.categories[style.category_ids[k]] or owner not in (None, -1, style.ids[k])

    parts = np.fromiter((is_part(k) for k in range(len(style.ids))), dtype=bool, count=len(style.ids))
    for k, raw in enumerate(style.annotations):
        ids = raw.get("attribute_ids", [])
        if type(ids) is not list or not attr_names.keys() >= set(ids):
            validate.expect_list(ids, path, style.record(k), "'attribute_ids'")
            unknown = next(attr_id for attr_id in ids if attr_id not in attr_names)
            raise SourceError(path, style.record(k), f"unknown attribute id {unknown!r} (not in 'attributes')")
        if parts[k]:
            _check_part(style, k, row_of, parts)

    objects = {cid: name for cid, name in style.categories.items() if ":" not in name}
    names = tuple(sorted(set(objects.values())))
    rows = style.grouped(np.flatnonzero(~parts))
    columns, masks = instance_columns(
        style, rows, names, lambda raw, k: sorted({attr_names[i] for i in raw.get("attribute_ids", ())}))
    columns["unknown_types"] = _unknown_types(style, rows.tolist())
    joint = _joint_attribute_objects(style.data, path)
    raw_images = {img["id"]: img for img in style.data["images"]}
    index = {name: k for k, name in enumerate(names)}
    lists: dict[str, list] = {"image": [], "category": [], "list": []}
    for i, position in enumerate(style.sorted_images()):
        image = style.images[position]
        found = _federated_lists(raw_images[image.id], image.record, objects, joint, path)
        for code, field_name in enumerate(tables.LISTS):
            for name in found[field_name]:
                lists["image"].append(i)
                lists["category"].append(index[name])
                lists["list"].append(code)
    return tables.build(SOURCE, str(annotations), names, image_columns(style), columns, {}, lists, masks,
                        attribute_types=dict(sorted(attr_types.items())),
                        license=license_of(style.data, DEFAULT_LICENSE))


def _check_part(style: CocoStyle, k: int, row_of: dict[Any, int], parts: np.ndarray) -> None:
    """A part annotation must name an object annotation of its own image (``obj_ann_id``)."""
    path, record = style.path, style.record(k)
    owner_id = style.annotations[k].get("obj_ann_id")
    if owner_id is None:
        raise SourceError(path, record, "part annotation has no 'obj_ann_id'")
    owner = row_of.get(owner_id)
    if owner is None:
        raise SourceError(path, record, f"'obj_ann_id' {owner_id!r} names no annotation")
    if parts[owner]:
        raise SourceError(path, record, f"'obj_ann_id' {owner_id!r} names a part ({style.record(owner)}), not an object")
    owner_image, image = style.images[style.image_of[owner]].id, style.images[style.image_of[k]].id
    if owner_image != image:
        raise SourceError(path, record, f"'obj_ann_id' {owner_id!r} is in image {owner_image!r}, not {image!r}")
