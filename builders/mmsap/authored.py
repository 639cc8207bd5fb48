"""The authored-questions file: KnowVisQA and the hand-made part of BasicVisQA, written by people.

Format (YAML with a ``questions`` list, or JSON lines with one record per line; documented with an example in
``templates/mmsap/demo_authored.yaml``, the small knowledge file shipped for the demo world)::

    image: <image id | file name | demo:<category>>   question: <text>   answer: <text>
    subset: know | basic                               type: <subtask>    distractors: [<text>, ...]  (0..3, optional)
    entity: <what the image shows that the question is about>                                       (optional)

A question points at what the image shows without naming it - "Which animal is named after the shape of the
striped object?", not "... of the star shown here", which a model answers without looking. With a ``demo:``
image the question may say ``{object}``: the builder puts there how the picked image's shape is pointed at (its
pattern, or "the largest object"; :func:`builders.mmsap.scenes.referring_expression`). ``entity`` (for a
``demo:<category>`` image: the category) is what the question must not name; the build's validity report lists
the questions that do (:func:`names_entity`).

Every record is validated on read; the first problem is one line naming the file, the record and what is wrong.
Missing distractors are drawn from the answers of the other records of the same subset and type, never the
answer nor a synonym of it (:mod:`builders.mmsap.answers`); too few such answers is an error that says so.
Writing one question per shape with the same words, and letting the distractors come from the others' answers,
makes every option the right answer for some picture: only looking tells which.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import yaml

from builders.authorship import question_key, read_authors
from builders.mmsap.answers import AnswerTable
from builders.mmsap.distractors import N_WRONG
from builders.mmsap.questions import KNOW_DOMAINS, Question, paired
from builders.seeding import rng
from sources.errors import SourceError
from sources.jsonio import JSONL_SUFFIXES, iter_jsonl, require_file

FIELDS = ("image", "question", "answer", "subset", "type", "distractors", "entity")
REQUIRED = ("image", "question", "answer", "subset", "type")
AUTHORED_SUBSETS = ("know", "basic")
DEMO_SELECTOR = "demo:"
OBJECT = "{object}"
"""Where a question about a ``demo:`` image says how the picked image's shape is pointed at."""


@dataclass(frozen=True)
class AuthoredRecord:
    where: str
    image: str
    question: str
    answer: str
    subset: str
    type: str
    distractors: tuple[str, ...]
    entity: str | None = None
    """What the question is about as the image shows it (the category of a ``demo:`` image): never named."""


def read_authored(path: str | Path, basic_types: Sequence[str], refusal: str,
                  table: AnswerTable) -> list[AuthoredRecord]:
    """Validated records of an authored-questions file (YAML or JSON lines)."""
    p = require_file(path, "authored-questions file")
    if p.suffix.lower() in JSONL_SUFFIXES:
        raw = [(f"line {n}", value) for n, value in iter_jsonl(p, "authored-questions file")]
    else:
        raw = [(f"questions[{k}]", value) for k, value in enumerate(_yaml_questions(p))]
    if not raw:
        raise SourceError(p, "", "no questions in the file")
    records, seen = [], {}
    for where, value in raw:
        rec = _record(p, where, value, basic_types, refusal, table)
        key = question_key(rec.image, rec.question)
        if key in seen:
            raise SourceError(p, where, f"the same image and question as {seen[key]}")
        seen[key] = where
        records.append(rec)
    return records


def _yaml_questions(p: Path) -> list[Any]:
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise SourceError(p, "", f"malformed YAML: {str(exc).splitlines()[0]}") from None
    except UnicodeDecodeError as exc:
        raise SourceError(p, "", f"not UTF-8 text (byte {exc.start})") from None
    if isinstance(data, Mapping):
        data = data.get("questions")
    if not isinstance(data, list):
        raise SourceError(p, "", "expected a 'questions' list of records")
    return data


def _record(p: Path, where: str, value: Any, basic_types: Sequence[str], refusal: str,
            table: AnswerTable) -> AuthoredRecord:
    if not isinstance(value, Mapping):
        raise SourceError(p, where, f"a question must be a mapping of {', '.join(FIELDS)}")
    unknown = sorted(set(value) - set(FIELDS))
    if unknown:
        raise SourceError(p, where, f"unknown field(s) {', '.join(map(str, unknown))}; valid: {', '.join(FIELDS)}")
    if type(value.get("image")) is int:  # a numeric image id written without quotes
        value = {**value, "image": str(value["image"])}
    for name in REQUIRED:
        text = value.get(name)
        if not isinstance(text, str) or not text.strip():
            raise SourceError(p, where, f"{name!r} is missing or not a non-empty string")
    subset, kind = value["subset"], value["type"]
    if subset not in AUTHORED_SUBSETS:
        raise SourceError(p, where,
                          f"'subset' must be know or basic (BeyondVisQA comes from templates), not {subset!r}")
    valid = KNOW_DOMAINS if subset == "know" else tuple(basic_types)
    if kind not in valid:
        raise SourceError(p, where, f"'type' {kind!r} is not a {subset} subtask; valid: {', '.join(valid)}")
    answer = value["answer"].strip()
    if table.key(answer) == table.key(refusal):
        raise SourceError(p, where, "'answer' is the refusal option; BeyondVisQA questions come from templates")
    wrong = value.get("distractors", [])
    if not isinstance(wrong, list) or not all(isinstance(w, str) and w.strip() for w in wrong):
        raise SourceError(p, where, "'distractors' must be a list of non-empty strings")
    wrong = [w.strip() for w in wrong]
    if len(wrong) > N_WRONG:
        raise SourceError(p, where,
                          f"at most {N_WRONG} distractors (the fifth option is the refusal), got {len(wrong)}")
    keys = [table.key(w) for w in wrong]
    if table.key(answer) in keys:
        same = wrong[keys.index(table.key(answer))]
        raise SourceError(p, where, f"distractor {same!r} is the answer or a synonym of it")
    if len(set(keys)) != len(keys) or table.key(refusal) in keys:
        raise SourceError(p, where, "'distractors' repeat each other or the refusal option")
    image, question = value["image"].strip(), value["question"].strip()
    entity = value.get("entity")
    if entity is not None and (not isinstance(entity, str) or not entity.strip()):
        raise SourceError(p, where, "'entity' must be a non-empty string")
    if OBJECT in question and not image.startswith(DEMO_SELECTOR):
        raise SourceError(p, where, f"{OBJECT} is filled in only for {DEMO_SELECTOR}<category> images; write how "
                                    "the question points at the object")
    if entity is None and image.startswith(DEMO_SELECTOR):
        entity = image[len(DEMO_SELECTOR):]
    return AuthoredRecord(where, image, question, answer, subset, kind, tuple(wrong),
                          entity.strip() if entity else None)


def names_entity(question: str, entity: str | None) -> bool:
    """Whether ``question`` names ``entity`` (a whole word or words, any case, a plural ending allowed)."""
    if not entity:
        return False
    words = r"\s+".join(re.escape(w) for w in entity.split())
    return re.search(rf"\b{words}(?:e?s)?\b", question, re.IGNORECASE) is not None


@dataclass(frozen=True)
class Resolved:
    """Where an authored record's image is, and how its question points at the object (``{object}``)."""

    file: str
    image_id: str
    object: str | None = None
    provenance: Mapping[str, Any] = field(default_factory=dict)
    """What the pick rests on (the instance pointed at), for the item's provenance."""


ImageResolver = Callable[..., Resolved]
"""``(record, pointing=None) -> Resolved``; raises :class:`SourceError` when the image cannot be found (or, with
``pointing``, when no image of a ``demo:`` record's object lets the question point at it in those words)."""


Generate = Callable[[str, str, Sequence[str], int], list[str]]
"""``(question, answer, given distractors, n) -> up to n checked wrong options`` (the LLM writer)."""


def authored_questions(path: str | Path, records: Sequence[AuthoredRecord], resolve: ImageResolver,
                       table: AnswerTable, seed: int, generate: Generate | None = None) -> list[Question]:
    """Questions of the records. An unpaired record's wrong options are its written distractors, then ones from
    ``generate`` (when given), then answers of the other records of the same subset and type. The two records of
    a pair (:func:`_pair_records`) show one option list: both answers, both records' written distractors, and the
    rest drawn as above for the first (each answer is then a wrong option of the other)."""
    authors = read_authors(path)  # who wrote each record, when `annotation author pull` wrote the file
    places, partners = _pair_records(records, resolve, table)
    asked = [_asked(path, rec, places[k]) for k, rec in enumerate(records)]
    partner_of = dict(partners)
    wrong: dict[int, tuple[tuple[str, ...], int]] = {}  # record -> (its wrong options, how many an LLM wrote)
    for k, rec in enumerate(records):
        if k in wrong:
            continue
        j = partner_of.get(k)
        given = list(rec.distractors) if j is None else _pair_written(rec, records[j], table)
        options, by_llm = _wrong_options(path, rec, asked[k], given, records, table, seed, generate)
        wrong[k] = (options, by_llm)
        if j is not None:  # the partner's wrong options: this answer, and this record's wrong ones but its own
            wrong[j] = ((rec.answer, *(o for o in options if o != records[j].answer)), by_llm)
    out = []
    for k, rec in enumerate(records):
        where, (options, by_llm) = places[k], wrong[k]
        written = {table.key(w) for w in rec.distractors}
        provenance = {"source": "authored", "file": Path(path).name, "record": rec.where, "image_id": where.image_id,
                      "generated_distractors": sum(table.key(w) not in written for w in options),
                      "llm_distractors": by_llm, **where.provenance}
        if rec.entity:
            provenance["entity"] = rec.entity
        author = authors.get(question_key(rec.image, rec.question))
        if author:
            provenance["author"] = author
        out.append(Question(rec.subset, rec.type, where.file, asked[k], rec.answer, options, provenance))
    for a, b in partners:
        out[a], out[b] = paired(out[a], out[b])
    return out


def _asked(path: str | Path, rec: AuthoredRecord, where: Resolved) -> str:
    """The record's question as asked of its picked image (``{object}`` filled in)."""
    if OBJECT not in rec.question:
        return rec.question
    if where.object is None:
        raise SourceError(path, rec.where, f"no way to point at the object of image {rec.image!r}")
    return rec.question.replace(OBJECT, where.object)


def _pair_written(a: AuthoredRecord, b: AuthoredRecord, table: AnswerTable) -> list[str]:
    """The wrong options a pair's first record starts from: its partner's answer, then the written distractors of
    both records that are neither answer (each once, by key)."""
    out, seen = [b.answer], {table.key(a.answer), table.key(b.answer)}
    for text in (*a.distractors, *b.distractors):
        if table.key(text) not in seen:
            seen.add(table.key(text))
            out.append(text)
    return out


def _wrong_options(path: str | Path, rec: AuthoredRecord, question: str, given: Sequence[str],
                   records: Sequence[AuthoredRecord], table: AnswerTable, seed: int,
                   generate: Generate | None) -> tuple[tuple[str, ...], int]:
    """``given``, then up to the missing number from ``generate``, then drawn answers; and how many ``generate``
    wrote."""
    wrong = list(given)
    missing = N_WRONG - len(wrong)
    by_llm = generate(question, rec.answer, wrong, missing)[:missing] if missing and generate else []
    wrong += by_llm
    if len(wrong) < N_WRONG:
        wrong += _fill(path, rec, records, table, seed, N_WRONG - len(wrong), taken=wrong)
    return tuple(wrong), len(by_llm)


def _pair_records(records: Sequence[AuthoredRecord], resolve: ImageResolver,
                  table: AnswerTable) -> tuple[list[Resolved], list[tuple[int, int]]]:
    """Where each record's image is, and the pairs of records (indices) that ask one question of two images with
    two answers: same subset, type and words, answers with different keys, different image files, and written
    distractors that fit one option list with both answers. A ``demo:`` record's partner is picked where its
    object is pointed at in the same words, so the two questions read alike. Records are paired greedily in file
    order; one left without a partner stays unpaired."""
    groups: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for k, rec in enumerate(records):
        groups[(rec.subset, rec.type, rec.question)].append(k)
    places: dict[int, Resolved] = {}
    partners: list[tuple[int, int]] = []
    taken: set[int] = set()
    for k, rec in enumerate(records):
        if k in taken:
            continue
        places.setdefault(k, resolve(rec))
        for j in groups[(rec.subset, rec.type, rec.question)]:
            other = records[j]
            if j <= k or j in taken or table.key(other.answer) == table.key(rec.answer) \
                    or len(_pair_written(rec, other, table)) > N_WRONG:
                continue
            try:
                place = resolve(other, places[k].object)
            except SourceError:  # no image of the partner's object pointed at in the same words
                continue
            if place.file != places[k].file:
                places[j] = place
                partners.append((k, j))
                taken |= {k, j}
                break
    return [places[k] if k in places else resolve(rec) for k, rec in enumerate(records)], partners


def _fill(path: str | Path, rec: AuthoredRecord, records: Sequence[AuthoredRecord], table: AnswerTable, seed: int,
          k: int, taken: Sequence[str]) -> list[str]:
    taken = {table.key(rec.answer)} | {table.key(w) for w in taken}
    pool: dict[str, str] = {}
    for other in records:
        if (other.subset, other.type) == (rec.subset, rec.type) and table.key(other.answer) not in taken:
            pool.setdefault(table.key(other.answer), other.answer)
    if len(pool) < k:
        raise SourceError(path, rec.where, f"needs {k} more distractor(s) and only {len(pool)} other answer(s) of "
                                           f"{rec.subset}/{rec.type} exist to draw from; write them in the record")
    names = sorted(pool)
    picked = rng(seed, f"mmsap/authored/{rec.where}").choice(len(names), size=k, replace=False)
    return [pool[names[i]] for i in sorted(picked)]
