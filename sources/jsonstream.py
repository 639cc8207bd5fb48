"""Stream the elements of a top-level JSON array without holding the whole document.

Visual Genome's ``relationships.json`` (v1.4: 108,077 images, 2.3 million relationships, ~700 MB) and
``objects.json`` are single JSON arrays. ``json.load`` would hold the raw text and every parsed element at once
(several GB); :func:`iter_json_array` reads the file in chunks and hands out one element at a time, decoded by the
C-accelerated ``json.JSONDecoder.raw_decode``, so peak memory is one chunk plus one element whatever the file
size, and speed stays that of ``json.loads``. No dependency (ijson's pure-Python backend is ~10x slower than this;
its C backend is not always available as a wheel).

A malformed file raises :class:`~sources.errors.SourceError` naming the element index and the byte offset.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from sources.errors import SourceError
from sources.jsonio import require_file

CHUNK_BYTES = 1 << 22
"""Text read per refill (4 MiB); an element longer than the buffer makes the buffer grow (doubling)."""

_WHITESPACE = " \t\n\r"
_DECODER = json.JSONDecoder()


def iter_json_array(
    path: str | Path, chunk_chars: int = CHUNK_BYTES, what: str = "annotation file"
) -> Iterator[tuple[int, Any]]:
    """``(index, element)`` for every element of the JSON array stored in ``path``.

    Raises :class:`SourceError` when the file is missing or empty, when its top level is not an array, and on
    the first malformed element (the message gives its index and byte offset).
    """
    p = require_file(path, what)
    try:
        handle = open(p, encoding="utf-8")
    except OSError as e:
        raise SourceError(p, "", f"cannot read file: {e.strerror or e}") from e
    with handle:
        reader = _Reader(handle, p, chunk_chars)
        yield from reader.elements()


class _Reader:
    """A refillable text window over the file; ``offset`` is the file position of ``buf[0]`` (characters)."""

    def __init__(self, handle, path: Path, chunk_chars: int) -> None:
        self.handle = handle
        self.path = path
        self.chunk = chunk_chars
        self.buf = ""
        self.pos = 0
        self.offset = 0
        self.eof = False

    def _refill(self) -> bool:
        """Append the next chunk (dropping what was consumed); False at end of file."""
        if self.eof:
            return False
        try:
            more = self.handle.read(self.chunk)
        except UnicodeDecodeError as e:
            raise SourceError(
                self.path, "", f"not UTF-8 text (near byte {self.offset + len(self.buf) + e.start})"
            ) from None
        if not more:
            self.eof = True
            return False
        self.offset += self.pos
        self.buf = self.buf[self.pos :] + more
        self.pos = 0
        return True

    def _skip_space(self) -> str:
        """The next non-whitespace character (consumed lazily: ``pos`` points at it), ``""`` at end of file."""
        while True:
            n = len(self.buf)
            while self.pos < n and self.buf[self.pos] in _WHITESPACE:
                self.pos += 1
            if self.pos < n:
                return self.buf[self.pos]
            if not self._refill():
                return ""

    def _where(self) -> str:
        return f"offset {self.offset + self.pos}"

    def elements(self) -> Iterator[tuple[int, Any]]:
        first = self._skip_space()
        if first == "":
            raise SourceError(self.path, "", "file is empty")
        if first != "[":
            raise SourceError(self.path, "", f"top level must be an array, found {first!r} at {self._where()}")
        self.pos += 1
        index = 0
        if self._skip_space() == "]":
            return
        while True:
            value = self._decode(index)
            yield index, value
            index += 1
            sep = self._skip_space()
            if sep == ",":
                self.pos += 1
                continue
            if sep == "]":
                self.pos += 1
                if self._skip_space() != "":
                    raise SourceError(self.path, "", f"extra data after the top-level array at {self._where()}")
                return
            found = "end of file" if sep == "" else repr(sep)
            raise SourceError(
                self.path,
                f"[{index - 1}]",
                f"malformed JSON after element: expected ',' or ']', found {found} at {self._where()}",
            )

    def _decode(self, index: int) -> Any:
        """Decode the element at ``pos``. A decode error at the end of the buffer may only be a cut element: read
        more and retry; an error that stays at the same file position after a refill is real."""
        if self._skip_space() == "":
            raise SourceError(self.path, f"[{index}]", "malformed JSON: file ends inside the array")
        last: tuple[int, str] | None = None
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except json.JSONDecodeError as e:
                error = (self.offset + e.pos, e.msg)
                if self.eof or error == last or not self._grow():
                    raise SourceError(
                        self.path, f"[{index}]", f"malformed JSON at offset {error[0]}: {e.msg}"
                    ) from None
                last = (self.offset + e.pos, e.msg)
                continue
            if end == len(self.buf) and not isinstance(value, (dict, list, str)) and self._grow():
                continue  # a bare number or literal could go on in the next chunk
            self.pos = end
            return value

    def _grow(self) -> bool:
        """Refill; an element larger than the chunk doubles the chunk so long elements cost O(n) reads."""
        if len(self.buf) - self.pos >= self.chunk:
            self.chunk *= 2
        return self._refill()
