"""Mementos' official description CSVs as Mirage items: benchmark ``mementos``, task the domain, question type
``description``, pressure ``easy``, the question Mirage's Mementos builder asks (``templates/mementos``), the
human description as the reference answer. Decoding problems are kept in the provenance and reported."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from builders.items import Item, make_item
from sources.mementos_csv import read_mementos_csv
from templates.loader import load_templates

BENCHMARK = "mementos"
PROMISES: dict[str, Any] = {}


def read(paths: Sequence[Path], images_dir: Path | None = None, warnings: list[str] | None = None) -> list[Item]:
    question = load_templates("mementos", "describe")["question"]
    items = []
    for path in paths:
        table = read_mementos_csv(path)
        if warnings is not None:
            warnings.extend(table.decode_errors)
        for row in table.rows:
            image = str(images_dir / row.sequence) if images_dir else row.sequence
            items.append(make_item(
                benchmark=BENCHMARK, task=row.domain, question_type="description", pressure="easy", images=[image],
                question=question, options=(), answer=row.description,
                provenance={"source": "mementos-csv", "file": path.name, "row": row.line, "scheme": table.scheme,
                            "sequence": row.sequence, "undecodable": "\ufffd" in row.description},
            ))
    return items
