"""An annotation file as columns: a table of images, one of instances, one of relations, one of per-image lists.

The readers of the paper-scale files (COCO / COCO-ReM, PACO, SVG) fill these tables as they validate, instead of
making a Python object per instance: a COCO-train-sized file has 860,000 instances, and as frozen dataclasses they
cost seconds to make, gigabytes to hold and most of the time of anything that pickled them. Whatever reads
a source as a whole (geometry, co-occurrence, MIOH's labels) works on the columns with numpy; a builder that
wants records asks :func:`records_of`, and any :class:`~sources.records.RecordSet` (the demo world) becomes tables
through :func:`tables_of`.

Tables (Apache Arrow, so a table is held once, sliced without copies and written to disk as it is):

``images``
    ``id`` (string), ``file``, ``width``, ``height``, ``coco_id`` (string or null); sorted as the reader's record
    set is (by id).
``instances``
    ``image`` (row of ``images``), ``id``, ``category`` (index into :attr:`SourceTables.categories`), the box
    ``x``, ``y``, ``w``, ``h``, ``area``, ``iscrowd``, ``attributes`` (sorted names), ``unknown_types`` (attribute
    types flagged undeterminable), ``amodal_area`` (the whole object's area where known, null elsewhere), ``z``
    (draw order where known); grouped by image, in the file's order within an image.
``relations``
    ``image``, ``subject`` and ``object`` (rows of ``instances``), ``predicate``; in the file's order per image.
``lists``
    ``image``, ``category``, ``list``: one row per category an image's federated list names (:data:`LISTS`).

Masks stay as the file gave them (:class:`Masks`), read only where a filter measures pixels.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
import pyarrow as pa
from pycocotools import mask as mask_utils

from sources.records import RLE, ImageRecord, Instance, RecordSet, Relation

LISTS = ("verified_absent", "not_exhaustive", "attributes_verified_absent", "attributes_not_exhaustive")
"""The per-image category lists, as :class:`~sources.records.ImageRecord` names them (codes: their positions)."""

IMAGE_SCHEMA = pa.schema([("id", pa.string()), ("file", pa.string()), ("width", pa.int32()),
                          ("height", pa.int32()), ("coco_id", pa.string())])
INSTANCE_SCHEMA = pa.schema([
    ("image", pa.int32()), ("id", pa.string()), ("category", pa.int32()), ("x", pa.float64()), ("y", pa.float64()),
    ("w", pa.float64()), ("h", pa.float64()), ("area", pa.float64()), ("iscrowd", pa.bool_()),
    ("attributes", pa.list_(pa.string())), ("unknown_types", pa.list_(pa.string())),
    ("amodal_area", pa.float64()), ("z", pa.float64()),
])
RELATION_SCHEMA = pa.schema([("image", pa.int32()), ("subject", pa.int32()), ("predicate", pa.string()),
                             ("object", pa.int32())])
LIST_SCHEMA = pa.schema([("image", pa.int32()), ("category", pa.int32()), ("list", pa.int8())])


class Masks:
    """Every instance's visible mask as its file gave it: a compressed RLE (``{"size", "counts": str}``), a
    :class:`~sources.masks.PolygonRLE` (polygons or uncompressed counts, converted when read) or ``None``.

    Why not a column: a mask is read only where instances overlap (the occlusion proxy), and converting every
    polygon of a COCO-train-sized file to run lengths would cost a minute for masks nobody reads."""

    def __init__(self, masks: Sequence[Mapping[str, Any] | None]) -> None:
        self._masks = masks

    def __len__(self) -> int:
        return len(self._masks)

    def __getitem__(self, k: int) -> Mapping[str, Any] | None:
        return self._masks[k]

    def present(self) -> np.ndarray:
        """Whether each instance has a mask."""
        return np.fromiter((m is not None for m in self._masks), dtype=bool, count=len(self._masks))

    def counts(self, rows: Sequence[int]) -> list[Any]:
        """The RLE counts of the masks of ``rows`` (all present), converted where the file gave polygons."""
        return [self._masks[k]["counts"] for k in rows]  # type: ignore[index]


@dataclass
class SourceTables:
    """One annotation file (or the demo world) as columns; see the module docstring for the tables."""

    source: str
    path: str
    categories: tuple[str, ...]
    images: pa.Table
    instances: pa.Table
    relations: pa.Table
    lists: pa.Table
    attribute_types: dict[str, str] = field(default_factory=dict)
    exhaustive: bool = False
    generated: bool = False
    license: str = ""
    masks: Masks | None = None
    """The instances' masks (:class:`Masks`), while the file's own objects are at hand; ``None`` once measured."""

    @property
    def n_images(self) -> int:
        return self.images.num_rows

    def column(self, table: str, name: str) -> np.ndarray:
        """A column of a primitive type as a numpy array (nulls as NaN in float columns)."""
        return column(getattr(self, table), name)

    def list_matrix(self, lists: Sequence[str]) -> np.ndarray:
        """Image x category: the category is on one of ``lists`` (names of :data:`LISTS`) for that image."""
        matrix = np.zeros((self.n_images, len(self.categories)), dtype=bool)
        wanted = np.isin(column(self.lists, "list"), [LISTS.index(name) for name in lists])
        matrix[column(self.lists, "image")[wanted], column(self.lists, "category")[wanted]] = True
        return matrix


def column(table: pa.Table, name: str) -> np.ndarray:
    """``table[name]`` as one numpy array (without a copy where it is one chunk of a primitive type)."""
    values = table.column(name)
    values = values.chunk(0) if values.num_chunks == 1 else values.combine_chunks()
    return values.to_numpy(zero_copy_only=False)  # nulls read as NaN in float columns


def flat_lists(table: pa.Table, name: str) -> tuple[np.ndarray, list[str]]:
    """A list-of-strings column flattened: the row each value belongs to, and the values."""
    values = table.column(name).combine_chunks()
    return values.value_parent_indices().to_numpy(), values.flatten().to_pylist()


def build(source: str, path: str, categories: Sequence[str], images: dict[str, list], instances: dict[str, list],
          relations: dict[str, list], lists: dict[str, list], masks: Sequence[Any] | None, **flags: Any) -> SourceTables:
    """:class:`SourceTables` from the readers' column lists (keys: the schemas' names; a missing list column is
    empty lists, a missing flag false, any other missing column null)."""
    def table(columns: dict[str, list], schema: pa.Schema) -> pa.Table:
        rows = len(next(iter(columns.values()), ()))

        def missing(f: pa.Field) -> pa.Array:
            if pa.types.is_list(f.type):
                return pa.ListArray.from_arrays(pa.array(np.zeros(rows + 1, dtype=np.int32)),
                                                pa.array([], type=f.type.value_type))
            return pa.array(np.zeros(rows, dtype=bool)) if pa.types.is_boolean(f.type) else pa.nulls(rows, f.type)

        return pa.table({f.name: pa.array(columns[f.name], type=f.type) if f.name in columns else missing(f)
                         for f in schema}, schema=schema)

    return SourceTables(source, str(path), tuple(categories), table(images, IMAGE_SCHEMA),
                        table(instances, INSTANCE_SCHEMA), table(relations, RELATION_SCHEMA),
                        table(lists, LIST_SCHEMA), masks=Masks(masks) if masks is not None else None, **flags)


def tables_of(records: RecordSet) -> SourceTables:
    """The columns of a record set (the demo world, or any reader's); masks kept as the records hold them."""
    index = {c: k for k, c in enumerate(records.categories)}
    images: dict[str, list] = {"id": [], "file": [], "width": [], "height": [], "coco_id": []}
    inst: dict[str, list] = {name: [] for name in INSTANCE_SCHEMA.names}
    rels: dict[str, list] = {"image": [], "subject": [], "predicate": [], "object": []}
    lists: dict[str, list] = {"image": [], "category": [], "list": []}
    masks: list[Any] = []
    for i, image in enumerate(records.images):
        for key in images:
            images[key].append(getattr(image, key))
        row = {instance.id: len(masks) + k for k, instance in enumerate(image.instances)}
        for instance in image.instances:
            for key, value in (("image", i), ("id", instance.id), ("category", index[instance.category]),
                               ("area", instance.area), ("iscrowd", instance.iscrowd),
                               ("attributes", list(instance.attributes)),
                               ("unknown_types", sorted(instance.unknown_attribute_types)),
                               ("amodal_area", _amodal_area(instance, image.height, image.width)),
                               ("z", instance.z)):
                inst[key].append(value)
            for key, value in zip("xywh", instance.bbox):
                inst[key].append(value)
            masks.append(instance.rle)
        for relation in image.relations:
            for key, value in (("image", i), ("subject", row[relation.subject]), ("predicate", relation.predicate),
                               ("object", row[relation.object])):
                rels[key].append(value)
        for code, name in enumerate(LISTS):
            for category in sorted(getattr(image, name)):
                if category in index:
                    for key, value in (("image", i), ("category", index[category]), ("list", code)):
                        lists[key].append(value)
    return build(records.source, records.path, records.categories, images, inst, rels, lists, masks,
                 attribute_types=dict(records.attribute_types), exhaustive=records.exhaustive,
                 generated=records.generated, license=records.license)


def _amodal_area(instance: Instance, height: int, width: int) -> float | None:
    """The whole object's area: ``amodal_area`` when given, else the area of ``amodal_rle`` (not decoded)."""
    if instance.amodal_area is not None:
        return float(instance.amodal_area)
    if instance.amodal_rle is None:
        return None
    return float(mask_utils.area(as_compressed(instance.amodal_rle, height, width)))


def as_compressed(rle: RLE, height: int, width: int) -> dict:
    """A mask as pycocotools takes it: compressed counts as bytes (COCO crowd regions come uncompressed, a list)."""
    counts = rle["counts"]
    if isinstance(counts, list):
        return mask_utils.frPyObjects(dict(rle), height, width)
    return {"size": list(rle["size"]), "counts": counts.encode() if isinstance(counts, str) else counts}


def records_of(tables: SourceTables) -> RecordSet:
    """The record set of ``tables``: what the readers returned before they read into columns, object for object
    (masks as the file gave them; amodal masks and draw orders are the demo world's own and not kept here)."""
    images = tables.images.to_pydict()
    inst = tables.instances.to_pydict()
    rels = tables.relations.to_pydict()
    masks = tables.masks
    by_image: list[list[int]] = [[] for _ in images["id"]]
    for k, i in enumerate(inst["image"]):
        by_image[i].append(k)
    relations_of: list[list[Relation]] = [[] for _ in images["id"]]
    for i, s, p, o in zip(rels["image"], rels["subject"], rels["predicate"], rels["object"]):
        relations_of[i].append(Relation(inst["id"][s], p, inst["id"][o]))
    listed: list[dict[str, set[str]]] = [{} for _ in images["id"]]
    for i, c, code in zip(*(tables.lists.column(n).to_pylist() for n in ("image", "category", "list"))):
        listed[i].setdefault(LISTS[code], set()).add(tables.categories[c])
    out = []
    for i, image_id in enumerate(images["id"]):
        instances = tuple(Instance(
            id=inst["id"][k], category=tables.categories[inst["category"][k]],
            bbox=(inst["x"][k], inst["y"][k], inst["w"][k], inst["h"][k]), area=inst["area"][k],
            rle=masks[k] if masks is not None else None, iscrowd=inst["iscrowd"][k],
            attributes=tuple(inst["attributes"][k]), unknown_attribute_types=frozenset(inst["unknown_types"][k]),
        ) for k in by_image[i])
        out.append(ImageRecord(
            id=image_id, source=tables.source, file=images["file"][i], width=images["width"][i],
            height=images["height"][i], instances=instances, relations=tuple(relations_of[i]),
            coco_id=images["coco_id"][i], **{name: frozenset(cats) for name, cats in listed[i].items()},
        ))
    return RecordSet(source=tables.source, path=tables.path, categories=tables.categories, images=tuple(out),
                     attribute_types=tables.attribute_types, exhaustive=tables.exhaustive,
                     generated=tables.generated, license=tables.license)


