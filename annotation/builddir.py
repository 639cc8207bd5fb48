"""Reading a build dir (``builds/<benchmark>/<name>/``) and writing the review beside it."""

from __future__ import annotations

import glob
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from annotation.config import MAX_IMAGES
from annotation.errors import AnnotationError
from builders.items import Item
from sources import atomic


@dataclass(frozen=True)
class Build:
    path: Path
    meta: dict[str, Any]
    items: list[Item]

    @property
    def label(self) -> str:
        return f"{self.meta.get('benchmark', '?')}/{self.meta.get('name', self.path.name)}"


def read_json(path: Path) -> Any:
    """The JSON in the file at ``path``; a file that is not JSON is one :class:`AnnotationError` naming it."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AnnotationError(f"{path}: not valid JSON ({exc})") from None


def load_build(path: str | os.PathLike) -> Build:
    """A build dir's ``build.json`` and ``items.jsonl``; one-line errors for what is missing or malformed."""
    root = Path(path)
    if not root.is_dir():
        unfinished = root.parent.is_dir() and any(root.parent.glob(glob.escape(root.name) + ".partial*"))
        hint = " (an unfinished build?)" if unfinished else ""
        raise AnnotationError(f"{root}: no such build directory{hint}")
    meta_path = root / "build.json"
    items_path = root / "items.jsonl"
    for p in (meta_path, items_path):
        if not p.is_file():
            raise AnnotationError(f"{p}: missing; is {root} a Mirage build directory?")
    meta = read_json(meta_path)
    if not isinstance(meta, dict):
        raise AnnotationError(f"{meta_path}: expected a JSON object")
    items: list[Item] = []
    seen: set[str] = set()
    with open(items_path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                item = Item.from_dict(json.loads(line))
            except (ValueError, KeyError, TypeError) as exc:
                raise AnnotationError(f"{items_path}: line {n}: not a valid item ({exc})") from None
            if item.id in seen:
                raise AnnotationError(f"{items_path}: line {n}: duplicate item id {item.id}")
            if not 1 <= len(item.images) <= MAX_IMAGES:
                raise AnnotationError(
                    f"{items_path}: line {n} (item {item.id}): {len(item.images)} images, expected 1 to {MAX_IMAGES}"
                )
            seen.add(item.id)
            items.append(item)
    return Build(root.resolve(), meta, items)


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder, so readers never see half a file."""
    atomic.write_atomic(path, data)
