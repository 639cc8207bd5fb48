"""The paper's sources prepared at once, each in a forked process of its own, from its file to its pools' tables.

Why: a cold paper-scale build (COCO-train-, PACO- and SVG-sized files: ``benchmarks/bench_mioh_scale.py``) read one
file after another, then measured and labelled one source after another, mostly on one core. Yet the sources are
independent until questions are drawn: each serves its own tasks with pools of its own. So each source is read,
measured (:class:`builders.mioh.pools.Pools`) and tabled (:meth:`~builders.mioh.pools.Pools.prepare`) by a forked
child, and handed back the way the prepared-pools cache keeps pools (:mod:`builders.mioh.prepared`: per-image
facts packed, arrays out of band, the file mapped). Packing is work the cache entry needs anyway, so handing the
pools back costs little, and writing the entry afterwards is a copy. The pools are those one process makes (the
same code on the same records), and drawing from packed pools is what a warm rerun does: the items are the same
(``tests/builders/mioh/test_source_workers.py``). The caller draws a finished source's questions while the other
sources are still prepared, in workers at the lowest priority (:data:`DRAWING_NICENESS`), so that the core the
first children leave is not idle while the last one works. Each child's own worker pools (occlusion) get only its
share of the cores (:func:`core_shares`): none where the sources outnumber the cores.

Used where it pays and is safe: no CLIP stage (its model is loaded once, in the caller), at least two sources whose
annotation files hold :data:`MIN_SOURCE_BYTES` together, several cores, and fork available
(:func:`sources.forking.fork_affordable`). A bad source is reported as the one-process build reports it: the first
source, in reading order, that fails to be read, else the first whose labelling fails. A child that ends without
a result (killed for memory, ...) makes the caller prepare in its own process instead.
"""

from __future__ import annotations

import os
import pickle
import shutil
import signal
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Sequence

from builders.mioh.config import MiohConfig
from builders.mioh.pools import Pools
from builders.mioh.prepared import CACHE_FOLDER, entry_parts, packed, read_entry
from builders.mioh.shared_presence import SharedPresence
from filters.base import FilterStats
from sources.atomic import write_atomic
from sources.errors import MirageError
from sources.forking import fork_affordable, share_cores, usable_cores
from sources.heap import long_lived

MIN_SOURCE_BYTES = 8 << 20
"""Below this many bytes of annotation files in all, forking costs more than it saves."""

YIELDING = 10
"""The niceness of every child but the one with the largest file. The largest file takes longest to prepare, so
its child gets a core whenever it can use one and the others fill the other core: the children end closer
together, and the build waits less on a last child packing its pools alone on one core."""

DRAWING_NICENESS = 19
"""The niceness of the workers that draw a finished source's questions while the other sources are prepared:
the lowest priority, so they take only the cores the children leave idle and never delay the last child, which
is what the build waits for."""

POLL_S = 0.05
"""How often the caller looks for finished children."""

Prepared = tuple[dict[str, Pools], FilterStats, dict[str, Any]]
"""Pools by task, the geometry filter's statistics, the absence-verification report."""


def worth_forking(config: MiohConfig, readers: Sequence[Any]) -> bool:
    """Whether :func:`prepare_forked` pays for ``readers`` (see the module docstring)."""
    if not config.no_clip or len(readers) < 2 or usable_cores() < 2 or not fork_affordable():
        return False
    try:
        return sum(os.path.getsize(reader.path) for reader in readers) >= MIN_SOURCE_BYTES
    except OSError:  # a missing file: the one-process path reports it as it reports any bad input
        return False


def prepare_forked(
    config: MiohConfig, readers: Sequence[Any], task_bar: Callable, shared: SharedPresence | None = None,
    on_source: Callable[[dict[str, Pools]], None] = lambda pools_by_task: None,
) -> Prepared | None:
    """Each of ``readers`` (:class:`builders.mioh.builder.SourceReader`) prepared by a forked child; ``None`` when a
    child ended without a result (the caller then prepares in process). Raises a child's error (a bad source).
    ``shared``, the readers' COCO presence hand-off, is switched to the children's scratch folder.

    ``on_source`` gets each source's pools by task as soon as its child is done, while the others still work: the
    caller draws their questions meanwhile (the core a finished child leaves would otherwise idle). What is
    returned is merged in reading order, whatever order the children end in."""
    folder = Path(config.resolved_cache_dir()) / CACHE_FOLDER
    try:
        folder.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=".preparing-", dir=folder))
    except OSError:
        return None
    update = task_bar("sources: read + label", len(readers))
    children: dict[int, int] = {}
    exits: dict[int, int] = {}
    results: dict[int, dict[str, Any]] = {}
    try:
        sizes = [os.path.getsize(reader.path) for reader in readers]
        if shared is not None and shared.path is not None:
            shared.across(scratch, giver=[reader.path for reader in readers].index(shared.path))
        shares = core_shares(usable_cores(), sizes)
        for k, reader in enumerate(readers):
            pid = os.fork()
            if pid == 0:
                if sizes[k] < max(sizes):
                    os.nice(YIELDING)
                share_cores(shares[k])
                _child(config, reader, scratch, k)  # never returns
            children[k] = pid
        while len(results) < len(readers):
            if not _wait(children, exits, scratch, update, until_one_of=set(children) - set(results)):
                return None
            for k in sorted(set(exits) - set(results)):  # all ended well: _wait raises a child's error itself
                with long_lived():
                    results[k] = read_entry(scratch / f"{k}.pkl")
                on_source(_tasks_of(readers[k], config.tasks, results[k]))
        return _merged(readers, config.tasks, results)
    finally:
        for k, pid in children.items():  # on an error or an interrupt: no child is left running
            if k not in exits:
                _kill(pid)
        shutil.rmtree(scratch, ignore_errors=True)


def core_shares(cores: int, sizes: Sequence[int]) -> list[int]:
    """The cores each child's own worker pools may use (:func:`sources.forking.share_cores`), for children
    preparing files of ``sizes`` bytes side by side on ``cores`` cores: an even share, the cores left over going
    to the largest files first, and at least one each (a child with one measures occlusion in its own process).
    Why not every core each: :func:`sources.forking.share_cores`."""
    even, left = divmod(cores, len(sizes))
    shares = [max(1, even)] * len(sizes)
    if even:
        for k in sorted(range(len(sizes)), key=lambda k: (-sizes[k], k))[:left]:
            shares[k] += 1
    return shares


def _child(config: MiohConfig, reader: Any, scratch: Path, k: int) -> None:
    """Read, label and pack one source into ``scratch/k.pkl`` (``k.error`` on a failure); ``k.read`` marks that
    reading succeeded. Leaves without running the parent's exit handlers."""
    code = 1
    try:
        verification: dict[str, Any] = {}
        with long_lived():
            records = reader.read(verification)
        (scratch / f"{k}.read").touch()
        tasks = [task for task in reader.tasks if task in config.tasks]
        filter_stats = FilterStats()
        pools = None
        if tasks:
            with long_lived():  # the pools' tables live to the end too (collections took half of PACO's)
                pools = Pools(records, config.pool_config(exhaustive_relations=False), filter_stats)
                pools.prepare(tasks)
            pools = packed(pools)
        write_atomic(scratch / f"{k}.pkl", entry_parts({"pools": pools, "filter_stats": filter_stats,
                                                        "verification": verification}))
        code = 0
    except BaseException as exc:  # noqa: BLE001 - every failure goes to the caller, who raises it
        code = 2
        if not isinstance(exc, MirageError):  # a bug: where it happened, for whoever reads the traceback
            exc.add_note(f"raised in the process preparing {reader.name}:\n{traceback.format_exc()}")
        try:
            blob = pickle.dumps(exc)
            pickle.loads(blob)  # an exception that cannot be rebuilt is sent as its message
        except Exception:  # noqa: BLE001
            stand_in = RuntimeError(f"{type(exc).__name__}: {exc}")
            for note in getattr(exc, "__notes__", ()):
                stand_in.add_note(note)
            blob = pickle.dumps(stand_in)
        try:
            write_atomic(scratch / f"{k}.error", blob)
        except BaseException:  # noqa: BLE001
            code = 1
    finally:
        os._exit(code)


def _wait(
    children: dict[int, int], exits: dict[int, int], scratch: Path, update: Callable[[int, int], None],
    until_one_of: set[int],
) -> bool:
    """Wait until one of the children ``until_one_of`` has ended well (exit codes go into ``exits``), raising the
    error a one-process build would raise first as soon as it is known; ``False`` when a child ended without a
    result."""
    while True:
        for k, pid in children.items():
            if k not in exits:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    exits[k] = os.waitstatus_to_exitcode(status)
                    update(sum(code == 0 for code in exits.values()), len(children))
        if any(code not in (0, 2) for code in exits.values()):
            return False
        read = {k for k in children if k in exits or (scratch / f"{k}.read").exists()}
        failed = sorted(k for k, code in exits.items() if code == 2)
        # reading comes first in one process: a failure to read beats a failure to label, once all have read
        unread_failure = [k for k in failed if not (scratch / f"{k}.read").exists()]
        if unread_failure and len(read) == len(children):
            _raise(scratch, unread_failure[0])
        if failed and len(exits) == len(children):
            _raise(scratch, failed[0])
        if not failed and any(exits.get(k) == 0 for k in until_one_of):
            return True
        time.sleep(POLL_S)


def _raise(scratch: Path, k: int) -> None:
    raise pickle.loads((scratch / f"{k}.error").read_bytes())


def _tasks_of(reader: Any, tasks: Sequence[str], result: dict[str, Any]) -> dict[str, Pools]:
    """The pools of one child's ``result`` by the build's tasks its reader serves."""
    return {task: result["pools"] for task in reader.tasks if task in tasks}


def _merged(readers: Sequence[Any], tasks: Sequence[str], results: dict[int, dict[str, Any]]) -> Prepared:
    """The children's results, merged in reading order (the order one process fills them in)."""
    pools_by_task: dict[str, Pools] = {}
    filter_stats = FilterStats()
    verification: dict[str, Any] = {}
    for k, reader in enumerate(readers):
        filter_stats = filter_stats.merge(results[k]["filter_stats"])
        verification.update(results[k]["verification"])
        pools_by_task.update(_tasks_of(reader, tasks, results[k]))
    return pools_by_task, filter_stats, verification


def _kill(pid: int) -> None:
    """Stop and reap a child not yet waited for."""
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass
