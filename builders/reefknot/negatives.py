"""Relations that are false in an image: the adversarial "no" of a Y/N pair and the MCQ distractors.

A relation ``q`` is *false* for a kept triplet (s, p, o) of an image when ``q`` is not annotated from s to o in
that image, is no near-synonym of a relation that is (``templates/reefknot/filters.yaml`` ``synonyms``), and:

* a direction (``left of``, ``above``, ...: ``directions`` in ``filters.yaml``), on every source: the two boxes
  clearly show another direction (:func:`filters.legibility.clear_direction`, the rule MIOH and MM-SAP use); a
  diagonal pair makes no direction false, whatever the source annotates, so an MCQ never offers a direction the
  picture shows and a "no" is never asked of one it may show;
* on an exhaustive source (the demo world lists every relation that holds) being absent is enough;
* otherwise a ``q`` with a box rule (perceptive, and the few cognitive ones such as "sitting on") must be
  contradicted by the two boxes (:func:`box_contradicts`): a VG scene graph lists a few relations per pair, so
  absence alone proves nothing for "near" or "left of"; a perceptive ``q`` without a box rule is never used;
* **cognitive** ``q``: absent from the image's scene graph (exact on the demo world; on VG the paper's own
  assumption, good enough for an MCQ distractor beside the one annotated relation, never for the "no" of a Y/N
  pair: unannotated is not false, so a scene graph gets no cognitive Y/N), and seen with the subject somewhere in
  the source - for the same
  (subject, object) pair, else for the subject with any object (the level is recorded as ``plausibility``). A
  relation never seen with the subject is never used: "Is the hexagon pointing at the octagon?" asks something a
  hexagon cannot do, and the answer "no" follows from the words alone.

The pair's language-prior relation (its most frequent relation in the source) is never a negative or a
distractor: the image-independent filter already removed it as an answer, and offering it as a wrong answer
would let a blind model score by avoiding it - the prior baseline then sits at chance by construction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import numpy as np

from builders.reefknot.lexicon import Lexicon
from builders.reefknot.triplets import Corpus, Triplet
from filters.legibility import clear_direction
from sources.records import BBox

UNANNOTATED = "absent from the scene graph"
"""Why a cognitive relation is a distractor on a scene graph (not exhaustive): not annotated, so not the answer."""
LEVELS = ("vocabulary", "object", "subject", "pair")
"""Plausibility of a cognitive negative, weakest first."""


def box_contradicts(kind: str, s: BBox, o: BBox) -> bool:
    """True when subject box ``s`` and object box ``o`` (x, y, w, h; y down) rule out a relation of ``kind``.

    * above ("over", "on top of"): the subject's centre lies below the object's bottom edge; below ("under"):
      above its top edge;
    * inside: the boxes do not overlap;
    * contact ("on", "touching", ...): a gap of at least a quarter of the smaller box's longer side;
    * near: a gap of at least the longest side of either box.
    """
    scx, scy = s[0] + s[2] / 2.0, s[1] + s[3] / 2.0
    if kind == "above":
        return scy >= o[1] + o[3]
    if kind == "below":
        return scy <= o[1]
    gap = max(o[0] - (s[0] + s[2]), s[0] - (o[0] + o[2]), o[1] - (s[1] + s[3]), s[1] - (o[1] + o[3]))
    if kind == "inside":
        return gap > 0
    if kind == "contact":
        return gap > 0 and gap >= 0.25 * min(max(s[2], s[3]), max(o[2], o[3]))
    if kind == "near":
        return gap >= max(s[2], s[3], o[2], o[3])
    raise ValueError(f"unknown box rule kind {kind!r}")


@dataclass(frozen=True)
class FalseRelation:
    predicate: str
    rule: str
    """``absent (exhaustive source)``, ``boxes: <kind>`` or ``absent from the scene graph``."""
    plausibility: str
    support: int
    """Triplets in the source behind the plausibility level."""


class FalseRelations:
    """Finds false relations of one category for kept triplets."""

    def __init__(
        self,
        corpus: Corpus,
        lex: Lexicon,
        vocabulary: dict[str, Sequence[str]],
        exhaustive: bool,
        prior_share: float,
        prior_support: int,
    ) -> None:
        self.corpus = corpus
        self.lex = lex
        self.vocabulary = {k: sorted(v) for k, v in vocabulary.items()}
        self.exhaustive = exhaustive
        self.prior_share = prior_share
        self.prior_support = prior_support
        self._vocab_sets = {k: frozenset(v) for k, v in self.vocabulary.items()}
        self._blocked_cache: dict[frozenset[str], frozenset[str]] = {}
        self._tables()

    def _prior(self, t: Triplet) -> str | None:
        best, best_n, total = self.corpus.prior(t.subject, t.object)
        return best if total >= self.prior_support and best_n >= self.prior_share * total else None

    def _tables(self) -> None:
        """Per pair, subject and object: {relation: triplets in the source}, restricted to the vocabulary."""
        known = {q for words in self.vocabulary.values() for q in words}
        self.pairs: dict[tuple[str, str], dict[str, int]] = {}
        self.subjects: dict[str, dict[str, int]] = {}
        self.objects: dict[str, dict[str, int]] = {}
        for (s, o, q), n in self.corpus.pair_predicates.items():
            if q in known:
                self.pairs.setdefault((s, o), {})[q] = n
        for (s, q), n in self.corpus.subject_predicates.items():
            if q in known:
                self.subjects.setdefault(s, {})[q] = n
        for (o, q), n in self.corpus.object_predicates.items():
            if q in known:
                self.objects.setdefault(o, {})[q] = n

    def _blocked(self, annotated: frozenset[str]) -> frozenset[str]:
        """The annotated relations and all their near-synonyms (cached: pairs share their annotated sets)."""
        hit = self._blocked_cache.get(annotated)
        if hit is None:
            words = set(annotated)
            for a in annotated:
                words.update(self.lex.synonyms.get(a, ()))
            hit = self._blocked_cache[annotated] = frozenset(words)
        return hit

    def _rule(self, t: Triplet, q: str) -> str | None:
        """Why ``q`` is false for the triplet's pair in its image, or ``None`` when it is not provably false."""
        if q in self._blocked(t.annotated):
            return None
        direction = self.lex.direction(q)
        if direction is not None:
            seen = clear_direction(t.subject_box, t.object_box)
            return f"boxes: clearly {seen}" if seen is not None and seen != direction else None
        if self.exhaustive:
            return "absent (exhaustive source)"
        kind = self.lex.box_kind.get(q)
        if kind is not None:
            return f"boxes: {kind}" if box_contradicts(kind, t.subject_box, t.object_box) else None
        return None if t.category == "perception" else UNANNOTATED

    def levels(self, t: Triplet) -> Iterator[list[FalseRelation]]:
        """Usable false relations of the triplet's category, one list per plausibility level, best level first
        (alphabetical within a level); cognitive relations never seen with the subject are never used."""
        words = self._vocab_sets[t.category]
        prior = self._prior(t)
        seen: set[str] = set()
        tables = [
            ("pair", self.pairs.get((t.subject, t.object), {})),
            ("subject", self.subjects.get(t.subject, {})),
        ]
        if t.category == "perception":
            tables.append(("object", self.objects.get(t.object, {})))
            tables.append(("vocabulary", dict.fromkeys(self.vocabulary[t.category], 0)))
        for level, table in tables:
            found = []
            for q in sorted(table):
                if q in seen or q not in words or q == prior:
                    continue
                seen.add(q)
                rule = self._rule(t, q)
                if rule is not None:
                    found.append(FalseRelation(q, rule, level, table[q]))
            if found:
                yield found

    def candidates(self, t: Triplet) -> list[FalseRelation]:
        """Every usable false relation, most plausible first."""
        return [f for level in self.levels(t) for f in level]

    def negative(
        self,
        t: Triplet,
        rng: np.random.Generator,
        taken: set[str] = frozenset(),
        need: Callable[[str], tuple[int, ...]] | None = None,
    ) -> FalseRelation | None:
        """One false relation: the one ``need`` ranks highest (the caller's yes/no balance), then the most plausible
        level, then at random. A "no" needs a relation false by a rule or by an exhaustive source: one merely absent
        from a scene graph (:data:`UNANNOTATED`) may be true in the picture, and serves only as an MCQ distractor,
        where the one annotated relation is the answer."""
        best, best_key = None, None
        rank = len(LEVELS)
        for level in self.levels(t):
            rank -= 1
            for f in level:
                if f.predicate in taken or f.rule == UNANNOTATED:
                    continue
                key = (*(need(f.predicate) if need else ()), rank, float(rng.random()))
                if best_key is None or key > best_key:
                    best, best_key = f, key
        return best

    def distractors(
        self,
        t: Triplet,
        rng: np.random.Generator,
        n: int = 3,
        need: Callable[[str], tuple[int, ...]] | None = None,
    ) -> list[FalseRelation] | None:
        """``n`` false relations, no two near-synonyms of each other or of the answer; ``None`` if too few.

        With ``need`` (the caller's count of how much each relation is owed a place as a wrong option) the most
        owed relations come first, then the most plausible level, then chance: a relation shown as an option is
        then the answer about as often as any other option, so neither its words nor its length tell."""
        chosen: list[FalseRelation] = []

        def fits(f: FalseRelation) -> bool:
            return not (self.lex.similar(f.predicate, t.predicate)
                        or any(self.lex.similar(f.predicate, c.predicate) for c in chosen))

        if need is not None:
            ranked = []
            rank = len(LEVELS)
            for level in self.levels(t):
                rank -= 1
                ranked += [((*need(f.predicate), rank, float(rng.random())), f) for f in level]
            for _, f in sorted(ranked, key=lambda kv: kv[0], reverse=True):
                if fits(f):
                    chosen.append(f)
                    if len(chosen) == n:
                        return chosen
            return None
        for options in self.levels(t):
            # within a level, draw in proportion to support (frequent relations of the pair are the tempting wrong
            # answers); Efraimidis-Spirakis keys u**(1/w) give a weighted order without replacement
            keys = rng.random(len(options))
            order = sorted(range(len(options)), key=lambda i: -(keys[i] ** (1.0 / max(options[i].support, 1))))
            for i in order:
                if fits(options[i]):
                    chosen.append(options[i])
                    if len(chosen) == n:
                        return chosen
        return None
