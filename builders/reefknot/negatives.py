"""Relations that are false in an image: the adversarial "no" of a Y/N pair and the MCQ distractors.

A relation ``q`` is *false* for a kept triplet (s, p, o) of an image when ``q`` is not annotated from s to o in
that image, is no near-synonym of a relation that is (``templates/reefknot/filters.yaml`` ``synonyms``), and:

* on an exhaustive source (the demo world lists every relation that holds) being absent is enough;
* otherwise a ``q`` with a box rule (perceptive, and the few cognitive ones such as "sitting on") must be
  contradicted by the two boxes (:func:`box_contradicts`): a VG scene graph lists a few relations per pair, so
  absence alone proves nothing for "near" or "left of"; a perceptive ``q`` without a box rule is never used;
* **cognitive** ``q``: absent from the image's scene graph (exact on the demo world; on VG the paper's own
  assumption, checked there by annotators). Among such relations the plausible ones are preferred: seen for the
  same (subject, object) pair elsewhere in the source, else for the subject, else for the object (the level is
  recorded as ``plausibility``); a relation seen with neither is never used.

The pair's language-prior relation (its most frequent relation in the source) is never a negative or a
distractor: the image-independent filter already removed it as an answer, and offering it as a wrong answer
would let a blind model score by avoiding it - the prior baseline then sits at chance by construction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from builders.reefknot.lexicon import Lexicon
from builders.reefknot.triplets import Corpus, Triplet
from sources.records import BBox

LEVELS = ("vocabulary", "object", "subject", "pair")
"""Plausibility of a cognitive negative, weakest first."""


def box_contradicts(kind: str, s: BBox, o: BBox) -> bool:
    """True when subject box ``s`` and object box ``o`` (x, y, w, h; y down) rule out a relation of ``kind``.

    * left: the subject's centre lies right of the object's right edge; right: left of its left edge;
    * above: the subject's centre lies below the object's bottom edge; below: above its top edge;
    * inside: the boxes do not overlap;
    * contact ("on", "touching", ...): a gap of at least a quarter of the smaller box's longer side;
    * near: a gap of at least the longest side of either box.
    """
    scx, scy = s[0] + s[2] / 2.0, s[1] + s[3] / 2.0
    if kind == "left":
        return scx >= o[0] + o[2]
    if kind == "right":
        return scx <= o[0]
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

    def __init__(self, corpus: Corpus, lex: Lexicon, vocabulary: dict[str, Sequence[str]], exhaustive: bool,
                 prior_share: float, prior_support: int) -> None:
        self.corpus = corpus
        self.lex = lex
        self.vocabulary = {k: sorted(v) for k, v in vocabulary.items()}
        self.exhaustive = exhaustive
        self.prior_share = prior_share
        self.prior_support = prior_support

    def _prior(self, t: Triplet) -> str | None:
        best, best_n, total = self.corpus.prior(t.subject, t.object)
        return best if total >= self.prior_support and best_n >= self.prior_share * total else None

    def candidates(self, t: Triplet) -> list[FalseRelation]:
        """Every usable false relation of the triplet's category, most plausible first (then alphabetical)."""
        prior = self._prior(t)
        out = []
        for q in self.vocabulary.get(t.category, ()):
            if q == prior or any(self.lex.similar(q, a) for a in t.annotated):
                continue
            level, support = self._plausibility(t, q)
            kind = self.lex.box_kind.get(q)
            if self.exhaustive:
                rule = "absent (exhaustive source)"
            elif kind is not None:
                if not box_contradicts(kind, t.subject_box, t.object_box):
                    continue
                rule = f"boxes: {kind}"
            elif t.category == "perception":
                continue
            else:
                rule = "absent from the scene graph"
            if t.category == "cognition" and level == "vocabulary":
                continue
            out.append(FalseRelation(q, rule, level, support))
        out.sort(key=lambda f: (-LEVELS.index(f.plausibility), f.predicate))
        return out

    def _plausibility(self, t: Triplet, q: str) -> tuple[str, int]:
        c = self.corpus
        for level, n in (("pair", c.pair_count(t.subject, t.object, q)),
                         ("subject", c.subject_predicates.get((t.subject, q), 0)),
                         ("object", c.object_predicates.get((t.object, q), 0))):
            if n:
                return level, n
        return "vocabulary", 0

    def negative(self, t: Triplet, rng: np.random.Generator, taken: set[str] = frozenset()) -> FalseRelation | None:
        """One false relation at the best plausibility level available (random among that level)."""
        options = [f for f in self.candidates(t) if f.predicate not in taken]
        if not options:
            return None
        best = [f for f in options if f.plausibility == options[0].plausibility]
        return best[int(rng.integers(len(best)))]

    def distractors(self, t: Triplet, rng: np.random.Generator, n: int = 3) -> list[FalseRelation] | None:
        """``n`` false relations, no two near-synonyms of each other or of the answer; ``None`` if too few."""
        options = self.candidates(t)
        # within a plausibility level, draw in proportion to support (frequent relations of the pair are the
        # tempting wrong answers); Efraimidis-Spirakis keys u**(1/w) give a weighted order without replacement
        keys = rng.random(len(options))
        order = sorted(range(len(options)), key=lambda i: (-LEVELS.index(options[i].plausibility),
                                                            -keys[i] ** (1.0 / max(options[i].support, 1))))
        chosen: list[FalseRelation] = []
        for i in order:
            f = options[i]
            if self.lex.similar(f.predicate, t.predicate) or any(self.lex.similar(f.predicate, c.predicate) for c in chosen):
                continue
            chosen.append(f)
            if len(chosen) == n:
                return chosen
        return None
