"""MIOH's sources read and measured: the paper's files (COCO-ReM, PACO, SVG), each on its own.

Reading a paper-scale file and measuring every instance's visibility is most of a cold build, and the sources are
independent until their pools are made: each file is read into columns (:mod:`sources.tables`) and its geometry
measured (:func:`filters.geometry.measure`) by :func:`read_source`, a task an executor can run in a worker
process (:class:`sources.executors.ProcessExecutor`). The task goes as far as it can on its own, so that the
workers stay busy while the largest file (COCO's) is still read: SVG's absences are verified with the COCO file
``--verify-absence-with`` names (:mod:`sources.absence`: the task reads that file's presence itself, even where it
is the ``--coco-rem`` file another task reads whole: on two cores that costs no wall time, where waiting for the
COCO task costs the verification and the SVG pools), and where no CLIP stage is asked for
(``--no-clip``) the source's pools are made there too (CLIP's signals need the scorer, which lives in the build's
process).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any, Sequence

from builders.mioh.config import MiohConfig
from builders.mioh.pools import Pools
from builders.mioh.rules import PoolConfig
from filters.base import FilterStats
from filters.geometry import Measures, measure
from sources.absence import verify_tables
from sources.coco import coco_tables, load_coco_style
from sources.executors import LocalExecutor, ProcessExecutor, usable_cores
from sources.paco import paco_tables
from sources.svg import svg_tables
from sources.tables import SourceTables

MIN_SOURCE_BYTES = 8 << 20
"""Below this many bytes of annotation files in all, worker processes cost more than they save."""


@dataclass(frozen=True)
class SourceTask:
    """One of the paper's sources a config names: the file, its images, the tasks it serves."""

    name: str
    """``coco-rem``, ``paco`` or ``svg``."""
    path: str
    images: str
    tasks: tuple[str, ...]
    pool_config: PoolConfig
    verify_with: str | None = None
    """SVG: the COCO file its absences are verified with (``--verify-absence-with``)."""
    pools: bool = False
    """Make the pools of the tasks it serves too (no CLIP stage)."""


@dataclass
class Measured:
    """A source read and measured: its columns (masks dropped), its instances' geometry, the geometry filter's
    statistics, (SVG) the absence verification's report, and (where the task made them) its pools."""

    tables: SourceTables
    measures: Measures
    stats: FilterStats
    verification: dict[str, Any] | None = None
    pools: Pools | None = None


def source_tasks(config: MiohConfig) -> list[SourceTask]:
    """The paper's sources ``config`` names, in reading order (COCO-ReM, PACO, SVG)."""
    pool_config = config.pool_config(exhaustive_relations=False)

    def served(*tasks: str) -> tuple[str, ...]:
        return tuple(task for task in tasks if task in config.tasks)

    found = []
    if config.coco_rem:
        found.append(SourceTask("coco-rem", config.coco_rem, config.coco_images,  # type: ignore[arg-type]
                                served("existence", "counting"), pool_config, pools=config.no_clip))
    if config.paco:
        found.append(SourceTask("paco", config.paco, config.paco_images, served("attribute"),  # type: ignore[arg-type]
                                pool_config, pools=config.no_clip))
    if config.svg:
        found.append(SourceTask("svg", config.svg, config.svg_images, served("position"),  # type: ignore[arg-type]
                                pool_config, verify_with=config.verify_absence_with, pools=config.no_clip))
    return found


def read_source(task: SourceTask) -> Measured:
    """Read ``task``'s file into columns, measure its instances, verify (SVG) its absences and, where asked, make
    its pools (raises the reader's one-line error on bad input)."""
    if task.name == "coco-rem":
        tables = coco_tables(load_coco_style(task.path, task.images), task.path, source="coco-rem")
    elif task.name == "paco":
        tables = paco_tables(task.path, task.images)
    else:
        tables = svg_tables(task.path, task.images)
    stats = FilterStats()
    measures = measure(tables, task.pool_config.geometry, stats)
    tables, verification = replace(tables, masks=None), None
    if task.verify_with:
        tables, verification = verify_tables(tables, task.verify_with)
    pools = Pools.build(tables, measures, task.pool_config, task.tasks) if task.pools and task.tasks else None
    return Measured(tables, measures, stats, verification, pools)


def read_sources(config: MiohConfig, tasks: Sequence[SourceTask], progress: Any) -> list[Measured]:
    """Every source read and measured (:func:`read_source`), in ``config.processes`` worker processes, by default
    where that pays: two or more sources, on two or more cores, whose files hold :data:`MIN_SOURCE_BYTES`
    together."""
    if config.processes is not None:
        runner = ProcessExecutor(config.processes) if config.processes > 1 else LocalExecutor()
    else:
        runner = ProcessExecutor() if _worth_processes(tasks) else LocalExecutor()
    return runner.map(read_source, list(tasks), progress)


def _worth_processes(tasks: Sequence[SourceTask]) -> bool:
    if len(tasks) < 2 or usable_cores() < 2:
        return False
    try:
        return sum(os.path.getsize(task.path) for task in tasks) >= MIN_SOURCE_BYTES
    except OSError:  # a missing file: its reader reports it as it reports any bad input
        return False
