"""Reader of Synthetic Visual Genome (SVG, Park et al. 2025) scene graphs.

SVG is published (``jamepark3922/svg`` on the Hugging Face Hub) as one row per image: ``image_id`` (usually the
image file name, e.g. ``"2345678.jpg"``), ``metadata`` with ``width``/``height``, ``regions`` (each with a
``bbox`` ``[x, y, w, h]`` and a SAM ``segmentation`` RLE) and ``scene_graph``, a JSON *string* holding
``objects`` (one name per region, same order) and ``relations`` as ``[subject_idx, object_idx, predicate]``
triples indexing into the regions. Exports of it differ in small ways, so this reader accepts the plausible
variants of each field:

* image id: ``image_id`` | ``id`` | ``image``; file name: ``file_name`` | ``image`` | the id when it ends in an
  image extension | ``<id>.jpg``;
* size: ``width``/``height`` | ``metadata.width``/``metadata.height`` | ``metadata/width`` (a flattened
  column) | read from the image header when absent;
* scene graph: ``scene_graph`` as a JSON string or an object, or ``objects``/``relations`` on the row itself;
* region name: ``name`` | ``object`` | ``label`` | ``category`` | ``names[0]`` on the region, else the
  scene graph's ``objects[i]`` (a string or an object with ``name``);
* region box: ``bbox`` ``[x, y, w, h]`` | ``x``, ``y``, ``w``/``width``, ``h``/``height``;
* relation: ``[s, o, predicate]`` | ``{"subject", "object", "predicate"}`` (also ``subject_idx``/``object_idx``,
  ``relation``/``name``);
* COCO id (optional, for ``--verify-absence-with``): ``coco_id`` | ``metadata.coco_id``.

A scene graph names what it shows, in an open vocabulary, and never what is missing: the record set is not
exhaustive and no image has a verified absence unless an exhaustive source covering the same images adds them
(:mod:`sources.absence`).

A file can be a JSON array of rows, a single row object, JSON lines (``.jsonl``/``.ndjson``), or a directory of
such files. Names and predicates are normalised to lower case with single spaces.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from sources import image_files, jsonio, tables, validate
from sources.errors import SourceError
from sources.masks import areas, segmentation_mask
from sources.records import RecordSet

SOURCE = "svg"
DEFAULT_LICENSE = (
    "SVG annotations: see https://huggingface.co/datasets/jamepark3922/svg; images: their source datasets' terms"
)

_IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".webp", ".bmp", ".gif", ".tif", ".tiff")
_NAME_KEYS = ("name", "object", "label", "category", "names")
_SUBJECT_KEYS = ("subject", "subject_idx", "subject_index", "sub")
_OBJECT_KEYS = ("object", "object_idx", "object_index", "obj")
_PREDICATE_KEYS = ("predicate", "relation", "name")


def _rows(path: Path) -> Iterator[tuple[Path, str, Any]]:
    """``(file, record label, row)`` for every image row under ``path`` (file or directory)."""
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix.lower() in (".json",) + jsonio.JSONL_SUFFIXES)
        if not files:
            raise SourceError(path, "", "directory holds no .json or .jsonl file")
        for f in files:
            yield from _rows(f)
        return
    if path.suffix.lower() in jsonio.JSONL_SUFFIXES:
        for number, row in jsonio.iter_jsonl(path):
            yield path, f"line {number}", row
        return
    data = jsonio.load_json(path)
    if isinstance(data, list):
        for i, row in enumerate(data):
            yield path, f"[{i}]", row
    elif isinstance(data, dict):
        yield path, "image", data
    else:
        raise SourceError(path, "", f"top level must be an array of images or an image object, got {validate.type_name(data)}")


def _size(row: dict, file: Path, rec: str, image_file: str) -> tuple[int, int]:
    meta = row.get("metadata")
    if "width" in row or "height" in row:
        w, h = row.get("width"), row.get("height")
    elif isinstance(meta, dict) and ("width" in meta or "height" in meta):
        w, h = meta.get("width"), meta.get("height")
    elif "metadata/width" in row or "metadata/height" in row:
        w, h = row.get("metadata/width"), row.get("metadata/height")
    else:
        return image_files.image_size_from_file(image_file, file, rec)
    return validate.check_size(w, h, file, rec)


def _file_name(row: dict, image_id: int | str) -> str:
    for key in ("file_name", "image"):
        if isinstance(row.get(key), str) and row[key]:
            return row[key]
    text = str(image_id)
    return text if text.lower().endswith(_IMAGE_EXTENSIONS) else f"{text}.jpg"


def _region_name(region: dict, names: list | None, j: int, file: Path, rec: str) -> str:
    key = validate.first_key(region, _NAME_KEYS)
    if key is not None:
        value = region[key]
        if key == "names" and isinstance(value, list) and value:
            value = value[0]
    elif names is not None:
        value = names[j]
        if isinstance(value, dict):
            value = validate.require_key(value, "name", file, f"{rec} (scene_graph.objects[{j}])")
    else:
        raise SourceError(file, rec, "region has no object name ('name' or scene_graph 'objects')")
    return _normalised(validate.check_name(value, file, rec, key or "objects"))


def _region_box(region: dict, width: int, height: int, file: Path, rec: str):
    if "bbox" in region:
        return validate.check_bbox(region["bbox"], width, height, file, rec)
    if "x" in region and "y" in region:
        w = validate.require_any(region, ("w", "width"), file, rec)
        h = validate.require_any(region, ("h", "height"), file, rec)
        return validate.check_bbox([region["x"], region["y"], w, h], width, height, file, rec, key="x, y, w, h")
    raise SourceError(file, rec, "missing required key 'bbox' (or 'x', 'y', 'w', 'h')")


def _relation(rel: Any, n: int, file: Path, rec: str) -> tuple[int, int, str]:
    if isinstance(rel, (list, tuple)) and len(rel) >= 3:
        s, o, p = rel[0], rel[1], rel[2]
    elif isinstance(rel, dict):
        s = validate.require_any(rel, _SUBJECT_KEYS, file, rec)
        o = validate.require_any(rel, _OBJECT_KEYS, file, rec)
        p = validate.require_any(rel, _PREDICATE_KEYS, file, rec)
    else:
        raise SourceError(file, rec, f"relation must be [subject_idx, object_idx, predicate], got {rel!r}")
    for role, idx in (("subject", s), ("object", o)):
        if type(idx) is not int:
            raise SourceError(file, rec, f"{role} index must be an integer, got {idx!r}")
        if not 0 <= idx < n:
            raise SourceError(file, rec, f"{role} index {idx} out of range (image has {n} regions)")
    return s, o, _normalised(validate.check_name(p, file, rec, "predicate"))


def _image(file: Path, rec: str, row: Any, images_dir: str | Path) -> tuple[str, dict[str, Any]]:
    """One validated image row: its record label and its columns (instances and relations as lists, relations
    by region index)."""
    validate.expect_dict(row, file, rec, "image row")
    image_id = validate.check_id(validate.require_any(row, ("image_id", "id", "image"), file, rec), file, rec, "image_id")
    rec = f"{rec} (image_id={image_id!r})"
    image_file = image_files.check_image_file(image_files.image_path(images_dir, _file_name(row, image_id)), file, rec)
    width, height = _size(row, file, rec, image_file)

    graph: Any = row.get("scene_graph", row)
    if isinstance(graph, str):
        graph = jsonio.parse_embedded_json(graph, file, rec, "scene_graph")
    validate.expect_dict(graph, file, rec, "'scene_graph'")
    regions = validate.expect_list(
        row["regions"] if "regions" in row else validate.require_key(graph, "regions", file, rec), file, rec, "'regions'"
    )
    names = graph.get("objects")
    if names is not None:
        validate.expect_list(names, file, rec, "scene_graph 'objects'")
        if len(names) != len(regions):
            raise SourceError(file, rec, f"scene_graph 'objects' has {len(names)} names for {len(regions)} regions")

    boxes, labels, masks, given_areas, attrs = [], [], [], [], []
    for j, region in enumerate(regions):
        try:  # the region's record label is made only for an error (a scene-graph file has millions of regions)
            validate.expect_dict(region, file, _HERE, "region")
            labels.append(_region_name(region, names, j, file, _HERE))
            boxes.append(_region_box(region, width, height, file, _HERE))
            masks.append(segmentation_mask(region.get("segmentation"), height, width, file, lambda: _HERE))
        except SourceError as error:
            raise _placed(error, f"{rec}.regions[{j}]") from None
        given_areas.append(region.get("area"))
        raw_attrs = region.get("attributes") or ()
        attrs.append(sorted({_normalised(a) for a in raw_attrs if isinstance(a, str) and a.strip()}))

    raw_rels = graph.get("relations", row.get("relations", []))
    validate.expect_list(raw_rels, file, rec, "'relations'")
    relations = []
    for k, rel in enumerate(raw_rels):
        try:
            relations.append(_relation(rel, len(regions), file, _HERE))
        except SourceError as error:
            raise _placed(error, f"{rec}.relations[{k}]") from None
    return rec, {"id": str(image_id), "file": image_file, "width": width, "height": height,
                 "coco_id": _coco_id(row, file, rec), "labels": labels, "boxes": boxes, "masks": masks,
                 "areas": areas(given_areas, masks, boxes), "attributes": attrs, "relations": relations}


_HERE = "\x00"
"""Stands for a region's or relation's record label in its checks, replaced by the label on an error."""


def _placed(error: SourceError, record: str) -> SourceError:
    """``error`` with :data:`_HERE` in its record replaced by ``record``."""
    return SourceError(error.file, error.record.replace(_HERE, record), error.problem)


_NORMALISED: dict[str, str] = {}


def _normalised(text: str) -> str:
    """:func:`sources.validate.normalise_text`, remembered (a scene-graph file repeats a few thousand names and
    predicates millions of times)."""
    found = _NORMALISED.get(text)
    if found is None:
        found = _NORMALISED[text] = validate.normalise_text(text)
    return found


def _coco_id(row: dict, file: Path, rec: str) -> str | None:
    """The row's ``coco_id`` (or ``metadata.coco_id``), when the image is a COCO image; ``None`` otherwise."""
    meta = row.get("metadata")
    value = row.get("coco_id", meta.get("coco_id") if isinstance(meta, dict) else None)
    return None if value is None else str(validate.check_id(value, file, rec, "coco_id"))


def read_svg(path: str | Path, images_dir: str | Path) -> RecordSet:
    """Read SVG scene graphs (JSON, JSON lines, or a directory of them) into a :class:`RecordSet`
    (:func:`svg_tables`)."""
    return tables.records_of(svg_tables(path, images_dir))


def svg_tables(path: str | Path, images_dir: str | Path) -> tables.SourceTables:
    """Read SVG scene graphs (JSON, JSON lines, or a directory of them) into columns (:mod:`sources.tables`).

    Each region becomes an instance with id ``"<image_id>#<region index>"``; each relation one between those
    instances. ``categories`` is every region name seen. Images are sorted by id. Raises :class:`SourceError` on
    bad input (a relation index out of range, a box outside its image, a duplicate image id, ...).
    """
    p = Path(path)
    if not p.exists():
        raise SourceError(p, "", "annotation file not found")
    rows: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    for file, rec, row in _rows(p):
        rec, image = _image(file, rec, row, images_dir)
        validate.claim_id(seen, image["id"], file, rec if file == p else f"{file}: {rec}", "image id")
        rows.append(image)
    rows.sort(key=lambda im: validate.id_sort_key(int(im["id"]) if im["id"].isdigit() else im["id"]))
    names = tuple(sorted({label for im in rows for label in im["labels"]}))
    index = {name: k for k, name in enumerate(names)}
    images: dict[str, list] = {key: [im[key] for im in rows] for key in ("id", "file", "width", "height", "coco_id")}
    instances: dict[str, list] = {key: [] for key in ("image", "id", "category", "x", "y", "w", "h", "area",
                                                      "attributes")}
    relations: dict[str, list] = {key: [] for key in ("image", "subject", "predicate", "object")}
    masks: list[Any] = []
    for i, im in enumerate(rows):
        first = len(masks)
        for relation in im["relations"]:
            for key, value in zip(("subject", "object", "predicate"), relation):
                relations[key].append(first + value if key != "predicate" else value)
            relations["image"].append(i)
        for j, (label, box) in enumerate(zip(im["labels"], im["boxes"])):
            for key, value in (("image", i), ("id", f"{im['id']}#{j}"), ("category", index[label]),
                               ("area", im["areas"][j]), ("attributes", im["attributes"][j]), *zip("xywh", box)):
                instances[key].append(value)
        masks += im["masks"]
    return tables.build(SOURCE, str(path), names, images, instances, relations, {}, masks, license=DEFAULT_LICENSE)
