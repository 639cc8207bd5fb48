"""Reader of Visual Genome (Krishna et al. 2017) ``relationships.json``, with ``image_data.json`` and
``objects.json`` optional, in every layout the official releases used.

``relationships.json`` is an array of ``{"image_id", "relationships": [...]}`` (v1.2, v1.4; v1.0 names the image
``id``); each relationship has a ``predicate`` (mixed case, trailing spaces, and in v1.0 a copula, a trailing
article and doubled words - "is on the", "are in", "is is in the the" -: normalised by :func:`normalise_predicate`
to the bare relation a question can follow "is"/"are" with) and ``subject``/``object`` objects carrying ``object_id`` (or ``id``), ``name`` (v1.0/v1.2) or ``names``
(a list, v1.4; the first is used), ``synsets`` (possibly empty; ignored) and a box as separate ``x``, ``y``,
``w``, ``h`` keys. An object appears once per relationship it takes part in, so instances are deduplicated by
``object_id``; v1.0 gives the same object a new id in every relationship (in the file of issue 38, 680 of the 811
names repeated within an image had an identical box), so within an image two objects of one name with an identical
box are one instance whatever their ids (counted in ``ReadStats.objects_merged_by_box``): otherwise every object
would look like several instances of its category. ``image_data.json`` gives each image's ``width``, ``height`` and
``url``; without it the sizes are read from the image headers. ``objects.json`` (same shapes, ``{"image_id",
"objects": [...]}``) adds the objects that take part in no relationship - needed to know how many instances of a
category an image holds -, and its ``merged_object_ids`` make a relationship endpoint that names a merged id the
same instance; relationship endpoints missing from ``objects.json`` (the release has some) are kept as instances of
their own.

The files are streamed (:func:`sources.jsonstream.iter_json_array`): the 2.3-million-relationship v1.4 file is
never held as text or as one parsed document, only one image at a time. ``objects.json`` is read in step with
``relationships.json`` (the official files list images in the same order); images out of step are buffered.

Images are looked for at ``images_dir/<name>``, then ``images_dir/VG_100K/<name>`` and
``images_dir/VG_100K_2/<name>`` (the two folders of the official download), where ``<name>`` is the URL's last
component, then ``<image_id>.jpg``: v1.0's URLs name some files ``img_2031.jpg`` while the archives name every file
``<image_id>.jpg``.

Nothing in Visual Genome says what an image does *not* show: the record set is not exhaustive (a missing name is
unknown, not absent). ``image_data``'s ``coco_id`` is kept (``ImageRecord.coco_id``) so that an exhaustive COCO
file can verify absences in the COCO images (:mod:`sources.absence`).
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from sources import image_files, validate
from sources.errors import SourceError
from sources.jsonstream import iter_json_array
from sources.records import ImageRecord, Instance, RecordSet, Relation

SOURCE = "visual_genome"
DEFAULT_LICENSE = "CC BY 4.0 (Visual Genome annotations and images)"
IMAGE_SUBFOLDERS = ("", "VG_100K", "VG_100K_2")
"""Where, under ``images_dir``, an image is looked for, in order."""
_NUMBER = (int, float)
COPULAS = ("is", "are")
ARTICLES = ("the", "a", "an")


def normalise_predicate(raw: str) -> str:
    """A predicate as the relation itself: lower case, single spaces, a word written twice in a row once, no
    leading copula and no trailing article ("Is is on the  the" -> "on"); a predicate of one word stays as it is
    (a bare "is" is noise for the builders to drop, not an empty string)."""
    words = raw.lower().split()
    words = [w for k, w in enumerate(words) if k == 0 or w != words[k - 1]]
    while len(words) > 1 and words[0] in COPULAS:
        words = words[1:]
    while len(words) > 1 and words[-1] in ARTICLES:
        words = words[:-1]
    return " ".join(words)


@dataclass
class ReadStats:
    """What the reader normalised on the way (for build.json)."""

    images: int = 0
    relationships: int = 0
    boxes_clipped: int = 0
    endpoints_missing_from_objects: int = 0
    objects_only_instances: int = 0
    images_without_objects_entry: int = 0
    objects_merged_by_box: int = 0
    """Objects given another id than an earlier one of the same name and identical box in the same image."""
    images_without_file: int = 0
    """Images left out because their file was not found (``missing_images="skip"``)."""
    relationships_without_file: int = 0
    """The relationships of those images (not read further)."""
    image_ids_without_file: list[str] = field(default_factory=list)


def _image_data(path: str | Path) -> dict[int | str, tuple[str, dict]]:
    """``{image id: (record label, entry)}`` from ``image_data.json``."""
    p = Path(path)
    out: dict[int | str, tuple[str, dict]] = {}
    seen: dict[int | str, str] = {}
    for i, entry in iter_json_array(p, what="image data file"):
        rec = validate.label("", i)
        validate.expect_dict(entry, p, rec)
        iid = validate.check_id(validate.require_any(entry, ("image_id", "id"), p, rec), p, rec, "image_id")
        rec = validate.label("", i, iid, "image_id")
        validate.claim_id(seen, iid, p, rec, "image id")
        validate.check_size(validate.require_key(entry, "width", p, rec), validate.require_key(entry, "height", p, rec), p, rec)
        out[iid] = (rec, {k: entry[k] for k in ("width", "height", "url", "coco_id") if k in entry})
    return out


def find_image(images_dir: str | Path, name: str, image_id: str | int | None = None) -> str | None:
    """The path of image ``name`` under ``images_dir`` (or its VG_100K/VG_100K_2 folders), else of
    ``<image_id>.jpg`` there when ``image_id`` is given; ``None`` if neither is found."""
    names = [name] + ([f"{image_id}.jpg"] if image_id is not None and f"{image_id}.jpg" != name else [])
    for candidate_name in names:
        for sub in IMAGE_SUBFOLDERS:
            candidate = image_files.image_path(Path(images_dir, sub) if sub else images_dir, candidate_name)
            if os.path.isfile(candidate):
                return candidate
    return None


def _find_image(images_dir: str | Path, name: str, image_id: str | int, file: Path, rec: str) -> str:
    """:func:`find_image`, where a missing image is an error naming the first place looked."""
    found = find_image(images_dir, name, image_id)
    return found if found is not None else image_files.check_image_file(image_files.image_path(images_dir, name), file, rec)


def _fast_object(obj: Any, width: int, height: int) -> tuple[str, Instance] | None:
    """The common, valid case without the validators' overhead; ``None`` sends the object to :func:`_object`."""
    try:
        oid = obj["object_id"]
        name = obj["name"] if "name" in obj else obj["names"][0]
        x, y, w, h = obj["x"], obj["y"], obj["w"], obj["h"]
    except (KeyError, TypeError, IndexError):
        return None
    if (type(oid) is not int or type(name) is not str or not name.strip() or type(x) not in _NUMBER
            or type(y) not in _NUMBER or type(w) not in _NUMBER or type(h) not in _NUMBER or w <= 0 or h <= 0
            or x < -1 or y < -1 or x + w > width + 1 or y + h > height + 1 or "attributes" in obj):
        return None
    key = str(oid)
    return key, Instance(key, " ".join(name.lower().split()), (float(x), float(y), float(w), float(h)), float(w * h))


def _plausible_copy(obj: dict) -> bool:
    """A repeated copy of a known object that is well-formed (a name, a box of positive size): not re-parsed."""
    try:
        name = obj["names"][0] if "names" in obj else obj["name"]
        w, h = obj["w"], obj["h"]
        return (type(name) is str and bool(name.strip()) and type(obj["x"]) in _NUMBER and type(obj["y"]) in _NUMBER
                and type(w) in _NUMBER and type(h) in _NUMBER and w > 0 and h > 0)
    except (KeyError, TypeError, IndexError):
        return False


def _object(
    obj: Any, width: int, height: int, file: Path, rec: str, clip: bool = False, stats: ReadStats | None = None
) -> tuple[str, Instance]:
    fast = _fast_object(obj, width, height) if type(obj) is dict else None
    if fast is not None:
        return fast
    validate.expect_dict(obj, file, rec)
    oid = validate.check_id(validate.require_any(obj, ("object_id", "id"), file, rec), file, rec, "object_id")
    if "name" in obj:
        name = validate.check_name(obj["name"], file, rec)
    else:
        names = validate.expect_list(validate.require_any(obj, ("name", "names"), file, rec), file, rec, "'names'")
        if not names:
            raise SourceError(file, rec, "'names' is empty")
        name = validate.check_name(names[0], file, rec, "names")
    box = [validate.require_key(obj, k, file, rec) for k in ("x", "y", "w", "h")]
    if clip:
        box = _clipped(box, width, height, file, rec, stats)
    bbox = validate.check_bbox(box, width, height, file, rec, key="x, y, w, h")
    attrs = obj.get("attributes") or ()
    attributes = tuple(sorted({validate.normalise_text(a) for a in attrs if isinstance(a, str) and a.strip()}))
    inst = Instance(
        id=str(oid), category=validate.normalise_text(name), bbox=bbox, area=bbox[2] * bbox[3], attributes=attributes
    )
    return str(oid), inst


def _clipped(box: list, width: int, height: int, file: Path, rec: str, stats: ReadStats | None) -> list:
    """A box sticking out of its image cut to the image (VG boxes often do); malformed boxes are left to fail."""
    if not all(validate.is_number(v) for v in box) or box[2] <= 0 or box[3] <= 0:
        return box
    x0, y0 = max(0.0, float(box[0])), max(0.0, float(box[1]))
    x1, y1 = min(float(width), float(box[0] + box[2])), min(float(height), float(box[1] + box[3]))
    if x1 <= x0 or y1 <= y0:
        raise SourceError(file, rec, f"'x, y, w, h' {box} lies outside the {width}x{height} image")
    clipped = [x0, y0, x1 - x0, y1 - y0]
    if stats is not None and clipped != [float(v) for v in box]:
        stats.boxes_clipped += 1
    return clipped


@dataclass
class _ObjectsStream:
    """``objects.json`` read in step with ``relationships.json``; out-of-step images wait in ``pending``."""

    path: Path
    entries: Iterator[tuple[int, Any]]
    pending: dict[Any, tuple[str, dict]] = field(default_factory=dict)
    done: bool = False

    def take(self, iid: Any) -> tuple[str, dict] | None:
        if iid in self.pending:
            return self.pending.pop(iid)
        while not self.done:
            try:
                i, entry = next(self.entries)
            except StopIteration:
                self.done = True
                break
            rec = validate.label("", i)
            validate.expect_dict(entry, self.path, rec, "image entry")
            oid = validate.check_id(validate.require_any(entry, ("image_id", "id"), self.path, rec), self.path, rec, "image_id")
            rec = validate.label("", i, oid, "image_id")
            if oid == iid:
                return rec, entry
            self.pending[oid] = (rec, entry)
        return None


def _objects_of(
    found: tuple[str, dict] | None, objects_path: Path, width: int, height: int, clip: bool, stats: ReadStats
) -> tuple[dict[str, Instance], dict[str, str]]:
    """Instances of an ``objects.json`` entry by id, and merged id -> kept id."""
    instances: dict[str, Instance] = {}
    aliases: dict[str, str] = {}
    if found is None:
        stats.images_without_objects_entry += 1
        return instances, aliases
    rec, entry = found
    objs = validate.expect_list(validate.require_key(entry, "objects", objects_path, rec), objects_path, rec, "'objects'")
    by_box: dict[tuple[str, tuple[float, ...]], str] = {}
    for k, obj in enumerate(objs):
        orec = f"{rec}.objects[{k}]"
        oid, inst = _object(obj, width, height, objects_path, orec, clip, stats)
        kept = _same_object(inst, oid, instances, by_box, stats)
        if kept != oid:
            aliases[oid] = kept
        for merged in (obj.get("merged_object_ids") or ()) if isinstance(obj, dict) else ():
            aliases[str(merged)] = kept
    return instances, aliases


def _same_object(inst: Instance, oid: str, instances: dict[str, Instance],
                 by_box: dict[tuple[str, tuple[float, ...]], str], stats: ReadStats) -> str:
    """The id ``inst`` is known by in its image: an earlier object of the same name and identical box (v1.0 gives
    one object a new id per relationship), else its own id, which it is then recorded under."""
    if oid in instances:
        return oid
    key = (inst.category, inst.bbox)
    same = by_box.get(key)
    if same is not None:
        stats.objects_merged_by_box += 1
        return same
    instances[oid] = inst
    by_box[key] = oid
    return oid


def iter_visual_genome(
    relationships: str | Path,
    images_dir: str | Path,
    image_data: str | Path | None = None,
    objects: str | Path | None = None,
    *,
    resolve_files: bool = True,
    clip_boxes: bool = False,
    stats: ReadStats | None = None,
    missing_images: str = "fail",
) -> Iterator[ImageRecord]:
    """Yield one :class:`ImageRecord` per image entry of ``relationships``, in file order, streaming.

    ``resolve_files=False`` skips looking for image files (the record's ``file`` is then the bare name; callers
    resolve the few they use with :func:`find_image`); it needs ``image_data`` for the sizes. ``clip_boxes`` cuts
    boxes that stick out of their image (counted in ``stats``) instead of rejecting them. An image file that is
    not found is a :class:`SourceError` naming it (``missing_images="fail"``), or the image is left out, counted
    and its id kept in ``stats`` (``"skip"``: a partial download of the images).
    """
    path = Path(relationships)
    stats = stats if stats is not None else ReadStats()
    if missing_images not in ("fail", "skip"):
        raise ValueError(f"missing_images must be 'fail' or 'skip', not {missing_images!r}")
    if not resolve_files and image_data is None:
        raise SourceError(path, "", "image sizes need image_data.json when image files are not opened")
    meta = _image_data(image_data) if image_data is not None else None
    objects_stream = _ObjectsStream(Path(objects), iter_json_array(objects, what="objects file")) if objects is not None else None
    seen: dict[int | str, str] = {}
    predicates: dict[str, str] = {}
    """raw predicate -> normalised (a few thousand phrases repeat over millions of relationships)"""
    for i, entry in iter_json_array(path):
        rec = validate.label("", i)
        validate.expect_dict(entry, path, rec, "image entry")
        iid = validate.check_id(validate.require_any(entry, ("image_id", "id"), path, rec), path, rec, "image_id")
        rec = validate.label("", i, iid, "image_id")
        validate.claim_id(seen, iid, path, rec, "image id")
        info: dict = {}
        if meta is not None:
            if iid not in meta:
                raise SourceError(path, rec, f"image id {iid!r} not in {image_data}")
            info = meta[iid][1]
        url = info.get("url")
        name = posixpath.basename(url) if isinstance(url, str) and url.strip("/") else f"{iid}.jpg"
        found = find_image(images_dir, name, iid) if resolve_files else name
        if found is None and missing_images == "skip":
            stats.images_without_file += 1
            stats.image_ids_without_file.append(str(iid))
            rels = entry.get("relationships")
            stats.relationships_without_file += len(rels) if isinstance(rels, list) else 0
            if objects_stream is not None:
                objects_stream.take(iid)  # keeps the objects file in step
            continue
        file = found if found is not None else _find_image(images_dir, name, iid, path, rec)
        if "width" in info:
            width, height = int(info["width"]), int(info["height"])
        else:
            width, height = image_files.image_size_from_file(file, path, rec)

        instances: dict[str, Instance] = {}
        aliases: dict[str, str] = {}
        if objects_stream is not None:
            instances, aliases = _objects_of(objects_stream.take(iid), objects_stream.path, width, height,
                                             clip_boxes, stats)
            known = len(instances)
        by_box = {(inst.category, inst.bbox): oid for oid, inst in instances.items()}
        relations = []
        rels = validate.expect_list(validate.require_key(entry, "relationships", path, rec), path, rec, "'relationships'")
        for k, rel in enumerate(rels):
            try:
                raw_predicate = rel["predicate"]
                ends = (rel["subject"], rel["object"])
            except (KeyError, TypeError):
                rrec = f"{rec}.relationships[{k}]"
                validate.expect_dict(rel, path, rrec, "relationship")
                raw_predicate = validate.require_key(rel, "predicate", path, rrec)
                ends = (validate.require_key(rel, "subject", path, rrec), validate.require_key(rel, "object", path, rrec))
            predicate = predicates.get(raw_predicate) if type(raw_predicate) is str else None
            if predicate is None:
                validate.check_name(raw_predicate, path, f"{rec}.relationships[{k}]", "predicate")
                predicate = predicates[raw_predicate] = normalise_predicate(raw_predicate)
            ids = []
            for role, end in zip(("subject", "object"), ends):
                # an object repeats in every relationship it takes part in: a known id whose copy is well-formed
                # is not parsed again (its first copy was fully checked)
                known_id = end.get("object_id") if type(end) is dict else None
                if type(known_id) is int and str(known_id) in instances and _plausible_copy(end):
                    oid = str(known_id)
                else:
                    fast = _fast_object(end, width, height) if type(end) is dict else None
                    oid, inst = fast if fast is not None else _object(
                        end, width, height, path, f"{rec}.relationships[{k}].{role}", clip_boxes, stats)
                    oid = aliases.get(oid, oid)
                    if oid not in instances:
                        kept = _same_object(inst, oid, instances, by_box, stats)
                        if kept != oid:
                            aliases[oid] = kept
                            oid = kept
                        elif objects_stream is not None:
                            stats.endpoints_missing_from_objects += 1
                ids.append(oid)
            relations.append(Relation(ids[0], predicate, ids[1]))
        if objects_stream is not None:
            used = {r.subject for r in relations} | {r.object for r in relations}
            stats.objects_only_instances += sum(1 for oid in list(instances)[:known] if oid not in used)
        stats.images += 1
        stats.relationships += len(relations)
        coco_id = info.get("coco_id")
        if coco_id is not None:
            coco_id = str(validate.check_id(coco_id, Path(image_data), meta[iid][0], "coco_id"))  # type: ignore[arg-type,index]
        yield ImageRecord(
            id=str(iid), source=SOURCE, file=file, width=width, height=height,
            instances=tuple(instances.values()), relations=tuple(relations), coco_id=coco_id,
        )


def read_visual_genome(
    relationships: str | Path,
    images_dir: str | Path,
    image_data: str | Path | None = None,
    objects: str | Path | None = None,
) -> RecordSet:
    """Read VG relationships into a :class:`RecordSet` (boxes only: VG has no masks).

    Instances are the relationship subjects and objects (and, with ``objects``, every object of the image), one
    per ``object_id``, named by their (first) name in lower case; relations keep the file's order with
    predicates normalised (:func:`normalise_predicate`). Images are sorted by id. Raises :class:`SourceError` on bad input,
    including an image missing from ``image_data``.
    """
    images = list(iter_visual_genome(relationships, images_dir, image_data, objects))
    ordered = sorted(images, key=lambda im: validate.id_sort_key(int(im.id) if im.id.isdigit() else im.id))
    categories = sorted({inst.category for im in ordered for inst in im.instances})
    return RecordSet(
        source=SOURCE,
        path=str(relationships),
        categories=tuple(categories),
        images=tuple(ordered),
        license=DEFAULT_LICENSE,
    )
