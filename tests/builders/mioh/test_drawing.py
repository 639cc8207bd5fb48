"""The tasks of a build drawn by worker processes give exactly the items of one process."""

from __future__ import annotations

from typing import Any

import pytest

from builders.mioh import builder
from builders.mioh.config import MiohConfig

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def drawn(processes: int | None, **options: Any) -> tuple[list[str], dict[str, Any]]:
    """Every item's JSON line of a demo build, drawn by ``processes`` processes (``--processes``), and the drawing
    statistics."""
    stats: dict[str, Any] = {}
    config = MiohConfig(progress=False, no_clip=True, processes=processes, **options)
    items = [item.to_json() for item in builder.build(config, stats)]
    return items, {k: v for k, v in stats["drawing"].items() if k != "seconds"}


def test_workers_draw_the_items_one_process_draws():
    """A small world, so that cells of a task make the same item: a cell that draws on must see the items of the
    task's earlier cells, wherever it is drawn. A build this small is drawn in one process unless asked."""
    world = {"demo_images": 30, "n_images": 2, "n_questions": 12}
    alone, one = drawn(1, **world)
    parallel, two = drawn(2, **world)
    assert one == {"workers": 1} and two == {"workers": 2} and parallel == alone
    assert drawn(3, n_questions=3, tasks=["existence", "position"])[1] == {"workers": 2}  # one per task at most
    assert drawn(None, n_questions=3, tasks=["existence", "position"])[1] == {"workers": 1}
