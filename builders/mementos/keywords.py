"""Object and behaviour keywords of Mementos descriptions: the paper's GPT-4 prompt, or spaCy offline.

Both the builder (reference keywords stored in ``provenance.keywords``) and the scorer (keywords of predictions)
ask through :class:`KeywordExtractor`, so the two never drift apart:

* with an LLM configured (``--llm-model``), the paper's extraction prompt (``templates/mementos/keywords.yaml``):
  ``pair`` for scoring - human paragraph 1, model paragraph 2, the answer's four lists read back as the authors'
  notebook does (including its "transfer the synonyms in 4 lists into the same word" step) - and ``single``, the
  same rules over one paragraph, for references;
* offline, :func:`filters.text.extract_keywords` (spaCy rules).

An LLM answer without readable lists falls back to spaCy for that description and is counted
(``fallbacks``), so a build or a score never silently treats an unreadable answer as "no keywords".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from builders.llm import LLMClient, LLMRequest
from filters.text import Keywords, extract_many, normalise_keyword
from templates.loader import load_templates, render

_LIST_LINE = re.compile(r"(object|action|behaviou?r)s?\s+list\s*(\d)\s*:\s*\[?(.*?)\]?\s*$", re.I | re.M)


def keyword_prompt(reference: str, prediction: str | None = None) -> str:
    """The paper's extraction prompt: ``pair`` with a prediction, ``single`` for a reference alone."""
    t = load_templates("mementos", "keywords")
    parts = {k: t[k] for k in ("rules", "example_paragraph_1", "example_paragraph_2", "example_lists_1", "example_lists_2")}
    if prediction is None:
        return render(t["single"], reference=reference, **parts)
    return render(t["pair"], reference=reference, prediction=prediction, **parts)


def parse_keyword_lists(text: str) -> dict[tuple[str, int], tuple[str, ...]]:
    """``{("objects"|"behaviours", paragraph number): keywords}`` read from "Object list 1: [a, b]" lines."""
    out: dict[tuple[str, int], tuple[str, ...]] = {}
    for kind, number, body in _LIST_LINE.findall(text or ""):
        key = ("objects" if kind.lower().startswith("object") else "behaviours", int(number))
        words = [normalise_keyword(w) for w in body.strip().strip("[]").split(",")]
        seen: dict[str, None] = {w: None for w in words if w}
        out[key] = tuple(seen)
    return out


def _keywords(lists: dict[tuple[str, int], tuple[str, ...]], number: int) -> Keywords | None:
    if ("objects", number) not in lists or ("behaviours", number) not in lists:
        return None
    return Keywords(lists[("objects", number)], lists[("behaviours", number)])


@dataclass
class KeywordExtractor:
    """Keywords through an LLM client when it is a real endpoint, else through spaCy."""

    client: LLMClient | None = None
    fallbacks: int = 0
    """LLM answers without readable lists (spaCy was used for them)."""
    _nlp: Any = field(default=None, repr=False)

    @property
    def uses_llm(self) -> bool:
        return self.client is not None and self.client.backend != "template"

    @property
    def method(self) -> str:
        if self.uses_llm:
            return f"llm:{self.client.config.model}"  # type: ignore[union-attr]
        from filters.text import load_nlp, nlp_name

        return f"spacy:{nlp_name(load_nlp())}"

    def _spacy(self, texts: Sequence[str]) -> list[Keywords]:
        return extract_many(texts) if texts else []

    def references(self, descriptions: Sequence[str]) -> list[Keywords]:
        """Keywords of reference descriptions, in input order."""
        if not self.uses_llm:
            return self._spacy(descriptions)
        answers = self.client.complete_many(  # type: ignore[union-attr]
            [LLMRequest([{"role": "user", "content": keyword_prompt(d)}]) for d in descriptions]
        )
        out: list[Keywords | None] = [_keywords(parse_keyword_lists(a.text), 1) for a in answers]
        return self._fill(out, descriptions)

    def pairs(self, references: Sequence[str], predictions: Sequence[str]) -> list[tuple[Keywords, Keywords]]:
        """(reference keywords, prediction keywords) per pair; with an LLM both come from one answer, as in the
        paper, so its harmonisation of synonyms across the two paragraphs applies."""
        if not self.uses_llm:
            return list(zip(self._spacy(references), self._spacy(predictions)))
        answers = self.client.complete_many(  # type: ignore[union-attr]
            [LLMRequest([{"role": "user", "content": keyword_prompt(r, p)}]) for r, p in zip(references, predictions)]
        )
        lists = [parse_keyword_lists(a.text) for a in answers]
        refs = self._fill([_keywords(x, 1) for x in lists], references)
        preds = self._fill([_keywords(x, 2) for x in lists], predictions)
        return list(zip(refs, preds))

    def _fill(self, found: list[Keywords | None], texts: Sequence[str]) -> list[Keywords]:
        missing = [i for i, k in enumerate(found) if k is None]
        if missing:
            self.fallbacks += len(missing)
            for i, kw in zip(missing, self._spacy([texts[i] for i in missing])):
                found[i] = kw
        return [k for k in found if k is not None]
