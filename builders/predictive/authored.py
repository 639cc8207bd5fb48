"""Hand-made pattern entries (the paper's 100 authored entries, App. D.1): read and validated.

A JSONL file, one entry per line::

    {"id": "cube-shrinks", "images": ["cube/1.png", "cube/2.png", "cube/3.png", "cube/4.png"],
     "pattern": "Each of these four images has a blue cube in it. ...",
     "pred": "In the next image, the volume of the cube will be further reduced.",
     "dimension": "properties"}

``images`` are paths relative to the file (or absolute), 3 to 5 of them (the paper's range), each a readable
image; ``pattern`` and ``pred`` are the paper's two annotations (Fig. 6); ``id`` names the entry (unique);
``dimension`` (optional) is one of the four dimensions. Anything else is an error naming the file, line and key.
Two entries may not show the same images (by content, in order): an item is named by its images and question, so
they would be one item with two answers.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from builders.predictive.patterns.base import DIMENSIONS
from sources.errors import SourceError

MIN_IMAGES, MAX_IMAGES = 3, 5
KEYS = {"id", "images", "pattern", "pred", "dimension"}


@dataclass(frozen=True)
class AuthoredEntry:
    id: str
    images: tuple[Path, ...]
    written: tuple[str, ...]
    """The image paths as the file gives them (relative to it, or absolute), for the items' provenance."""
    pattern: str
    pred: str
    dimension: str
    line: int


def read_authored(path: str | Path) -> list[AuthoredEntry]:
    path = Path(path).expanduser()
    if not path.is_file():
        raise SourceError(path, "", "authored-entries file not found")
    out: list[AuthoredEntry] = []
    seen: dict[str, int] = {}
    shown: dict[str, str] = {}  # digest of an entry's images -> where it is
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not raw.strip():
            continue
        where = f"line {n}"
        try:
            rec = json.loads(raw)
        except ValueError as exc:
            raise SourceError(path, where, f"not valid JSON ({exc.msg})") from None
        if not isinstance(rec, dict):
            raise SourceError(path, where, "an entry must be a JSON object")
        entry_id = rec.get("id")
        if not isinstance(entry_id, str) or not entry_id.strip():
            raise SourceError(path, where, "'id' must be a non-empty string")
        where = f"line {n} (id={entry_id})"
        if entry_id in seen:
            raise SourceError(path, where, f"duplicate id (first on line {seen[entry_id]})")
        seen[entry_id] = n
        unknown = sorted(set(rec) - KEYS)
        if unknown:
            raise SourceError(path, where, f"unknown key(s) {', '.join(unknown)}; valid: {', '.join(sorted(KEYS))}")
        for key in ("pattern", "pred"):
            if not isinstance(rec.get(key), str) or not rec[key].strip():
                raise SourceError(path, where, f"'{key}' must be a non-empty string")
        images = rec.get("images")
        if not isinstance(images, list) or not all(isinstance(i, str) and i for i in images):
            raise SourceError(path, where, "'images' must be a list of image paths")
        if not MIN_IMAGES <= len(images) <= MAX_IMAGES:
            raise SourceError(path, where, f"{len(images)} images; an entry has {MIN_IMAGES} to {MAX_IMAGES}")
        files = tuple((path.parent / i).resolve() for i in images)
        for f in files:
            _check_image(path, where, f)
        dimension = rec.get("dimension", "")
        if dimension and dimension not in DIMENSIONS:
            raise SourceError(path, where, f"dimension {dimension!r} is not one of {', '.join(DIMENSIONS)}")
        digest = hashlib.sha256(b"".join(hashlib.sha256(f.read_bytes()).digest() for f in files)).hexdigest()
        if digest in shown:
            raise SourceError(path, where, f"the same images as {shown[digest]}: the two would be one item")
        shown[digest] = where
        out.append(AuthoredEntry(entry_id, files, tuple(images), rec["pattern"].strip(), rec["pred"].strip(),
                                 dimension, n))
    if not out:
        raise SourceError(path, "", "no entries")
    return out


def _check_image(path: Path, where: str, image: Path) -> None:
    if not image.is_file():
        raise SourceError(path, where, f"image {image} not found")
    try:
        with Image.open(image) as img:
            img.verify()
    except (OSError, ValueError) as exc:
        raise SourceError(path, where, f"image {image} is not a readable image ({type(exc).__name__})") from None
