"""On-disk store of CLIP embeddings, keyed by model identity and content hash.

Why SQLite rather than one ``.npy`` per image: a real source has 10^5 images, and a rerun must find all of them
without touching 10^5 files; a batch of new embeddings is written in one transaction, so a crash (or Ctrl-C)
loses at most the batch in flight and never leaves a half-written vector behind; several builds can share one
cache dir because SQLite locks for them. The module depends on numpy and the standard library only.

Rows are ``(model, kind, key) -> float32 vector``: ``model`` is :func:`model_key` of the scorer's identity (weights,
architecture, preprocessing, precision), ``kind`` is ``"image"`` or ``"text"``, ``key`` is the sha256 of the image
file's bytes or of the prompt. The same picture under two paths is encoded once.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from sources.hashing import file_sha256

_SCHEMA = """
CREATE TABLE IF NOT EXISTS emb (
    model TEXT NOT NULL, kind TEXT NOT NULL, key TEXT NOT NULL, dim INTEGER NOT NULL, vec BLOB NOT NULL,
    PRIMARY KEY (model, kind, key)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS file_digest (
    path TEXT NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, sha256 TEXT NOT NULL,
    PRIMARY KEY (path, size, mtime_ns)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS file_content (
    signature TEXT PRIMARY KEY, sha256 TEXT NOT NULL) WITHOUT ROWID;
"""
_IN_CHUNK = 500  # stay below SQLite's bound-parameter limit


def model_key(identity: Mapping[str, Any]) -> str:
    """A short stable key for a model identity (any JSON-able mapping)."""
    blob = json.dumps(identity, sort_keys=True, separators=(",", ":"), default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:24]


def text_key(text: str) -> str:
    """Cache key of a prompt."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingStore:
    """Embeddings in one SQLite file (or in memory when ``path`` is ``None``).

    Thread-safe: one connection guarded by a lock (the scorer writes from one thread; the lock only matters
    when a caller shares a scorer between threads).
    """

    def __init__(self, path: str | os.PathLike[str] | None) -> None:
        self.path = None if path is None else Path(path)
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        target = ":memory:" if self.path is None else str(self.path)
        self._db = sqlite3.connect(target, timeout=60.0, check_same_thread=False, isolation_level=None)
        self._lock = threading.Lock()
        with self._lock:
            if self.path is not None:
                # WAL: readers never block the writer, and a crash rolls back to the last committed batch.
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def get_many(self, model: str, kind: str, keys: Iterable[str]) -> dict[str, np.ndarray]:
        """The stored vectors among ``keys`` (missing keys are simply absent from the result)."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for start in range(0, len(wanted), _IN_CHUNK):
                chunk = wanted[start : start + _IN_CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT key, dim, vec FROM emb WHERE model=? AND kind=? AND key IN ({marks})",
                    (model, kind, *chunk),
                )
                for key, dim, vec in rows:
                    arr = np.frombuffer(vec, dtype=np.float32)
                    if arr.size == dim:  # a torn row cannot happen in SQLite, but never trust a cache blindly
                        found[key] = arr
        return found

    def put_many(self, model: str, kind: str, keys: Sequence[str], vectors: np.ndarray) -> None:
        """Store one batch atomically (one transaction)."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if len(keys) != len(vectors):
            raise ValueError(f"{len(keys)} keys for {len(vectors)} vectors")
        rows = [(model, kind, k, int(v.size), v.tobytes()) for k, v in zip(keys, vectors)]
        self._insert("INSERT OR REPLACE INTO emb VALUES (?, ?, ?, ?, ?)", rows)

    def _insert(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """``executemany`` in one transaction: all of ``rows`` or, after an error or Ctrl-C, none."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany(sql, rows)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def content_digests(self, signatures: Iterable[str]) -> dict[str, str]:
        """The sha256 already known for each file :func:`~sources.hashing.signature` (as text) among
        ``signatures``; unknown ones are absent."""
        wanted = list(dict.fromkeys(signatures))
        found: dict[str, str] = {}
        with self._lock:
            for start in range(0, len(wanted), _IN_CHUNK):
                chunk = wanted[start : start + _IN_CHUNK]
                marks = ",".join("?" * len(chunk))
                found.update(self._db.execute(
                    f"SELECT signature, sha256 FROM file_content WHERE signature IN ({marks})", chunk))
        return found

    def put_content_digests(self, digests: Mapping[str, str]) -> None:
        """Remember ``{signature: sha256}`` (one transaction)."""
        self._insert("INSERT OR REPLACE INTO file_content VALUES (?, ?)", digests.items())

    def count(self, model: str | None = None, kind: str | None = None) -> int:
        """Number of stored vectors (for tests and stats)."""
        sql, args = "SELECT COUNT(*) FROM emb WHERE 1=1", []
        if model is not None:
            sql, args = sql + " AND model=?", [*args, model]
        if kind is not None:
            sql, args = sql + " AND kind=?", [*args, kind]
        with self._lock:
            return int(self._db.execute(sql, args).fetchone()[0])

    def weights_digest(self, path: str | os.PathLike[str]) -> str:
        """sha256 of a (large) weights file, remembered by ``(path, size, mtime)`` so a rerun does not re-read
        600 MB just to learn which model it is."""
        real = os.path.realpath(path)
        st = os.stat(real)
        with self._lock:
            row = self._db.execute(
                "SELECT sha256 FROM file_digest WHERE path=? AND size=? AND mtime_ns=?",
                (real, st.st_size, st.st_mtime_ns),
            ).fetchone()
        if row:
            return str(row[0])
        digest = file_sha256(real)
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO file_digest VALUES (?, ?, ?, ?)", (real, st.st_size, st.st_mtime_ns, digest)
            )
        return digest
