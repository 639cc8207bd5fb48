"""A small VQAv2 in the official v2 format, over the images of ``tests.fixtures.real_formats.make_coco``.

Every type of the MM-SAP type map gets questions with varied majority answers (so the corpus has answer
statistics), human answers that disagree a little (a neighbour answer the distractors must avoid), spelled-out
numbers and synonyms; some questions agree too little, some are yes/no or "why" questions and must be left out.
As in VQAv2 ("What color is the dog?" is asked of many images), each question's words are asked of two images with
different majority answers (:data:`ASKED_TWICE`), so questions have partners (issue 55).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# type -> (question, question_type, answer_type, [(majority, neighbour), ...])
SPECS: dict[str, tuple[str, str, str, list[tuple[str, str]]]] = {
    "counting": ("How many {x} are there?", "how many", "number",
                 [("2", "two"), ("3", "4"), ("1", "2"), ("4", "5"), ("2", "3"), ("6", "7")]),
    "color": ("What color is the {x}?", "what color is the", "other",
              [("blue", "navy"), ("gray", "silver"), ("red", "orange"), ("white", "grey"), ("green", "blue"),
               ("black", "brown")]),
    "object_recognition": ("What is the man holding near the {x}?", "what is the man", "other",
                           [("frisbee", "disc"), ("umbrella", "cane"), ("phone", "remote"), ("kite", "string"),
                            ("racket", "bat"), ("bat", "stick")]),
    "action": ("What is the man doing by the {x}?", "what is the man", "other",
               [("surfing", "swimming"), ("skateboarding", "skating"), ("skiing", "snowboarding"),
                ("running", "jogging"), ("eating", "drinking"), ("surfing", "paddling")]),
    "position": ("Where is the {x}?", "where is the", "other",
                 [("on couch", "sofa"), ("table", "on table"), ("floor", "ground"), ("bed", "on bed"),
                  ("shelf", "wall"), ("floor", "rug")]),
    "ocr": ("What does the sign near the {x} say?", "what does the", "other",
            [("stop", "stop sign"), ("one way", "oneway"), ("exit", "exit only"), ("open", "closed"),
             ("sale", "on sale"), ("stop", "halt")]),
    "scene": ("What room is this, with the {x}?", "what room is", "other",
              [("kitchen", "dining room"), ("bathroom", "restroom"), ("living room", "den"),
               ("bedroom", "hotel room"), ("office", "study"), ("kitchen", "pantry")]),
    "shape": ("What shape is the {x}?", "what", "other",
              [("round", "circle"), ("square", "rectangle"), ("oval", "round"), ("triangle", "triangular"),
               ("round", "circular"), ("rectangle", "square")]),
}
THINGS = ("dog", "cup", "bowl", "chair", "cat", "person")
ASKED_TWICE = 3
"""The k-th question of a type asks about ``THINGS[k % ASKED_TWICE]``: questions k and k + 3 share their words."""


def make_vqav2(directory: Path, image_ids: list[int]) -> tuple[Path, Path, dict[str, Any]]:
    """Write questions and annotations JSON; returns their paths and a truth summary for tests."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    questions, annotations = [], []
    qid = 1000
    truth: dict[str, Any] = {"kept": [], "low_agreement": [], "untyped": []}

    def add(text: str, qtype: str, atype: str, answers: list[str], majority: str) -> int:
        nonlocal qid
        qid += 1
        image = image_ids[qid % len(image_ids)]
        questions.append({"question_id": qid, "image_id": image, "question": text})
        annotations.append({
            "question_id": qid, "image_id": image, "question_type": qtype, "answer_type": atype,
            "multiple_choice_answer": majority,
            "answers": [{"answer": a, "answer_confidence": "yes" if k % 3 else "maybe", "answer_id": k + 1}
                        for k, a in enumerate(answers)],
        })
        return qid

    for template, qtype, atype, pairs in SPECS.values():
        for k, (majority, neighbour) in enumerate(pairs):
            text = template.format(x=THINGS[k % ASKED_TWICE])
            answers = [majority] * 8 + [neighbour] + [majority.upper() if k % 2 else majority]
            truth["kept"].append(add(text, qtype, atype, answers, majority))
        majority, neighbour = pairs[1]  # pairs[0] of counting is ("2", "two"): the same answer, full agreement
        truth["low_agreement"].append(add(template.format(x="table"), qtype, atype,
                                          [majority] * 5 + [neighbour] * 5, majority))
    truth["untyped"].append(add("Is the dog sleeping?", "is the", "yes/no", ["yes"] * 10, "yes"))
    truth["untyped"].append(add("Why is the man smiling?", "why", "other", ["happy"] * 10, "happy"))
    q = directory / "v2_OpenEnded_mscoco_val2014_questions.json"
    a = directory / "v2_mscoco_val2014_annotations.json"
    q.write_text(json.dumps({"info": {}, "task_type": "Open-Ended", "data_type": "mscoco",
                             "data_subtype": "val2014", "questions": questions}))
    a.write_text(json.dumps({"info": {}, "data_type": "mscoco", "data_subtype": "val2014",
                             "annotations": annotations}))
    return q, a, truth
