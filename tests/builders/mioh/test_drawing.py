"""The tasks of a build drawn by worker processes give exactly the items of one process."""

from __future__ import annotations

from typing import Any

import pytest

from builders.mioh import builder
from builders.mioh.config import MiohConfig

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def drawn(monkeypatch, workers: int, **options: Any) -> tuple[list[str], dict[str, Any]]:
    """Every item's JSON line of a demo build, drawn by ``workers`` processes, and the drawing statistics."""
    monkeypatch.setattr(builder, "usable_cores", lambda: workers)
    monkeypatch.setattr(builder, "MIN_QUESTIONS", 0)
    stats: dict[str, Any] = {}
    config = MiohConfig(progress=False, no_clip=True, **options)
    items = [item.to_json() for item in builder.build(config, stats)]
    return items, {k: v for k, v in stats["drawing"].items() if k != "seconds"}


def test_workers_draw_the_items_one_process_draws(monkeypatch):
    """A small world, so that cells of a task make the same item: a cell that draws on must see the items of the
    task's earlier cells, wherever it is drawn."""
    world = {"demo_images": 30, "n_images": 2, "n_questions": 12}
    alone, one = drawn(monkeypatch, 1, **world)
    parallel, two = drawn(monkeypatch, 2, **world)
    assert one == {"workers": 1} and two == {"workers": 2} and parallel == alone
    assert drawn(monkeypatch, 3, n_questions=3, tasks=["existence", "position"])[1] == {"workers": 2}
