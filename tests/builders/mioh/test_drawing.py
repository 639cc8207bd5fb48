"""Cells drawn by worker processes give exactly the items of one process, collisions between cells included."""

from __future__ import annotations

from typing import Any

import pytest

from builders.mioh import drawing
from builders.mioh.builder import build
from builders.mioh.config import MiohConfig

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def drawn(monkeypatch, workers: int, **options: Any) -> tuple[list[str], dict[str, Any]]:
    """Every item's JSON line of a demo build, drawn by ``workers`` processes, and the drawing statistics."""
    monkeypatch.setattr(drawing, "usable_cores", lambda: workers)
    monkeypatch.setattr(drawing, "MIN_QUESTIONS", 0)
    stats: dict[str, Any] = {}
    config = MiohConfig(progress=False, no_clip=True, **options)
    return [item.to_json() for item in build(config, stats)], stats["drawing"]


SMALL_WORLD = {"demo_images": 30, "n_images": 2, "n_questions": 12}
"""So few images that cells of a task make the same item: the redraw path is exercised."""


def test_workers_draw_the_items_one_process_draws(monkeypatch):
    alone, one = drawn(monkeypatch, 1, **SMALL_WORLD)
    parallel, two = drawn(monkeypatch, 2, **SMALL_WORLD)
    assert one == {"workers": 1, "redrawn": 0} and two["workers"] == 2 and two["redrawn"] > 0
    assert parallel == alone
    wider, _ = drawn(monkeypatch, 1, n_questions=3)
    assert drawn(monkeypatch, 3, n_questions=3)[0] == wider


def test_a_cell_that_looked_up_an_earlier_cells_item_is_drawn_again(monkeypatch):
    """Without the check on looked-up ids (keeping every worker's cell) the items differ."""
    alone, _ = drawn(monkeypatch, 1, **SMALL_WORLD)
    monkeypatch.setattr(drawing.SeenIds, "__contains__", lambda self, item_id: item_id in self.ids)
    unchecked, stats = drawn(monkeypatch, 2, **SMALL_WORLD)
    assert stats["redrawn"] == 0 and unchecked != alone


@pytest.mark.parametrize(("tasks", "cells_per_task", "workers", "runs"), [
    ("abcd", 18, 2, [("a", range(18)), ("b", range(18)), ("c", range(18)), ("d", range(18))]),  # warm rerun
    ("a", 6, 2, [("a", (0, 2, 4)), ("a", (1, 3, 5))]),  # one task, two workers: dealt alternately
    ("ab", 5, 5, [("a", (0, 3)), ("a", (1, 4)), ("a", (2,)), ("b", (0, 3)), ("b", (1, 4)), ("b", (2,))]),
    ("a", 2, 8, [("a", (0,)), ("a", (1,))]),  # never an empty run
])
def test_workers_get_runs_of_one_task(tasks, cells_per_task, workers, runs):
    """So that each task's memos are built by as few workers as keep every worker busy."""
    cells = [(task, "mcq", str(k)) for task in tasks for k in range(cells_per_task)]
    assert drawing.task_runs(cells, workers) == [[(task, "mcq", str(k)) for k in ks] for task, ks in runs]
