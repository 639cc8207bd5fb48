"""POPE's questions as Mirage items: benchmark ``pope``, task ``existence``, question type ``yes_no``, pressure the
sampling setting (``random`` / ``popular`` / ``adversarial``, ``unknown`` when the file name does not say).

POPE asks three "yes" and three "no" questions per image and setting, so the import promises the lint a
balanced yes/no group per (image, setting): ``lint_promises = {"yes_no_pairs": ["setting"]}``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from builders.items import Item, make_item
from sources.pope import read_pope

BENCHMARK = "pope"
PROMISES: dict[str, Any] = {"yes_no_pairs": ["setting"]}


def read(paths: Sequence[Path], images_dir: Path | None = None, warnings: list[str] | None = None) -> list[Item]:
    """Items of POPE files (``warnings``: unused, POPE's readers fail on bad input)."""
    items = []
    for path in paths:
        for q in read_pope(path):
            image = str(images_dir / q.image) if images_dir else q.image
            items.append(make_item(
                benchmark=BENCHMARK, task="existence", question_type="yes_no", pressure=q.setting, images=[image],
                question=q.question, options=(), answer=q.label,
                provenance={"source": "pope", "file": path.name, "line": q.line, "question_id": q.question_id,
                            "object": q.target_object, "setting": q.setting},
            ))
    return items
