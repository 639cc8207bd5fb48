"""Options every builder's config shares, as an inheritable dataclass.

Builder configs are dataclasses whose fields are their options (:mod:`commandline.options`): the command line,
``--config FILE.yaml`` and ``--help`` are made from them (:func:`builders.cli.builder_parser`,
:func:`builders.cli.parse_config`). What all builders have - seed, output folder, build name, cache dir, progress
bars, the LLM client - is declared once here; a builder sets its own ``out`` default and fills in the help's
``seed_of``, ``build_name`` and ``cache_of``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from builders.llm import LLMConfig, LLMOptions
from commandline.options import option
from sources.demo import default_cache_dir


@dataclass
class BuildOptions(LLMOptions):
    """Seed, output, name, cache and progress options, and the ``llm_*`` options of :class:`LLMOptions`."""

    seed: int = option(0, metavar="N", help="seed of {seed_of} (default {default})")
    out: str = option("builds", metavar="DIR", help="parent directory of the build (default {default})")
    name: str | None = option(None, metavar="NAME", help="build name (default {build_name})")
    cache_dir: str | None = option(
        None, metavar="DIR", help="cache of {cache_of} (default $MIRAGE_CACHE_DIR or ~/.cache/mirage)")
    progress: bool = option(True, flag="--no-progress", help="hide progress bars")
    replace: bool = option(
        False, help="rebuild a build that holds a review (review.json, reviews/, adjudications.json, recheck.json): "
        "the old folder is moved aside to <name>.replaced-<time> (printed) instead of the build refusing")
    allow_empty_tasks: bool = option(
        False, help="exit 0 even when a task the build was asked for made no items (by default the build is "
        "written, and the command names each such task with its reasons and exits 1)")

    def resolved_cache_dir(self) -> str:
        """``--cache-dir``, else ``$MIRAGE_CACHE_DIR``, else ``~/.cache/mirage``."""
        return str(Path(self.cache_dir).expanduser() if self.cache_dir else default_cache_dir())

    def llm(self) -> LLMConfig:
        """The LLM client's config, its response cache under the build cache."""
        return self.llm_config(self.resolved_cache_dir())

    def as_record(self) -> dict[str, Any]:
        """The config for build.json: no progress, replace or allow-empty-tasks flag, and the LLM endpoint without credentials."""
        out = {k: v for k, v in asdict(self).items() if k not in ("progress", "replace", "allow_empty_tasks")}
        out["llm_base_url"] = self.llm().to_dict()["base_url"]
        return out
