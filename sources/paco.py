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

from dataclasses import replace
from pathlib import Path
from typing import Any

from sources import jsonio
from sources.coco import CocoAnnotation, build_instances, license_of, load_coco_style
from sources.errors import SourceError
from sources.records import ImageRecord, RecordSet

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
"""The four per-image LVIS/PACO lists and the :class:`ImageRecord` field each one fills."""


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
        jsonio.expect_dict(table, path, "attr_type_to_attr_idxs", "'attr_type_to_attr_idxs'")
        for kind, ids in table.items():
            norm = _TYPE_SPELLINGS.get(jsonio.normalise_text(kind).replace(" ", "_"))
            if norm is None:
                raise SourceError(path, "attr_type_to_attr_idxs", f"unknown attribute type {kind!r}")
            for attr_id in jsonio.expect_list(ids, path, f"attr_type_to_attr_idxs[{kind!r}]", "the id list"):
                by_index[attr_id] = norm

    names: dict[Any, str] = {}
    types: dict[str, str] = {}
    seen: dict[Any, str] = {}
    raw = jsonio.expect_list(data.get("attributes", []), path, "", "'attributes'")
    for i, entry in enumerate(raw):
        rec = jsonio.label("attributes", i, entry.get("id") if isinstance(entry, dict) else None)
        jsonio.expect_dict(entry, path, rec)
        aid = jsonio.check_id(jsonio.require_key(entry, "id", path, rec), path, rec)
        jsonio.claim_id(seen, aid, path, rec, "attribute id")
        name = jsonio.check_name(jsonio.require_key(entry, "name", path, rec), path, rec)
        given = entry.get("type")
        if given is not None:
            kind = _TYPE_SPELLINGS.get(jsonio.normalise_text(str(given)).replace(" ", "_"))
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
    for i, entry in enumerate(jsonio.expect_list(joint, path, "", "'joint_obj_attribute_categories'")):
        rec = jsonio.label("joint_obj_attribute_categories", i)
        jsonio.expect_dict(entry, path, rec)
        out[jsonio.check_id(jsonio.require_key(entry, "obj-attr", path, rec), path, rec, "obj-attr")] = (
            jsonio.check_id(jsonio.require_key(entry, "obj", path, rec), path, rec, "obj")
        )
    return out


def _federated_lists(
    raw_image: dict[str, Any], record: str, objects: dict[Any, str], joint: dict[Any, Any] | None, path: Path
) -> dict[str, frozenset[str]]:
    """The image's four federated lists as category-name sets, keyed by :class:`ImageRecord` field."""
    out = {}
    for key, field_name in FEDERATED_LISTS.items():
        ids = [jsonio.check_id(i, path, record, key) for i in jsonio.expect_list(raw_image.get(key, []), path, record, f"'{key}'")]
        if joint is not None and key.endswith("_attrs"):
            ids = [joint[i] for i in ids if i in joint] if key.startswith("not_") else []
        out[field_name] = frozenset(objects[i] for i in ids if i in objects)
    return out


def _unknown_types(a: CocoAnnotation, path: Path) -> frozenset[str]:
    """Attribute types PACO flags as undeterminable for an object (``unknown_color: 1``, ...)."""
    kinds = set()
    for flag, kind in UNKNOWN_FLAGS.items():
        value = a.raw.get(flag, 0)
        if value not in (0, 1) or type(value) not in (int, bool):
            raise SourceError(path, a.record, f"'{flag}' must be 0 or 1, got {value!r}")
        if value:
            kinds.add(kind)
    return frozenset(kinds)


def read_paco(annotations: str | Path, images_dir: str | Path) -> RecordSet:
    """Read a PACO-LVIS (or PACO-Ego4D frames) JSON file into a :class:`RecordSet`.

    Instances are the object-level annotations, with their attribute names (sorted) in
    ``Instance.attributes``; ``RecordSet.attribute_types`` maps each attribute name to ``colour``,
    ``pattern``, ``material`` or ``transparency``; ``RecordSet.categories`` lists the object categories
    (``object:part`` names excluded). Raises :class:`SourceError` on bad input, including a part whose
    ``obj_ann_id`` names no object annotation of the same image.
    """
    style = load_coco_style(annotations, images_dir)
    path = style.path
    attr_names, attr_types = _attribute_vocabulary(style.data, path)

    def is_part(a: CocoAnnotation) -> bool:
        owner = a.raw.get("obj_ann_id")
        return ":" in style.categories[a.category_id] or owner not in (None, -1, a.id)

    for a in style.annotations.values():
        ids = a.raw.get("attribute_ids", [])
        jsonio.expect_list(ids, path, a.record, "'attribute_ids'")
        for attr_id in ids:
            if attr_id not in attr_names:
                raise SourceError(path, a.record, f"unknown attribute id {attr_id!r} (not in 'attributes')")
        if not is_part(a):
            continue
        owner_id = a.raw.get("obj_ann_id")
        if owner_id is None:
            raise SourceError(path, a.record, "part annotation has no 'obj_ann_id'")
        owner = style.annotations.get(owner_id)
        if owner is None:
            raise SourceError(path, a.record, f"'obj_ann_id' {owner_id!r} names no annotation")
        if is_part(owner):
            raise SourceError(path, a.record, f"'obj_ann_id' {owner_id!r} names a part ({owner.record}), not an object")
        if owner.image_id != a.image_id:
            raise SourceError(
                path, a.record, f"'obj_ann_id' {owner_id!r} is in image {owner.image_id!r}, not {a.image_id!r}"
            )

    def attributes(a: CocoAnnotation) -> tuple[str, ...]:
        return tuple(sorted({attr_names[i] for i in a.raw.get("attribute_ids", ())}))

    objects = {cid: name for cid, name in style.categories.items() if ":" not in name}
    joint = _joint_attribute_objects(style.data, path)
    raw_images = {img["id"]: img for img in style.data["images"]}
    images = []
    for img in style.images:
        anns = [a for a in style.by_image[img.id] if not is_part(a)]
        instances = tuple(
            replace(inst, unknown_attribute_types=_unknown_types(a, path))
            for a, inst in zip(anns, build_instances(style, img, anns, attributes))
        )
        images.append(ImageRecord(
            id=str(img.id),
            source=SOURCE,
            file=img.file,
            width=img.width,
            height=img.height,
            instances=instances,
            **_federated_lists(raw_images[img.id], img.record, objects, joint, path),
        ))
    categories = sorted({name for name in style.categories.values() if ":" not in name})
    return RecordSet(
        source=SOURCE,
        path=str(annotations),
        categories=tuple(categories),
        images=tuple(images),
        attribute_types=dict(sorted(attr_types.items())),
        license=license_of(style.data, DEFAULT_LICENSE),
    )
