"""The checks of the records and fields of the real-format readers (COCO, PACO, SVG, Visual Genome, ...).

Every reader validates as it reads and reports the first problem as a :class:`~sources.errors.SourceError`
naming the file, the record inside it and what is wrong. The checks are the same from one format to the next
(a box is four numbers inside the image, an id is an int or a string, ...), so they live here once instead of
being copied into every reader, and their messages read alike whichever file a user got wrong.
"""

from __future__ import annotations

import math
from itertools import repeat
from pathlib import Path
from typing import Any, Mapping, Sequence

from sources.errors import SourceError
from sources.records import BBox

BOX_TOLERANCE = 1.0
"""How far (pixels) a box may stick out of its image before it is an error: annotation tools round."""

NUMBER_TYPES = frozenset((int, float))
"""The exact types of a JSON number once decoded (a JSON boolean, a Python ``bool``, is not one)."""


def label(section: str, index: int, record_id: Any = None, id_key: str = "id") -> str:
    """The name of a record in error messages, e.g. ``annotations[3] (id=17)``."""
    if record_id is None:
        return f"{section}[{index}]"
    return f"{section}[{index}] ({id_key}={record_id!r})" if isinstance(record_id, str) else (
        f"{section}[{index}] ({id_key}={record_id})"
    )


def type_name(value: Any) -> str:
    """JSON's name for the type of a decoded value (what a user sees in the file)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def expect_list(value: Any, file: str | Path, record: str, what: str) -> list:
    """``value`` when it is a JSON array."""
    if not isinstance(value, list):
        raise SourceError(file, record, f"{what} must be an array, got {type_name(value)}")
    return value


def expect_dict(value: Any, file: str | Path, record: str, what: str = "record") -> dict:
    """``value`` when it is a JSON object."""
    if not isinstance(value, dict):
        raise SourceError(file, record, f"{what} must be an object, got {type_name(value)}")
    return value


def require_key(obj: Mapping[str, Any], key: str, file: str | Path, record: str) -> Any:
    """``obj[key]``; a missing key is an error naming the key."""
    try:
        return obj[key]
    except KeyError:
        raise SourceError(file, record, f"missing required key {key!r}") from None


def column_of(records: Sequence[dict[str, Any]], key: str) -> list[Any]:
    """``record.get(key)`` of every record (``None`` where missing), looked up in C."""
    return list(map(dict.get, records, repeat(key)))


def first_key(obj: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    """The first of ``keys`` present in ``obj`` (formats spell the same field several ways)."""
    for key in keys:
        if key in obj:
            return key
    return None


def require_any(obj: Mapping[str, Any], keys: Sequence[str], file: str | Path, record: str) -> Any:
    """The value of the first of ``keys`` present in ``obj``; none present is an error listing them."""
    key = first_key(obj, keys)
    if key is None:
        spelled = " or ".join(repr(k) for k in keys)
        raise SourceError(file, record, f"missing required key {spelled}")
    return obj[key]


def check_id(value: Any, file: str | Path, record: str, key: str = "id") -> int | str:
    """An identifier: a JSON integer or a non-empty string (never a boolean or a float)."""
    if type(value) is int or (type(value) is str and value):
        return value
    raise SourceError(file, record, f"{key!r} must be an integer or a non-empty string, got {value!r}")


def check_name(value: Any, file: str | Path, record: str, key: str = "name") -> str:
    """A non-empty string label."""
    if type(value) is str and value.strip():
        return value
    raise SourceError(file, record, f"{key!r} must be a non-empty string, got {value!r}")


def is_number(value: Any) -> bool:
    """A finite JSON number (booleans are not numbers here)."""
    t = type(value)
    return (t is int or t is float) and math.isfinite(value)


def claim_id(seen: dict[Any, str], key: Any, file: str | Path, record: str, what: str = "id") -> None:
    """Record that ``record`` uses id ``key``; an id already in ``seen`` is an error naming both records."""
    first = seen.get(key)
    if first is not None:
        raise SourceError(file, record, f"duplicate {what} {key!r} (first used by {first})")
    seen[key] = record


def normalise_text(text: str) -> str:
    """Lower case with single spaces: ``"Left  Of "`` -> ``"left of"`` (predicates, free-form object names)."""
    return " ".join(text.lower().split())


def id_sort_key(value: Any) -> tuple[int, Any]:
    """Sort integers numerically and before strings, so mixed id types still sort deterministically."""
    return (0, value, "") if type(value) is int else (1, 0, str(value))


def check_size(width: Any, height: Any, file: str | Path, record: str) -> tuple[int, int]:
    """Image width and height: positive integers (``640.0`` is accepted, ``640.5`` is not)."""
    for key, v in (("width", width), ("height", height)):
        if not is_number(v) or v != int(v):
            raise SourceError(file, record, f"{key!r} must be an integer, got {v!r}")
        if v <= 0:
            raise SourceError(file, record, f"{key!r} must be positive, got {v!r}")
    return int(width), int(height)


def check_bbox(
    bbox: Any,
    width: int,
    height: int,
    file: str | Path,
    record: str,
    key: str = "bbox",
    tolerance: float = BOX_TOLERANCE,
) -> BBox:
    """A box ``(x, y, w, h)``: four numbers, positive size, inside the image up to ``tolerance`` pixels."""
    if (
        type(bbox) not in (list, tuple)
        or len(bbox) != 4
        or not set(map(type, bbox)) <= NUMBER_TYPES
        or not math.isfinite(sum(bbox))
    ):
        raise SourceError(file, record, f"{key!r} must be 4 numbers [x, y, w, h], got {bbox!r}")
    x, y, w, h = bbox
    if w <= 0 or h <= 0:
        raise SourceError(file, record, f"{key!r} {list(bbox)} has non-positive size (w={w}, h={h})")
    if x < -tolerance or y < -tolerance or x + w > width + tolerance or y + h > height + tolerance:
        raise SourceError(
            file, record, f"{key!r} {list(bbox)} lies outside the {width}x{height} image"
        )
    return (float(x), float(y), float(w), float(h))
