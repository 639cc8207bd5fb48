"""The prepared-pools cache: a rerun on the same source files skips reading them and measuring their geometry.

Reading a paper-scale source and measuring every instance's visibility is most of a cold MIOH build, and none of
it depends on the question options (``--n-questions``, ``--seed``, ``--n-images``, pressures, ...). So the pools
it ends in (:class:`builders.mioh.pools.Pools`, tables) are written under the cache directory as Apache Arrow IPC
files, and a later build with the same inputs opens them memory-mapped: drawing reads the pages it touches. The
cache key is a sha256 over every annotation file's content (remembered across runs while the file's signature
stays the same: :data:`DIGESTS_FILE`), every image folder's path and modification time, the pool rules, and the
code that reads and labels (``sources/``, ``filters/``, MIOH's rules, pools and labels): an update of Mirage never
reuses what an older version prepared.

An entry is a folder ``DIR/mioh-pools/<key>/``: ``entry.json`` (each source's description, the geometry filter's
statistics, the absence-verification report) and one Arrow file per table of each source's pools, written whole
or not at all (:func:`sources.atomic.atomic_directory`); one that cannot be read is a miss and is rewritten. Only
builds without the CLIP stage use it: CLIP signals depend on model weights outside the key (their embeddings
have their own cache). The demo world is cached by :mod:`sources.demo`. The folder keeps the :data:`KEEP` most
recently used entries (``$MIRAGE_POOLS_KEEP``): each set of sources and pool rules has its own, and nothing else
would ever remove them.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from builders.mioh.config import MiohConfig
from builders.mioh.pools import Pools
from filters.base import FilterStats
from sources import hashing
from sources.atomic import atomic_directory
from sources.errors import ConfigError
from sources.hashing import DigestMemo, file_sha256

CACHE_FOLDER = "mioh-pools"
FORMAT = 6
"""Bumped when what an entry holds changes shape (6: a folder of Arrow tables, the pools as columns)."""

ENTRY_FILE = "entry.json"

KEEP = 3
"""Entries kept in the folder by default: the most recently used (stored or loaded) ones."""

KEEP_VARIABLE = "MIRAGE_POOLS_KEEP"
"""The environment variable that overrides :data:`KEEP`."""

DIGESTS_FILE = "file-digests.json"
"""The annotation files' sha256 remembered by signature (:class:`sources.hashing.DigestMemo`): a rerun on the same
files does not read half a gigabyte again to find its entry."""

_CODE = ("sources", "filters", "builders/mioh/reading.py", "builders/mioh/rules.py", "builders/mioh/pools.py",
         "builders/mioh/labels.py")
"""The code an entry depends on (paths relative to the repository root)."""

Prepared = tuple[dict[str, Pools], FilterStats, dict[str, Any]]
"""Pools by task, the geometry filter's statistics, the absence-verification report."""


def code_fingerprint() -> str:
    """sha256 over the source files that read records and label pools (:data:`_CODE`)."""
    return hashing.code_fingerprint(_CODE)


def cache_key(config: MiohConfig, digests: DigestMemo | None = None) -> str:
    """The key of ``config``'s prepared pools (see the module docstring for what goes in); ``digests``: where
    the annotation files' hashes are remembered across runs (:data:`DIGESTS_FILE`)."""
    inputs: dict[str, Any] = {}
    for flag in ("coco_rem", "paco", "svg", "verify_absence_with"):
        path = getattr(config, flag)
        if path:
            digest = digests.sha256(path) if digests is not None else file_sha256(path)
            inputs[flag] = {"path": os.path.abspath(path), "sha256": digest}
    for flag in ("coco_images", "paco_images", "svg_images"):
        folder = getattr(config, flag)
        if folder:
            inputs[flag] = {"path": os.path.abspath(folder), "mtime_ns": os.stat(folder).st_mtime_ns}
    described = {
        "format": FORMAT,
        "tasks": sorted(config.tasks),
        "inputs": inputs,
        "pools": asdict(config.pool_config(exhaustive_relations=False)),
        "code": code_fingerprint(),
    }
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()


class PreparedPools:
    """Load or store one build's prepared pools (:data:`Prepared`), as :func:`builders.mioh.builder._build`
    makes them."""

    def __init__(self, config: MiohConfig) -> None:
        self.keep = kept_entries()
        folder = Path(config.resolved_cache_dir()) / CACHE_FOLDER
        digests = DigestMemo(folder / DIGESTS_FILE)
        self.path = folder / cache_key(config, digests)
        digests.save()

    @classmethod
    def of(cls, config: MiohConfig) -> PreparedPools | None:
        """The cache entry of ``config``'s sources; ``None`` for the demo world, and where an input cannot be
        hashed (missing, unreadable: the reader then reports it as it reports any bad input)."""
        if config.uses_demo:
            return None
        try:
            return cls(config)
        except OSError:
            return None

    def exists(self) -> bool:
        return (self.path / ENTRY_FILE).is_file()

    def load(self) -> Prepared | None:
        """The cached pools, or ``None`` when there is no usable entry."""
        try:
            entry = json.loads((self.path / ENTRY_FILE).read_text())
            if entry.get("format") != FORMAT:
                return None
            pools_by_task: dict[str, Pools] = {}
            for k, source in enumerate(entry["sources"]):
                tables = {name: _read_table(self.path / f"{k}-{name}.arrow") for name in source["tables"]}
                pools = Pools(source["info"], tables)
                pools_by_task.update((task, pools) for task in source["tasks"])
        except Exception:  # noqa: BLE001 - a missing, truncated or foreign entry is a cache miss, never an error
            return None
        try:
            os.utime(self.path)  # used now: the last entry pruning removes (a read-only cache keeps its old time)
        except OSError:
            pass
        return pools_by_task, FilterStats.from_dict(entry["filter_stats"]), entry["verification"]

    def store(self, pools_by_task: dict[str, Pools], filter_stats: FilterStats, verification: dict[str, Any]) -> bool:
        """Write the entry whole (``True`` when written); a full disk or a read-only cache only costs the next
        build its speed."""
        once: dict[int, tuple[Pools, list[str]]] = {}
        for task, pools in pools_by_task.items():  # a pool serving two tasks is written once
            once.setdefault(id(pools), (pools, []))[1].append(task)
        sources = [{"tasks": tasks, "info": pools.info, "tables": sorted(pools.tables)} for pools, tasks in once.values()]
        try:
            shutil.rmtree(self.path, ignore_errors=True)  # an entry that did not load (a mapping outlives its name)
            with atomic_directory(self.path, lambda path: (path / ENTRY_FILE).is_file()) as folder:
                for k, (pools, _) in enumerate(once.values()):
                    for name, table in pools.tables.items():
                        _write_table(folder / f"{k}-{name}.arrow", table)
                entry = {"format": FORMAT, "sources": sources, "filter_stats": filter_stats.as_dict(),
                         "verification": verification}
                (folder / ENTRY_FILE).write_text(json.dumps(entry, sort_keys=True))
        except OSError:
            return False
        prune(self.path.parent, self.keep)
        return True


def _write_table(path: Path, columns: dict[str, Any]) -> None:
    """One table's columns as an Arrow IPC file (flags as bytes, so that they map without a copy)."""
    arrays = {name: values if isinstance(values, (pa.Array, pa.ChunkedArray))
              else pa.array(np.ravel(values).view(np.uint8) if np.asarray(values).dtype == bool else np.ravel(values))
              for name, values in columns.items()}
    table = pa.table(arrays)
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def _read_table(path: Path) -> dict[str, Any]:
    """An Arrow IPC file's columns, mapped from the file: numbers as numpy views of the mapping, strings as
    Arrow arrays."""
    table = pa.ipc.open_file(pa.memory_map(str(path), "r")).read_all()
    columns = {}
    for name, values in zip(table.column_names, table.columns):
        values = values.chunk(0) if values.num_chunks == 1 else values.combine_chunks()
        columns[name] = values if pa.types.is_string(values.type) else _numbers(values)
    return columns


def _numbers(values: pa.Array) -> np.ndarray:
    """A column of numbers without nulls as a numpy view of its buffer: what ``to_numpy(zero_copy_only=True)``
    gives, without the import of pandas that pyarrow's conversion makes the first time (a warm build's start
    has no other use for pandas)."""
    dtype = np.dtype(values.type.to_pandas_dtype())
    return np.frombuffer(values.buffers()[1], dtype=dtype, count=len(values), offset=values.offset * dtype.itemsize)


def kept_entries() -> int:
    """:data:`KEEP`, or ``$MIRAGE_POOLS_KEEP`` when set (a whole number, at least 1)."""
    text = os.environ.get(KEEP_VARIABLE, "").strip() or str(KEEP)
    if not text.isdigit() or int(text) < 1:
        raise ConfigError(f"${KEEP_VARIABLE}: expected the number of prepared-pools entries to keep (1 or more), "
                          f"got {text!r}")
    return int(text)


def prune(folder: Path, keep: int) -> list[Path]:
    """Remove all but the ``keep`` most recently used entries (by modification time, which a load renews) of
    ``folder``; returns what was removed.

    Never fails: an entry another build removed first, or one that cannot be removed, is skipped. Removing an
    entry another build has open is safe (its files are mapped, and a mapping outlives the name)."""
    entries = []
    for path in folder.iterdir():
        try:
            if (path / ENTRY_FILE).is_file():
                entries.append((path.stat().st_mtime, path))
        except OSError:
            pass
    removed = []
    for _, path in sorted(entries, reverse=True)[keep:]:
        shutil.rmtree(path, ignore_errors=True)
        if not path.exists():
            removed.append(path)
    return removed

