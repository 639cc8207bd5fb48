"""The official Reefknot release, read by the Reefknot builder's importer (:mod:`builders.reefknot.importer`);
``--images`` is optional: images not at hand are counted in one warning line, and every check runs on the text.

The release carries no triplet ids, so the 1:1 yes/no promise of the paper is checked per image
(``lint_promises = {"yes_no_pairs": []}``): every image must hold as many "yes" as "no" questions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from builders.items import Item

PROMISES: dict[str, Any] = {"yes_no_pairs": []}


def read(paths: Sequence[Path], images_dir: Path | None = None, warnings: list[str] | None = None) -> list[Item]:
    """Items of Reefknot release files. Images are looked for under ``images_dir`` when given; those not found
    (all of them without it) are one line in ``warnings``, not an error: the lint's checks read the text only."""
    from builders.reefknot.importer import import_release

    items = []
    for path in paths:
        release = import_release(path, images_dir)
        note = release.image_note(path)
        if note and warnings is not None:
            warnings.append(note)
        items += release.items
    return items
