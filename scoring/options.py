"""The options the scoring commands share (``mirage score``, ``health``, ``twin-gap``, ``predict``), declared once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from commandline.options import option
from scoring.predictions import FORMATS


@dataclass(kw_only=True)
class CacheDirOption:
    """Where release images (and LLM answers) are cached; a command names what it caches (``cached``)."""

    OPTION_HELP: ClassVar[dict[str, str]] = {"cached": "release images"}

    cache_dir: str | None = option(None, metavar="DIR",
                                   help="Mirage cache ({cached}) (default $MIRAGE_CACHE_DIR or ~/.cache/mirage)")


@dataclass(kw_only=True)
class PredictionsOptions(CacheDirOption):
    """How predictions files are read."""

    format: str | None = option(None, choices=FORMATS,
                                help="predictions format (default guessed from each file's name: .xlsx/.tsv/.csv "
                                     "-> vlmevalkit, samples_*.jsonl -> lmms-eval, else mirage)")
