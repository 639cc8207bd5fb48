"""The three LLM judges of Giraffe-Bench (Sec. 3.2, App. G): SGAE, PPE and MGAE, with strict reply parsing.

Each judge is the paper's prompt (``templates/predictive/judges.yaml``) filled with the item's reference text and
the model's output, sent through :mod:`builders.llm` (temperature 0, answers cached on disk, retries, bounded
concurrency). The reply must give every dimension as ``<Dimension>: score: [x]`` (brackets optional, a
``reason: [...]`` may follow); a score outside 0-5 (0 or 1 for MGAE's Accuracy), a missing or repeated dimension,
or no score at all (a refusal) makes the reply malformed. A malformed reply is answered once with the ``reask``
message (the bad reply stays in the conversation, so the re-ask is a new request, not a cache hit); if the
second reply is malformed too, the item's judgement is a failure: counted and reported, and left out of the
averages (a judge's failure says nothing about the model judged).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from builders.items import Item
from builders.llm import LLMRequest
from templates.loader import load_templates, render

TASK_JUDGE = {"abstract_pattern": "sgae", "human_activity": "ppe", "physical_interaction": "mgae"}
JUDGE_NAMES = {"sgae": "Single Gold Answer Evaluator", "ppe": "Probabilistic Prediction Evaluator",
               "mgae": "Multiple Gold Answer Evaluator"}
MAX_SCORE = 5.0


class Malformed(ValueError):
    """A judge reply without a readable score for every dimension."""


@dataclass(frozen=True)
class Judge:
    name: str
    dimensions: tuple[str, ...]
    binary: tuple[str, ...]
    prompt: str

    def full_marks(self, dimension: str) -> float:
        return 1.0 if dimension in self.binary else MAX_SCORE

    def reply_format(self) -> str:
        return "\n".join(f"{d}: score: [x]. reason: [...]." for d in self.dimensions)


def judges() -> dict[str, Judge]:
    data = load_templates("predictive", "judges")
    return {name: Judge(name, tuple(data[name]["dimensions"]), tuple(data[name].get("binary", ())),
                        data[name]["prompt"]) for name in ("sgae", "ppe", "mgae")}


def reask_text(judge: Judge, problem: str) -> str:
    return render(load_templates("predictive", "judges")["reask"], problem=problem, format=judge.reply_format())


def _dimension_pattern(dimension: str) -> str:
    words = re.findall(r"[A-Z][a-z]*|[a-z]+", dimension)
    return r"\s*".join(re.escape(w) for w in words)


_NUMBER = r"\[?\s*(-?\d+(?:\.\d+)?)\s*(?:/\s*\d+\s*)?\]?"


def parse_scores(text: str, judge: Judge) -> dict[str, float]:
    """``{dimension: score}`` from a reply, or :class:`Malformed` saying what is wrong."""
    scores: dict[str, float] = {}
    for dim in judge.dimensions:
        found = re.findall(_dimension_pattern(dim) + r"\s*\**\s*:?\s*\**\s*score\s*:\s*" + _NUMBER, text, re.IGNORECASE)
        if not found:
            raise Malformed(f"no score for {dim}")
        values = {float(v) for v in found}
        if len(values) > 1:
            raise Malformed(f"{dim} is scored {len(values)} different ways")
        value = values.pop()
        top = judge.full_marks(dim)
        if dim in judge.binary and value not in (0.0, 1.0):
            raise Malformed(f"{dim} must be 0 or 1, not {value:g}")
        if not 0 <= value <= top:
            raise Malformed(f"{dim} score {value:g} is outside 0-{top:g}")
        scores[dim] = value
    return scores


def prompt_for(judge: Judge, item: Item, output: str) -> str:
    """The judge's prompt for one item and one model output (the reference text read from the item)."""
    prov = item.provenance
    if judge.name == "sgae":
        pattern = prov.get("pattern", "")
        return render(judge.prompt, pattern=pattern, pred=item.answer, answer=output)
    if judge.name == "ppe":
        captions = "\n".join(prov.get("context_captions", []))
        return render(judge.prompt, captions=captions, answer=output)
    return render(judge.prompt, answer=output, reference=item.answer, attributes=prov.get("attributes", ""))


@dataclass
class Judgement:
    item_id: str
    task: str
    judge: str
    scores: dict[str, float] | None
    replies: list[str] = field(default_factory=list)
    reasked: bool = False
    failure: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.item_id, "task": self.task, "judge": self.judge, "scores": self.scores,
                "reasked": self.reasked, "failure": self.failure}


def judge_outputs(client: Any, pairs: Sequence[tuple[Item, str]]) -> list[Judgement]:
    """Judge every ``(item, output)``: one round for all (bounded concurrency), one re-ask for malformed replies."""
    table = judges()
    chosen = [table[TASK_JUDGE[item.task]] for item, _ in pairs]
    conversations = [[{"role": "user", "content": prompt_for(j, item, out)}] for j, (item, out) in zip(chosen, pairs)]
    replies = client.complete_many([LLMRequest(c) for c in conversations])
    results: list[Judgement] = []
    again: list[int] = []
    for n, ((item, _), j, reply) in enumerate(zip(pairs, chosen, replies)):
        result = Judgement(item.id, item.task, j.name, None, [reply.text])
        try:
            result.scores = parse_scores(reply.text, j)
        except Malformed as exc:
            result.failure = str(exc)
            again.append(n)
        results.append(result)
    if again:
        requests = []
        for n in again:
            j, r = chosen[n], results[n]
            requests.append(LLMRequest(conversations[n] + [{"role": "assistant", "content": r.replies[0]},
                                                           {"role": "user", "content": reask_text(j, r.failure)}]))
        for n, reply in zip(again, client.complete_many(requests)):
            r = results[n]
            r.reasked = True
            r.replies.append(reply.text)
            try:
                r.scores, r.failure = parse_scores(reply.text, chosen[n]), ""
            except Malformed as exc:
                r.failure = f"after a re-ask: {exc}"
    return results


def averages(judgements: Sequence[Judgement], dimensions: Sequence[str]) -> dict[str, Any]:
    """Formula 8: per dimension, the mean score over the items judged; ``average`` is their mean (Table 1)."""
    scored = [j.scores for j in judgements if j.scores is not None]
    means = {d: (sum(s[d] for s in scored) / len(scored) if scored else None) for d in dimensions}
    known = [v for v in means.values() if v is not None]
    return {"items": len(judgements), "judged": len(scored), "failures": len(judgements) - len(scored),
            "reasked": sum(j.reasked for j in judgements), "dimensions": means,
            "average": sum(known) / len(known) if known else None}


def percent(value: float | None, dimension: str, judge: Judge) -> float | None:
    """A mean as a percentage of full marks (how the paper's tables report scores)."""
    return None if value is None else 100.0 * value / judge.full_marks(dimension)


def reference_output(item: Item) -> str:
    """What the judge validation submits as the model's output: the reference itself (numbered for PPE/MGAE,
    whose prompts expect enumerated predictions)."""
    return item.answer if item.task == "abstract_pattern" else f"1. {item.answer}"


def judge_gap(judgements: Sequence[Judgement], judge: Judge) -> dict[str, Any]:
    """Formula 3 for the references themselves: the mean score per dimension and how far it is from full marks."""
    stats = averages(judgements, judge.dimensions)
    stats["gap"] = {d: (None if v is None else judge.full_marks(d) - v) for d, v in stats["dimensions"].items()}
    return stats


def by_task(judgements: Sequence[Judgement]) -> dict[str, list[Judgement]]:
    out: dict[str, list[Judgement]] = {}
    for j in judgements:
        out.setdefault(j.task, []).append(j)
    return out


