"""Which module scores which benchmark. A new benchmark adds one line here and one module ``scoring/<name>.py``.

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

from sources.errors import ConfigError

SCORERS: dict[str, str] = {
    "mioh": "scoring.mioh",
    "mementos": "scoring.mementos",
    "mmsap": "scoring.mmsap",
    "predictive": "scoring.predictive",
    "reefknot": "scoring.reefknot",
    "pope": "scoring.pope",
}


def scorer(benchmark: str) -> ModuleType:
    """The scorer module of ``benchmark``; a one-line error for an unknown name."""
    if benchmark not in SCORERS:
        raise ConfigError(f"no scorer for benchmark {benchmark!r}; known: {', '.join(sorted(SCORERS))}")
    return importlib.import_module(SCORERS[benchmark])
