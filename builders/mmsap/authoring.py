"""MM-SAP questions written by people about images (``annotation author --kind questions``): KnowVisQA and
hand-made BasicVisQA, as the JSONL ``builders.mmsap --authored`` reads.

Push makes one task per image of ``--images``; pull writes every submitted question, validated by the builder's own
reader (:func:`builders.mmsap.authored.read_authored`), to ``--out`` (whole, sorted by image and question).
"""

from __future__ import annotations

from functools import partial
from typing import Sequence

from builders.authoring import (
    Answer, AuthoringHook, Field, Form, Inputs, Output, Subject, image_files, jsonl, reader_problem,
)
from builders.authorship import question_key
from builders.mmsap.answers import answer_table
from builders.mmsap.authored import read_authored
from builders.mmsap.layout import refusal_wording
from builders.mmsap.questions import DEMO_BASIC_TYPES, KNOW_DOMAINS
from builders.mmsap.vqa import type_map

QUESTION, ANSWER, SUBSET, TYPE, DISTRACTORS = "question", "answer", "subset", "type", "distractors"


def question_types() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(know types, basic types)`` exactly as ``builders.mmsap`` validates an authored record's ``type``."""
    return tuple(KNOW_DOMAINS), tuple(dict.fromkeys((*type_map().names, *DEMO_BASIC_TYPES)))


class Questions(AuthoringHook):
    kind = "questions"
    benchmark = "mmsap"
    summary = "MM-SAP questions about the images of --images (the JSONL builders.mmsap --authored reads)"
    noun = "question(s)"

    def form(self, inputs: Inputs) -> Form:
        know, basic = question_types()
        return Form("Write a question this image answers (for know: one that needs world knowledge too), its "
                    "short answer, and up to three wrong options.", (
            Field(QUESTION, "Question (answerable from this image; for know: needs world knowledge)", rows=2),
            Field(ANSWER, "Answer (short)"),
            Field(SUBSET, "Subset", kind="choice", choices=("know", "basic")),
            Field(TYPE, f"Type (know: {', '.join(know)}; basic: {', '.join(basic)})", kind="choice",
                  choices=(*know, *basic)),
            Field(DISTRACTORS, "Wrong options (up to 3, one per line; optional)", rows=3, required=False),
        ))

    def subjects(self, inputs: Inputs) -> list[Subject]:
        """One subject per image (its file name the key)."""
        folder = self.need(inputs, "images", "DIR (a folder of images)")
        return [Subject(p.name, (p,), (p.name,), f"write a question about {p.name}") for p in image_files(folder)]

    def outputs(self, answers: Sequence[Answer], inputs: Inputs) -> tuple[list[Output], list[str]]:
        out = self.need(inputs, "out", "FILE.jsonl (the questions file to write)")
        read = partial(read_authored, basic_types=question_types()[1], refusal=refusal_wording(),
                       table=answer_table())
        records, authors, problems = [], {}, []
        for a in answers:
            record = {"image": a.key, "question": a.text(QUESTION), "answer": a.text(ANSWER),
                      "subset": a.choice(SUBSET), "type": a.choice(TYPE),
                      "distractors": [d.strip() for t in a.values.get(DISTRACTORS, []) for d in str(t).splitlines()
                                      if d.strip()]}
            problem = reader_problem(record, read)
            if problem:
                problems.append(a.problem(problem))
                continue
            records.append(record)
            authors[question_key(record["image"], record["question"])] = a.author
        records.sort(key=lambda r: (r["image"], r["question"]))
        return [Output(out, jsonl(records), authors, tuple(f"{r['image']}: {r['question']}" for r in records))], \
            problems


QUESTIONS = Questions()
