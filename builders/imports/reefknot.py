"""The official Reefknot release, read by the Reefknot builder's importer (:mod:`builders.reefknot.importer`).

The release carries no triplet ids, so the 1:1 yes/no promise of the paper is checked per image
(``lint_promises = {"yes_no_pairs": []}``): every image must hold as many "yes" as "no" questions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from builders.items import Item
from sources.errors import ConfigError

PROMISES: dict[str, Any] = {"yes_no_pairs": []}


def read(paths: Sequence[Path], images_dir: Path | None = None, warnings: list[str] | None = None) -> list[Item]:
    """Items of Reefknot release files; the importer resolves each Visual Genome image, so ``images_dir`` is
    required."""
    from builders.reefknot.importer import import_release

    if images_dir is None:
        raise ConfigError("reefknot: give --images DIR (the Visual Genome images the release names)")
    return [it for path in paths for it in import_release(path, images_dir)]
