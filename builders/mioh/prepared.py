"""The prepared-pools cache: a rerun on the same source files skips reading them and measuring their geometry.

Reading a paper-scale source (a COCO-train-sized file of 860,000 annotations, PACO- and SVG-sized files) and
measuring every instance's visibility is most of a cold MIOH build, and none of it depends on the question
options (``--n-questions``, ``--seed``, ``--n-images``, pressures, ...). So the pools it ends in - records,
geometry labels, co-occurrence statistics, the matrices - are pickled under the cache directory, and a later
build whose inputs are the same loads them instead (``benchmarks/bench_mioh_scale.py`` times both).

What "the same" means is the cache key, a sha256 over:

* every annotation file's content (sha256; computed once per process, ``build.json`` reuses it, and remembered
  across runs while the file's size, times and inode stay the same: :data:`DIGESTS_FILE`) and every image
  folder's path and modification time (adding or removing an image file changes it; the declared-size check
  ran when the entry was made);
* the pool rules (geometry thresholds, hard-negative thresholds, counting scope and limit);
* the code that reads and labels: every module of ``sources/`` and ``filters/`` and MIOH's pool and label
  modules, so an update of Mirage never reuses what an older version prepared.

An entry keeps each image's facts (records, geometry labels) as a pickle of its own, unpickled when the image
is first read (:class:`PackedFacts`), and keeps the tables :meth:`builders.mioh.pools.Pools.prepare` fills with
what is read over every image (probes, decisions per image and category, counts, refusals, the relation index):
a rerun opens the facts of the images its questions show. The arrays (tables and packed facts) are stored out of
band and mapped from the file (:func:`read_entry`): loading reads the rest of the pickle, and the pages drawing
touches are read when touched.

Polygon masks (COCO, PACO) are not kept: the geometry that needs them is measured before the entry is written,
and a kept mask would cost the cold build its conversion to RLE; reading one from a cached pool raises
(:class:`MaskNotKept`). Only builds without the CLIP stage use it (``--no-clip``, or no CLIP weights): CLIP signals depend on model
weights outside the key, and their embeddings have their own cache already. The demo world is cached by
:mod:`sources.demo`. On Linux, with the memory for it, a forked child writes the entry while the build draws its
questions (:meth:`PreparedPools.store_while`). Entries are written atomically (a crash leaves the previous entry or
none) and an entry that cannot be read is ignored and rewritten; ``--no-cache`` is not needed: delete
``DIR/mioh-pools``.

The folder keeps the :data:`KEEP` most recently used entries (``$MIRAGE_POOLS_KEEP`` overrides it): a paper-scale
entry is about a gigabyte, every set of sources and pool rules has its own (each threshold tried is one more),
and nothing else would ever remove them. Storing an entry removes the least recently used beyond that, and the
scratch folders of :mod:`builders.mioh.source_workers` that a killed build left behind (:func:`prune`).
"""

from __future__ import annotations

import copy
import copyreg
import hashlib
import io
import json
import mmap
import operator
import os
import pickle
import shutil
import struct
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, fields, replace
from pathlib import Path
from typing import Any, ClassVar, overload

import numpy as np

from builders.mioh.config import MiohConfig
from builders.mioh.pools import ImageFacts, Pools
from filters.base import FilterStats
from filters.geometry import Difficulty, InstanceGeometry
from sources.atomic import write_atomic
from sources.errors import ConfigError
from sources.forking import fork_affordable
from sources.hashing import DigestMemo, file_sha256
from sources.heap import long_lived
from sources.jsonio import PolygonRLE
from sources.records import ImageRecord, Instance, Relation

CACHE_FOLDER = "mioh-pools"
FORMAT = 5
"""Bumped when what an entry holds changes shape (2: polygon masks not kept; 3: facts packed per image, the
pools' tables kept; 4: arrays and packed facts stored out of band and mapped, :func:`entry_parts`; 5: an image's
facts packed as rows of field values, :func:`_facts_reduced`)."""

MAGIC = b"MIOHPL\x00\x05"
ALIGN = 64
"""Out-of-band buffers start at multiples of this (numpy reads aligned arrays fastest)."""

KEEP = 3
"""Entries kept in the folder by default: the most recently used (stored or loaded) ones."""

KEEP_VARIABLE = "MIRAGE_POOLS_KEEP"
"""The environment variable that overrides :data:`KEEP`."""

STALE_SCRATCH_S = 24 * 3600
"""A scratch folder of :mod:`builders.mioh.source_workers` this old belongs to no running build (a build prepares
its sources in minutes), so :func:`prune` removes it; a younger one may be another build's, still being filled."""

DIGESTS_FILE = "file-digests.json"
"""The annotation files' sha256 remembered by signature (:class:`sources.hashing.DigestMemo`): a rerun on the same
files does not read half a gigabyte again to find its entry."""

_CODE = ("sources", "filters", "builders/mioh/pools.py", "builders/mioh/labels.py")
"""The code an entry depends on (paths relative to the repository root)."""


def code_fingerprint() -> str:
    """sha256 over the source files that read records and label pools."""
    root = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    for entry in _CODE:
        path = root / entry
        for file in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(str(file.relative_to(root)).encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()


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
    """Load or store one build's prepared pools: ``{task: Pools}``, the geometry filter statistics and the
    absence-verification report, as :func:`builders.mioh.builder._build` makes them."""

    def __init__(self, config: MiohConfig) -> None:
        self.keep = kept_entries()
        folder = Path(config.resolved_cache_dir()) / CACHE_FOLDER
        digests = DigestMemo(folder / DIGESTS_FILE)
        self.path = folder / f"{cache_key(config, digests)}.pkl"
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
        return self.path.is_file()

    def load(self) -> tuple[dict[str, Any], FilterStats, dict[str, Any]] | None:
        """The cached ``(pools by task, filter stats, verification report)``, or ``None`` when there is no
        usable entry."""
        try:
            with long_lived():  # long-lived objects: no collector passes while they are made
                entry = read_entry(self.path)
        except Exception:  # noqa: BLE001 - a missing, truncated or foreign file is a cache miss, never an error
            return None
        if not isinstance(entry, dict) or entry.get("format") != FORMAT:
            return None
        try:
            os.utime(self.path)  # used now: the last entry pruning removes (a read-only cache keeps its old time)
        except OSError:
            pass
        return entry["pools"], entry["filter_stats"], entry["verification"]

    def store(self, pools: dict[str, Any], filter_stats: FilterStats, verification: dict[str, Any]) -> bool:
        """Write the entry atomically (``True`` when written); a full disk or a read-only cache only costs
        the next build its speed."""
        once: dict[int, Pools] = {}
        for p in pools.values():  # a pool serving two tasks is packed once and stays one object
            if id(p) not in once:
                once[id(p)] = packed(p)
        entry = {"format": FORMAT, "pools": {task: once[id(p)] for task, p in pools.items()},
                 "filter_stats": filter_stats, "verification": verification}
        try:
            write_atomic(self.path, entry_parts(entry))
        except OSError:
            return False
        prune(self.path.parent, self.keep)
        return True

    def store_while(
        self, pools: dict[str, Any], filter_stats: FilterStats, verification: dict[str, Any]
    ) -> Callable[[], bool]:
        """Start writing the entry; the returned function waits for it (``True`` when written).

        Why: pickling a paper-scale entry from pools made in this process keeps one core busy for ~30 s, while
        the build's next stage (drawing questions) needs only the other (pools packed already, by
        :mod:`builders.mioh.source_workers`, make it a copy of ~1.5 s). Where the system can fork and has the
        memory for a second copy of the pools (the child's pickling touches every object, so copy-on-write
        duplicates them), a forked child writes the snapshot taken at the fork while this process goes on;
        elsewhere it is written right away.
        """
        if not fork_affordable():
            written = self.store(pools, filter_stats, verification)
            return lambda: written
        pid = os.fork()
        if pid == 0:  # the child: write, then leave without running the parent's exit handlers or flushing
            code = 1
            try:
                code = 0 if self.store(pools, filter_stats, verification) else 1
            finally:
                os._exit(code)
        status: list[bool] = []

        def wait() -> bool:
            if not status:
                status.append(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0)
            return status[0]

        return wait


def kept_entries() -> int:
    """:data:`KEEP`, or ``$MIRAGE_POOLS_KEEP`` when set (a whole number, at least 1)."""
    text = os.environ.get(KEEP_VARIABLE, "").strip()
    if not text:
        return KEEP
    try:
        keep = int(text)
    except ValueError:
        keep = 0
    if keep < 1:
        raise ConfigError(f"${KEEP_VARIABLE}: expected the number of prepared-pools entries to keep (1 or more), "
                          f"got {text!r}")
    return keep


def prune(folder: Path, keep: int, now: float | None = None) -> list[Path]:
    """Remove all but the ``keep`` most recently used entries (``*.pkl``, by modification time, which a load
    renews) of ``folder``, and scratch folders older than :data:`STALE_SCRATCH_S`; returns what was removed.

    Never fails: an entry another build removed first, or one that cannot be removed, is skipped. Removing an
    entry another build has open is safe (it is mapped, and the mapping outlives the name)."""
    now = time.time() if now is None else now
    removed: list[Path] = []

    def modified(path: Path) -> float | None:
        try:
            return path.stat().st_mtime
        except OSError:
            return None

    entries = [(t, path) for path in folder.glob("*.pkl") if (t := modified(path)) is not None]
    for _, path in sorted(entries, reverse=True)[keep:]:
        try:
            path.unlink()
            removed.append(path)
        except OSError:
            pass
    for scratch in folder.glob(".preparing-*"):
        t = modified(scratch)
        if t is not None and now - t > STALE_SCRATCH_S:
            shutil.rmtree(scratch, ignore_errors=True)
            if not scratch.exists():
                removed.append(scratch)
    return removed


class MaskNotKept(Mapping[str, Any]):
    """Stands for a polygon mask in a prepared (cached) pool: the geometry that needed it is measured already,
    and question drawing reads no mask. Reading it is a bug, said so, rather than a wrong mask."""

    def __getitem__(self, key: str) -> Any:
        raise LookupError("polygon masks are not kept in the prepared-pools cache (builders/mioh/prepared.py); "
                          "read the source again to measure masks")

    def __iter__(self) -> Iterator[str]:
        return iter(("size", "counts"))

    def __len__(self) -> int:
        return 2


_NOT_KEPT = MaskNotKept()


def _not_kept() -> MaskNotKept:
    return _NOT_KEPT


_INSTANCE_FIELDS = tuple(f.name for f in fields(Instance))
_RECORD_FIELDS = tuple(f.name for f in fields(ImageRecord) if f.name not in ("instances", "relations"))
_instance_row = operator.attrgetter(*_INSTANCE_FIELDS)
_record_row = operator.attrgetter(*_RECORD_FIELDS)
_relation_row = operator.attrgetter(*(f.name for f in fields(Relation)))
_geometry_row = operator.attrgetter(*(f.name for f in fields(InstanceGeometry)))


def _facts_reduced(facts: ImageFacts) -> tuple[Callable[..., ImageFacts], tuple[Any, ...]]:
    """An image's facts as what they are made from (:class:`builders.mioh.pools.ImageFacts` is a function of its
    record and the instances' geometry labels), each dataclass as a tuple of its field values.

    Why: the rest of the facts (category states, instances and relations by category) is derived, and a
    dataclass pickles as a dictionary of its fields, names included, one per object: a paper-scale source packs
    ~1.5 million instances, each with two more dataclasses for its label. Rows of values read in C
    (``operator.attrgetter``) pack 2.4x faster and 55 % smaller. Reading an image rebuilds its facts
    (:func:`_facts_restored`), only for the images a build opens."""
    image = facts.image
    labels = [(d.level, d.reason, _geometry_row(d.geometry), d.rule) for d in facts.difficulty.values()]
    return _facts_restored, (_record_row(image), [_instance_row(i) for i in image.instances],
                             [_relation_row(r) for r in image.relations], list(facts.difficulty), labels)


def _facts_restored(record: tuple[Any, ...], instances: list[tuple[Any, ...]], relations: list[tuple[Any, ...]],
                    labelled: list[str], labels: list[tuple[Any, ...]]) -> ImageFacts:
    """:func:`_facts_reduced` undone."""
    image = ImageRecord(**dict(zip(_RECORD_FIELDS, record)), instances=tuple(Instance(*row) for row in instances),
                        relations=tuple(Relation(*row) for row in relations))
    diffs = {iid: Difficulty(level, reason, InstanceGeometry(*geometry), rule)
             for iid, (level, reason, geometry, rule) in zip(labelled, labels)}
    return ImageFacts.lazy(image, diffs)


class _WithoutPolygonMasks(pickle.Pickler):
    """Pickles polygon masks (:class:`sources.jsonio.PolygonRLE`, a million in a COCO-train-sized file) as
    :class:`MaskNotKept`: converting them to RLE to pickle them cost a cold paper-scale build ~15 s and the
    entry ~300 MB, for masks no later stage reads; and an image's facts as rows (:func:`_facts_reduced`).
    (Through the dispatch table, looked up in C, rather than ``reducer_override``, a Python call for every
    record pickled: packing is ~10 % faster.)"""

    dispatch_table: ClassVar[dict[type, Callable[[Any], Any]]] = {
        **copyreg.dispatch_table, PolygonRLE: lambda mask: (_not_kept, ()), ImageFacts: _facts_reduced,
    }


class PackedFacts(Sequence[ImageFacts]):
    """A prepared pool's per-image facts (:class:`builders.mioh.pools.ImageFacts`), one pickle per image in one
    byte array (``offsets[k]:offsets[k + 1]`` is image ``k``), unpickled when an image is first read.

    Why: a paper-scale entry holds ~200,000 images' facts, ~16 million Python objects that took a rerun ~23 s
    to unpickle, and drawing questions reads none of them: the pools answer from their decision tables
    (:meth:`builders.mioh.pools.Pools.prepare`). They stay in the entry for what does read them (the
    ``decide_*`` methods the tables were filled from); as one array they are mapped from the entry's file
    (:func:`read_entry`), so a rerun reads from disk only the images it opens."""

    def __init__(self, blob: np.ndarray, offsets: np.ndarray) -> None:
        self._blob = blob
        self._offsets = offsets
        self._opened: dict[int, ImageFacts] = {}

    @classmethod
    def pack(cls, facts: Sequence[ImageFacts]) -> PackedFacts:
        """Pickle each image's facts on its own (polygon masks not kept) into one array; one pickler serves all,
        its memo cleared between images so that each pickle stands alone."""
        blob = bytearray()
        offsets = [0]
        buffer = io.BytesIO()
        pickler = _WithoutPolygonMasks(buffer, protocol=pickle.HIGHEST_PROTOCOL)
        for one in facts:
            pickler.clear_memo()
            buffer.seek(0)
            buffer.truncate()
            pickler.dump(one)
            blob += buffer.getbuffer()
            offsets.append(len(blob))
        return cls(np.frombuffer(blob, dtype=np.uint8), np.array(offsets, dtype=np.int64))

    def __len__(self) -> int:
        return len(self._offsets) - 1

    @overload
    def __getitem__(self, index: int) -> ImageFacts: ...

    @overload
    def __getitem__(self, index: slice) -> list[ImageFacts]: ...

    def __getitem__(self, index: int | slice) -> ImageFacts | list[ImageFacts]:
        if isinstance(index, slice):
            return [self[k] for k in range(*index.indices(len(self)))]
        k = range(len(self))[index]  # negative indices, and IndexError, as a list gives them
        found = self._opened.get(k)
        if found is None:
            start, end = self._offsets[k:k + 2].tolist()
            found = self._opened[k] = pickle.loads(self._blob[start:end])
        return found

    def __reduce__(self) -> tuple[Any, ...]:
        return PackedFacts, (self._blob, self._offsets)


class ImagesOfFacts(Sequence[ImageRecord]):
    """``records.images`` of a prepared pool: each image's record, read from its (packed) facts."""

    def __init__(self, facts: Sequence[ImageFacts]) -> None:
        self._facts = facts

    def __len__(self) -> int:
        return len(self._facts)

    def __getitem__(self, index: Any) -> Any:  # an int gives a record, a slice a list of them
        if isinstance(index, slice):
            return [f.image for f in self._facts[index]]
        return self._facts[index].image


def is_packed(pools: Pools) -> bool:
    """Whether ``pools`` is as an entry keeps it (:func:`packed`): writing it is a copy, not a pickling."""
    return isinstance(pools.facts, PackedFacts)


def packed(pools: Pools) -> Pools:
    """A shallow copy of ``pools`` as an entry keeps it: facts packed one image at a time, the record set's
    images read through them (not pickled twice); ``pools`` itself when packed already (loaded from an entry,
    or prepared by :mod:`builders.mioh.source_workers`)."""
    if is_packed(pools):
        return pools
    twin = copy.copy(pools)
    twin.facts = PackedFacts.pack(pools.facts)  # type: ignore[assignment]
    twin.records = replace(pools.records, images=ImagesOfFacts(twin.facts))  # type: ignore[arg-type]
    return twin


# ------------------------------------------------------------------------------------------------ the file


def entry_parts(entry: Any) -> list[Any]:
    """The entry file's bytes, in parts: a table of contents, the pickle (protocol 5) and, each at a multiple of
    :data:`ALIGN`, the buffers it keeps out of band (every contiguous numpy array: the tables, the packed facts).

    Layout: :data:`MAGIC`, the pickle's length and the number of buffers (``<QQ``), each buffer's offset and
    length (``<QQ``), the pickle, then the buffers."""
    buffers: list[pickle.PickleBuffer] = []
    head = io.BytesIO()
    _WithoutPolygonMasks(head, protocol=5, buffer_callback=buffers.append).dump(entry)
    raws = [buffer.raw() for buffer in buffers]
    pickled = head.getbuffer()
    written = position = len(MAGIC) + 16 + 16 * len(raws) + pickled.nbytes
    spans = []
    for raw in raws:
        position = -(-position // ALIGN) * ALIGN
        spans.extend((position, raw.nbytes))
        position += raw.nbytes
    parts: list[Any] = [MAGIC, struct.pack("<QQ", pickled.nbytes, len(raws)), struct.pack(f"<{len(spans)}Q", *spans),
                        pickled]
    for start, raw in zip(spans[::2], raws):
        parts += [bytes(start - written), raw]
        written = start + raw.nbytes
    return parts


def read_entry(path: Path) -> Any:
    """The entry :func:`entry_parts` wrote, its arrays read-only views of the file mapped into memory: pages
    are read from disk when first touched (a rerun touches the rows of the images it draws), and forked
    workers share them. Raises on a file that is not such an entry (the caller's cache miss)."""
    with open(path, "rb") as fh:
        mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    view = memoryview(mapped)
    if bytes(view[:len(MAGIC)]) != MAGIC:
        raise ValueError(f"{path}: not a prepared-pools entry of format {FORMAT}")
    head_length, n_buffers = struct.unpack_from("<QQ", mapped, len(MAGIC))
    spans = struct.unpack_from(f"<{2 * n_buffers}Q", mapped, len(MAGIC) + 16)
    head_start = len(MAGIC) + 16 + 16 * n_buffers
    if head_start + head_length > len(mapped) or any(s + n > len(mapped) for s, n in zip(spans[::2], spans[1::2])):
        raise ValueError(f"{path}: truncated")
    buffers = [view[start:start + n] for start, n in zip(spans[::2], spans[1::2])]
    return pickle.loads(view[head_start:head_start + head_length], buffers=buffers)
