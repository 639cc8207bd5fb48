"""What Mementos scoring reads: reference keywords from items (a build or a release) and model predictions.

Kept apart from :mod:`scoring.mementos` (the metrics) so that :mod:`scoring.synonyms`, which builds graphs from
the same references, imports it without importing the metrics that in turn use the graphs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from builders.items import Item, read_items
from filters.text import Keywords
from sources.errors import ConfigError


BENCHMARK = "mementos"


@dataclass(frozen=True)
class Reference:
    """What scoring needs of one Mementos item."""

    id: str
    domain: str
    description: str
    objects: tuple[str, ...]
    behaviours: tuple[str, ...]
    n_frames: int
    stale_keywords: bool = False
    """Reviewers fixed the description after the keywords were extracted: extract them again."""

    def keywords(self) -> Keywords:
        return Keywords(self.objects, self.behaviours)




# ------------------------------------------------------------------------------------------------- inputs


def reference_of(item: Item) -> Reference:
    kw = item.provenance.get("keywords") or {}
    review = item.provenance.get("review") or {}
    return Reference(
        id=item.id,
        domain=item.task,
        description=item.answer,
        objects=tuple(kw.get("objects", ())),
        behaviours=tuple(kw.get("behaviours", ())),
        n_frames=len(item.images),
        stale_keywords=review.get("status") == "fix" or "keywords" not in item.provenance,
    )


def read_reference(path: str | Path) -> list[Reference]:
    """Mementos items of a build dir, an ``items.jsonl``, or a release dir (``data/**/*.parquet``)."""
    path = Path(path)
    if path.is_dir() and (path / "items.jsonl").is_file():
        items = read_items(path / "items.jsonl")
    elif path.is_file():
        try:
            items = read_items(path)
        except (ValueError, KeyError) as exc:
            raise ConfigError(f"{path}: not an items.jsonl ({type(exc).__name__}: {exc})") from None
    elif path.is_dir() and (path / "data").is_dir():
        items = _release_items(path)
    else:
        raise ConfigError(f"{path}: neither a build dir, an items.jsonl nor a release dir")
    refs = [reference_of(it) for it in items if it.benchmark == BENCHMARK]
    if not refs:
        raise ConfigError(f"{path}: holds no {BENCHMARK} items")
    return refs


def _release_items(path: Path) -> list[Item]:
    from data_cards.export import read_columns

    cols = read_columns(path, ["id", "benchmark", "task", "question_type", "pressure", "image_names", "question",
                               "answer", "provenance"])
    return [
        Item(id=i, benchmark=b, task=t, question_type=q, pressure=p, images=tuple(names), question=qq, options=(),
             answer=a, provenance=json.loads(prov) if prov else {})
        for i, b, t, q, p, names, qq, a, prov in zip(*(cols[c] for c in cols))
    ]


def read_predictions(path: str | Path, references: Mapping[str, Reference]) -> dict[str, str]:
    """``{id: prediction}`` from JSONL; unknown ids, malformed lines and duplicate ids are one-line errors."""
    path = Path(path)
    out: dict[str, str] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise ConfigError(f"{path}: predictions file not found") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            item_id, text = str(row["id"]), row["prediction"]
        except (ValueError, KeyError, TypeError):
            raise ConfigError(f"{path}: line {n}: expected a JSON object with 'id' and 'prediction'") from None
        if not isinstance(text, str):
            raise ConfigError(f"{path}: line {n}: 'prediction' must be a string")
        if item_id not in references:
            raise ConfigError(f"{path}: line {n}: id {item_id!r} is not a {BENCHMARK} item of the reference")
        if item_id in out:
            raise ConfigError(f"{path}: line {n}: a second prediction for {item_id}")
        out[item_id] = text
    return out


def predicted_keywords(
    predictions: Mapping[str, str], references: Mapping[str, Reference], llm: Any = None
) -> dict[str, Keywords]:
    """Keywords of each prediction (spaCy offline, the paper's prompt with an LLM client), by id."""
    return {i: kw for i, (_, kw) in keyword_pairs(predictions, references, llm).items()}


def keyword_pairs(
    predictions: Mapping[str, str], references: Mapping[str, Reference], llm: Any = None
) -> dict[str, tuple[Keywords, Keywords]]:
    """(reference keywords, predicted keywords) by id; see the module docstring for where each comes from."""
    from builders.mementos.keywords import KeywordExtractor

    extractor = KeywordExtractor(llm)
    ids = sorted(predictions)
    if extractor.uses_llm:
        pairs = extractor.pairs([references[i].description for i in ids], [predictions[i] for i in ids])
        return dict(zip(ids, pairs))
    preds = extractor.references([predictions[i] for i in ids])
    stale = [i for i in ids if references[i].stale_keywords]
    fresh = dict(zip(stale, extractor.references([references[i].description for i in stale])))
    return {i: (fresh.get(i) or references[i].keywords(), kw) for i, kw in zip(ids, preds)}


