"""Where the heavy, embarrassingly parallel stages run: in this process (``local``), in worker processes on this
machine (``processes``) or on a Ray cluster (``ray``).

Two stages outgrow one machine - CLIP embeddings over hundreds of thousands of images and frame sampling over tens
of thousands of videos - and both are already cached by content, so running them elsewhere changes *where* the
work happens, never *what* comes out. An :class:`Executor` is the seam: a stage asks it to ``map`` a picklable
function over its inputs, in input order, with a progress callback; the CLIP stage also hands its executor to
:mod:`filters.clip_ray`, which builds a Ray Data pipeline from the :class:`RaySettings` it carries.

Choices, and why:

* **Processes for this machine's cores**: :class:`ProcessExecutor` is a :class:`concurrent.futures.ProcessPoolExecutor`
  for the CPU-bound stages that split into independent parts (a MIOH build's sources and question cells, the
  lint's checks). Where the platform forks (Linux), the workers inherit the function and everything it reads, so
  a closure over gigabytes of prepared tables costs nothing to hand over; only the items and the results are
  pickled. A worker's exception is raised by :meth:`ProcessExecutor.map` as it was raised.
* **Local stays the default and stays untouched**: :class:`LocalExecutor` is a plain loop in this process, so a
  build that does not ask for Ray never imports it and produces the same bytes as before.
* **Ray is started the way Ray users expect**: ``address=None`` starts (or joins) a local Ray instance,
  ``"auto"`` or ``"ray://host:10001"`` joins an existing cluster (:func:`ray.init`). When Ray is already
  initialised in this process (a test, a notebook) that instance is used and left running; an instance this
  executor started is shut down by :meth:`RayExecutor.close`.
* **Failures**: a task whose worker dies is retried (``max_retries``), so a killed worker loses only the item
  it was working on. Errors a user can act on (a corrupt image, an unreadable video) are *not* exceptions on
  the worker: the stage's function returns them as values and the driver raises the same one-line error, or
  skips the input, exactly as the local executor does (exceptions do not survive Ray's pickling with their
  fields intact, and a retried bad input would only fail again).
* **Progress**: ``on_progress(done, total)`` is called on the driver as results arrive from the cluster, so the
  build's progress bar shows cluster progress; Ray's own progress bars are switched off (they would fight with
  rich's).

Ray is imported only inside :class:`RayExecutor` (``pip install 'mirage-bench[scale]'``).
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Iterator, Protocol, Sequence, TypeVar

from .errors import ConfigError, MirageError
from commandline.options import option

__all__ = [
    "CLIP_ACTOR_OPTIONS", "EXECUTORS", "Executor", "ExecutorOptions", "LocalExecutor", "ProcessExecutor",
    "RayExecutor", "RaySettings", "RayUnavailable", "make_executor", "usable_cores",
]

EXECUTORS = ("local", "ray")
CLIP_ACTOR_OPTIONS = ("ray_actors", "ray_gpus_per_actor", "ray_batch_size")
"""The options of the CLIP encoder actors, which a builder without a CLIP stage on the executor leaves out."""

T = TypeVar("T")
R = TypeVar("R")
Progress = Callable[[int, int], None]


class RayUnavailable(MirageError):
    """``--executor ray`` was asked for but Ray is not installed or cannot be reached (one line)."""


class Executor(Protocol):
    """Runs a picklable function over inputs; results in input order."""

    name: str

    def map(self, fn: Callable[[T], R], items: Sequence[T], on_progress: Progress | None = None) -> list[R]: ...

    def describe(self) -> dict[str, Any]: ...

    def close(self) -> None: ...


class LocalExecutor:
    """This process, one item after another (today's behaviour)."""

    name = "local"

    def __init__(self) -> None:
        self.notes: dict[str, Any] = {}
        """What the stages report about their run (build.json ``executor``)."""

    def map(self, fn: Callable[[T], R], items: Sequence[T], on_progress: Progress | None = None) -> list[R]:
        out = []
        for done, item in enumerate(items, 1):
            out.append(fn(item))
            if on_progress is not None:
                on_progress(done, len(items))
        return out

    def describe(self) -> dict[str, Any]:
        return {"executor": "local", **self.notes}

    def close(self) -> None:
        pass

    def __enter__(self) -> "LocalExecutor":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def usable_cores() -> int:
    """The cores this process may run on (its affinity mask where the system has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


_TASK: Callable[[Any], Any] | None = None
"""The function of the current :meth:`ProcessExecutor.map`, in a worker (set by :func:`_install`)."""


def _install(fn: Callable[[Any], Any]) -> None:
    global _TASK
    _TASK = fn
    gc.disable()  # see ProcessExecutor


def _run_installed(item: Any) -> Any:
    return _TASK(item)  # type: ignore[misc]


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off in this process while the workers' results arrive, as it was after
    (see :class:`ProcessExecutor`)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


class ProcessExecutor:
    """Worker processes on this machine, ``workers`` of them (default: one per usable core); results in input order.

    ``fn`` is handed to each worker once, when it starts: inherited where the platform forks (:attr:`inherits`:
    closures and bound methods welcome, nothing they read is copied up front), pickled elsewhere. Each item and
    each result is pickled. An exception raised by ``fn`` is raised here, that of the first failing item in
    input order.

    Python's cyclic garbage collector is off in the workers, and in this process while their results arrive.
    Why: the tasks build millions of objects that live until the task returns and sit in no reference cycle (an
    annotation file parsed into columns, a build's items, unpickled here as they arrive), and the collector,
    which runs every 700 new objects and scans the older generations as they grow, walks them again and again
    for nothing (a paper-scale build's reading and drawing). Reference counting still frees
    whatever a task drops; a worker lives for one :meth:`map`, and what cycles its tasks leave go with it."""

    name = "processes"

    def __init__(self, workers: int | None = None) -> None:
        self.workers = max(1, workers if workers is not None else usable_cores())
        self.notes: dict[str, Any] = {}
        """What the stages report about their run (build.json ``executor``)."""

    @property
    def inherits(self) -> bool:
        """Whether workers inherit the function and what it reads (Linux: the fork start method)."""
        return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()

    def map(self, fn: Callable[[T], R], items: Sequence[T], on_progress: Progress | None = None) -> list[R]:
        workers = min(self.workers, len(items))
        if workers < 2:  # one item or one worker: no process would run beside this one
            return LocalExecutor().map(fn, items, on_progress)
        context = multiprocessing.get_context("fork" if self.inherits else "spawn")
        with _collector_paused(), ProcessPoolExecutor(workers, mp_context=context, initializer=_install,
                                                      initargs=(fn,)) as pool:
            futures = [pool.submit(_run_installed, item) for item in items]
            for done, future in enumerate(as_completed(futures), 1):
                if future.exception() is not None:  # the items not started yet come after every started one
                    for waiting in futures:
                        waiting.cancel()
                elif on_progress is not None:
                    on_progress(done, len(items))
            return [future.result() for future in futures]

    def describe(self) -> dict[str, Any]:
        return {"executor": "processes", "workers": self.workers, **self.notes}

    def close(self) -> None:
        pass

    def __enter__(self) -> "ProcessExecutor":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


@dataclass(frozen=True)
class RaySettings:
    """How the Ray stages are laid out on the cluster (the ``--ray-*`` options)."""

    address: str | None = None
    """``None``: start or join a local instance; ``"auto"``: the cluster this machine belongs to;
    ``"ray://HOST:10001"``: a remote cluster through Ray Client."""
    actors: int | None = None
    """CLIP encoder actors (``None``: one per GPU share in the cluster, else one per ``cpus_per_task`` CPUs)."""
    gpus_per_actor: float = 0.0
    """GPUs each CLIP encoder actor holds; fractions share a GPU (0.25: four actors per GPU). 0: CPU actors."""
    cpus_per_task: float = 1.0
    """CPUs each decode task, frame-sampling task or CPU encoder actor holds."""
    batch_size: int | None = None
    """Images per CLIP encoder call (``None``: ``--clip-batch-size``)."""
    max_retries: int = 3
    """Retries of a frame-sampling task whose worker died (the CLIP pipeline keeps Ray Data's own policy)."""

    def __post_init__(self) -> None:
        if self.actors is not None and self.actors < 1:
            raise ConfigError(f"--ray-actors must be at least 1, not {self.actors}")
        if self.gpus_per_actor < 0:
            raise ConfigError(f"--ray-gpus-per-actor must be >= 0, not {self.gpus_per_actor}")
        if self.gpus_per_actor > 1 and self.gpus_per_actor != int(self.gpus_per_actor):
            raise ConfigError(f"--ray-gpus-per-actor above 1 must be a whole number, not {self.gpus_per_actor}")
        if self.cpus_per_task <= 0:
            raise ConfigError(f"--ray-cpus-per-task must be > 0, not {self.cpus_per_task}")
        if self.batch_size is not None and self.batch_size < 1:
            raise ConfigError(f"--ray-batch-size must be at least 1, not {self.batch_size}")
        if self.max_retries < 0:
            raise ConfigError(f"--ray-max-retries must be >= 0, not {self.max_retries}")


class RayExecutor:
    """Tasks on a Ray cluster; see the module docstring for what is retried and how errors travel."""

    name = "ray"

    def __init__(self, settings: RaySettings | None = None) -> None:
        self.settings = settings or RaySettings()
        self._started_here = False
        self._ray: Any = None
        self.notes: dict[str, Any] = {}
        """What the stages report about their run (build.json ``executor``)."""

    @property
    def ray(self) -> Any:
        """The ``ray`` module, connected (initialised on first use)."""
        if self._ray is None:
            self._ray, self._started_here = _connect(self.settings.address)
        return self._ray

    def cluster_resources(self) -> dict[str, float]:
        return dict(self.ray.cluster_resources())

    def map(self, fn: Callable[[T], R], items: Sequence[T], on_progress: Progress | None = None) -> list[R]:
        if not items:
            return []
        ray = self.ray
        remote = ray.remote(num_cpus=self.settings.cpus_per_task, max_retries=self.settings.max_retries)(_call)
        fn_ref = ray.put(fn)
        refs = [remote.remote(fn_ref, item) for item in items]
        position = {ref: i for i, ref in enumerate(refs)}
        results: list[Any] = [None] * len(refs)
        pending, done = list(refs), 0
        while pending:
            ready, pending = ray.wait(pending, num_returns=min(len(pending), 16), timeout=0.5, fetch_local=True)
            if not ready:
                continue
            for ref, value in zip(ready, ray.get(ready)):
                results[position[ref]] = value
            done += len(ready)
            if on_progress is not None:
                on_progress(done, len(refs))
        return results

    def describe(self) -> dict[str, Any]:
        s = self.settings
        return {"executor": "ray", "address": s.address or "local", "actors": s.actors,
                "gpus_per_actor": s.gpus_per_actor, "cpus_per_task": s.cpus_per_task, "batch_size": s.batch_size,
                "max_retries": s.max_retries, **self.notes}

    def close(self) -> None:
        """Shut Ray down if this executor started it (an instance someone else started is left running)."""
        if self._ray is not None and self._started_here:
            self._ray.shutdown()
        self._ray = None

    def __enter__(self) -> "RayExecutor":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _call(fn: Callable[[Any], Any], item: Any) -> Any:
    """The task body: ``fn(item)`` (``fn`` arrives once per worker through the object store)."""
    return fn(item)


def _connect(address: str | None) -> tuple[Any, bool]:
    """The ``ray`` module, initialised, and whether this call started it."""
    try:
        import ray
    except ImportError as e:
        raise RayUnavailable("--executor ray: Ray is not installed; pip install 'mirage-bench[scale]'") from e
    try:
        from ray.data import DataContext

        ctx = DataContext.get_current()
        ctx.enable_progress_bars = False  # the build's rich bar shows progress; Ray's would interleave with it
        ctx.print_on_execution_start = False
    except Exception:  # Ray Data missing or renamed an option: progress bars are cosmetic
        pass
    if ray.is_initialized():
        return ray, False
    _check_reachable(address)
    try:
        ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level="WARNING",
                 configure_logging=True)
    except (ConnectionError, RuntimeError, ValueError) as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise RayUnavailable(f"--ray-address {address or '(local)'}: cannot connect to Ray: {first}") from e
    return ray, True


def _check_reachable(address: str | None, timeout: float = 5.0) -> None:
    """A one-line :class:`RayUnavailable` when ``HOST:PORT`` (or ``ray://HOST:PORT``) does not answer: Ray itself
    keeps retrying an unreachable GCS for minutes before it gives up."""
    if not address or address == "auto" or address == "local":
        return
    import socket

    host, _, port = address.split("://", 1)[-1].rpartition(":")
    if not host or not port.isdigit():
        raise RayUnavailable(f"--ray-address {address}: expected auto, HOST:PORT or ray://HOST:PORT")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as e:
        raise RayUnavailable(f"--ray-address {address}: nothing answers there ({e.strerror or e}); is the Ray "
                             "head running (ray start --head) and its port open?") from e


# --- options ----------------------------------------------------------------------------------------------


EXECUTOR_GROUP = "executor (docs/scale.md)"


@dataclass
class ExecutorOptions:
    """The ``--executor`` and ``--ray-*`` options, declared once as fields (:mod:`.options`), for a builder's
    config to inherit.

    The help says what runs on the executor: a config fills in ``OPTION_HELP`` (``executor_stages``,
    ``ray_task``, ``ray_retries_note``); one whose CLIP stage does not run there (Mementos samples frames only)
    leaves the CLIP encoder actors' options out with ``NO_OPTIONS = CLIP_ACTOR_OPTIONS``."""

    OPTION_HELP: ClassVar[dict[str, str]] = {
        "executor_stages": "CLIP image embeddings", "ray_task": "decode or frame-sampling task",
        "ray_retries_note": "; the CLIP pipeline keeps Ray Data's retries"}

    executor: str = option(
        "local", choices=EXECUTORS, group=EXECUTOR_GROUP,
        help="where {executor_stages} run: this process, or a Ray cluster; results land in the same cache and the "
             "items are the same (default {default})")
    ray_address: str | None = option(
        None, metavar="ADDR", group=EXECUTOR_GROUP,
        help="Ray cluster to join: auto, HOST:6379 or ray://HOST:10001 (default start a local instance)")
    ray_actors: int | None = option(
        None, metavar="N", group=EXECUTOR_GROUP,
        help="CLIP encoder actors (default one per GPU share, else one per --ray-cpus-per-task CPUs)")
    ray_gpus_per_actor: float = option(
        0.0, metavar="X", group=EXECUTOR_GROUP,
        help="GPUs per CLIP encoder actor; a fraction shares a GPU, 0 runs CPU actors (default {default:g})")
    ray_cpus_per_task: float = option(1.0, metavar="X", group=EXECUTOR_GROUP,
                                      help="CPUs per {ray_task} (default {default:g})")
    ray_batch_size: int | None = option(None, metavar="N", group=EXECUTOR_GROUP,
                                        help="images per CLIP encoder call on Ray (default --clip-batch-size)")
    ray_max_retries: int = option(
        3, metavar="N", group=EXECUTOR_GROUP,
        help="retries of a frame-sampling task whose worker died{ray_retries_note} (default {default})")

    def check_executor(self) -> None:
        """Raise :class:`ConfigError` for a bad value (call from the config's ``__post_init__``)."""
        if self.executor not in EXECUTORS:
            raise ConfigError(f"executor must be one of {', '.join(EXECUTORS)}, not {self.executor!r}")
        if self.executor == "local" and self.ray_address:
            raise ConfigError("--ray-address needs --executor ray")
        self.ray_settings()

    def ray_settings(self) -> RaySettings:
        return RaySettings(address=self.ray_address, actors=self.ray_actors, gpus_per_actor=self.ray_gpus_per_actor,
                           cpus_per_task=self.ray_cpus_per_task, batch_size=self.ray_batch_size,
                           max_retries=self.ray_max_retries)

    def make_executor(self) -> "LocalExecutor | RayExecutor":
        return make_executor(self.executor, self.ray_settings())


def make_executor(name: str, settings: RaySettings | None = None) -> "LocalExecutor | RayExecutor":
    """The executor called ``name`` (``local`` or ``ray``)."""
    if name == "local":
        return LocalExecutor()
    if name == "ray":
        return RayExecutor(settings)
    raise ConfigError(f"unknown executor {name!r}; valid: {', '.join(EXECUTORS)}")
