"""Options every builder's config shares, as an inheritable dataclass.

Builder configs are dataclasses whose field names are the argparse destinations of their command line, so
``--config FILE.yaml`` and flags set them alike (:func:`builders.cli.parse_config`). What all builders have -
seed, build name, cache dir, progress bars, the LLM client - is declared once here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from builders.llm import LLMConfig, LLMOptions


@dataclass
class BuildOptions(LLMOptions):
    """Seed, name, cache and progress options, and the ``llm_*`` options of :class:`LLMOptions`."""

    seed: int = 0
    name: str | None = None
    cache_dir: str | None = None
    progress: bool = True

    def resolved_cache_dir(self) -> str:
        """``--cache-dir``, else ``$MIRAGE_CACHE_DIR``, else ``~/.cache/mirage``."""
        from sources.demo import default_cache_dir

        return str(Path(self.cache_dir).expanduser() if self.cache_dir else default_cache_dir())

    def llm(self) -> LLMConfig:
        """The LLM client's config, its response cache under the build cache."""
        return self.llm_config(self.resolved_cache_dir())

    def as_record(self) -> dict[str, Any]:
        """The config for build.json: no progress flag, and the LLM endpoint without credentials."""
        out = {k: v for k, v in asdict(self).items() if k != "progress"}
        out["llm_base_url"] = self.llm().to_dict()["base_url"]
        return out
