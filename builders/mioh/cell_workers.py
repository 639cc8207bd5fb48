"""The cells of a MIOH build drawn in forked worker processes, with exactly the items one process draws.

Why: drawing questions is most of a warm paper-scale build (72 cells of 244 questions), and each cell depends on
the pools alone (its own seeded generator, :func:`builders.seeding.rng`) except for one thing: an item whose id an
earlier cell of the same task already made is rejected (:attr:`MiohBuilder.seen`), and the cell draws on.

So a worker draws a cell *as if no earlier cell had made any item*, and records every id the cell looked up
(:class:`SeenIds`). The caller takes the cells in build order; a cell none of whose looked-up ids an earlier cell
made saw exactly what one process would have seen and is kept; any other cell is drawn again in the caller, after
the cells before it, as one process would draw it. The items are therefore byte-identical whatever the number of
workers (``tests/builders/mioh/test_cell_workers.py``); only the time changes. In a paper-scale build a
collision between cells is rare (images are drawn from tens of thousands); in a small world it is common, and the
redrawn cells, counted in build.json (``stats.drawing.redrawn``), make parallel drawing pointless there, so small
builds (under :data:`MIN_QUESTIONS` questions) draw in the calling process.

A worker sees the pools through the fork (nothing is pickled on the way in), draws a run of one task's cells at
a time (:func:`task_runs`) and sends back their items.
"""

from __future__ import annotations

import sys
from itertools import groupby
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence, TypeVar

from sources.forking import forked_imap, forking_pays, usable_cores
from sources.heap import long_lived

MIN_QUESTIONS = 5_000
"""Below this many questions in a build, starting workers costs more than it saves."""

Cell = tuple[str, str, str]
"""(task, question type, pressure)."""

T = TypeVar("T")


class SeenIds:
    """The item ids a builder has made, and every id it was asked about (``in``) since it was made."""

    def __init__(self) -> None:
        self.ids: set[str] = set()
        self.asked: set[str] = set()

    def __contains__(self, item_id: object) -> bool:
        self.asked.add(item_id)  # type: ignore[arg-type]
        return item_id in self.ids

    def add(self, item_id: str) -> None:
        self.ids.add(item_id)

    def update(self, item_ids: Iterable[str]) -> None:
        self.ids.update(item_ids)


def draw_cells(builders: dict[str, Any], cells: Sequence[Cell], stats: dict[str, Any],
               on_done: Callable[[int, int], None] = lambda done, total: None,
               min_questions: int | None = None, workers: int | None = None, niceness: int = 0) -> Iterator[Any]:
    """Each cell's :class:`builders.mioh.builder.CellResult`, in order, drawn by forked workers where that pays
    (several cores, at least ``min_questions`` questions (default :data:`MIN_QUESTIONS`), memory for the
    workers: :func:`sources.forking.forking_pays`), ``workers`` of them (default: one per usable core; no more
    than the runs of :func:`task_runs` they draw), their ``niceness`` raised by that much; ``stats`` gets
    ``workers`` and ``redrawn`` (cells drawn again in this process)."""
    questions = sum(builders[task].config.n_questions for task, _, _ in cells)
    wanted = usable_cores() if workers is None else workers
    runs = task_runs(cells, wanted)
    workers = min(wanted, len(runs))
    stats.update(workers=1, redrawn=0)
    if not forking_pays(workers, questions, MIN_QUESTIONS if min_questions is None else min_questions):
        for done, (task, qtype, pressure) in enumerate(cells, 1):
            yield builders[task].build_cell(qtype, pressure)
            on_done(done, len(cells))
        return
    stats["workers"] = workers

    def draw_alone(cell: Cell) -> tuple[Any, set[str]]:
        """The cell drawn as if it were the build's first (in a worker): its result and the ids it looked up."""
        task, qtype, pressure = cell
        builder = builders[task]
        builder.seen = SeenIds()
        return builder.build_cell(qtype, pressure), builder.seen.asked

    def draw_run(run: Sequence[Cell]) -> list[tuple[Any, set[str]]]:
        return [draw_alone(cell) for cell in run]

    drawn = _in_order(cells, runs, forked_imap(draw_run, runs, workers, niceness))
    for done, ((result, asked), (task, qtype, pressure)) in enumerate(zip(drawn, cells), 1):
        builder = builders[task]
        if asked.isdisjoint(builder.seen.ids):  # it saw what it would have seen after the earlier cells
            builder.seen.update(item.id for item in result.items)
        else:
            result = builder.build_cell(qtype, pressure)
            stats["redrawn"] += 1
        yield result
        on_done(done, len(cells))


def task_runs(cells: Sequence[Cell], workers: int) -> list[list[Cell]]:
    """``cells`` dealt into runs of one task's cells, each task's dealt round-robin into as few runs as make at
    least ``workers`` runs in all (where there are that many cells); a worker draws a run at a time.

    Why: a task's memos (its label rows, its probes' image lists) are built by whichever process draws its cells.
    Cells dealt one at a time to two workers made both build every task's memos: at paper scale (72 cells, the
    benchmark's warm rerun) each worker used 6.0 s of CPU where one process drew everything in 9.8 s; dealt as
    one run per task, the cells took 5.6-5.75 s against 5.95-6.0 s (two paired runs). Round-robin, not halves,
    where a task is split: its question types cost unequally (PACO's attribute cells in halves took 2.2 and
    3.5 s, dealt alternately 2.7 and 2.75 s)."""
    runs: list[list[Cell]] = []
    by_task = [list(group) for _, group in groupby(cells, key=lambda cell: cell[0])]
    pieces = -(-workers // len(by_task)) if by_task else 1
    for task_cells in by_task:
        n = min(pieces, len(task_cells))
        runs.extend(task_cells[k::n] for k in range(n))
    return runs


def _in_order(cells: Sequence[Cell], runs: Sequence[Sequence[Cell]], drawn: Iterable[Sequence[T]]) -> Iterator[T]:
    """The results of ``drawn`` (each run's, in ``runs``' order) in the order of ``cells``, each as soon as it
    and every earlier cell's result are in."""
    number = {cell: k for k, cell in enumerate(cells)}
    waiting: dict[int, T] = {}
    due = 0
    for run, results in zip(runs, drawn):
        waiting.update((number[cell], result) for cell, result in zip(run, results))
        while due in waiting:
            yield waiting.pop(due)
            due += 1


class CellDrawing:
    """A build's cells, drawn a group of tasks at a time as their pools become ready; the results in build order.

    Why: the paper's sources are prepared by processes of their own (:mod:`builders.mioh.source_workers`), and the
    first to finish leaves a core idle while the others work. Each task's cells depend on that task's pools alone
    (and on its own earlier cells, drawn in the same order in any group), so the tasks of a finished source are
    drawn at once, and the items are those a build drawing every cell at the end makes. Whether forked workers pay
    (:func:`draw_cells`) is decided over the whole build, so that every group draws as the whole build would.
    """

    def __init__(self, tasks: Sequence[str], question_types: Sequence[str], pressures: Sequence[str],
                 n_questions: int, make_builder: Callable[[str, Any], Any],
                 task_bar: Callable[[str, int], Callable[[int, int], None]]) -> None:
        """``tasks``: the build's tasks with a source, in build order; ``make_builder(task, pools)`` makes a
        task's :class:`builders.mioh.builder.MiohBuilder`; ``task_bar`` makes the progress bar of the cells."""
        self.tasks = frozenset(tasks)
        self.cells: list[Cell] = [(t, q, p) for t in tasks for q in question_types for p in pressures]
        self.builders: dict[str, Any] = {}
        self.results: dict[Cell, Any] = {}
        self.stats: dict[str, Any] = {"workers": 1, "redrawn": 0}
        self._make_builder = make_builder
        self._task_bar = task_bar
        self._update: Callable[[int, int], None] | None = None
        self._workers_pay = n_questions * len(self.cells) >= MIN_QUESTIONS

    def draw(self, pools_by_task: Mapping[str, Any], workers: int | None = None, niceness: int = 0) -> None:
        """Draw the cells of the tasks of ``pools_by_task`` not drawn yet (``workers``, ``niceness``: as
        :func:`draw_cells`)."""
        new = {task for task in pools_by_task if task not in self.builders}
        if not new <= self.tasks:
            raise ValueError(f"pools for tasks no cell was planned for: {', '.join(sorted(new - self.tasks))}")
        cells = [cell for cell in self.cells if cell[0] in new]
        if not cells:
            return
        self.builders.update((task, self._make_builder(task, pools_by_task[task])) for task in new)
        if self._update is None:
            self._update = self._task_bar("questions", len(self.cells))
        stats: dict[str, Any] = {}
        with long_lived():  # the items and the pools' memos live to the end: no collector passes over them
            for cell, result in zip(cells, draw_cells(self.builders, cells, stats, self._progress,
                                                      min_questions=0 if self._workers_pay else sys.maxsize,
                                                      workers=workers, niceness=niceness)):
                self.results[cell] = result
        self._progress(len(cells), len(cells))  # zip stops at the last cell before its on_done call
        self.stats["workers"] = max(self.stats["workers"], stats["workers"])
        self.stats["redrawn"] += stats["redrawn"]

    def forget(self) -> None:
        """Drop every cell drawn (the pools they were drawn from are being prepared again)."""
        self.builders.clear()
        self.results.clear()
        self.stats.update(workers=1, redrawn=0)
        if self._update is not None:
            self._update(0, len(self.cells))

    def in_order(self) -> list[tuple[Cell, Any]]:
        """``(cell, result)`` of every cell drawn, in build order."""
        return [(cell, self.results[cell]) for cell in self.cells if cell in self.results]

    def _progress(self, done: int, total: int) -> None:
        assert self._update is not None  # made by draw() before any cell is drawn
        self._update(len(self.results), len(self.cells))
