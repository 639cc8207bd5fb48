"""VQAv2 reader: the official v2 questions and annotations JSON files, validated as they are read.

The two files (``v2_OpenEnded_mscoco_val2014_questions.json`` and ``v2_mscoco_val2014_annotations.json``) are
joined on ``question_id``. Every record is checked, and the first problem is a one-line
:class:`~sources.errors.SourceError` naming the file, the record and what is wrong::

    questions file    {"questions": [{"question_id", "image_id", "question"}, ...], ...}
    annotations file  {"annotations": [{"question_id", "image_id", "question_type", "answer_type",
                                        "multiple_choice_answer",
                                        "answers": [{"answer", "answer_confidence", "answer_id"} x 10]}, ...], ...}

Images are COCO's; :func:`image_index` maps image ids to files of an images folder by COCO's naming schemes
(``COCO_val2014_000000000042.jpg`` and ``000000000042.jpg``) after one directory listing, so a missing image is
found without touching the disk once per question.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from sources.errors import SourceError
from sources.jsonio import load_json
from sources.validate import check_name, claim_id, expect_dict, expect_list, label, require_key, type_name

LICENSE = "CC BY 4.0 (VQA annotations); Flickr terms (COCO images)"
ANSWER_CONFIDENCES = ("yes", "maybe", "no")
_COCO_NAME = re.compile(r"^(?:COCO_[a-z]+\d{4}_)?0*(\d+)\.(?:jpe?g|png)$", re.IGNORECASE)


@dataclass(frozen=True)
class VqaQuestion:
    """One VQAv2 question joined with its annotation."""

    question_id: int
    image_id: int
    question: str
    question_type: str
    answer_type: str
    multiple_choice_answer: str
    answers: tuple[str, ...]
    """The human answers as written (ten in VQAv2)."""
    confidences: tuple[str, ...]
    """``answer_confidence`` per answer (``yes``/``maybe``/``no``; ``""`` where the file leaves it out)."""


@dataclass(frozen=True)
class VqaCorpus:
    questions_path: str
    annotations_path: str
    questions: tuple[VqaQuestion, ...]
    license: str = LICENSE


def read_vqav2(questions_path: str | Path, annotations_path: str | Path) -> VqaCorpus:
    """Read and join the two official files; a :class:`SourceError` names the first bad record."""
    texts = _read_questions(questions_path)
    joined: list[VqaQuestion] = []
    for raw, qid, rec in _records(annotations_path, "VQAv2 annotations file", "annotations"):
        if qid not in texts:
            raise SourceError(annotations_path, rec, f"question_id {qid} is not in the questions file {questions_path}")
        image_id, question = texts[qid]
        if require_key(raw, "image_id", annotations_path, rec) != image_id:
            raise SourceError(annotations_path, rec,
                              f"image_id {raw['image_id']!r} differs from the questions file's {image_id!r}")
        strings = {key: _string(raw, key, annotations_path, rec)
                   for key in ("question_type", "answer_type", "multiple_choice_answer")}
        answers, confidences = _answers(raw, annotations_path, rec)
        joined.append(VqaQuestion(int(qid), int(image_id), question, strings["question_type"], strings["answer_type"],
                                  strings["multiple_choice_answer"], answers, confidences))
    missing = sorted(set(texts) - {q.question_id for q in joined})
    if missing:
        raise SourceError(questions_path, f"question_id {missing[0]}",
                          f"has no annotation in {annotations_path} ({len(missing)} questions without one)")
    return VqaCorpus(str(questions_path), str(annotations_path), tuple(joined))


def _records(path: str | Path, what: str, section: str) -> Iterator[tuple[dict, int, str]]:
    """``(record, question_id, label)`` for every record of ``section``, each an object with a unique id."""
    data = expect_dict(load_json(path, what), path, "", "the file")
    records = expect_list(require_key(data, section, path, ""), path, "", f"{section!r}")
    seen: dict[int, str] = {}
    for index, raw in enumerate(records):
        rec = label(section, index)
        raw = expect_dict(raw, path, rec)
        qid = require_key(raw, "question_id", path, rec)
        if type(qid) is not int:
            raise SourceError(path, rec, f"'question_id' must be an integer, got {qid!r}")
        rec = label(section, index, qid, "question_id")
        claim_id(seen, qid, path, rec, "question_id")
        yield raw, qid, rec


def _read_questions(path: str | Path) -> dict[int, tuple[int, str]]:
    out: dict[int, tuple[int, str]] = {}
    for raw, qid, rec in _records(path, "VQAv2 questions file", "questions"):
        image_id = require_key(raw, "image_id", path, rec)
        if type(image_id) is not int or image_id < 0:
            raise SourceError(path, rec, f"'image_id' must be a non-negative integer, got {image_id!r}")
        out[qid] = (image_id, _string(raw, "question", path, rec))
    return out


def _string(raw: dict, key: str, file: str | Path, rec: str) -> str:
    """``raw[key]`` as a non-empty string (:func:`~sources.validate.check_name`'s check)."""
    return check_name(require_key(raw, key, file, rec), file, rec, key)


def _answers(raw: dict, file: str | Path, rec: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    answers = expect_list(require_key(raw, "answers", file, rec), file, rec, "'answers'")
    if not answers:
        raise SourceError(file, rec, "'answers' is empty (VQAv2 has ten human answers per question)")
    texts, confidences = [], []
    for k, answer in enumerate(answers):
        where = f"{rec} answers[{k}]"
        if not isinstance(answer, dict):
            raise SourceError(file, where, f"an answer must be an object, got {type_name(answer)}")
        text = require_key(answer, "answer", file, where)
        if type(text) is not str:
            raise SourceError(file, where, f"'answer' must be a string, got {text!r}")
        confidence = answer.get("answer_confidence", "")
        if confidence not in ANSWER_CONFIDENCES + ("",):
            raise SourceError(file, where, f"'answer_confidence' must be one of yes, maybe, no, got {confidence!r}")
        texts.append(text)
        confidences.append(confidence)
    return tuple(texts), tuple(confidences)


def image_index(images_dir: str | Path) -> dict[int, str]:
    """COCO image id -> path of its file in ``images_dir`` (one listing; names as COCO writes them)."""
    root = Path(images_dir)
    if not root.is_dir():
        raise SourceError(root, "", "images folder not found")
    out: dict[int, str] = {}
    for name in sorted(os.listdir(root)):
        match = _COCO_NAME.match(name)
        if match:
            out.setdefault(int(match.group(1)), str(root / name))
    return out
