"""Loading and validation helpers shared by the real-format readers (COCO, PACO, SVG, Visual Genome).

Every reader validates as it reads and reports the first problem as a :class:`~sources.errors.SourceError`
naming the file, the record inside it and what is wrong. The checks are the same from one format to the next
(a box is four numbers inside the image, an id is an int or a string, ...), so they live here once instead of
being copied into every reader, and their messages read alike whichever file a user got wrong.

The helpers are written for the scale of the real files (COCO train: 118k images, 860k annotations): no mask
is decoded, polygon masks are converted to RLE only when a mask is read (:class:`PolygonRLE`), and an image
file is opened for its header only.
"""

from __future__ import annotations

import json
import math
import os
import re
from itertools import chain, repeat
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from sources.errors import SourceError
from sources.records import BBox

BOX_TOLERANCE = 1.0
"""How far (pixels) a box may stick out of its image before it is an error: annotation tools round."""

JSONL_SUFFIXES = (".jsonl", ".ndjson")
"""File name endings read as JSON lines (one JSON value per line)."""


# ---------------------------------------------------------------------------------------------------------------
# Files


def require_file(path: str | Path, what: str = "file") -> Path:
    """``path`` as a :class:`Path` when it is an existing regular file; a :class:`SourceError` otherwise."""
    p = Path(path)
    if not p.exists():
        raise SourceError(p, "", f"{what} not found")
    if p.is_dir():
        raise SourceError(p, "", f"{what} is a directory, expected a file")
    return p


def _read_bytes(path: Path) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as e:  # permissions, a broken link, ...
        raise SourceError(path, "", f"cannot read file: {e.strerror or e}") from e
    if not data.strip():
        raise SourceError(path, "", "file is empty")
    return data


def read_text(path: Path) -> str:
    """The whole of a UTF-8 text file (a byte-order mark, which spreadsheet programs write, is dropped); an
    unreadable or undecodable file raises :class:`SourceError` (the CSV readers: Charades, NExT-QA)."""
    try:
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        raise SourceError(path, "", f"not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise SourceError(path, "", f"cannot read file: {e.strerror or e}") from e


_JSON_MESSAGES = {
    # json's messages that expect the position after them ("... starting at"), as whole sentences
    "Unterminated string starting at": "a string starts here and is never closed",
    "Invalid control character at": "a raw control character (line break, tab) inside a string; write it as "
                                    "\\n or \\t",
    "Extra data": "more text after the end of the JSON value",
}


def decode_problem(e: json.JSONDecodeError, *, with_line: bool = True) -> str:
    """``malformed JSON at line L, column C: <what>`` as a complete sentence; a document that ends before
    the JSON does (a cut download) says so."""
    where = f"line {e.lineno}, column {e.colno}" if with_line else f"column {e.colno}"
    problem = _JSON_MESSAGES.get(e.msg, e.msg[:1].lower() + e.msg[1:])
    doc = e.doc.decode("utf-8", "replace") if isinstance(e.doc, bytes) else e.doc
    if e.msg.startswith("Unterminated string"):
        problem += " (is the file truncated?)"
    elif e.pos >= len(doc.rstrip()):
        problem += ", but the text ends here (is the file truncated?)"
    return f"malformed JSON at {where}: {problem}"


def parse_json(data: bytes | str) -> Any:
    """``json.loads(data)``, through orjson when it is installed (a dependency; about a fifth faster on a
    COCO-train-sized file). Whatever orjson refuses is handed to json, which accepts what it accepts (``NaN``,
    ``1e400``, lone surrogate escapes, integers beyond 64 bits) and words a real syntax error with its line.
    Both give the same values for what both accept (:func:`builders.items.read_items` reads items with it)."""
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is a dependency
        return json.loads(data)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)


def load_json(path: str | Path, what: str = "annotation file") -> Any:
    """Parse a whole JSON file; missing, empty, undecodable or malformed files raise :class:`SourceError`.

    A syntax error is reported with its line and column, which is what a user needs to open the file there.
    """
    p = require_file(path, what)
    return _parse_file(p, _read_bytes(p))


POLYGON_SEGMENTATION = re.compile(rb'"segmentation"\s*:\s*\[[\[\]0-9eE+\-.,\s]*\]')
"""A ``"segmentation"`` key with polygons: a list of nothing but brackets, numbers, commas and white space (an
RLE, an object, does not match). In valid JSON a quoted word followed by a colon is always a key."""


def load_json_without_polygons(path: str | Path, what: str = "annotation file") -> Any:
    """:func:`load_json` with every polygon ``segmentation`` read as ``null``, for readers that need the
    annotations' ids and not their masks (:func:`sources.absence.read_coco_presence`).

    Why: polygons are about half of a COCO-train-sized file and most of its parse time (docs/scale.md). Polygons
    are not validated here; a file whose shortened text does not parse is parsed whole, so an error is reported
    where it is in the file.
    """
    p = require_file(path, what)
    data = _read_bytes(p)
    try:
        return parse_json(POLYGON_SEGMENTATION.sub(b'"segmentation":null', data))
    except ValueError:  # json's and orjson's decode errors, UnicodeDecodeError: reported on the whole text
        return _parse_file(p, data)


def _parse_file(p: Path, data: bytes) -> Any:
    """:func:`parse_json` of the bytes of file ``p``, a decoding problem raised as a :class:`SourceError` naming it."""
    try:
        return parse_json(data)
    except json.JSONDecodeError as e:
        raise SourceError(p, "", decode_problem(e)) from None
    except UnicodeDecodeError as e:
        raise SourceError(p, "", f"not UTF-8 text (byte {e.start})") from None


def iter_jsonl(path: str | Path, what: str = "annotation file") -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for every non-blank line of a JSON-lines file (line numbers start at 1)."""
    p = require_file(path, what)
    data = _read_bytes(p)
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, parse_json(line)
        except json.JSONDecodeError as e:
            raise SourceError(p, f"line {number}", decode_problem(e, with_line=False)) from None
        except UnicodeDecodeError as e:
            raise SourceError(p, f"line {number}", f"not UTF-8 text (byte {e.start})") from None


def parse_embedded_json(text: str, file: str | Path, record: str, key: str) -> Any:
    """Parse a JSON document stored as a string field (SVG keeps each scene graph that way)."""
    try:
        return parse_json(text)
    except json.JSONDecodeError as e:
        raise SourceError(file, record, f"{key!r} holds malformed JSON ({decode_problem(e)})") from None


# ---------------------------------------------------------------------------------------------------------------
# Records and fields


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


_NUMBER_TYPES = frozenset((int, float))  # exact types: a JSON boolean is not a number


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


# ---------------------------------------------------------------------------------------------------------------
# Images, sizes and boxes


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
        or not set(map(type, bbox)) <= _NUMBER_TYPES
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


def image_path(images_dir: str | Path, name: str) -> str:
    """``images_dir/name`` as joined, neither resolved nor absolutised, so builds stay reproducible."""
    return str(Path(images_dir) / name)


def image_paths(images_dir: str | Path) -> Callable[[str], str]:
    """:func:`image_path` in ``images_dir`` for many names: a plain file name is appended to the folder's path,
    which is what :class:`pathlib.Path` gives it, without building a path object per image (a COCO-train-sized
    file names 118,000); any other name (``a/b.jpg``, ``.``, ...) goes through :func:`image_path`."""
    folder = str(Path(images_dir))
    prefix = "" if folder == "." else folder if folder.endswith("/") else folder + "/"  # "/" and "//" end in one

    def join(name: str) -> str:
        if "/" in name or name in ("", ".", ".."):
            return image_path(images_dir, name)
        return prefix + name

    return join


def check_image_file(path: str, file: str | Path, record: str) -> str:
    """``path`` when an image file exists there (a cheap ``stat``; the image is not opened)."""
    if not os.path.isfile(path):
        raise SourceError(file, record, f"image file not found: {path}")
    return path


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_JPEG_FRAME_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}  # SOF0..SOF15 (not DHT, JPG, DAC)


def header_size(path: str) -> tuple[int, int] | None:
    """``(width, height)`` from a PNG's IHDR or a JPEG's frame header, read with a few small reads; ``None``
    for anything else or anything unexpected (the caller asks PIL then).

    Why: a COCO-train-sized source checks 118,000 image headers, and ``PIL.Image.open`` (plugin lookup, object
    set-up) costs many times these few reads of the same header fields (docs/scale.md)."""
    # non-blocking: a FIFO or device where an image should be reads empty here instead of waiting for a writer;
    # positioned reads on the bare descriptor: a file object's set-up cost as much as the reads
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        head = os.pread(fd, 26, 0)
        if head[:8] == _PNG_SIGNATURE and head[12:16] == b"IHDR":
            return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
        if head[:2] != b"\xff\xd8":
            return None
        offset = 2
        for _ in range(256):  # markers before the frame header: APPn, DQT, DHT, COM, ...
            marker = os.pread(fd, 9, offset)  # a marker, its length, and a frame header's first five bytes
            if len(marker) < 4 or marker[0] != 0xFF:
                return None
            kind, length = marker[1], int.from_bytes(marker[2:4], "big")
            if kind in _JPEG_FRAME_MARKERS:
                if len(marker) < 9:
                    return None
                return int.from_bytes(marker[7:9], "big"), int.from_bytes(marker[5:7], "big")
            if length < 2 or kind == 0xD9:
                return None
            offset += 2 + length
    finally:
        os.close(fd)
    return None


def image_size_from_file(path: str, file: str | Path, record: str) -> tuple[int, int]:
    """``(width, height)`` read from the image header only (PNG and JPEG parsed here, other formats by PIL)."""
    from PIL import Image, UnidentifiedImageError

    try:
        size = header_size(path)
    except OSError:
        size = None
    if size is not None and size[0] > 0 and size[1] > 0:
        return size

    try:
        with Image.open(path) as im:
            return im.size
    except (OSError, UnidentifiedImageError) as e:
        raise SourceError(file, record, f"cannot read image size from {path}: {e}") from None


def header_matches(path: str, width: int, height: int) -> bool:
    """Whether the file at ``path`` opens and its PNG or JPEG header gives ``width`` x ``height`` (``False`` for
    anything else: a missing file, another size, another format, which :func:`check_image` then checks in turn)."""
    try:
        return header_size(path) == (width, height)
    except OSError:
        return False


def check_image(path: str, width: int, height: int, file: str | Path, record: str) -> str:
    """:func:`check_image_file` and :func:`check_declared_size` of ``path``, with one open and no ``stat`` where
    both pass (its header read: a file that is there and of the declared size); anything else is checked by
    them in turn, so the error is theirs."""
    if header_matches(path, width, height):
        return path
    check_image_file(path, file, record)
    check_declared_size(path, width, height, file, record)
    return path


def check_declared_size(path: str, width: int, height: int, file: str | Path, record: str) -> None:
    """The image file's own size (from its header: PIL reads it lazily, no pixel is decoded) must be the
    ``width`` x ``height`` the annotations declare: boxes, masks and relative areas are measured against it,
    so a wrong declaration (a resized copy of the image, another split's file) would mislabel every object."""
    actual = image_size_from_file(path, file, record)
    if actual != (width, height):
        raise SourceError(file, record, f"image file {path} is {actual[0]}x{actual[1]} pixels, but the "
                                        f"annotations declare {width}x{height}")


# ---------------------------------------------------------------------------------------------------------------
# Masks


def _is_polygon(poly: Any) -> bool:
    # set(map(type, ...)) and sum() run in C: a per-coordinate Python check costs seconds on a COCO split
    return (
        type(poly) is list
        and len(poly) >= 6
        and len(poly) % 2 == 0
        and set(map(type, poly)) <= _NUMBER_TYPES
        and math.isfinite(sum(poly))
    )


class PolygonRLE(Mapping[str, Any]):
    """A compressed RLE (``{"size": [h, w], "counts": str}``) made from polygons or uncompressed counts on
    first access.

    Why lazy: converting a COCO-train-sized file's 860,000 polygons to RLE costs about a minute in pycocotools
    (docs/scale.md), yet a build reads most annotations for their boxes and given areas only; a mask
    is needed where a filter measures pixels (occlusion, where instances overlap) or the file gives no area.
    The segmentation is validated when the file is read, so a bad polygon is still an error at read time; only
    the conversion waits. The result is the one an eager ``frPyObjects`` (and ``merge`` for several polygons)
    gives, so a record compares equal to an eagerly converted one.
    """

    __slots__ = ("_segmentation", "_height", "_width", "_rle")

    def __init__(self, segmentation: Any, height: int, width: int) -> None:
        self._segmentation = segmentation
        self._height = height
        self._width = width
        self._rle: dict[str, Any] | None = None

    def _converted(self) -> dict[str, Any]:
        if self._rle is None:
            from pycocotools import mask as mask_utils

            seg, h, w = self._segmentation, self._height, self._width
            if isinstance(seg, dict):  # uncompressed counts
                rle = mask_utils.frPyObjects(seg, h, w)
            else:
                rles = mask_utils.frPyObjects(seg, h, w)
                rle = rles[0] if len(rles) == 1 else mask_utils.merge(rles)
            self._rle = {"size": [h, w], "counts": rle["counts"].decode("ascii")}
            self._segmentation = None
        return self._rle

    def __getitem__(self, key: str) -> Any:
        return self._converted()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(("size", "counts"))

    def __len__(self) -> int:
        return 2

    def __repr__(self) -> str:
        return repr(self._converted())

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (self._converted(),))


def polygons_valid(segmentations: Sequence[list[Any]]) -> bool:
    """Whether every polygon of these polygon segmentations passes :func:`segmentation_mask`'s check, asked of
    all their coordinates at once (types as a set, sums as an array)."""
    polygons = list(chain.from_iterable(segmentations))
    if set(map(type, polygons)) - {list}:
        return False
    lengths = np.fromiter(map(len, polygons), dtype=np.int64, count=len(polygons))
    if ((lengths < 6) | (lengths % 2 == 1)).any():
        return False
    coordinates = list(chain.from_iterable(polygons))
    if set(map(type, coordinates)) - _NUMBER_TYPES:
        return False
    sums = np.add.reduceat(np.array(coordinates, dtype=np.float64), np.cumsum(lengths) - lengths) if len(lengths) else ()
    return bool(np.isfinite(sums).all())


def segmentations_to_rles(
    items: Sequence[tuple[str, Any]], height: int, width: int, file: str | Path
) -> list[Mapping[str, Any] | None]:
    """Compressed RLE (``{"size": [h, w], "counts": str}``) for each ``(record label, segmentation)`` of one image
    (:func:`segmentation_mask` of each)."""
    return [segmentation_mask(seg, height, width, file, lambda record=record: record) for record, seg in items]


def segmentation_mask(
    seg: Any, height: int, width: int, file: str | Path, record: Callable[[], str]
) -> Mapping[str, Any] | None:
    """The compressed RLE (``{"size": [h, w], "counts": str}``) of one segmentation of an image ``height`` x
    ``width``; ``record()`` names it in an error.

    A segmentation may be polygons (a list of flat ``[x1, y1, x2, y2, ...]`` lists), an RLE with uncompressed
    counts (a list of run lengths) or an RLE with compressed counts (a string); an empty list or ``null`` means
    no mask (``None``). The segmentation is validated here; polygons and uncompressed counts become a
    :class:`PolygonRLE`, converted only when the mask is read (most never are).
    """
    if seg is None or (isinstance(seg, list) and not seg):
        return None
    if isinstance(seg, list):
        if not all(_is_polygon(p) for p in seg):
            raise SourceError(file, record(), "'segmentation' polygons must be lists of at least 3 (x, y) number pairs")
        return PolygonRLE(seg, height, width)
    if not isinstance(seg, dict):
        raise SourceError(file, record(), f"'segmentation' must be polygons or an RLE object, got {type_name(seg)}")
    size, counts = seg.get("size"), seg.get("counts")
    if size != [height, width]:
        raise SourceError(file, record(), f"'segmentation' size {size!r} differs from the image's [{height}, {width}]")
    if isinstance(counts, str):
        return {"size": [height, width], "counts": counts}
    if not isinstance(counts, list):
        raise SourceError(file, record(), f"'segmentation' RLE counts must be a string or a list, got {type_name(counts)}")
    if not all(type(c) is int and c >= 0 for c in counts) or sum(counts) != height * width:
        raise SourceError(file, record(), "'segmentation' uncompressed RLE counts must be non-negative integers "
                                          f"summing to {height}*{width}")
    return PolygonRLE(seg, height, width)


def rle_areas(rles: Sequence[Mapping[str, Any]]) -> list[float]:
    """Pixel areas of compressed RLEs, without decoding them to bitmaps."""
    from pycocotools import mask as mask_utils

    if not rles:
        return []
    encoded = [{"size": list(r["size"]), "counts": r["counts"].encode("ascii")} for r in rles]
    return [float(a) for a in mask_utils.area(encoded)]


def areas(
    given: Sequence[Any], rles: Sequence[Mapping[str, Any] | None], boxes: Sequence[BBox]
) -> list[float]:
    """Area of each instance: the file's value when it is a positive number, else the mask's, else the box's."""
    result: list[float] = [0.0] * len(given)
    need_mask: list[int] = []
    for i, a in enumerate(given):
        if is_number(a) and a > 0:
            result[i] = float(a)
        elif rles[i] is not None:
            need_mask.append(i)
        else:
            result[i] = boxes[i][2] * boxes[i][3]
    for i, a in zip(need_mask, rle_areas([rles[i] for i in need_mask])):
        result[i] = a
    return result
