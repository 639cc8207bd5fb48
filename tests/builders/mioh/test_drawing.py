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


def test_a_probe_decided_on_some_images_is_decidable_there(tmp_path):
    """``Pools.decidable``, which lets a distractor search stop before labelling, never rules out a probe that
    ``Pools.rows`` decides on every image (and rules out some: the shortcut is exact and not vacuous)."""
    import numpy as np

    from builders.mioh.pools import Pools
    from filters.geometry import measure
    from sources.demo import load_demo
    from sources.tables import tables_of

    config = MiohConfig().pool_config(exhaustive_relations=True)
    tables = tables_of(load_demo(seed=0, n_images=120, cache_dir=tmp_path))
    tasks = ["existence", "counting", "attribute"]
    pools = Pools.build(tables, measure(tables, config.geometry), config, tasks)
    rng = np.random.default_rng(0)
    ruled_out = decided = 0
    for task in tasks:
        probes = np.arange(len(pools.probes(task)))
        for _ in range(100):
            images = rng.choice(pools.n_images, size=4, replace=False)
            on_all = (pools.rows(task, images, probes) >= 0).all(axis=0)
            decidable = pools.decidable(task, images)
            assert not (on_all & ~decidable).any(), (task, images)
            ruled_out += int((~decidable).sum())
            decided += int(on_all.sum())
    assert ruled_out and decided
    assert pools.decidable("position", [0, 1]) is None
