"""A small Visual Genome corpus in the real layouts (v1.0, v1.2, v1.4) for Reefknot builds.

Twelve scenes repeat a few people, animals and things in fixed places (boxes drawn in JPEG files under
``VG_100K/`` and ``VG_100K_2/``), with perceptive relations ("left of", "on", "near", ...) and cognitive ones
("holding", "riding", "watching", ...). The layouts differ as the releases do: v1.0 names the image ``id``,
v1.2 gives endpoints a ``name``, v1.4 ``names`` lists; predicates come in mixed case with trailing spaces;
``synsets`` are sometimes empty; one endpoint is missing from ``objects.json``; one image has two dogs. As in
the real v1.0 file, v1.0 gives an object a new id in every relationship it takes part in (same name, same box).

``raw=True`` writes v1.0 as the real file is written beyond its layout (issue 53): predicates with a copula, a
trailing article and doubled words ("is ON the", "is is left of the the", "are riding"), and URLs naming the even
images ``img_<id>.jpg`` while the files, as in the Visual Genome archives, are ``<id>.jpg``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

WIDTH, HEIGHT = 400, 300
PLACES = {
    "man": (10, 40, 70, 200),
    "woman": (10, 40, 70, 200),
    "horse": (150, 120, 160, 120),
    "dog": (320, 220, 60, 60),
    "frisbee": (330, 20, 50, 40),
    "table": (150, 170, 160, 100),
    "cup": (200, 120, 40, 45),
    "bench": (120, 230, 100, 60),
    "cat": (260, 30, 60, 60),
    "book": (90, 10, 50, 30),
}
SCENES: list[list[tuple[str, str, str]]] = [
    [("man", "riding", "horse"), ("man", "left of", "horse"), ("dog", "near", "horse")],
    [("woman", "Holding ", "cup"), ("cup", "ON", "table"), ("woman", "left of", "table")],
    [("man", "watching", "dog"), ("dog", "catching", "frisbee"), ("frisbee", "above", "dog")],
    [("woman", "riding", "horse"), ("horse", "next to", "bench"), ("cat", "right of", "horse")],
    [("man", "holding", "book"), ("cat", "on", "table"), ("cat", "watching", "cup")],
    [("woman", "watching", "cat"), ("dog", "under", "frisbee"), ("man", "left of", "bench")],
    [("man", "eating", "cup"), ("cup", "on", "table"), ("book", "above", "table")],
    [("woman", "feeding", "horse"), ("horse", "on", "bench"), ("dog", "right of", "bench")],
    [("man", "sitting on", "bench"), ("cat", "above", "horse"), ("woman", "holding", "frisbee")],
    [("dog", "chasing", "cat"), ("dog", "below", "cat"), ("frisbee", "near", "cat")],
    [("woman", "eating", "cup"), ("cup", "near", "table"), ("woman", "left of", "horse")],
    [("man", "feeding", "dog"), ("dog", "right of", "table"), ("dog", "chasing", "frisbee")],
]
TWO_DOGS_IMAGE = 12
"""Image 12 also holds a second dog (in objects.json only): its dog triplets have an unclear reference."""


RAW_PREDICATE = ("is {} the", "is is {} the the", "are {}")
"""How ``raw=True`` writes the k-th predicate of a scene (k modulo 3)."""


def make_vg(directory: Path, version: str = "1.4", raw: bool = False) -> dict[str, Path]:
    """Write ``relationships.json``, ``objects.json``, ``image_data.json`` and images; returns their paths."""
    directory = Path(directory)
    images = directory / "images"
    rel_data, obj_data, image_data = [], [], []
    next_id = 1000
    for n, scene in enumerate(SCENES, start=1):
        ids: dict[str, int] = {}
        objects: list[dict[str, Any]] = []
        for s, _, o in scene:
            for name in (s, o):
                if name not in ids:
                    ids[name] = next_id
                    next_id += 1
                    objects.append(_obj(ids[name], name, version))
        if n == TWO_DOGS_IMAGE:
            objects.append({**_obj(next_id, "dog", version), "x": 5, "y": 5, "w": 40, "h": 40})
            next_id += 1
        rels = []
        for k, (s, p, o) in enumerate(scene):
            ends = []
            for name in (s, o):
                ends.append(next_id if version == "1.0" else ids[name])
                next_id += version == "1.0"
            rels.append(
                {
                    "relationship_id": n * 100 + k,
                    "predicate": RAW_PREDICATE[k % 3].format(p) if raw else p,
                    "synsets": [] if k % 2 else ["along.r.01"],
                    "subject": _obj(ends[0], s, version, k),
                    "object": _obj(ends[1], o, version, k + 1),
                }
            )
        key = "id" if version == "1.0" else "image_id"
        rel_data.append({key: n, "relationships": rels})
        if n == 3:
            objects = objects[:-1]  # the frisbee of image 3 is only a relationship endpoint
        obj_data.append({key: n, "objects": objects})
        folder = "VG_100K_2" if n % 2 == 0 else "VG_100K"
        image_data.append(
            {
                key: n,
                "width": WIDTH,
                "height": HEIGHT,
                "coco_id": None,
                "flickr_id": None,
                "url": f"https://cs.stanford.edu/people/rak248/{folder}/{'img_' if raw and n % 2 == 0 else ''}{n}.jpg",
            }
        )
        _draw(images / folder / f"{n}.jpg", [o for o in objects])
    paths = {}
    for name, data in (("relationships", rel_data), ("objects", obj_data), ("image_data", image_data)):
        paths[name] = directory / f"{name}.json"
        paths[name].write_text(json.dumps(data))
    paths["images"] = images
    return paths


def _obj(oid: int, name: str, version: str, variant: int = 0) -> dict[str, Any]:
    x, y, w, h = PLACES[name]
    shown = name.capitalize() if variant % 3 == 2 else name
    out: dict[str, Any] = {
        "object_id": oid,
        "x": x,
        "y": y,
        "w": w,
        "h": h,
        "synsets": [] if variant % 2 else [f"{name}.n.01"],
    }
    if version == "1.4":
        out["names"] = [shown]
    else:
        out["name"] = shown
    if version == "1.0":
        out["id"] = out.pop("object_id")
    return out


def _draw(path: Path, objects: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    im = Image.new("RGB", (WIDTH, HEIGHT), (210, 210, 210))
    draw = ImageDraw.Draw(im)
    for k, o in enumerate(objects):
        draw.rectangle(
            [o["x"], o["y"], o["x"] + o["w"] - 1, o["y"] + o["h"] - 1], outline=(40 * k % 255, 80, 160), width=3
        )
    im.save(path, quality=90)
