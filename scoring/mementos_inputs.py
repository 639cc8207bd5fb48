"""What Mementos scoring reads: reference keywords from items (a build or a release) and model predictions.

Kept apart from :mod:`scoring.mementos` (the metrics) so that :mod:`scoring.synonyms`, which builds graphs from
the same references, imports it without importing the metrics that in turn use the graphs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from builders.items import Item
from builders.mementos.keywords import KeywordExtractor
from filters.text import Keywords
from scoring.predictions import read_predictions as read_all
from scoring.releases import load_items
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
    """Mementos items of a build dir, an ``items.jsonl``, a release dir or a Hub repo at a tag
    (:func:`scoring.releases.load_items`; a release's frames are not written out: keywords need no pixels)."""
    refs = [reference_of(it) for it in load_items(path, with_images=False) if it.benchmark == BENCHMARK]
    if not refs:
        raise ConfigError(f"{path}: holds no {BENCHMARK} items")
    return refs


def read_predictions(path: str | Path, references: Mapping[str, Reference]) -> dict[str, str]:
    """``{id: output}`` from Mirage's predictions JSONL (:func:`scoring.predictions.read_predictions`: malformed
    lines and duplicate ids are one-line errors); ids that are not references are an error too."""
    out = {i: p.output for i, p in read_all(path).items()}
    unknown = sorted(set(out) - set(references))
    if unknown:
        raise ConfigError(f"{path}: id {unknown[0]!r} is not a {BENCHMARK} item of the reference"
                          + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""))
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
    extractor = KeywordExtractor(llm)
    ids = sorted(predictions)
    if extractor.uses_llm:
        pairs = extractor.pairs([references[i].description for i in ids], [predictions[i] for i in ids])
        return dict(zip(ids, pairs))
    preds = extractor.references([predictions[i] for i in ids])
    stale = [i for i in ids if references[i].stale_keywords]
    fresh = dict(zip(stale, extractor.references([references[i].description for i in stale])))
    return {i: (fresh.get(i) or references[i].keywords(), kw) for i, kw in zip(ids, preds)}


