"""When two answers are the same answer: VQA normalisation, synonyms and plurals, from ``normalise.yaml``.

A distractor must never be one of the ten human answers nor a synonym of the right one, so every answer is
reduced to a *key*: normalised like the official VQA evaluation (lower case, punctuation dropped, number words as
digits, articles dropped, contractions spelled out), its last word singular, then mapped through the synonym
table. Equal keys mean the same answer. Keys are cached: VQAv2's 2.1 million answers hold few distinct strings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Mapping

from templates.loader import load_templates

_NOT_WORD = re.compile(r"[^a-z0-9' ]+")


def singular(word: str) -> str:
    """A plural's singular by the regular English endings (``boxes -> box``, ``berries -> berry``, ``dogs -> dog``).

    Why only the regular endings: the rule only has to make "dog" and "dogs" one answer; irregular plurals that
    matter (people/person) are in the synonym table.
    """
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("es") and word[:-2].endswith(("s", "x", "z", "ch", "sh")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@dataclass
class AnswerTable:
    """The normalisation and synonym table (``templates/mmsap/normalise.yaml``)."""

    articles: frozenset[str]
    number_words: Mapping[str, str]
    contractions: Mapping[str, str]
    synonym_groups: tuple[tuple[str, ...], ...]
    vocabularies: Mapping[str, tuple[str, ...]]
    _canonical: dict[str, str] = field(default_factory=dict, repr=False)
    _keys: dict[str, str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for group in self.synonym_groups:
            target = self._stem(self.normalise(group[0]))
            for form in group:
                self._canonical[self._stem(self.normalise(form))] = target

    def normalise(self, text: str) -> str:
        """``"Two Dogs."`` -> ``"2 dogs"``; ``"The cat"`` -> ``"cat"``."""
        words = _NOT_WORD.sub(" ", text.lower().replace("&", " and ")).replace("'", " '").split()
        out = []
        for w in words:
            if w.startswith("'"):
                if out:
                    out[-1] += w
                continue
            if w in self.articles:
                continue
            w = self.number_words.get(w, w)
            out.append(self.contractions.get(w, w))
        return " ".join(out)

    @staticmethod
    def _stem(normalised: str) -> str:
        head, _, last = normalised.rpartition(" ")
        return f"{head} {singular(last)}" if head else singular(last)

    def key(self, text: str) -> str:
        """The comparison key of an answer: equal keys are the same answer."""
        cached = self._keys.get(text)
        if cached is None:
            stem = self._stem(self.normalise(text))
            cached = self._keys[text] = self._canonical.get(stem, stem)
        return cached

    def vocabulary(self, name: str) -> tuple[str, ...]:
        return self.vocabularies[name]


@lru_cache(maxsize=1)
def answer_table() -> AnswerTable:
    data = load_templates("mmsap", "normalise")
    return AnswerTable(
        articles=frozenset(data["articles"]),
        number_words=dict(data["number_words"]),
        contractions=dict(data["contractions"]),
        synonym_groups=tuple(tuple(g) for g in data["synonyms"]),
        vocabularies={"colours": tuple(data["colours"])},
    )


def display(answer: str) -> str:
    """How an option is shown: the answer with its first letter upper-cased (``"white" -> "White"``)."""
    return answer[:1].upper() + answer[1:]
