"""Content hashes of files: what caches, manifests and build records key on."""

from __future__ import annotations

import hashlib
import os


def file_sha256(path: str | os.PathLike[str], chunk: int = 1 << 20) -> str:
    """Hex SHA-256 of a file's bytes, read in chunks (files may be large videos or parquet shards)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()
