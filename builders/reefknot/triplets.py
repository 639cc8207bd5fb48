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
* ``direction not clear by the boxes``: a direction (``left of``, ``above``, ...) the two boxes do not show by the
  clear-direction rule MIOH and MM-SAP use (:func:`filters.legibility.clear_direction`): a diagonal pair ("left
  of" and "above" at once) or overlapping boxes are nobody's "left of", whatever the source annotates;
* ``duplicate triplet``: the same (subject, relation, object) names twice in one image;
* ``rare name`` / ``rare predicate``: seen fewer than ``min_name_count`` / ``min_predicate_count`` times in the
  whole source (annotation noise, typos);
* ``image-independent``: the relation is what the language prior alone predicts for the subject-object pair - the
  most frequent relation of the pair in the source, holding at least ``prior_share`` of its at least
  ``prior_support`` triplets (A.2 2b, A.6 point 6). Keeping such triplets would let a blind model score.

The per-relation cap (A.2 "Data Bias") is applied when questions are drawn (:class:`builders.reefknot.questions.QuestionSets`).
Images stream through once (:func:`collect`); only surviving triplets and the corpus counts are kept.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

from builders.reefknot.lexicon import Lexicon
from filters.legibility import clear_direction
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

    def pair_relations(self, subject: str, obj: str) -> dict[str, int]:
        """{relation: triplets} of the pair in the source."""
        return self._pair_table().get((subject, obj), {})

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


class _Memo:
    """Normalisation and per-phrase rules cached by raw text (names and predicates repeat millions of times)."""

    def __init__(self, lex: Lexicon) -> None:
        self.lex = lex
        self.names: dict[str, tuple[str, bool]] = {}
        self.predicates: dict[str, tuple[str, bool]] = {}
        self.collocations: dict[tuple[str, str, str], str | None] = {}

    def name(self, raw: str) -> tuple[str, bool]:
        """(normalised name, noisy?)"""
        hit = self.names.get(raw)
        if hit is None:
            name = self.lex.name(raw)
            hit = self.names[raw] = (name, self.lex.noisy_name(name))
        return hit

    def predicate(self, raw: str) -> tuple[str, bool]:
        hit = self.predicates.get(raw)
        if hit is None:
            p = self.lex.predicate(raw)
            hit = self.predicates[raw] = (p, self.lex.noisy_predicate(p))
        return hit

    def collocation(self, key: tuple[str, str, str]) -> str | None:
        if key not in self.collocations:
            self.collocations[key] = self.lex.collocation(*key)
        return self.collocations[key]


def collect(images: Iterable[ImageRecord], lex: Lexicon, min_area: float) -> Corpus:
    """Phase (a) and the per-image rules of phase (b) over a stream of images."""
    corpus = Corpus()
    memo = _Memo(lex)
    pairs: dict[tuple[str, str, str], int] = {}
    for image in images:
        corpus.images += 1
        corpus.triplets.extend(_image_triplets(image, memo, min_area, corpus, pairs))
    corpus.pair_predicates = Counter(pairs)
    for (s, o, p), n in pairs.items():  # the other tables follow from the pair table (far fewer keys than triplets)
        corpus.subject_predicates[(s, p)] += n
        corpus.object_predicates[(o, p)] += n
        corpus.name_counts[s] += n
        corpus.name_counts[o] += n
        corpus.predicate_counts[p] += n
    return corpus


def _image_triplets(
    image: ImageRecord, memo: _Memo, min_area: float, corpus: Corpus, pairs: dict[tuple[str, str, str], int]
) -> list[Triplet]:
    names: dict[str, tuple[str, bool]] = {}
    boxes: dict[str, BBox] = {}
    per_name: dict[str, int] = {}
    for inst in image.instances:
        name = names[inst.id] = memo.name(inst.category)
        boxes[inst.id] = inst.bbox
        per_name[name[0]] = per_name.get(name[0], 0) + 1
    rows = []
    annotated: dict[tuple[str, str], set[str]] = {}
    dropped = corpus.dropped
    noisy_names = noisy_predicates = 0
    for rel in image.relations:
        s, s_noisy = names[rel.subject]
        o, o_noisy = names[rel.object]
        p, p_noisy = memo.predicate(rel.predicate)
        key = (s, o)
        if key in annotated:
            annotated[key].add(p)
        else:
            annotated[key] = {p}
        if s_noisy or o_noisy:
            noisy_names += 1
            continue
        if p_noisy:
            noisy_predicates += 1
            continue
        triple = (s, o, p)
        pairs[triple] = pairs.get(triple, 0) + 1
        rows.append((rel, s, p, o))
    corpus.relations += len(image.relations)
    if noisy_names:
        dropped["noisy name"] += noisy_names
    if noisy_predicates:
        dropped["noisy predicate"] += noisy_predicates
    area = float(image.width * image.height) * min_area
    seen: set[tuple[str, str, str]] = set()
    frozen: dict[tuple[str, str], frozenset[str]] = {}
    out = []
    for rel, s, p, o in rows:
        rule = memo.collocation((s, p, o))
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
        if sb[2] * sb[3] < area or ob[2] * ob[3] < area:
            dropped["minor detail (box below --min-area)"] += 1
            continue
        direction = memo.lex.direction(p)
        if direction is not None and clear_direction(sb, ob) != direction:
            dropped["direction not clear by the boxes (diagonal or overlapping)"] += 1
            continue
        if (s, p, o) in seen:
            dropped["duplicate triplet"] += 1
            continue
        seen.add((s, p, o))
        if (s, o) not in frozen:
            frozen[(s, o)] = frozenset(annotated[(s, o)])
        out.append(
            Triplet(
                image.id,
                image.file,
                image.width,
                image.height,
                s,
                p,
                o,
                sb,
                ob,
                rel.subject,
                rel.object,
                frozen[(s, o)],
            )
        )
    return out


def apply_corpus_rules(
    corpus: Corpus, min_name_count: int, min_predicate_count: int, prior_share: float, prior_support: int
) -> None:
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
