"""What every lint check shares: the result shape (cleanlab Datalab style), the context, text normalisation.

A check looks at all items at once and returns a :class:`CheckResult`: a score per item in ``[0, 1]`` (1: no sign
of the fault, lower: more likely faulty, as in cleanlab's ``<issue>_score``), the flagged items with the reasons
(cleanlab's ``is_<issue>_issue``, plus why), and a summary of numbers for the whole set. Checks never change an
item; they read ``Item`` objects and the build's ``build.json`` (for what the builder promises).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Container, Mapping, Sequence

from builders.items import OPTION_LETTERS, Item, image_name
from builders.semantics.format import is_open

BUILD_KEYS = ("benchmark", "lint_promises")
"""The keys of ``build.json`` a check may read (what the builder is and promises); the checks are handed only
these, so that the lint's cache (:mod:`builders.lint.cache`), keyed by them and the items, holds all it reads."""


@dataclass
class CheckResult:
    """One check over a set of items."""

    name: str
    scores: list[float]
    """One score per item, in the order of the items given to the check."""
    reasons: dict[int, list[str]] = field(default_factory=dict)
    """Item index -> why it is flagged; an index absent here is not flagged."""
    summary: dict[str, Any] = field(default_factory=dict)
    """Numbers over the whole set (counts per rule, per-task statistics, what was skipped and why)."""

    def flag(self, index: int, reason: str, score: float) -> None:
        """Flag item ``index`` for ``reason``; its score becomes the lowest seen for it."""
        self.reasons.setdefault(index, []).append(reason)
        self.scores[index] = min(self.scores[index], score)

    @property
    def flagged(self) -> int:
        return len(self.reasons)


@dataclass
class LintContext:
    """What the checks may read besides the items: the build's ``build.json`` (its :data:`BUILD_KEYS`; empty for a
    bare items file), the dictionary of known words (``None`` when no word list is installed) and the allow-list
    (in a lint, a :class:`builders.lint.dictionary.LazyAllowList`). The word lists are read by the wording check
    alone, and :func:`builders.lint.report.lint` loads them where it runs it."""

    build: Mapping[str, Any] = field(default_factory=dict)
    dictionary: Container[str] | None = None
    allow_words: Container[str] = frozenset()
    llm: Any = None
    """A :class:`builders.llm.LLMConfig` for the text-only baseline, or ``None``."""


def image_names(item: Item) -> tuple[str, ...]:
    """Image names, not paths: a build and its release name the same images from different folders."""
    return tuple(image_name(p) for p in item.images)


_PUNCT = re.compile(r"[^\w\s]")
_SPACE = re.compile(r"\s+")
_FILLER = frozenset({"a", "an", "the", "this", "that", "these", "those", "given", "shown"})
_SYNONYMS = {"picture": "image", "photo": "image", "photograph": "image", "pictures": "images", "photos": "images"}


@lru_cache(maxsize=1 << 18)
def normalise(text: str) -> str:
    """Text as a near-duplicate test sees it: Unicode NFKC, lower case, punctuation and articles dropped,
    "picture"/"photo" read as "image", whitespace collapsed. "Is there a dog in the picture?" and
    "is there a dog in this image" normalise alike; "Is there a cat ..." does not."""
    text = _PUNCT.sub(" ", unicodedata.normalize("NFKC", text).lower())
    return " ".join(_SYNONYMS.get(w, w) for w in text.split() if w not in _FILLER)


@lru_cache(maxsize=1 << 18)
def collapse(text: str) -> str:
    """Whitespace collapsed and stripped: the exact-duplicate test's view of a text. (Both are cached: benchmark
    texts repeat - the same options, the same template question - so most calls are look-ups.)"""
    return _SPACE.sub(" ", text).strip()


REFERENCE_KEYS = ("pattern",)
"""Provenance keys holding reference text that is published and read by judges (predictive reasoning's
``pattern``, the rule a judge compares a model's answer with)."""


def texts(item: Item) -> list[tuple[str, str]]:
    """The texts of an item a model or a judge reads, named: context, question, each option, an open answer (a
    reference description is published text too) and the references of :data:`REFERENCE_KEYS`."""
    out = [("context", item.context), ("question", item.question)]
    out += [(f"option {OPTION_LETTERS[i]}", o) for i, o in enumerate(item.options)]
    if is_open(item):
        out.append(("answer", item.answer))
    out += [(key, item.provenance[key]) for key in REFERENCE_KEYS if isinstance(item.provenance.get(key), str)]
    return [(name, text) for name, text in out if text]


def per_task(items: Sequence[Item]) -> dict[tuple[str, str], list[int]]:
    """Item indices grouped by (benchmark, task), in a stable order."""
    groups: dict[tuple[str, str], list[int]] = {}
    for i, it in enumerate(items):
        groups.setdefault((it.benchmark, it.task), []).append(i)
    return dict(sorted(groups.items()))
