"""Forked helper processes for the heavy single-machine stages: when they are affordable, and how many.

A paper-scale build holds gigabytes of records. A forked child sees them without any copying up front, but every
object it touches (reference counts change on read) gets its page copied, so a child can end up holding a second
copy of what it reads. Forking is therefore used only on Linux (where it is safe with the threads a build may run
and ``/proc`` says what memory is free) and while the free memory covers what this process already holds.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from typing import Any, Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def fork_affordable(copies: int = 1) -> bool:
    """Linux, fork available, and more memory free than ``copies`` times what this process holds."""
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    try:
        with open("/proc/meminfo") as meminfo:
            available_kb = next(int(line.split()[1]) for line in meminfo if line.startswith("MemAvailable:"))
        with open("/proc/self/statm") as statm:
            resident_kb = int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
    except (OSError, StopIteration, ValueError, IndexError):
        return False
    return available_kb > copies * resident_kb


def forking_pays(workers: int, amount: int, minimum: int) -> bool:
    """Whether ``workers`` forked workers are worth starting for ``amount`` of work: two or more of them, at least
    ``minimum`` of work (below it, starting them costs more than it saves), and memory for their copy-on-write
    pages (:func:`fork_affordable`). The one rule of every worker pool here (occlusion, question cells, lint)."""
    return workers >= 2 and amount >= minimum and fork_affordable(workers)


_SHARE: int | None = None
"""This process's share of the cores, where a parent gave it one (:func:`share_cores`)."""


def share_cores(cores: int) -> None:
    """Let this process's worker pools use ``cores`` cores (at least one) from now on, not every core it may run on.

    Why: a child that runs beside siblings (:mod:`builders.mioh.source_workers`) would otherwise start a worker
    per core, each child, on cores its siblings already keep busy. Such workers win nothing, and they cost: forked
    from a process that holds gigabytes, the pages a worker reads and those its parent goes on writing are copied
    (copy-on-write). On a COCO-train-sized file, labelling took 40 s of CPU with two occlusion workers and 29 s
    without them, and a cold three-source build on two cores took 57 s without them and 72 s with them (one
    paired run each)."""
    global _SHARE
    _SHARE = max(1, cores)


def usable_cores() -> int:
    """The cores this process may run on (its affinity mask where the system has one), or its share of them
    where its parent gave it one (:func:`share_cores`)."""
    if _SHARE is not None:
        return _SHARE
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


_TASK: Callable[[Any], Any] | None = None
"""What :func:`forked_imap`'s workers run, set before they are forked (they inherit it)."""


def _run_task(arg: Any) -> Any:
    return _TASK(arg)  # type: ignore[misc]


def forked_imap(fn: Callable[[T], R], args: Iterable[T], workers: int, niceness: int = 0) -> Iterator[R]:
    """``map(fn, args)``, in order, computed by ``workers`` forked processes (``niceness`` added to theirs).

    ``fn`` may be any callable (a closure, a bound method): the workers inherit it, and whatever it reads, through
    the fork; only the arguments and the results are pickled. Call it only where :func:`fork_affordable` says so."""
    global _TASK
    _TASK = fn
    try:
        with multiprocessing.get_context("fork").Pool(
            workers, initializer=os.nice if niceness else None, initargs=(niceness,)
        ) as pool:
            yield from pool.imap(_run_task, args)
    finally:
        _TASK = None
