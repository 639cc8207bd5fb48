"""Content hashes of files: what caches, manifests and build records key on."""

from __future__ import annotations

import hashlib
import os

_HASHED: dict[tuple[str, int, int, int], str] = {}
"""Hashes already computed in this process, by (path, size, mtime, inode): a build hashes a paper-scale annotation
file (hundreds of MB) for its cache key and again for ``build.json``; the second time is free."""


def file_sha256(path: str | os.PathLike[str], chunk: int = 1 << 20) -> str:
    """Hex SHA-256 of a file's bytes, read in chunks (files may be large videos or parquet shards)."""
    st = os.stat(path)
    key = (os.path.realpath(path), st.st_size, st.st_mtime_ns, st.st_ino)
    if key not in _HASHED:
        digest = hashlib.sha256()
        with open(path, "rb") as fh:
            while block := fh.read(chunk):
                digest.update(block)
        _HASHED[key] = digest.hexdigest()
    return _HASHED[key]
