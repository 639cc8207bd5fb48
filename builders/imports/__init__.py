"""Published benchmarks read as Mirage items, so lint, review, release and scoring apply to them (issue 16).

``python -m builders.imports FORMAT FILE ... [--out DIR]`` writes a build dir (``builds/<benchmark>/<name>/``:
build.json, items.jsonl; linted like every build); ``python -m lint FILE --format FORMAT`` lints the files
directly. The formats are those the benchmarks' specs declare (``imports`` of :mod:`builders.registry`): ``pope``
(:mod:`builders.imports.pope`), ``mementos-csv`` (:mod:`builders.imports.mementos_csv`) and ``reefknot`` (read by
:mod:`builders.imports.reefknot` for the lint; imported as a build only by the Reefknot builder's importer,
``mirage import reefknot``, :func:`importer_of`). Readers of the raw files live in ``sources/`` (``pope.py``,
``mementos_csv.py``).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, Sequence

from builders.items import Item
from builders.registry import specs
from sources.errors import ConfigError


def formats() -> dict[str, str]:
    """Format name -> its importer module, over every known benchmark's spec."""
    return {fmt: module for s in specs() for fmt, module in s.imports.items()}


def read_published(fmt: str, paths: Sequence[Path], images_dir: Path | None = None
                   ) -> tuple[list[Item], dict[str, Any], list[str]]:
    """The items of a published benchmark's files, what the benchmark promises the lint (build.json's
    ``lint_promises``) and warnings about the files (undecodable bytes), one line each."""
    module = _module(fmt)
    warnings: list[str] = []
    items = module.read(list(paths), images_dir=images_dir, warnings=warnings)
    promises = module.promises(items) if hasattr(module, "promises") else dict(getattr(module, "PROMISES", {}))
    return items, promises, warnings


def images_to_copy(fmt: str, items: Sequence[Item], images_dir: Path | None, paths: Sequence[Path] = ()
                   ) -> dict[str, Path | bytes]:
    """``{name: the user's file, or the image's bytes}`` of images a build of these items must hold in its
    ``images/`` folder: those an importer renamed because two different images of the benchmark share a file
    name, and those embedded in the benchmark's files (POPEv2 in both cases)."""
    module = _module(fmt)
    return module.images_to_copy(items, images_dir, paths) if hasattr(module, "images_to_copy") else {}


def importer_of(fmt: str) -> str | None:
    """The module whose command imports ``fmt`` as a build when it is not ``python -m builders.imports`` (a
    benchmark's own importer, which adds that benchmark's checks to build.json), else ``None``: each format is
    imported by one command. The format module names it in ``IMPORTER``."""
    return getattr(_module(fmt), "IMPORTER", None)


def _module(fmt: str) -> Any:
    known = formats()
    if fmt not in known:
        raise ConfigError(f"unknown format {fmt!r}; known: {', '.join(sorted(known))}")
    return importlib.import_module(known[fmt])
