"""A release's rows, grouped by task, as the harness exports need them (image bytes included).

A release (:mod:`data_cards.release`) stores one parquet config per task (``data/<slug>/test-*.parquet``) when it
has several tasks, else one ``all`` config (``data/test-*.parquet``); the exports name the same configs, so
``load_dataset(repo, config, revision=tag)`` in a harness reads exactly the rows exported here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from builders.items import Item
from builders.pairs import pair_of
from data_cards.export import SPLIT, task_slug
from sources.errors import ConfigError

COLUMNS = ("id", "benchmark", "task", "question_type", "pressure", "images", "image_names", "context", "question",
           "options", "answer", "provenance")


@dataclass
class ReleaseTask:
    """The rows of one task of a release."""

    task: str
    slug: str
    config: str
    """The dataset config that holds exactly this task's rows (``all`` in a one-task release)."""
    rows: list[dict[str, Any]] = field(default_factory=list)

    @property
    def pressures(self) -> list[str]:
        return sorted({r["pressure"] for r in self.rows})

    @property
    def control_pressures(self) -> list[str]:
        """Pressures some of whose items are controls: a context that is true (``context_truth``, MIOH)."""
        return sorted({r["pressure"] for r in self.rows if context_truth(r) == "true"})


    @property
    def has_pairs(self) -> bool:
        """Whether some item of the task has a partner (``provenance.pair``)."""
        return any(pair_of(row_item(r)) is not None for r in self.rows)


def context_truth(row: dict[str, Any]) -> str | None:
    """``"false"`` (the paper's misleading context), ``"true"`` (a control) or ``None`` (no context claim)."""
    return _provenance(row.get("provenance")).get("context_truth")


def row_item(row: dict[str, Any]) -> Item:
    """The :class:`Item` a release row (or an lmms-eval doc) holds; images are the build's file names."""
    return Item.from_dict({**row, "images": row.get("image_names") or (), "options": row.get("options") or (),
                           "context": row.get("context") or "", "provenance": _provenance(row.get("provenance"))})


def _provenance(value: Any) -> dict[str, Any]:
    """A release stores provenance as a JSON string (an lmms-eval doc carries it the same way)."""
    if isinstance(value, dict):
        return value
    try:
        loaded = json.loads(value) if value else {}
    except ValueError:
        return {}
    return loaded if isinstance(loaded, dict) else {}


def read_release_tasks(release_dir: str | Path) -> list[ReleaseTask]:
    """Every task of a release dir, sorted by task, rows in file order (sorted by id, as the release writes them)."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError("reading a release needs pyarrow: pip install 'mirage-bench[release]'") from None
    root = Path(release_dir)
    shards = sorted((root / "data").rglob(f"{SPLIT}-*.parquet"))
    if not shards:
        raise ConfigError(f"{root}: not a release dir (no data/**/{SPLIT}-*.parquet)")
    by_task: dict[str, list[dict[str, Any]]] = {}
    for shard in shards:
        try:
            table = pq.read_table(shard, columns=list(COLUMNS))
        except Exception as exc:  # noqa: BLE001 - pyarrow raises several types for a bad file
            raise ConfigError(f"{shard}: cannot read the release shard ({exc})") from None
        for row in table.to_pylist():
            by_task.setdefault(row["task"], []).append(row)
    single = len(by_task) == 1
    return [
        ReleaseTask(task=t, slug=task_slug(t), config="all" if single else task_slug(t), rows=by_task[t])
        for t in sorted(by_task)
    ]
