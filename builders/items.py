"""The item every benchmark emits, and its one canonical JSON form.

An item is one question put to a model: images, optional context, question, options and the expected answer.
Its ``id`` is a hash of what a model sees (benchmark, task, images, context, question, options), so the same
question gets the same id in every build and a re-push to Label Studio or a re-release can recognise it.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field, fields
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping

from builders.semantics import format as semantics
from builders.semantics.format import OPTION_LETTERS  # noqa: F401 - the letters, where builders have read them
from sources.errors import SourceError
from sources.jsonio import decode_problem, parse_json


@dataclass(frozen=True)
class Item:
    """One benchmark question. See ``docs/architecture.md`` ("The item")."""

    id: str
    benchmark: str
    task: str
    question_type: str
    pressure: str
    images: tuple[str, ...]
    question: str
    options: tuple[str, ...]
    answer: str
    """An option letter for MCQ, ``"yes"``/``"no"`` for yes/no items, the reference text for open answers."""
    context: str = ""
    provenance: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        """The canonical one-line JSON form (sorted keys, UTF-8): byte-identical for equal items.

        Made once and kept with the item (its fields are frozen, and a provenance is never changed in place): a
        worker process that made the item makes its text too, and the text travels with it (MIOH's draw), so
        the build's own process only writes it."""
        text = self.__dict__.get("_json")
        if text is None:
            # a shallow field dict: json.dumps walks nested values itself (asdict's deep copy cost ~1 ms per item)
            text = canonical_json({f.name: getattr(self, f.name) for f in fields(self)})
            object.__setattr__(self, "_json", text)
        return text

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Item":
        """Inverse of :meth:`to_json` after ``json.loads``."""
        return cls(
            id=data["id"],
            benchmark=data["benchmark"],
            task=data["task"],
            question_type=data["question_type"],
            pressure=data["pressure"],
            images=tuple(data["images"]),
            question=data["question"],
            options=tuple(data["options"]),
            answer=data["answer"],
            context=data.get("context", ""),
            provenance=data.get("provenance", {}),
        )

    @property
    def answer_text(self) -> str:
        """The text of the correct option (the answer itself for yes/no and open items, and for an answer that
        names none of the options): :func:`builders.semantics.format.answer_text`."""
        return semantics.answer_text(self)


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no insignificant whitespace, so equal values give equal bytes."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def item_id(
    benchmark: str,
    task: str,
    images: Iterable[str],
    question: str,
    options: Iterable[str],
    context: str = "",
) -> str:
    """A stable id: the first 16 hex digits of the SHA-256 of what a model is shown.

    Image *names* (not directories) enter the hash, so a build moved elsewhere keeps its ids.
    """
    payload = canonical_json(
        [benchmark, task, [image_name(p) for p in images], context, question, list(options)]
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


@lru_cache(maxsize=1 << 16)
def image_name(path: str) -> str:
    """``Path(path).name``, remembered: a build names the same image files in many items, and parsing each path
    into a :class:`Path` was a noticeable share of drawing a paper-scale build's questions and of its lint. Where
    ``/`` is the only separator, a name is the text after the last one (``Path`` agrees unless the path ends in
    ``/`` or ``/.``, which it also asks)."""
    if isinstance(path, str) and _SLASH_ONLY:
        tail = path.rpartition("/")[2]
        if tail and tail != ".":
            return tail
    return Path(path).name


_SLASH_ONLY = os.sep == "/" and os.altsep is None


def make_item(
    *,
    benchmark: str,
    task: str,
    question_type: str,
    pressure: str,
    images: Iterable[str],
    question: str,
    options: Iterable[str],
    answer: str,
    context: str = "",
    provenance: Mapping[str, Any] | None = None,
) -> Item:
    """Build an :class:`Item` with its id computed from its content."""
    images = tuple(images)
    options = tuple(options)
    return Item(
        id=item_id(benchmark, task, images, question, options, context),
        benchmark=benchmark,
        task=task,
        question_type=question_type,
        pressure=pressure,
        images=images,
        question=question,
        options=options,
        answer=answer,
        context=context,
        provenance=dict(provenance or {}),
    )


def read_items(path: str | Path) -> list[Item]:
    """Read an ``items.jsonl`` file (through orjson: a paper-scale build's 20,000 items are parsed for its lint in
    about half the time ``json`` takes).

    A line that is not an item raises a :class:`SourceError` naming the file's line (a truncated file is
    reported at its last line, not at "line 1" of the JSON document the line is); an unreadable file raises
    ``OSError`` as ``open`` does."""
    path = Path(path)
    items = []
    for number, line in enumerate(path.read_bytes().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            data = parse_json(line)
        except json.JSONDecodeError as exc:
            raise SourceError(path, f"line {number}", decode_problem(exc, with_line=False)) from None
        except UnicodeDecodeError as exc:
            raise SourceError(path, f"line {number}", f"not UTF-8 text (byte {exc.start} of the line)") from None
        if not isinstance(data, dict):
            raise SourceError(path, f"line {number}", f"not an item: a JSON {type(data).__name__}, expected an "
                                                      "object")
        try:
            items.append(Item.from_dict(data))
        except KeyError as exc:
            raise SourceError(path, f"line {number}", f"not an item: no {exc.args[0]!r} field") from None
        except TypeError as exc:
            raise SourceError(path, f"line {number}", f"not an item: {exc}") from None
    return items


def write_items(path: str | Path, items: Iterable[Item]) -> int:
    """Write items sorted by id, one canonical JSON line each; returns how many were written."""
    ordered = sorted(items, key=lambda it: it.id)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for it in ordered:
            fh.write(it.to_json())
            fh.write("\n")
    return len(ordered)
