"""MIOH's sources read and measured: the paper's files (COCO-ReM, PACO, SVG), each on its own.

Reading a paper-scale file and measuring every instance's visibility is most of a cold build, and the sources are
independent until their pools are made: each file is read into columns (:mod:`sources.tables`) and its geometry
measured (:func:`filters.geometry.measure`) by :func:`read_source`, a task an executor can run in a worker
process (:class:`sources.executors.ProcessExecutor`); only the columns come back. SVG's absences are verified with
a COCO file where ``--verify-absence-with`` names one (:mod:`sources.absence`), once the sources are back: where
it is the ``--coco-rem`` file, the COCO task hands over the presence it read (:func:`sources.absence.presence_of`)
instead of the file being parsed twice.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any, Sequence

from builders.mioh.config import MiohConfig
from filters.base import FilterStats
from filters.geometry import GeometryThresholds, Measures, measure
from sources.absence import CocoPresence, presence_of, verify_tables
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
    thresholds: GeometryThresholds
    presence: bool = False
    """COCO-ReM: also hand over the file's presence (it verifies SVG's absences)."""


@dataclass
class Measured:
    """A source read and measured: its columns (masks dropped), its instances' geometry, the geometry filter's
    statistics, and (COCO-ReM) the presence the absence verification needs, or (SVG) the verification's report."""

    tables: SourceTables
    measures: Measures
    stats: FilterStats
    presence: CocoPresence | None = None
    verification: dict[str, Any] | None = None


def source_tasks(config: MiohConfig) -> list[SourceTask]:
    """The paper's sources ``config`` names, in reading order (COCO-ReM, PACO, SVG)."""
    thresholds = config.pool_config(exhaustive_relations=False).geometry
    shared = bool(config.svg and config.verify_absence_with and _same_file(config.coco_rem, config.verify_absence_with))
    found = []
    if config.coco_rem:
        found.append(SourceTask("coco-rem", config.coco_rem, config.coco_images, ("existence", "counting"),  # type: ignore[arg-type]
                                thresholds, presence=shared))
    if config.paco:
        found.append(SourceTask("paco", config.paco, config.paco_images, ("attribute",), thresholds))  # type: ignore[arg-type]
    if config.svg:
        found.append(SourceTask("svg", config.svg, config.svg_images, ("position",), thresholds))  # type: ignore[arg-type]
    return found


def read_source(task: SourceTask) -> Measured:
    """Read ``task``'s file into columns and measure its instances (raises the reader's one-line error on bad
    input)."""
    presence = None
    if task.name == "coco-rem":
        style = load_coco_style(task.path, task.images)
        tables = coco_tables(style, task.path, source="coco-rem")
        presence = presence_of(style) if task.presence else None
    elif task.name == "paco":
        tables = paco_tables(task.path, task.images)
    else:
        tables = svg_tables(task.path, task.images)
    stats = FilterStats()
    measures = measure(tables, task.thresholds, stats)
    return Measured(replace(tables, masks=None), measures, stats, presence)


def read_sources(config: MiohConfig, tasks: Sequence[SourceTask], progress: Any) -> list[Measured]:
    """Every source read and measured (:func:`read_source`), in ``config.processes`` worker processes, by default
    where that pays: two or more sources, on two or more cores, whose files hold :data:`MIN_SOURCE_BYTES`
    together; then SVG's absences verified (with the COCO-ReM task's presence where that file is the
    verification file)."""
    if config.processes is not None:
        runner = ProcessExecutor(config.processes) if config.processes > 1 else LocalExecutor()
    else:
        runner = ProcessExecutor() if _worth_processes(tasks) else LocalExecutor()
    measured = runner.map(read_source, list(tasks), progress)
    presence = next((m.presence for m in measured if m.presence is not None), None)
    for k, task in enumerate(tasks):
        if task.name == "svg" and config.verify_absence_with:
            tables, report = verify_tables(measured[k].tables, config.verify_absence_with, presence)
            measured[k] = replace(measured[k], tables=tables, verification=report)
    return measured


def _worth_processes(tasks: Sequence[SourceTask]) -> bool:
    if len(tasks) < 2 or usable_cores() < 2:
        return False
    try:
        return sum(os.path.getsize(task.path) for task in tasks) >= MIN_SOURCE_BYTES
    except OSError:  # a missing file: its reader reports it as it reports any bad input
        return False


def _same_file(a: str | None, b: str | None) -> bool:
    """Whether two paths name one existing file (a missing one is reported by the reader that needs it)."""
    try:
        return bool(a and b) and os.path.samefile(a, b)  # type: ignore[arg-type]
    except OSError:
        return False
