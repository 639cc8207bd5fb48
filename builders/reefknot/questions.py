"""Phase (e): the three question sets, drawn from kept triplets with balanced relations, and worded
grammatically.

* **Y/N**: each chosen triplet gives a "yes" question and an adversarial "no" on the same subject and object with
  a false relation of the same category (:mod:`builders.reefknot.negatives`), so yes:no is exactly 1:1 per
  category. The same question text recurs across images ("Is the man riding the horse?"), so a text is never
  answered "yes" more often than "no" (a triplet whose text already leans "yes" is passed over) and the negative
  goes to the relation most owed a "no" - by its text, then by the relation - before plausibility: otherwise the
  wording alone would predict the answer (a text-only model's prior, :mod:`builders.lint.independence`);
* **MCQ**: the triplet's relation and three false, mutually non-synonymous relations of its category; answer
  letters dealt in balanced shuffled blocks (:class:`builders.mcq.BalancedCycle`). Every relation shown as an
  option is the answer about a quarter of the times it is shown, alone and with the same subject: the distractors
  go to the relations most owed a place as a wrong option (over the whole set first, then with the subject), and
  a triplet whose relation is already the answer more than its share waits for a later round of the draw (left
  out if it never may serve) - otherwise an option's words (or its length) would tell the answer. Where the
  clear-direction rule leaves an overlapping pair no false direction, "in front of" and "behind" seldom find
  three false relations, so they are mostly wrong options;
* **VQA**: the open question with the paper's format instruction (App. A.6 point 4); the reference is the
  triplet as a sentence. Only pairs with a single annotated relation of the category are asked, so the
  reference is the one right answer of its kind. The question does not name a category, and a pair often holds
  a relation of the other one too (the arrow pointing at the octagon is also left of it), so every annotated
  relation of the pair is worded as an accepted answer (``provenance.accepted_answers``, the reference first)
  and :mod:`scoring.reefknot` counts an answer right when it states any of them.

Each triplet serves one set; a (image, subject, object) pair is asked at most once per MCQ and VQA set (their
questions do not name the relation, so a second triplet of the pair would repeat the question with another
answer). Triplets are drawn round-robin over relations (shuffled, seeded; on an exhaustive source over
(subject, relation), :meth:`QuestionSets._draw_key`), the most restrictive set first (MCQ, VQA, Y/N): every
relation contributes as evenly as its supply allows (A.2 "Data Bias"), capped at ``relation_cap`` per set when
given.

Pairs (issue 55, NaturalBench): a closed question is asked again, word for word, of another image of the same
subject and object where its answer differs, drawn among the kept triplets of the same category:

* **Y/N**: two triplets of one (subject, object) on two images, with relations R and R2 each false for the other
  by the negatives' rules (:meth:`FalseRelations.negative`: the clear-direction rule, box rules, an exhaustive
  source): "Is S R O?" is yes on the first image and no on the second, "Is S R2 O?" the reverse, and each image's
  "no" is its adversarial negative as before (four items from two triplets, yes:no still 1:1);
* **MCQ**: the same question and options on another image whose annotated relation is one of the distractors,
  every other option false there by the distractors' rules (:meth:`FalseRelations.candidates`).

A triplet with no such partner among the unused ones (the first :data:`PARTNER_LOOKAHEAD` of a seeded order)
gives its questions unpaired, as before; both partners count in their (set, category). VQA is open: no pairs.

Wording: names take the definite article ("the man"), the verb agrees with the subject ("Is the man ...",
"Are the people ..."): grammatical number from the lists in ``filters.yaml`` and the regular ``-s`` plural.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterator, Sequence

import numpy as np

from builders.items import Item, make_item
from builders.mcq import BalancedCycle, letter
from builders.pairs import pair_provenance
from builders.reefknot.config import BENCHMARK
from builders.reefknot.lexicon import Lexicon
from builders.reefknot.negatives import UNANNOTATED, FalseRelation, FalseRelations
from builders.reefknot.triplets import Corpus, Triplet
from builders.seeding import rng
from templates.loader import load_templates, render

SET_ORDER = ("mcq", "vqa", "yes_no")
OPTIONS = 4
LOOKAHEAD = 32
PARTNER_LOOKAHEAD = 64
"""Unused triplets of the same subject and object (in a seeded order) tried as a question's partner: a common
Visual Genome pair (man, shirt) has thousands, and each try works out the triplet's false relations."""


class Wording:
    """Questions and references from ``templates/reefknot/questions.yaml``."""

    def __init__(self, lex: Lexicon) -> None:
        self.t = load_templates("reefknot", "questions")
        self.lex = lex

    def fields(self, t: Triplet) -> dict[str, str]:
        be = "are" if self.lex.is_plural(t.subject) else "is"
        subject, obj = f"the {t.subject}", f"the {t.object}"
        return {
            "subject": subject,
            "Subject": subject[:1].upper() + subject[1:],
            "object": obj,
            "be": be,
            "Be": be.capitalize(),
        }

    def yes_no(self, t: Triplet, relation: str) -> str:
        return render(self.t["yes_no"], relation=relation, **self.fields(t))

    def mcq(self, t: Triplet) -> str:
        return render(self.t["mcq"]["question"], **self.fields(t))

    def vqa(self, t: Triplet) -> tuple[str, str]:
        f = self.fields(t)
        question = render(self.t["vqa"]["question"], **f) + " " + render(self.t["vqa"]["instruction"], **f)
        return question, self.reference(t, t.predicate)

    def reference(self, t: Triplet, relation: str) -> str:
        return render(self.t["vqa"]["reference"], relation=relation, **self.fields(t))


@dataclass
class SetResult:
    items: list[Item] = field(default_factory=list)
    made: Counter = field(default_factory=Counter)
    """(set, category) -> questions."""
    relations: dict[tuple[str, str], Counter] = field(default_factory=dict)
    """(set, category) -> relation -> triplets used."""
    dropped: Counter = field(default_factory=Counter)
    """reason -> triplets passed over while drawing."""


def _pair_up(a: Item, b: Item) -> None:
    """Mark two items, the same question with different answers, as a pair (:func:`builders.pairs.pair_provenance`)."""
    pair_id = hashlib.sha256(f"{a.id}/{b.id}".encode()).hexdigest()[:16]
    a.provenance.update(pair_provenance(pair_id, "a"))
    b.provenance.update(pair_provenance(pair_id, "b"))


def plan(wanted: dict[tuple[str, str], int], available: Counter) -> tuple[dict[tuple[str, str], int], float]:
    """Scale every count by one factor when a category's triplets cannot serve its counts, so the proportions
    between sets and categories stay those asked for (Y/N stays even). A category without any triplet (an SVG
    file with spatial relations only) does not shrink the others."""
    scale = 1.0
    for cat in sorted({c for _, c in wanted}):
        need = wanted[("yes_no", cat)] // 2 + wanted[("mcq", cat)] + wanted[("vqa", cat)]
        if need and available[cat]:  # a category the source lacks altogether is short, not a reason for none
            scale = min(scale, available[cat] / need)
    out = {}
    for cat in sorted({c for _, c in wanted}):
        out[("yes_no", cat)] = 2 * int(wanted[("yes_no", cat)] // 2 * scale)
        out[("mcq", cat)] = int(wanted[("mcq", cat)] * scale)
        out[("vqa", cat)] = int(wanted[("vqa", cat)] * scale)
    return out, round(scale, 6)


class QuestionSets:
    """Draws and words the three sets for one build."""

    def __init__(
        self,
        corpus: Corpus,
        lex: Lexicon,
        false: FalseRelations,
        categories: dict[str, tuple[str, str]],
        seed: int,
        source: str,
        relation_cap: int = 0,
    ) -> None:
        self.corpus = corpus
        self.lex = lex
        self.false = false
        self.categories = categories
        self.seed = seed
        self.source = source
        self.cap = relation_cap
        self.wording = Wording(lex)
        self.used: set[int] = set()
        self.asked_pairs: dict[str, set[tuple[str, str, str]]] = defaultdict(set)
        self.asked_questions: set[tuple[str, str]] = set()
        self.asked_yes_no: dict[tuple[str, str, str], set[str]] = defaultdict(set)
        self.yes_minus_no: Counter = Counter()
        """Y/N questions answered yes minus no, per question text (subject, relation, object), per (subject,
        relation) and per relation."""
        self.object_uses: Counter = Counter()
        """(set, object, relation) -> questions drawn."""
        self.option_owed: Counter = Counter()
        """MCQ: how much each relation (and (subject, relation)) is owed a place as a wrong option: 3 per time it
        was the answer, minus 1 per time it was a wrong option (0 when it is the answer a quarter of the time)."""
        self.result = SetResult()
        self.paired_only = False
        """The first pass of a draw (:meth:`_draw`): triplets without a partner are passed over."""
        self.room = 0
        """Questions the current (set, category) still wants: a partner is drawn only where two fit."""
        self.waited: set[int] = set()
        """Triplets (by ``id``) an MCQ passed over for its relation's share of answers at least once."""
        self.same_pair: dict[tuple[str, str, str], list[int]] = defaultdict(list)
        """(subject, object, category) -> the triplets' indices: where a question's partner is looked for."""
        for i, t in enumerate(corpus.triplets):
            self.same_pair[(t.subject, t.object, t.category)].append(i)

    def build(self, targets: dict[tuple[str, str], int]) -> SetResult:
        by_cat: dict[str, list[int]] = defaultdict(list)
        for i, t in enumerate(self.corpus.triplets):
            by_cat[t.category].append(i)
        for cat in sorted(by_cat):
            for qset in SET_ORDER:
                want = targets.get((qset, cat), 0)
                count = want // 2 if qset == "yes_no" else want
                self.result.relations[(qset, cat)] = Counter()
                if count:
                    self._draw(qset, cat, by_cat[cat], count)
        unused = [t for i, t in enumerate(self.corpus.triplets) if i not in self.used]
        waited = sum(1 for t in unused if id(t) in self.waited)
        if waited:
            self.result.dropped["mcq: its relation stayed the answer more often than a fair share"] += waited
        self.result.dropped["not needed (counts reached or relation cap)"] += len(unused) - waited
        return self.result

    # ------------------------------------------------------------------------------------------------ drawing

    def _draw(self, qset: str, cat: str, indices: list[int], count: int) -> None:
        """Draw ``count`` questions of the set and category: those with a partner first (triplets without one
        are passed over), then, where too few had one, any (unpaired). Only the last pass's reasons for passing
        triplets over are counted: the first pass's are met again in the second."""
        r = rng(self.seed, f"reefknot/draw/{qset}/{cat}")
        letters = BalancedCycle(list(range(OPTIONS)), rng(self.seed, f"reefknot/letters/{cat}"))
        item_rng = rng(self.seed, f"reefknot/items/{qset}/{cat}")
        made = 0
        for self.paired_only in ((True, False) if qset != "vqa" else (False,)):
            counted, self.result.dropped = self.result.dropped, (Counter() if self.paired_only else self.result.dropped)
            made = self._draw_pass(qset, cat, indices, count, made, r, letters, item_rng)
            self.result.dropped = counted
        self.result.made[(qset, cat)] = made * (2 if qset == "yes_no" else 1)

    def _draw_pass(self, qset: str, cat: str, indices: list[int], count: int, made: int, r: np.random.Generator,
                   letters: BalancedCycle, item_rng: np.random.Generator) -> int:
        """One round-robin pass over the unused triplets; returns the questions made so far."""
        queues: dict[tuple[str, ...], list[int]] = defaultdict(list)
        for i in indices:
            if i not in self.used:
                queues[self._draw_key(self.corpus.triplets[i])].append(i)
        keys = sorted(queues)
        for k in keys:
            order = r.permutation(len(queues[k]))
            queues[k] = [queues[k][j] for j in order]
        keys = [keys[j] for j in r.permutation(len(keys))]
        heads = {k: 0 for k in keys}
        self.room = count
        active = list(keys)
        while made < count and active:
            still = []
            before = made
            for k in active:
                p = k[-1]
                if made >= count:
                    still.append(k)
                    break
                if self.cap and self.result.relations[(qset, cat)][p] >= self.cap:
                    continue
                while heads[k] < len(queues[k]):
                    self._least_used_object_first(queues[k], heads[k], qset)
                    i = queues[k][heads[k]]
                    heads[k] += 1
                    if i in self.used:  # taken as an earlier question's partner
                        continue
                    self.room = count - made
                    outcome = self._make(qset, self.corpus.triplets[i], item_rng, letters)
                    if outcome is None:  # its relation is owed wrong places first: the triplet waits a round
                        heads[k] -= 1
                        still.append(k)
                        break
                    if outcome:
                        for j in [i, *outcome[1:]]:
                            self.used.add(j)
                            served = self.corpus.triplets[j]
                            self.result.relations[(qset, cat)][served.predicate] += 1
                            self.object_uses[(qset, served.object, served.predicate)] += 1
                        made += len(outcome)
                        still.append(k)
                        break
            if made == before:  # a round made nothing: only waiting triplets are left
                break
            active = still
        return made

    def _least_used_object_first(self, queue: list[int], head: int, qset: str) -> None:
        """On an exhaustive source, move to ``head`` the triplet among the next :data:`LOOKAHEAD` whose object has
        taken its relation least often in this set (the draw key balances the subject; this keeps "the ring" as
        the object from meaning "hiding behind" - covering shapes make the shapes under them objects)."""
        if not self.false.exhaustive:
            return
        window = range(head, min(head + LOOKAHEAD, len(queue)))
        best = min(window, key=lambda j: (self.object_uses[(qset, self.corpus.triplets[queue[j]].object,
                                                            self.corpus.triplets[queue[j]].predicate)], j))
        queue[head], queue[best] = queue[best], queue[head]

    def _draw_key(self, t: Triplet) -> tuple[str, ...]:
        """What the round-robin draw cycles over: the relation (the paper's balance), and on an exhaustive source
        (subject, relation), so every subject takes each of its relations about equally often and the answer
        cannot be read off the subject's name (the demo's arrows are the only shapes that point)."""
        return (t.subject, t.predicate) if self.false.exhaustive else (t.predicate,)

    def _make(self, qset: str, t: Triplet, r: np.random.Generator, letters: BalancedCycle) -> list[int] | None:
        """Make the triplet's question(s) and its partner's: ``[-1]`` (the triplet alone) or ``[-1, partner's
        index]`` when made, ``[]`` when the triplet cannot serve the set, ``None`` when it must wait (an MCQ whose
        relation is already the answer more than its share: once it has been a wrong option elsewhere it may
        serve)."""
        pair = (t.image_id, t.subject, t.object)
        partner: list[int] = []
        if qset in ("mcq", "vqa") and pair in self.asked_pairs[qset]:
            self.result.dropped[f"{qset}: pair already asked"] += 1
            return []
        if qset == "vqa":
            same = [a for a in t.annotated if self.categories.get(a, ("",))[0] == t.category]
            if len(same) != 1:
                self.result.dropped["vqa: several relations of the category for the pair"] += 1
                return []
            items = [self._vqa(t)]
        elif qset == "mcq":
            if max(self.option_owed[t.predicate], self.option_owed[(t.subject, t.predicate)]) >= OPTIONS - 1:
                self.waited.add(id(t))
                return None
            chosen = self.false.distractors(t, r, need=lambda q: (self.option_owed[q], self.option_owed[(t.subject, q)]))
            if chosen is None:
                self.result.dropped["mcq: fewer than 3 non-synonymous false relations"] += 1
                return []
            slot = letters.next()
            items = [self._mcq(t, chosen, slot)]
            found = self._mcq_partner(t, [d.predicate for d in chosen], slot, r) if self.room >= 2 else None
            if found is not None:
                partner = [found[0]]
                items.append(found[1])
                _pair_up(items[0], items[1])
            elif self.paired_only:
                return []
        else:
            if self.yes_minus_no[(t.subject, t.predicate, t.object)] > 0:
                self.result.dropped["yes_no: this question is already answered yes more often than no"] += 1
                return []
            swapped = self._yes_no_partner(t, r) if self.room >= 2 else None
            if swapped is not None:
                j, negative, back = swapped
                partner = [j]
                items = self._yes_no(t, negative) + self._yes_no(self.corpus.triplets[j], back)
                _pair_up(items[0], items[3])  # "Is S R O?": yes here, no on the partner's image
                _pair_up(items[2], items[1])  # "Is S R2 O?": yes on the partner's image, no here
            elif self.paired_only:
                return []
            else:
                negative = self.false.negative(t, r, self.asked_yes_no[pair], self._yes_no_need(t))
                if negative is None:
                    self.result.dropped["yes_no: no false relation for a negative"] += 1
                    return []
                items = self._yes_no(t, negative)
        keys = [(it.images[0], it.question) for it in items]
        if any(k in self.asked_questions for k in keys) or len(set(keys)) < len(keys):
            self.result.dropped[f"{qset}: question already asked"] += 1
            return []
        self.asked_questions.update(keys)
        served = [t, *(self.corpus.triplets[j] for j in partner)]
        for one in served:
            self.asked_pairs[qset].add((one.image_id, one.subject, one.object))
        if qset == "yes_no":
            for one, yes_item, no_item in zip(served, items[0::2], items[1::2]):
                negative_relation = no_item.provenance["asked_relation"]
                self.asked_yes_no[(one.image_id, one.subject, one.object)].update((one.predicate, negative_relation))
                for relation, sign in ((one.predicate, 1), (negative_relation, -1)):
                    for key in ((one.subject, relation, one.object), (one.subject, relation), relation):
                        self.yes_minus_no[key] += sign
        elif qset == "mcq":
            for item in items:
                answer = item.options[ord(item.answer) - ord("A")]
                wrong = len(item.options) - 1
                for relation, owed in ((answer, wrong), *((q, -1) for q in item.options if q != answer)):
                    self.option_owed[(t.subject, relation)] += owed
                    self.option_owed[relation] += owed
        self.result.items.extend(items)
        return [-1, *partner]

    # ------------------------------------------------------------------------------------------------ partners

    def _partners(self, t: Triplet, r: np.random.Generator) -> Iterator[int]:
        """Unused triplets of ``t``'s subject, object and category on other images, in a seeded order (the first
        :data:`PARTNER_LOOKAHEAD`)."""
        found = [j for j in self.same_pair[(t.subject, t.object, t.category)]
                 if j not in self.used and self.corpus.triplets[j].image_id != t.image_id]
        for k in r.permutation(len(found))[:PARTNER_LOOKAHEAD]:
            yield found[int(k)]

    def _yes_no_partner(self, t: Triplet, r: np.random.Generator) -> tuple[int, FalseRelation, FalseRelation] | None:
        """A triplet (S, R2, O) of another image where ``t``'s relation R is false, R2 being false on ``t``'s
        image, both by the rules of a "no" (:meth:`FalseRelations.negative`): ``(its index, R2 as t's negative,
        R as its negative)``; ``None`` when none is found."""
        mine = {f.predicate: f for f in self._negatives(t)}
        taken = self.asked_yes_no[(t.image_id, t.subject, t.object)]
        for j in self._partners(t, r):
            other = self.corpus.triplets[j]
            if other.predicate in taken or other.predicate not in mine:
                continue
            if (other.predicate in self.asked_yes_no[(other.image_id, other.subject, other.object)]
                    or t.predicate in self.asked_yes_no[(other.image_id, other.subject, other.object)]):
                continue
            back = {f.predicate: f for f in self._negatives(other)}.get(t.predicate)
            if back is not None:
                return j, mine[other.predicate], back
        return None

    def _negatives(self, t: Triplet) -> list[FalseRelation]:
        """The relations a "no" may ask of ``t``'s pair (false by a rule or an exhaustive source)."""
        return [f for f in self.false.candidates(t) if f.rule != UNANNOTATED]

    def _mcq_partner(self, t: Triplet, wrong: list[str], slot: int, r: np.random.Generator) -> tuple[int, Item] | None:
        """A triplet of another image whose relation is one of ``t``'s distractors, every other option false
        there by the distractors' rules (:meth:`FalseRelations.candidates`) and no near-synonym of its relation:
        ``(its index, its item)`` with ``t``'s question and options, paired with ``t``'s; ``None`` if none."""
        options = wrong[:slot] + [t.predicate] + wrong[slot:]
        for j in self._partners(t, r):
            other = self.corpus.triplets[j]
            if other.predicate not in wrong or (other.image_id, other.subject, other.object) in self.asked_pairs["mcq"]:
                continue
            false = {f.predicate: f for f in self.false.candidates(other)}
            rest = [q for q in options if q != other.predicate]
            if all(q in false and not self.lex.similar(q, other.predicate) for q in rest):
                item = self._mcq(other, [false[q] for q in rest], options.index(other.predicate))
                return j, item
        return None

    def _yes_no_need(self, t: Triplet):
        """How much a relation is owed a "no": by its question text (subject, relation, object) across images,
        then by the subject and relation, then by the relation alone. Preferring the most owed keeps a question's wording from predicting its answer
        (the lint's and a text-only model's language prior)."""

        def need(q: str) -> tuple[int, int, int]:
            return self.yes_minus_no[(t.subject, q, t.object)], self.yes_minus_no[(t.subject, q)], self.yes_minus_no[q]

        return need

    # ------------------------------------------------------------------------------------------------- items

    def _provenance(self, t: Triplet, **extra: Any) -> dict[str, Any]:
        best, best_n, total = self.corpus.prior(t.subject, t.object)
        return {
            "source": self.source,
            "image_id": t.image_id,
            "triplet": {"subject": t.subject, "relation": t.predicate, "object": t.object},
            "subject_id": t.subject_id,
            "object_id": t.object_id,
            "subject_box": list(t.subject_box),
            "object_box": list(t.object_box),
            "image_size": [t.width, t.height],
            "category": t.category,
            "category_method": t.category_method,
            "annotated_relations": sorted(t.annotated),
            "subject_plural": self.lex.is_plural(t.subject),
            "language_prior": {"relation": best, "count": best_n, "pair_total": total},
            **extra,
        }

    def _other_counts(self, t: Triplet, relations: Sequence[str]) -> list[int]:
        """How often the pair takes each relation in the source *without this triplet* (leave-one-out: a blind
        model learns the prior from other images, never from the one it is asked about)."""
        return [self.corpus.pair_count(t.subject, t.object, q) - (q == t.predicate) for q in relations]

    def _prior_relation(self, t: Triplet) -> str | None:
        """The pair's most frequent relation in the rest of the source (ties: alphabetical; none when unseen)."""
        table = self.corpus.pair_relations(t.subject, t.object)
        relations = sorted(table)
        counts = self._other_counts(t, relations)
        best = max(counts, default=0)
        return relations[counts.index(best)] if best > 0 else None

    def _yes_no(self, t: Triplet, negative: FalseRelation) -> list[Item]:
        prior = self._prior_relation(t)
        out = []
        for relation, answer, pressure, extra in (
            (t.predicate, "yes", "none", {}),
            (
                negative.predicate,
                "no",
                "adversarial",
                {
                    "negative": {
                        "relation": negative.predicate,
                        "rule": negative.rule,
                        "plausibility": negative.plausibility,
                        "support": negative.support,
                    }
                },
            ),
        ):
            out.append(
                make_item(
                    benchmark=BENCHMARK,
                    task=t.category,
                    question_type="yes_no",
                    pressure=pressure,
                    images=[t.file],
                    question=self.wording.yes_no(t, relation),
                    options=(),
                    answer=answer,
                    provenance=self._provenance(
                        t,
                        asked_relation=relation,
                        template="reefknot/yes_no",
                        prior_answer="yes" if relation == prior else "no",
                        **extra,
                    ),
                )
            )
        return out

    def _mcq(self, t: Triplet, distractors: list[FalseRelation], slot: int) -> Item:
        wrong = [d.predicate for d in distractors]
        options = wrong[:slot] + [t.predicate] + wrong[slot:]
        counts = self._other_counts(t, options)
        prior_choice = letter(counts.index(max(counts)))
        return make_item(
            benchmark=BENCHMARK,
            task=t.category,
            question_type="mcq",
            pressure="none",
            images=[t.file],
            question=self.wording.mcq(t),
            options=options,
            answer=letter(slot),
            provenance=self._provenance(
                t,
                template="reefknot/mcq",
                answer_slots=4,
                prior_answer=prior_choice,
                distractors=[
                    {"relation": d.predicate, "rule": d.rule, "plausibility": d.plausibility, "support": d.support}
                    for d in distractors
                ],
            ),
        )

    def _vqa(self, t: Triplet) -> Item:
        question, reference = self.wording.vqa(t)
        return make_item(
            benchmark=BENCHMARK,
            task=t.category,
            question_type="vqa",
            pressure="none",
            images=[t.file],
            question=question,
            options=(),
            answer=reference,
            provenance=self._provenance(
                t,
                template="reefknot/vqa",
                accepted_answers=[reference]
                + [self.wording.reference(t, q) for q in sorted(t.annotated) if q != t.predicate],
            ),
        )
