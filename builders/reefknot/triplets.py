"""Phases (a) and (b) of the paper (Fig. 3): triplets from scene graphs, then filtering, each drop counted with
its reason.

Phase (a) turns every relation of every image into a :class:`Triplet` (subject, relation, object) with names and
predicates normalised (:mod:`builders.reefknot.lexicon`) and both boxes. Phase (b) drops, in this order:

* ``noisy name`` / ``noisy predicate``: not a plain word phrase, a pronoun or part of the frame, or a possessive
  or partonomy predicate that cannot follow "is/are" ("has", "of", "with"); App. A.2 1;
* ``self-evident collocation``: a fixed pairing that needs no image (ear on face, man wearing shirt): A.2 1, A.3;
* ``subject and object share a name``: a question could not tell them apart;
* ``several instances of the subject's/object's category``: unclear reference (A.2 1a). The paper names the
  subject only; the object is held to the same rule so that every question points at one thing;
* ``minor detail``: a box below ``min_area`` of the image (A.2 2a);
* ``duplicate triplet``: the same (subject, relation, object) names twice in one image;
* ``rare name`` / ``rare predicate``: seen fewer than ``min_name_count`` / ``min_predicate_count`` times in the
  whole source (annotation noise, typos);
* ``image-independent``: the relation is what the language prior alone predicts for the subject-object pair - the
  most frequent relation of the pair in the source, holding at least ``prior_share`` of its at least
  ``prior_support`` triplets (A.2 2b, A.6 point 6). Keeping such triplets would let a blind model score.

The per-relation cap (A.2 "Data Bias") is applied when questions are drawn (:mod:`builders.reefknot.sets`).
Images stream through once (:func:`collect`); only surviving triplets and the corpus counts are kept.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from builders.reefknot.lexicon import Lexicon
from sources.records import BBox, ImageRecord


@dataclass(slots=True)
class Triplet:
    """One (subject, relation, object) of one image, with what the questions and checks need."""

    image_id: str
    file: str
    width: int
    height: int
    subject: str
    predicate: str
    object: str
    subject_box: BBox
    object_box: BBox
    subject_id: str
    object_id: str
    annotated: frozenset[str]
    """Every (normalised) predicate annotated from this subject to this object in the image, filtered or not."""
    category: str = ""
    category_method: str = ""


@dataclass
class Corpus:
    """What phase (a) saw of the whole source and what phase (b) kept."""

    triplets: list[Triplet] = field(default_factory=list)
    pair_predicates: Counter = field(default_factory=Counter)
    """(subject, object, predicate) -> triplets in the source (valid names and predicates; the language prior)."""
    subject_predicates: Counter = field(default_factory=Counter)
    object_predicates: Counter = field(default_factory=Counter)
    name_counts: Counter = field(default_factory=Counter)
    predicate_counts: Counter = field(default_factory=Counter)
    dropped: Counter = field(default_factory=Counter)
    images: int = 0
    relations: int = 0
    collocations: Counter = field(default_factory=Counter)

    def prior(self, subject: str, obj: str) -> tuple[str | None, int, int]:
        """(most frequent predicate of the pair, its count, the pair's total) - ties broken alphabetically."""
        best, best_n, total = None, 0, 0
        for p, n in self._pair_table().get((subject, obj), {}).items():
            total += n
            if n > best_n or (n == best_n and best is not None and p < best):
                best, best_n = p, n
        return best, best_n, total

    def pair_count(self, subject: str, obj: str, predicate: str) -> int:
        return self.pair_predicates.get((subject, obj, predicate), 0)

    def _pair_table(self) -> dict[tuple[str, str], dict[str, int]]:
        table = getattr(self, "_table", None)
        if table is None:
            table = {}
            for (s, o, p), n in self.pair_predicates.items():
                table.setdefault((s, o), {})[p] = n
            self._table = table
        return table


def collect(images: Iterable[ImageRecord], lex: Lexicon, min_area: float) -> Corpus:
    """Phase (a) and the per-image rules of phase (b) over a stream of images."""
    corpus = Corpus()
    for image in images:
        corpus.images += 1
        corpus.triplets.extend(_image_triplets(image, lex, min_area, corpus))
    return corpus


def _image_triplets(image: ImageRecord, lex: Lexicon, min_area: float, corpus: Corpus) -> Iterator[Triplet]:
    names: dict[str, str] = {}
    boxes: dict[str, BBox] = {}
    per_name: Counter = Counter()
    for inst in image.instances:
        name = lex.name(inst.category)
        names[inst.id] = name
        boxes[inst.id] = inst.bbox
        per_name[name] += 1
    rows = []
    annotated: dict[tuple[str, str], set[str]] = {}
    dropped = corpus.dropped
    for rel in image.relations:
        corpus.relations += 1
        s, o = names[rel.subject], names[rel.object]
        p = lex.predicate(rel.predicate)
        annotated.setdefault((s, o), set()).add(p)
        if lex.noisy_name(s) or lex.noisy_name(o):
            dropped["noisy name"] += 1
            continue
        if lex.noisy_predicate(p):
            dropped["noisy predicate"] += 1
            continue
        corpus.pair_predicates[(s, o, p)] += 1
        corpus.subject_predicates[(s, p)] += 1
        corpus.object_predicates[(o, p)] += 1
        corpus.name_counts[s] += 1
        corpus.name_counts[o] += 1
        corpus.predicate_counts[p] += 1
        rows.append((rel, s, p, o))
    area = float(image.width * image.height)
    seen: set[tuple[str, str, str]] = set()
    for rel, s, p, o in rows:
        rule = lex.collocation(s, p, o)
        if rule is not None:
            dropped["self-evident collocation"] += 1
            corpus.collocations[rule] += 1
            continue
        if s == o:
            dropped["subject and object share a name"] += 1
            continue
        if per_name[s] > 1:
            dropped["several instances of the subject's category"] += 1
            continue
        if per_name[o] > 1:
            dropped["several instances of the object's category"] += 1
            continue
        sb, ob = boxes[rel.subject], boxes[rel.object]
        if sb[2] * sb[3] < min_area * area or ob[2] * ob[3] < min_area * area:
            dropped["minor detail (box below --min-area)"] += 1
            continue
        if (s, p, o) in seen:
            dropped["duplicate triplet"] += 1
            continue
        seen.add((s, p, o))
        yield Triplet(image.id, image.file, image.width, image.height, s, p, o, sb, ob, rel.subject, rel.object,
                      frozenset(annotated[(s, o)]))


def apply_corpus_rules(corpus: Corpus, min_name_count: int, min_predicate_count: int, prior_share: float,
                       prior_support: int) -> None:
    """The rules of phase (b) that need the whole source: rare names and predicates, image-independent triplets."""
    kept = []
    dropped = corpus.dropped
    priors: dict[tuple[str, str], tuple[str | None, int, int]] = {}
    for t in corpus.triplets:
        if corpus.name_counts[t.subject] < min_name_count or corpus.name_counts[t.object] < min_name_count:
            dropped["rare name"] += 1
            continue
        if corpus.predicate_counts[t.predicate] < min_predicate_count:
            dropped["rare predicate"] += 1
            continue
        key = (t.subject, t.object)
        if key not in priors:
            priors[key] = corpus.prior(*key)
        best, best_n, total = priors[key]
        if best == t.predicate and total >= prior_support and best_n >= prior_share * total:
            dropped["image-independent (the language prior predicts it)"] += 1
            continue
        kept.append(t)
    corpus.triplets = kept
