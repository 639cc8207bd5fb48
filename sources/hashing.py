"""Content hashes of files: what caches, manifests and build records key on."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Sequence

from sources.atomic import write_atomic

FileSignature = tuple[int, int, int, int, int]
"""``(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)``: what a file's bytes are assumed unchanged by while
it stays the same. The kernel moves ``ctime`` on every write and nothing can set it back, so a file rewritten in
place with its size and ``mtime`` restored (``cp -p``, ``touch -r``) still gets a new signature; a path that now
names another file (a rename, a retargeted symlink) has another inode."""

_HASHED: dict[FileSignature, str] = {}
"""Hashes already computed in this process, by signature: a build hashes a paper-scale annotation file (hundreds
of MB) for its cache key and again for ``build.json``; the second time is free."""

WHOLE_READ_BYTES = 16 << 20
"""Files up to this size are read in one call, into a buffer of their size; larger ones (videos, parquet shards)
in 1 MiB chunks. A 60 kB JPEG read into a 1 MiB buffer cost a megabyte's allocation and release each time."""


RACY_SECONDS = 2.0
"""A file changed less than this long ago may change again within the file system's timestamp granularity
(a few milliseconds on Linux, seconds on some) without its signature moving, so its hash is not remembered across
runs (git's "racily clean" rule)."""


def settled(st: os.stat_result) -> bool:
    """Whether the file last changed at least :data:`RACY_SECONDS` ago, so its signature can stand for its
    bytes in a cache that outlives this process."""
    return time.time_ns() - st.st_ctime_ns >= RACY_SECONDS * 1e9


def signature(st: os.stat_result) -> FileSignature:
    """The :data:`FileSignature` of a stat result."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def signature_text(st: os.stat_result) -> str:
    """The :func:`signature` of a stat result as the text persistent caches store it under (``"dev:ino:..."``)."""
    return ":".join(map(str, signature(st)))


def file_sha256(path: str | os.PathLike[str], chunk: int = 1 << 20, st: os.stat_result | None = None) -> str:
    """Hex SHA-256 of a file's bytes; ``st``, when the caller has already stat'ed the file, saves a second
    ``stat``. Remembered for the rest of the process by the file's :func:`signature`."""
    key = signature(os.stat(path) if st is None else st)
    digest = _HASHED.get(key)
    if digest is None:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            if key[2] <= WHOLE_READ_BYTES:
                h.update(fh.read())
            else:
                while block := fh.read(chunk):
                    h.update(block)
        digest = _HASHED[key] = h.hexdigest()
    return digest


class DigestMemo:
    """:func:`file_sha256` remembered across runs in a small JSON file: ``{signature: sha256}`` of settled files.

    Why: a cache keyed by its inputs' content (:mod:`builders.mioh.prepared`) hashes them on every run, and a
    paper-scale build's annotation files (half a gigabyte) took half a second of a ten-second rerun to hash. A file
    whose :func:`signature` is unchanged has unchanged bytes (the reasoning git's index relies on), so a digest is
    reused while the signature stays the same, and is only remembered once the file has :func:`settled`. The memo
    is advisory: one that is missing, unreadable or damaged is ignored (the files are hashed again) and rewritten,
    and two builds writing it at once lose at most a few entries (:func:`sources.atomic.write_atomic`).
    """

    KEEP = 256
    """Entries kept, the most recently used (each set of source files a cache dir sees adds a few)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._entries: dict[str, str] | None = None
        self._changed = False

    def sha256(self, path: str | os.PathLike[str]) -> str:
        """The file's sha256: remembered when its signature is, else hashed (and remembered once settled)."""
        st = os.stat(path)
        key = signature(st)
        entries = self._load()
        text = signature_text(st)
        digest = entries.pop(text, None)
        if digest is None:
            digest = file_sha256(path, st=st)
        else:
            _HASHED[key] = digest  # the rest of the process (build.json's input hashes) reuses it
        if settled(st):
            entries[text] = digest  # last: the most recently used
            self._changed = True
        return digest

    def save(self) -> None:
        """Write the memo if it changed (never raises: a memo that cannot be written is only slower next time)."""
        if not self._changed or self._entries is None:
            return
        kept = dict(list(self._entries.items())[-self.KEEP:])
        try:
            write_atomic(self.path, json.dumps(kept, indent=0, sort_keys=False).encode())
        except OSError:
            pass
        self._changed = False

    def _load(self) -> dict[str, str]:
        if self._entries is None:
            try:
                found = json.loads(self.path.read_bytes())
            except (OSError, ValueError):
                found = {}
            ok = isinstance(found, dict) and all(isinstance(k, str) and isinstance(v, str) and len(v) == 64
                                                 for k, v in found.items())
            self._entries = found if ok else {}
        return self._entries


REPOSITORY = Path(__file__).resolve().parents[1]


def code_fingerprint(entries: Sequence[str]) -> str:
    """sha256 over the Python files of ``entries`` (files or folders, relative to the repository root), their
    names and bytes: a cache of what that code computed keys on it, so that a change to the code is a miss."""
    digest = hashlib.sha256()
    for entry in entries:
        path = REPOSITORY / entry
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(str(file.relative_to(REPOSITORY)).encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()
