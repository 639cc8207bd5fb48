"""BasicVisQA from VQAv2: the type map, the agreement filter and the wrong options, over the whole corpus at once.

Steps (paper Sec. 3.2: "sampled from the VQAv2 validation set and selected questions pertaining to basic visual
information"):

1. **type** - ``templates/mmsap/types.yaml`` assigns each question one of the eight types, or none;
2. **agreement** - the share of the ten human answers with the same key as ``multiple_choice_answer``
   (:mod:`builders.mmsap.answers`); kept when >= ``min_agreement`` so the question has one right answer
   (choice where the paper is silent: 0.8, i.e. eight of ten annotators; every answer counts whatever its
   ``answer_confidence``);
3. **wrong options** - three per question from the corpus's own answer statistics (:mod:`builders.mmsap.distractors`);
4. **sample** - ``per_type`` questions per type in a seeded order, among those that got three wrong options.

Answers are interned once (:class:`Corpus`), so the 2.1 million answers of VQAv2 cost one dictionary lookup each
and the statistics are numpy arrays.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Sequence

import numpy as np

from builders.mmsap.answers import AnswerTable, display
from builders.mmsap.distractors import (
    MAX_NUMBER_OFFSET,
    N_WRONG,
    Batch,
    Pool,
    draw_from_pool,
    draw_numbers,
    ranked_pool,
    string_hash,
)
from builders.mmsap.questions import Question, paired
from builders.seeding import rng
from sources.errors import SourceError
from sources.vqav2 import VqaQuestion
from templates.loader import load_templates

_WORD = re.compile(r"[a-z]+")
NOT_OPTIONS = ("yes", "no")
"""Keys never offered as wrong options of an open question."""


# ------------------------------------------------------------------------------------------------ type map


@dataclass(frozen=True)
class TypeRule:
    name: str
    prefixes: tuple[str, ...]
    answer_types: tuple[str, ...]
    keywords: frozenset[str]
    exclude_keywords: frozenset[str]
    distractors: str
    vocabulary: str | None

    def matches_type(self, question_type: str, answer_type: str) -> bool:
        return question_type.startswith(self.prefixes) and (not self.answer_types or answer_type in self.answer_types)

    def matches_words(self, words: frozenset[str]) -> bool:
        return (not self.keywords or bool(self.keywords & words)) and not (self.exclude_keywords & words)


@dataclass(frozen=True)
class TypeMap:
    rules: tuple[TypeRule, ...]
    excluded_answer_types: frozenset[str]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.rules)

    def rule(self, name: str) -> TypeRule:
        return next(r for r in self.rules if r.name == name)

    def assign(self, question: str, question_type: str, answer_type: str) -> str | None:
        """The type of a VQAv2 question (``None``: not basic visual information, or a yes/no question)."""
        if answer_type in self.excluded_answer_types:
            return None
        candidates = self._candidates(question_type.lower().strip(), answer_type)
        if not candidates:
            return None
        words = frozenset(_WORD.findall(question.lower()))
        for rule in candidates:
            if rule.matches_words(words):
                return rule.name
        return None

    @lru_cache(maxsize=None)
    def _candidates(self, question_type: str, answer_type: str) -> tuple[TypeRule, ...]:
        return tuple(r for r in self.rules if r.matches_type(question_type, answer_type))


@lru_cache(maxsize=1)
def type_map() -> TypeMap:
    data = load_templates("mmsap", "types")
    rules = tuple(
        TypeRule(
            name=r["name"], prefixes=tuple(p.lower() for p in r["question_type_prefixes"]),
            answer_types=tuple(r.get("answer_types", ())), keywords=frozenset(r.get("keywords", ())),
            exclude_keywords=frozenset(r.get("exclude_keywords", ())), distractors=r["distractors"],
            vocabulary=r.get("vocabulary"),
        )
        for r in data["types"]
    )
    return TypeMap(rules, frozenset(data.get("excluded_answer_types", ())))


# ------------------------------------------------------------------------------------------------ the corpus


@dataclass
class Corpus:
    """Interned VQAv2 answers with the type, right answer and agreement of every question."""

    questions: Sequence[VqaQuestion]
    keys: list[str]
    """Interned id -> key."""
    texts: list[str]
    """Interned id -> the text shown for it: the most frequent spelling of the key among majority answers (keys are
    for comparing only: "one way" must not be shown as its key "1 way")."""
    types: np.ndarray
    """(n,) type index into the type map, -1 for none."""
    question_types: list[str]
    answer_ids: np.ndarray
    """(n, m) interned keys of the human answers, -1 padded."""
    right_ids: np.ndarray
    agreement: np.ndarray

    def id_of(self, key: str) -> int:
        try:
            return self.keys.index(key)
        except ValueError:
            self.keys.append(key)
            self.texts.append(key)
            return len(self.keys) - 1


def intern_corpus(questions: Sequence[VqaQuestion], types: TypeMap, table: AnswerTable) -> Corpus:
    """Type, interned answers and agreement of every question (one pass, cached keys)."""
    ids: dict[str, int] = {}
    keys: list[str] = []
    spellings: list[Counter] = []
    n = len(questions)
    width = max((len(q.answers) for q in questions), default=10)
    answer_ids = np.full((n, width), -1, dtype=np.int32)
    right = np.empty(n, dtype=np.int32)
    type_index = np.full(n, -1, dtype=np.int16)
    index_of = {name: k for k, name in enumerate(types.names)}
    key = table.key

    def intern(text: str) -> int:
        k = key(text)
        i = ids.get(k)
        if i is None:
            i = ids[k] = len(keys)
            keys.append(k)
            spellings.append(Counter())
        return i

    for row, q in enumerate(questions):
        answer_ids[row, : len(q.answers)] = [intern(a) for a in q.answers]
        right[row] = r = intern(q.multiple_choice_answer)
        spellings[r][q.multiple_choice_answer.strip()] += 1
        name = types.assign(q.question, q.question_type, q.answer_type)
        if name is not None:
            type_index[row] = index_of[name]
    counted = (answer_ids >= 0).sum(axis=1)
    agreement = (answer_ids == right[:, None]).sum(axis=1) / np.maximum(counted, 1)
    texts = [min(s.items(), key=lambda kv: (-kv[1], kv[0]))[0] if s else k for k, s in zip(keys, spellings)]
    return Corpus(questions, keys, texts, type_index, [q.question_type.lower().strip() for q in questions],
                  answer_ids, right, agreement)


def selected(corpus: Corpus, min_agreement: float) -> np.ndarray:
    """Row indices of typed questions whose answers agree enough."""
    return np.flatnonzero((corpus.types >= 0) & (corpus.agreement >= min_agreement - 1e-9))


# ------------------------------------------------------------------------------------------------ distractors


def distractors(corpus: Corpus, rows: np.ndarray, types: TypeMap, table: AnswerTable, seed: int) -> np.ndarray:
    """``(len(rows), 3)`` interned ids of the wrong options of each row (``-1`` where fewer were possible)."""
    out = np.full((len(rows), N_WRONG), -1, dtype=np.int64)
    hashes = lambda: np.array([string_hash(k) for k in corpus.keys], dtype=np.uint64)  # noqa: E731
    banned = _banned(corpus)
    qids = np.array([q.question_id for q in corpus.questions], dtype=np.int64)
    for t, rule in enumerate(types.rules):
        mine = np.flatnonzero(corpus.types[rows] == t)
        if not len(mine):
            continue
        if rule.distractors == "number":
            values = number_values(corpus)
            ok = mine[values[corpus.right_ids[rows[mine]]] >= 0]
            batch = _batch(corpus, rows[ok], qids)
            out[ok] = draw_numbers(batch, values, seed)
            continue
        names, pools, group_of = _pools(corpus, rows, mine, t, rule, table, banned)
        candidate_hashes = hashes()
        for g, name in enumerate(names):
            members = mine[group_of == g]
            entries = pools[name]
            if not entries or not len(members):
                continue
            pool = Pool(np.array([i for i, _ in entries], dtype=np.int64),
                        np.array([abs(c) for _, c in entries], dtype=np.float64),
                        np.array([1 if c < 0 else 0 for _, c in entries], dtype=np.int64))
            out[members] = draw_from_pool(_batch(corpus, rows[members], qids), pool, candidate_hashes, seed)
    return out


def option_pools(corpus: Corpus, rows: np.ndarray, types: TypeMap,
                 table: AnswerTable) -> dict[tuple[int, str | None], frozenset[int]]:
    """(type index, question_type or ``None`` for a vocabulary) -> the interned ids :func:`distractors` may offer
    a row of that type and question_type (numbers have no pool: any count near the right one)."""
    out: dict[tuple[int, str | None], frozenset[int]] = {}
    banned = _banned(corpus)
    for t, rule in enumerate(types.rules):
        mine = np.flatnonzero(corpus.types[rows] == t)
        if len(mine) and rule.distractors != "number":
            names, pools, _ = _pools(corpus, rows, mine, t, rule, table, banned)
            out.update(((t, name), frozenset(i for i, _ in entries)) for name, entries in pools.items())
    return out


def number_values(corpus: Corpus) -> np.ndarray:
    """Interned id -> the integer its key spells (``-1`` for a key that is no number)."""
    return np.array([int(k) if k.isdigit() else -1 for k in corpus.keys], dtype=np.int64)


def _banned(corpus: Corpus) -> set[int]:
    return {corpus.keys.index(k) for k in NOT_OPTIONS if k in corpus.keys}


def _pools(corpus: Corpus, rows: np.ndarray, mine: np.ndarray, t: int, rule: TypeRule, table: AnswerTable,
           banned: set[int]) -> tuple[list[str | None], dict[str | None, list[tuple[int, int]]], np.ndarray]:
    """The candidate pools of the rows ``rows[mine]`` of type ``t`` (a vocabulary, or per question_type the
    corpus's answer statistics): the pools' names, name -> [(interned id, count; negative: top-up tier)], and
    each row's pool (an index into the names)."""
    typed = np.flatnonzero(corpus.types == t)
    type_counts = Counter(corpus.right_ids[typed].tolist())
    if rule.distractors == "vocabulary":
        vocab = [corpus.id_of(table.key(v)) for v in table.vocabulary(rule.vocabulary or "")]
        return [None], {None: [(i, type_counts.get(i, 0) + 1) for i in sorted(set(vocab))]}, \
            np.zeros(len(mine), dtype=np.int64)
    by_qtype: dict[str, Counter] = defaultdict(Counter)
    for row in typed:
        by_qtype[corpus.question_types[row]][int(corpus.right_ids[row])] += 1
    names = sorted({corpus.question_types[r] for r in rows[mine]})
    base = ranked_pool(type_counts, banned)
    pools: dict[str | None, list[tuple[int, int]]] = {}
    for name in names:
        own = ranked_pool(by_qtype[name], banned)
        seen = {i for i, _ in own}
        pools[name] = own + [(i, -c) for i, c in base if i not in seen]  # negative count: top-up tier
    group_of = np.array([names.index(corpus.question_types[r]) for r in rows[mine]], dtype=np.int64)
    return list(names), pools, group_of


def _batch(corpus: Corpus, rows: np.ndarray, qids: np.ndarray) -> Batch:
    return Batch(qids[rows], corpus.answer_ids[rows], corpus.right_ids[rows])


# ------------------------------------------------------------------------------------------------ questions


def basic_questions(
    corpus: Corpus, types: TypeMap, table: AnswerTable, images: dict[int, str], images_dir: str,
    min_agreement: float, per_type: int, seed: int, on_missing_image: str = "skip",
) -> tuple[list[Question], dict[str, Any]]:
    """``per_type`` BasicVisQA questions per type, partners included, with the selection statistics for build.json.

    Questions are taken in a seeded order per type, each with its partner where the corpus has one
    (:class:`Partners`); one without a partner is set aside, and taken unpaired only when the questions with
    partners run out (or one place is left of an odd count), as the demo's questions are
    (:func:`builders.mmsap.scenes.sample`). One whose image is not in ``images`` (a partial COCO download) is
    passed over for the next, and listed in the statistics (``on_missing_image="skip"``), or stops the build with
    one line naming the file looked for (``"fail"``); a partner is only sought among questions whose image is at
    hand. Passing over keeps every other choice of an unpaired build; with pairs, a question whose partner's image
    is missing may be paired with another question or go unpaired."""
    rows = selected(corpus, min_agreement)
    position = {int(r): k for k, r in enumerate(rows)}
    wrong = distractors(corpus, rows, types, table, seed)
    complete = (wrong >= 0).all(axis=1)
    partners = Partners(corpus, types, wrong, position, option_pools(corpus, rows, types, table), images)
    out: list[Question] = []
    stats: dict[str, Any] = {"questions": len(corpus.questions), "typed": int((corpus.types >= 0).sum()),
                             "agreeing": len(rows), "with_3_distractors": int(complete.sum()), "per_type": {}}
    passed_over: list[VqaQuestion] = []
    for t, rule in enumerate(types.rules):
        eligible = rows[(corpus.types[rows] == t) & complete]
        ranked = [int(eligible[i]) for i in rng(seed, f"mmsap/vqav2/{rule.name}").permutation(len(eligible))]
        search = partners.within(ranked)
        picked: list[tuple[int, Partner | None]] = []
        count, used, alone = 0, set[int](), list[int]()
        for row in ranked:
            if count >= per_type:
                break
            if row in used:
                continue
            q = corpus.questions[row]
            if q.image_id not in images:
                if on_missing_image == "fail":
                    raise SourceError(images_dir, f"image_id {q.image_id}",
                                      f"no image file for question_id {q.question_id} (looked for "
                                      f"COCO_val2014_{q.image_id:012d}.jpg or {q.image_id:012d}.jpg; "
                                      "--on-missing-image skip passes such questions over)")
                passed_over.append(q)
                continue
            room = count + 2 <= per_type
            found = search(row, used) if room else None
            if found is None and room:
                alone.append(row)  # taken only if the questions with partners run out
                continue
            used.add(row)
            picked.append((row, found))
            if found is not None:
                used.add(found.row)
            count += 1 if found is None else 2
        picked += [(row, None) for row in [r for r in alone if r not in used][:per_type - count]]
        pairs = sum(1 for _, found in picked if found is not None)
        stats["per_type"][rule.name] = {"eligible": len(eligible), "made": len(picked) + pairs, "pairs": pairs,
                                        "unpaired": len(picked) - pairs}
        for row, found in sorted(picked, key=lambda p: corpus.questions[p[0]].question_id):
            if found is None:
                wrong_of = [int(i) for i in wrong[position[row]]]
                out.append(_question(corpus, row, rule, images, wrong_of))
            else:
                first = _question(corpus, row, rule, images, [found.answer, *found.shared])
                out += paired(first, _question(corpus, found.row, rule, images, [found.own, *found.shared]))
    stats["missing_images"] = {
        "on_missing_image": on_missing_image, "images_dir": images_dir,
        "questions_passed_over": len(passed_over), "question_ids": [q.question_id for q in passed_over],
        "image_ids": sorted({q.image_id for q in passed_over}),
    }
    return out, stats


def _question(corpus: Corpus, row: int, rule: TypeRule, images: dict[int, str], wrong: Sequence[int]) -> Question:
    """The question of a VQAv2 row, with the wrong options ``wrong`` (interned ids; counts for numbers)."""
    q = corpus.questions[row]
    return Question(
        "basic", rule.name, images[q.image_id], q.question, display(_shown(corpus, int(corpus.right_ids[row]), "")),
        tuple(display(_shown(corpus, i, rule.distractors)) for i in wrong),
        {"source": "vqav2", "image_id": q.image_id, "question_id": q.question_id,
         "question_type": q.question_type, "answer_type": q.answer_type,
         "agreement": round(float(corpus.agreement[row]), 2), "distractor_kind": rule.distractors,
         "distractor_writer": "statistics", "human_answers": list(q.answers)},
    )


# ------------------------------------------------------------------------------------------------ pairs


@dataclass(frozen=True)
class Partner:
    """A question's partner: its row, the options the two share besides their answers, and each answer as an
    option of the other (interned ids; counts for numbers)."""

    row: int
    shared: tuple[int, int]
    answer: int
    """The partner's right answer, a wrong option of the first question."""
    own: int
    """The first question's right answer, a wrong option of the partner."""


class Partners:
    """Finds a VQAv2 question's partner (issue 55): the same question on another image with another answer, whose
    row passes every rule the first one passed, so that the two offer the same four options.

    A partner asks the same words with the same ``question_type`` (so the same type and the same pool of wrong
    options, :func:`option_pools`), its majority answer agrees as much (the same selection), its image is at hand
    and is another, and its answer has another key. Each answer must be a wrong option the other could have been
    offered - in its pool, or a count within :data:`MAX_NUMBER_OFFSET`, and none of its ten human answers - and the
    first question's own wrong options give the two others, the first two of its drawn three that the partner may
    also be offered. The first question then shows its answer, the partner's and those two; the partner the same
    four. A question the corpus gives no such partner stays unpaired."""

    def __init__(self, corpus: Corpus, types: TypeMap, wrong: np.ndarray, position: dict[int, int],
                 pools: dict[tuple[int, str | None], frozenset[int]], images: dict[int, str]) -> None:
        self.corpus, self.types, self.wrong, self.position, self.pools = corpus, types, wrong, position, pools
        self.images = images
        self.values = number_values(corpus)

    def within(self, ranked: Sequence[int]):
        """``(row, used rows) -> Partner | None``: the first partner of ``row`` in ``ranked``'s order."""
        by_words: dict[tuple[str, str], list[int]] = defaultdict(list)
        for row in ranked:
            by_words[self._words(row)].append(row)

        def search(row: int, used: set[int]) -> Partner | None:
            for other in by_words[self._words(row)]:
                if other != row and other not in used:
                    found = self._pair(row, other)
                    if found is not None:
                        return found
            return None

        return search

    def _words(self, row: int) -> tuple[str, str]:
        return self.corpus.questions[row].question, self.corpus.question_types[row]

    def _pair(self, row: int, other: int) -> Partner | None:
        corpus = self.corpus
        first, second = corpus.questions[row], corpus.questions[other]
        if second.image_id not in self.images or self.images[second.image_id] == self.images[first.image_id]:
            return None
        mine, theirs = self._answer(row), self._answer(other)
        if mine == theirs or not (self._offerable(row, theirs) and self._offerable(other, mine)):
            return None
        shared = [int(w) for w in self.wrong[self.position[row]] if w != theirs and self._offerable(other, int(w))]
        if len(shared) < 2:
            return None
        return Partner(other, (shared[0], shared[1]), theirs, mine)

    def _number(self, row: int) -> bool:
        return self.types.rules[int(self.corpus.types[row])].distractors == "number"

    def _answer(self, row: int) -> int:
        """A row's right answer as an option: its interned id, or its count for numbers."""
        right = int(self.corpus.right_ids[row])
        return int(self.values[right]) if self._number(row) else right

    def _offerable(self, row: int, option: int) -> bool:
        """Whether ``option`` (an interned id, or a count for numbers) may be a wrong option of ``row``."""
        corpus = self.corpus
        human = corpus.answer_ids[row][corpus.answer_ids[row] >= 0]
        if self._number(row):
            given = self.values[human]
            own = self._answer(row)
            return option >= 0 and option != own and abs(option - own) <= MAX_NUMBER_OFFSET and option not in given
        rule = self.types.rules[int(corpus.types[row])]
        pool = self.pools.get((int(corpus.types[row]), None if rule.distractors == "vocabulary"
                               else corpus.question_types[row]), frozenset())
        return option in pool and option not in human and option != int(corpus.right_ids[row])


def _shown(corpus: Corpus, value: int, kind: str) -> str:
    """A wrong count is a number; any other option is shown as its key's most frequent spelling, except that
    numbers always show as digits (a right answer spelled "two" beside wrong options "3" would give it away)."""
    if kind == "number":
        return str(value)
    key = corpus.keys[value]
    return key if key.isdigit() else corpus.texts[value]

