"""Reader of Visual Genome (Krishna et al. 2017) ``relationships.json``, with ``image_data.json`` optional.

``relationships.json`` is an array of ``{"image_id", "relationships": [...]}``; each relationship has a
``predicate`` and ``subject``/``object`` objects carrying ``object_id``, ``name`` (v1.2) or ``names`` (a list,
v1.4) and a box as ``x``, ``y``, ``w``, ``h``. An object appears once per relationship it takes part in, so
instances are deduplicated by ``object_id``. ``image_data.json`` gives each image's ``width``, ``height`` and
``url``; without it the sizes are read from the image headers. Images are looked for at
``images_dir/<name>``, then ``images_dir/VG_100K/<name>`` and ``images_dir/VG_100K_2/<name>`` (the two folders
of the official download), where ``<name>`` is the URL's last component or ``<image_id>.jpg``.
"""

from __future__ import annotations

import os
import posixpath
from pathlib import Path
from typing import Any

from sources import jsonio
from sources.errors import SourceError
from sources.records import ImageRecord, Instance, RecordSet, Relation

SOURCE = "visual_genome"
DEFAULT_LICENSE = "CC BY 4.0 (Visual Genome annotations and images)"
IMAGE_SUBFOLDERS = ("", "VG_100K", "VG_100K_2")
"""Where, under ``images_dir``, an image is looked for, in order."""


def _image_data(path: str | Path) -> dict[int | str, tuple[str, dict]]:
    """``{image id: (record label, entry)}`` from ``image_data.json``."""
    p = Path(path)
    data = jsonio.load_json(p, "image data file")
    jsonio.expect_list(data, p, "", "top level")
    out: dict[int | str, tuple[str, dict]] = {}
    seen: dict[int | str, str] = {}
    for i, entry in enumerate(data):
        rec = jsonio.label("", i)
        jsonio.expect_dict(entry, p, rec)
        iid = jsonio.check_id(jsonio.require_any(entry, ("image_id", "id"), p, rec), p, rec, "image_id")
        rec = jsonio.label("", i, iid, "image_id")
        jsonio.claim_id(seen, iid, p, rec, "image id")
        jsonio.check_size(jsonio.require_key(entry, "width", p, rec), jsonio.require_key(entry, "height", p, rec), p, rec)
        out[iid] = (rec, entry)
    return out


def _find_image(images_dir: str | Path, name: str, file: Path, rec: str) -> str:
    for sub in IMAGE_SUBFOLDERS:
        candidate = jsonio.image_path(Path(images_dir, sub) if sub else images_dir, name)
        if os.path.isfile(candidate):
            return candidate
    return jsonio.check_image_file(jsonio.image_path(images_dir, name), file, rec)  # raises, naming the first


def _object(
    obj: Any, width: int, height: int, file: Path, rec: str
) -> tuple[str, Instance]:
    jsonio.expect_dict(obj, file, rec)
    oid = jsonio.check_id(jsonio.require_any(obj, ("object_id", "id"), file, rec), file, rec, "object_id")
    if "name" in obj:
        name = jsonio.check_name(obj["name"], file, rec)
    else:
        names = jsonio.expect_list(jsonio.require_any(obj, ("name", "names"), file, rec), file, rec, "'names'")
        if not names:
            raise SourceError(file, rec, "'names' is empty")
        name = jsonio.check_name(names[0], file, rec, "names")
    box = [jsonio.require_key(obj, k, file, rec) for k in ("x", "y", "w", "h")]
    bbox = jsonio.check_bbox(box, width, height, file, rec, key="x, y, w, h")
    attrs = obj.get("attributes") or ()
    attributes = tuple(sorted({jsonio.normalise_text(a) for a in attrs if isinstance(a, str) and a.strip()}))
    inst = Instance(
        id=str(oid), category=jsonio.normalise_text(name), bbox=bbox, area=bbox[2] * bbox[3], attributes=attributes
    )
    return str(oid), inst


def read_visual_genome(
    relationships: str | Path, images_dir: str | Path, image_data: str | Path | None = None
) -> RecordSet:
    """Read VG relationships into a :class:`RecordSet` (boxes only: VG has no masks).

    Instances are the relationship subjects and objects, one per ``object_id``, named by their (first) name in
    lower case; relations keep the file's order with predicates lower-cased and single-spaced. Images are
    sorted by id. Raises :class:`SourceError` on bad input, including an image missing from ``image_data``.
    """
    path = Path(relationships)
    data = jsonio.load_json(path)
    jsonio.expect_list(data, path, "", "top level")
    meta = _image_data(image_data) if image_data is not None else None

    images: dict[int | str, ImageRecord] = {}
    seen: dict[int | str, str] = {}
    for i, entry in enumerate(data):
        rec = jsonio.label("", i)
        jsonio.expect_dict(entry, path, rec, "image entry")
        iid = jsonio.check_id(jsonio.require_any(entry, ("image_id", "id"), path, rec), path, rec, "image_id")
        rec = jsonio.label("", i, iid, "image_id")
        jsonio.claim_id(seen, iid, path, rec, "image id")
        info: dict = {}
        if meta is not None:
            if iid not in meta:
                raise SourceError(path, rec, f"image id {iid!r} not in {image_data}")
            info = meta[iid][1]
        url = info.get("url")
        name = posixpath.basename(url) if isinstance(url, str) and url.strip("/") else f"{iid}.jpg"
        file = _find_image(images_dir, name, path, rec)
        if "width" in info:
            width, height = jsonio.check_size(info["width"], info["height"], path, rec)
        else:
            width, height = jsonio.image_size_from_file(file, path, rec)

        instances: dict[str, Instance] = {}
        relations = []
        rels = jsonio.expect_list(jsonio.require_key(entry, "relationships", path, rec), path, rec, "'relationships'")
        for k, rel in enumerate(rels):
            rrec = f"{rec}.relationships[{k}]"
            jsonio.expect_dict(rel, path, rrec, "relationship")
            predicate = jsonio.normalise_text(
                jsonio.check_name(jsonio.require_key(rel, "predicate", path, rrec), path, rrec, "predicate")
            )
            ends = []
            for role in ("subject", "object"):
                oid, inst = _object(jsonio.require_key(rel, role, path, rrec), width, height, path, f"{rrec}.{role}")
                instances.setdefault(oid, inst)
                ends.append(oid)
            relations.append(Relation(subject=ends[0], predicate=predicate, object=ends[1]))
        images[iid] = ImageRecord(
            id=str(iid),
            source=SOURCE,
            file=file,
            width=width,
            height=height,
            instances=tuple(instances.values()),
            relations=tuple(relations),
        )

    ordered = [images[k] for k in sorted(images, key=jsonio.id_sort_key)]
    categories = sorted({inst.category for im in ordered for inst in im.instances})
    return RecordSet(
        source=SOURCE,
        path=str(relationships),
        categories=tuple(categories),
        images=tuple(ordered),
        license=DEFAULT_LICENSE,
    )
