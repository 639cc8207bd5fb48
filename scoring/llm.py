"""The LLM a scorer asks (MIOH's fallback reader, Reefknot's VQA judge, Mementos' keyword extractor, the
predictive judge): the ``--llm-*`` options of :func:`builders.llm.add_llm_arguments`, answers cached under the
front end's ``--cache-dir``."""

from __future__ import annotations

import argparse
from pathlib import Path

from builders.llm import LLMConfig
from sources.demo import default_cache_dir


def llm_config(args: argparse.Namespace) -> LLMConfig:
    """The parsed ``--llm-*`` options, the response cache in ``--cache-dir`` (default ``$MIRAGE_CACHE_DIR`` or
    ``~/.cache/mirage``)."""
    return LLMConfig.from_args(args, cache_dir=Path(getattr(args, "cache_dir", None) or default_cache_dir()))
