"""The cells of a MIOH build drawn by worker processes, with exactly the items one process draws.

Each (task, question type, pressure) cell depends on its task's pools alone (its own seeded generator,
:func:`builders.seeding.rng`) except for one thing: an item whose id an earlier cell of the same task already
made is rejected (:attr:`builders.mioh.builder.MiohBuilder.seen`), and the cell draws on. So a worker draws a
cell *as if no earlier cell had made any item*, and records every id the cell looked up (:class:`SeenIds`). The
caller takes the cells in build order; a cell none of whose looked-up ids an earlier cell made saw exactly what
one process would have seen and is kept; any other cell is drawn again in the caller, after the cells before it,
as one process would draw it. The items are therefore the same whatever the number of workers; only the time
changes. In a paper-scale build a collision between cells is rare (images are drawn from tens of thousands); in
a small world it is common, so small builds (under :data:`MIN_QUESTIONS` questions) draw in the calling process.
"""

from __future__ import annotations

from itertools import groupby
from typing import Any, Callable, Iterable, Sequence

from sources.executors import ProcessExecutor, usable_cores

MIN_QUESTIONS = 5_000
"""Below this many questions in a build, starting workers costs more than it saves."""

Cell = tuple[str, str, str]
"""(task, question type, pressure)."""


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
               on_done: Callable[[int, int], None] = lambda done, total: None) -> list[Any]:
    """Each cell's :class:`builders.mioh.builder.CellResult`, in order, drawn by worker processes
    (:class:`sources.executors.ProcessExecutor`, one per usable core) where that pays: several cores, workers
    that inherit the pools, at least :data:`MIN_QUESTIONS` questions. ``stats`` gets ``workers`` and ``redrawn``
    (cells drawn again in this process)."""
    questions = sum(builders[task].config.n_questions for task, _, _ in cells)
    runs = task_runs(cells, usable_cores())
    executor = ProcessExecutor(min(usable_cores(), len(runs)))
    stats.update(workers=1, redrawn=0)
    if executor.workers < 2 or questions < MIN_QUESTIONS or not executor.inherits:
        results = []
        for done, (task, qtype, pressure) in enumerate(cells, 1):
            results.append(builders[task].build_cell(qtype, pressure))
            on_done(done, len(cells))
        return results
    stats["workers"] = executor.workers

    def draw_run(run: Sequence[Cell]) -> list[tuple[Any, set[str]]]:
        """The run's cells, each drawn as if it were the build's first: its result and the ids it looked up."""
        drawn = []
        for task, qtype, pressure in run:
            builder = builders[task]
            builder.seen = SeenIds()
            drawn.append((builder.build_cell(qtype, pressure), builder.seen.asked))
        return drawn

    found = {cell: result for run, results in zip(runs, executor.map(draw_run, runs)) for cell, result in zip(run, results)}
    out = []
    for done, (task, qtype, pressure) in enumerate(cells, 1):
        result, asked = found[(task, qtype, pressure)]
        builder = builders[task]
        if asked.isdisjoint(builder.seen.ids):  # it saw what it would have seen after the earlier cells
            builder.seen.update(item.id for item in result.items)
        else:
            result = builder.build_cell(qtype, pressure)
            stats["redrawn"] += 1
        out.append(result)
        on_done(done, len(cells))
    return out


def task_runs(cells: Sequence[Cell], workers: int) -> list[list[Cell]]:
    """``cells`` dealt into runs of one task's cells, each task's dealt round-robin into as few runs as make at
    least ``workers`` runs in all (where there are that many cells); a worker draws a run at a time.

    Why: a task's memos (its code matrices, its probes' image lists) are built by whichever process draws its
    cells: dealt one cell at a time, every worker built every task's memos. Round-robin, not halves, where a task
    is split: its question types cost unequally."""
    runs: list[list[Cell]] = []
    by_task = [list(group) for _, group in groupby(cells, key=lambda cell: cell[0])]
    pieces = -(-workers // len(by_task)) if by_task else 1
    for task_cells in by_task:
        n = min(pieces, len(task_cells))
        runs.extend(task_cells[k::n] for k in range(n))
    return runs
