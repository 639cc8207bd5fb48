"""Reading the real sources' JSON and JSON-lines files (COCO, PACO, SVG, Visual Genome, ...).

A file that is missing, empty, not UTF-8 or not JSON is a :class:`~sources.errors.SourceError` naming it, with the
line and column of a syntax error (what a user needs to open the file there) and a word on a cut download. The
records inside are checked by :mod:`sources.validate`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator

from sources.errors import SourceError

JSONL_SUFFIXES = (".jsonl", ".ndjson")
"""File name endings read as JSON lines (one JSON value per line)."""


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

    Why: polygons are about half of a COCO-train-sized file and most of its parse time. Polygons
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
