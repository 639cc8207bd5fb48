"""Mementos' reference description CSVs (Wang et al., "Mementos", 2024), whatever their column scheme.

The official files name their columns in several ways (the issue counts four schemes) and one holds a byte that
is not UTF-8. The Mementos repository is not available offline here, so this reader accepts a documented set of
header aliases rather than four hard-coded layouts:

* the sequence: ``image_name``, ``image``, ``name``, ``id``, ``file_name``, ``filename``, ``video``, ``episode``;
* the description: ``description``, ``gt``, ``ground_truth``, ``gt_description``, ``human_description``,
  ``annotation``, ``caption``, ``text``, ``desc``;
* optionally the domain: ``domain``, ``type``, ``category`` (else taken from the file name: ``robo`` -> robotics,
  ``dl``/``daily`` -> daily_life, ``cmc``/``comic`` -> comics);
* a file without a recognised header and two columns per row is read as ``(sequence, description)``.

Header names are compared case- and space-insensitively (``Image Name`` = ``image_name``). Line ends may be CRLF,
LF or both in one file. A byte that is not UTF-8 does not stop the import: it is replaced by U+FFFD and reported
(file, byte offset, line) in :attr:`MementosCsv.decode_errors`; the lint's wording check flags the text that holds
it.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from sources.errors import SourceError

SEQUENCE_COLUMNS = ("image_name", "image", "name", "id", "file_name", "filename", "video", "episode")
DESCRIPTION_COLUMNS = ("description", "gt", "ground_truth", "gt_description", "human_description", "annotation",
                       "caption", "text", "desc")
DOMAIN_COLUMNS = ("domain", "type", "category")
DOMAIN_HINTS = (("robo", "robotics"), ("daily", "daily_life"), ("dl", "daily_life"), ("cmc", "comics"),
                ("comic", "comics"))


@dataclass(frozen=True)
class MementosRow:
    sequence: str
    description: str
    domain: str
    line: int


@dataclass
class MementosCsv:
    path: Path
    scheme: str
    """The columns found, e.g. ``"image_name,description"``, or ``"no header (2 columns)"``."""
    rows: list[MementosRow] = field(default_factory=list)
    decode_errors: list[str] = field(default_factory=list)


def _key(name: str) -> str:
    return re.sub(r"[\s\-]+", "_", name.strip().lower().lstrip("\ufeff"))


def decode(path: Path, data: bytes) -> tuple[str, list[str]]:
    """UTF-8 text with every undecodable byte replaced by U+FFFD, and one message per such byte."""
    errors: list[str] = []
    parts: list[str] = []
    start = 0
    if data.startswith(b"\xef\xbb\xbf"):
        start = 3
    while True:
        try:
            parts.append(data[start:].decode("utf-8"))
            break
        except UnicodeDecodeError as exc:
            bad = start + exc.start
            parts.append(data[start:bad].decode("utf-8"))
            parts.append("\ufffd")
            line = data.count(b"\n", 0, bad) + 1
            errors.append(f"{path}: byte offset {bad} (line {line}): invalid UTF-8 byte 0x{data[bad]:02x}, "
                          "replaced by U+FFFD")
            start = bad + max(1, exc.end - exc.start)
    return "".join(parts), errors


def domain_of(path: Path) -> str:
    name = path.stem.lower()
    for hint, domain in DOMAIN_HINTS:
        if re.search(rf"(?:^|[^a-z]){hint}", name):
            return domain
    return "unknown"


def read_mementos_csv(path: str | Path) -> MementosCsv:
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SourceError(path, "file", f"cannot read ({exc.strerror or exc})") from None
    text, errors = decode(path, data)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    rows = [r for r in csv.reader(io.StringIO(text)) if any(c.strip() for c in r)]
    if not rows:
        raise SourceError(path, "file", "no rows")
    header = [_key(c) for c in rows[0]]
    seq = next((header.index(c) for c in SEQUENCE_COLUMNS if c in header), None)
    desc = next((header.index(c) for c in DESCRIPTION_COLUMNS if c in header), None)
    dom = next((header.index(c) for c in DOMAIN_COLUMNS if c in header), None)
    if seq is not None and desc is not None:
        body, first_line, scheme = rows[1:], 2, ",".join(header[i] for i in (seq, desc) + ((dom,) if dom is not None else ()))
    elif seq is None and desc is None and len(rows[0]) == 2:
        seq, desc, body, first_line, scheme = 0, 1, rows, 1, "no header (2 columns)"
    else:
        raise SourceError(path, "header", f"columns {', '.join(header)} name no sequence and description column "
                                          f"(accepted: {', '.join(SEQUENCE_COLUMNS)}; {', '.join(DESCRIPTION_COLUMNS)})")
    fallback = domain_of(path)
    out = MementosCsv(path, scheme, decode_errors=errors)
    for n, row in enumerate(body, start=first_line):
        if len(row) <= max(seq, desc):
            raise SourceError(path, f"row {n}", f"{len(row)} column(s), expected at least {max(seq, desc) + 1}")
        sequence, description = row[seq].strip(), row[desc].strip()
        if not sequence or not description:
            raise SourceError(path, f"row {n}", "empty sequence name or description")
        domain = row[dom].strip() if dom is not None and len(row) > dom and row[dom].strip() else fallback
        out.rows.append(MementosRow(sequence, description, domain, n))
    return out
