"""The word lists of ``templates/reefknot/filters.yaml`` made fast to ask: normalisation, noise, collocations,
synonyms, box rules and grammatical number."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

from sources.visual_genome import normalise_predicate
from templates.loader import load_templates

_WORD = re.compile(r"^[a-z][a-z' -]*[a-z]$|^[a-z]$")
MAX_NAME_WORDS = 3
MAX_PREDICATE_WORDS = 4


@dataclass(frozen=True)
class CollocationRule:
    name: str
    subjects: frozenset[str] | None
    predicates: frozenset[str] | None
    objects: frozenset[str] | None

    def matches(self, subject: str, predicate: str, obj: str) -> bool:
        return (
            (self.subjects is None or subject in self.subjects)
            and (self.predicates is None or predicate in self.predicates)
            and (self.objects is None or obj in self.objects)
        )


class Lexicon:
    """Normalisation and filtering lists (one instance per process: :func:`lexicon`)."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.aliases: dict[str, str] = {k: str(v) for k, v in data["predicate_aliases"].items()}
        self.articles = frozenset(data["name_articles"])
        self.noisy_predicates = frozenset(str(p) for p in data["noisy_predicates"])
        self.noisy_names = frozenset(data["noisy_names"])
        self.collocations = tuple(
            CollocationRule(
                rule["name"],
                *(
                    frozenset(str(v) for v in rule[k]) if rule.get(k) else None
                    for k in ("subjects", "predicates", "objects")
                ),
            )
            for rule in data["self_evident"]
        )
        groups: dict[str, set[str]] = {}
        for group in data["synonyms"]:
            for phrase in group:
                groups.setdefault(str(phrase), set()).update(str(p) for p in group)
        self.synonyms = {k: frozenset(v) for k, v in groups.items()}
        self.box_kind = {str(p): kind for kind, phrases in data["box_rules"].items() for p in phrases}
        self.directions = {str(p): direction for direction, phrases in data["directions"].items() for p in phrases}
        """Relation -> the direction (``filters.legibility.DIRECTIONS``) the clear-direction rule decides it by."""
        self.plural = frozenset(data["plural_names"])
        self.singular_s = frozenset(data["singular_s_names"])

    def name(self, raw: str) -> str:
        """``"A  Man "`` -> ``"man"``: lower case, single spaces, no leading article."""
        words = raw.lower().split()
        while len(words) > 1 and words[0] in self.articles:
            words = words[1:]
        return " ".join(words)

    def predicate(self, raw: str) -> str:
        """The bare relation (:func:`sources.visual_genome.normalise_predicate`: ``"is on the"`` -> ``"on"``), then
        the alias table (``"wears"`` -> ``"wearing"``, ``"to the left of"`` -> ``"left of"``)."""
        text = normalise_predicate(raw)
        return self.aliases.get(text, text)

    def direction(self, predicate: str) -> str | None:
        """The direction a relation states ("to left of" -> "left of"), ``None`` for a relation that is no direction."""
        return self.directions.get(predicate)

    def noisy_name(self, name: str) -> bool:
        return name in self.noisy_names or not _WORD.match(name) or name.count(" ") >= MAX_NAME_WORDS

    def noisy_predicate(self, predicate: str) -> bool:
        return (
            predicate in self.noisy_predicates
            or not _WORD.match(predicate)
            or predicate.count(" ") >= MAX_PREDICATE_WORDS
        )

    def collocation(self, subject: str, predicate: str, obj: str) -> str | None:
        """The name of the self-evident collocation rule the triplet matches, if any."""
        for rule in self.collocations:
            if rule.matches(subject, predicate, obj):
                return rule.name
        return None

    def similar(self, a: str, b: str) -> bool:
        """Equal or near-synonyms (App. A.2 1b)."""
        return a == b or b in self.synonyms.get(a, ())

    def is_plural(self, name: str) -> bool:
        """Grammatical number of a name, by its head (last) word: lists first, then the regular ``-s`` rule."""
        if name in self.plural or name in self.singular_s:
            return name in self.plural
        head = name.rsplit(" ", 1)[-1]
        if head in self.plural or head in self.singular_s:
            return head in self.plural
        return head.endswith("s") and not head.endswith(("ss", "us", "is", "ous"))


@lru_cache(maxsize=1)
def lexicon() -> Lexicon:
    return Lexicon(load_templates("reefknot", "filters"))
