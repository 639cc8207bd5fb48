"""What an LLM (``--llm-model``) may write for MM-SAP, always checked: wrong options, and BeyondVisQA wording.

**Wrong options.**
For BasicVisQA questions from VQAv2 and authored records that lack distractors, the LLM is asked for wrong options
of the same kind (``templates/mmsap/llm.yaml``); not for a VQAv2 pair, whose two questions share their options. A
proposal is kept only when its key differs from the right answer's, every human answer's and the refusal's
(:mod:`builders.mmsap.answers`), it is short, and it is of the type's kind (a listed colour for colours). With fewer
than needed valid proposals the offline options stay; provenance says which writer each question's options came
from. Counts are never written by the LLM: their offline draw places the right count at a uniform rank among the
four numbers, and an LLM's "nearby" counts would make it the second or third smallest again (issue 40).

**BeyondVisQA wording.** Each template question may be reworded (``rewrite_beyond`` in the same file). A rewrite
is kept only when it is one question (ends with "?", at most :data:`MAX_QUESTION_WORDS` words) that still names
the grounded object and names no other category of the source (it could ask about an object that is there);
otherwise the template wording stays. The options, the grounding and the answer (the refusal) never change.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

from builders.llm import LLMClient, LLMRequest
from builders.mmsap.answers import AnswerTable, display
from builders.mmsap.distractors import MAX_NUMBER_OFFSET
from builders.mmsap.questions import Question
from templates.loader import load_templates, render

MAX_WORDS = 6
MAX_QUESTION_WORDS = 30
QUESTION_SCHEMA = {"type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"]}
SCHEMA = {"type": "object", "properties": {"distractors": {"type": "array", "items": {"type": "string"}}},
          "required": ["distractors"]}


def valid_proposals(proposals: Any, forbidden: set[str], kind: str, table: AnswerTable, answer: str = "") -> list[str]:
    """The proposals that pass the offline rules, in order, without repeats (counts: within
    :data:`~builders.mmsap.distractors.MAX_NUMBER_OFFSET` of the right one)."""
    out: list[str] = []
    seen = set(forbidden)
    colours = {table.key(c) for c in table.vocabulary("colours")}
    for text in proposals if isinstance(proposals, list) else []:
        if not isinstance(text, str) or not text.strip() or len(text.split()) > MAX_WORDS:
            continue
        key = table.key(text)
        if key in seen or (kind == "vocabulary" and key not in colours):
            continue
        if kind == "number" and not (key.isdigit() and table.key(answer).isdigit()
                                     and abs(int(key) - int(table.key(answer))) <= MAX_NUMBER_OFFSET):
            continue
        seen.add(key)
        out.append(display(text.strip()))
    return out


def request(question: str, answer: str, kind: str, avoid: Sequence[str], n: int) -> LLMRequest:
    t = load_templates("mmsap", "llm")["distractors"]
    user = render(t["user"], question=question, answer=answer, kind=kind, avoid="; ".join(avoid), n=n)
    return LLMRequest([{"role": "system", "content": t["system"]}, {"role": "user", "content": user}], SCHEMA)


def rewrite(questions: Sequence[Question], client: LLMClient, table: AnswerTable,
            refusal: str) -> tuple[list[Question], dict[str, int]]:
    """Questions whose options an LLM may write (VQAv2 ones but counts and pairs, whose two questions share their
    options: an LLM writes each question its own), with LLM options where they pass the checks."""
    targets = [k for k, q in enumerate(questions)
               if q.provenance.get("source") == "vqav2" and q.provenance.get("distractor_kind") != "number"
               and "pair" not in q.provenance]
    asks = [request(q.question, q.answer or "", q.provenance.get("distractor_kind", "answers"),
                    [q.answer or "", *q.provenance.get("human_answers", ())], 3)
            for q in (questions[k] for k in targets)]
    replies = client.complete_many(asks)
    out = list(questions)
    counts = {"asked": len(targets), "used": 0}
    for k, reply in zip(targets, replies):
        q = questions[k]
        forbidden = {table.key(a) for a in (q.answer or "", refusal, *q.provenance.get("human_answers", ()))}
        proposals = (reply.parsed_json or {}).get("distractors") if isinstance(reply.parsed_json, dict) else None
        good = valid_proposals(proposals, forbidden, q.provenance.get("distractor_kind", "answers"), table,
                               q.answer or "")
        if len(good) >= 3:
            out[k] = replace(q, distractors=tuple(good[:3]),
                             provenance={**q.provenance, "distractor_writer": "llm"})
            counts["used"] += 1
    return out, counts


def fill_authored(client: LLMClient, table: AnswerTable, refusal: str):
    """A generator for :func:`builders.mmsap.authored.authored_questions`: LLM options for missing distractors."""

    def generate(question: str, answer: str, given: Sequence[str], n: int) -> list[str]:
        reply = client.complete_many([request(question, answer, "answers", [answer, *given], n)])[0]
        forbidden = {table.key(a) for a in (answer, refusal, *given)}
        data = reply.parsed_json if isinstance(reply.parsed_json, dict) else {}
        return valid_proposals(data.get("distractors"), forbidden, "answers", table)[:n]

    return generate



def rewrite_problem(text: Any, category: str, vocabulary: Sequence[str]) -> str | None:
    """Why a reworded BeyondVisQA question cannot be used (``None``: it can)."""
    if not isinstance(text, str) or not text.strip().endswith("?") or text.count("?") != 1:
        return "not one question"
    if len(text.split()) > MAX_QUESTION_WORDS:
        return "too long"
    lower = f" {' '.join(text.lower().replace('?', ' ').split())} "
    if f" {category.lower()}" not in lower:
        return f"drops {category!r}"
    others = [c for c in vocabulary if c != category and c not in category and f" {c.lower()}" in lower]
    return f"names {others[0]!r} too" if others else None


def reword_beyond(questions: Sequence[Question], client: LLMClient,
                  vocabulary: Sequence[str]) -> tuple[list[Question], dict[str, int]]:
    """BeyondVisQA questions reworded where the rewrite passes :func:`rewrite_problem`."""
    t = load_templates("mmsap", "llm")["rewrite_beyond"]
    targets = [k for k, q in enumerate(questions) if q.subset == "beyond"]
    asks = []
    for k in targets:
        q = questions[k]
        user = render(t["user"], category=q.provenance["asked"], question=q.question)
        asks.append(LLMRequest([{"role": "system", "content": t["system"]}, {"role": "user", "content": user}],
                               QUESTION_SCHEMA))
    out = list(questions)
    counts = {"asked": len(targets), "used": 0}
    for k, reply in zip(targets, client.complete_many(asks)):
        q = questions[k]
        text = reply.parsed_json.get("question") if isinstance(reply.parsed_json, dict) else None
        if rewrite_problem(text, q.provenance["asked"], vocabulary) is None:
            out[k] = replace(q, question=text.strip(), provenance={**q.provenance, "question_writer": "llm",
                                                                   "template_question": q.question})
            counts["used"] += 1
    return out, counts
