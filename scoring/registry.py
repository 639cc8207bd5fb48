"""Which module scores which benchmark: the ``scorer`` of each benchmark's spec (:mod:`builders.registry`).

Each scorer module exposes:

* ``add_arguments(parser)``: its own options, declared on a dataclass and added with
  :func:`commandline.options.add_options` (the front end adds ``--release``, ``--predictions``, ``--out``...);
* ``run(items, predictions, args) -> dict``: the content of ``results.json`` (JSON-serialisable);
* ``print_report(results)``: its tables on stdout (80 columns);
* optionally ``plots(results, out_dir) -> list[Path]``: PNG figures.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from builders.registry import specs
from sources.errors import ConfigError


def scorers() -> dict[str, str]:
    """Benchmark name -> its scorer module, for every known benchmark that has one."""
    return {s.name: s.scorer for s in specs() if s.scorer}


def scorer(benchmark: str) -> ModuleType:
    """The scorer module of ``benchmark``; a one-line error for an unknown name."""
    known = scorers()
    if benchmark not in known:
        raise ConfigError(f"no scorer for benchmark {benchmark!r}; known: {', '.join(sorted(known))}")
    return importlib.import_module(known[benchmark])
