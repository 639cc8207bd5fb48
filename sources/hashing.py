"""Content hashes of files: what caches, manifests and build records key on."""

from __future__ import annotations

import hashlib
import os
import time

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
