"""Reefknot metrics (paper Sec. 3.1, Table 3, Fig. 5, App. A.7).

``python -m scoring reefknot --release RELEASE --predictions preds.jsonl [--vqa-judge nli|llm|exact]``

* **Halr**, the hallucination rate, per question set (Y/N, MCQ, VQA) and category (perception, cognition) as in
  Table 3: the share of scored items answered wrongly. Y/N and MCQ outputs are read by
  :mod:`builders.semantics.extract`; an unparsed answer or a refusal counts as a hallucination (the model did not
  give the true relation). Items without a prediction are not scored (listed under coverage).
* **VQA** correctness by bidirectional entailment between the reference and the output (App. A.7, Fig. 15;
  :mod:`scoring.nli`, the paper's ``microsoft/deberta-v2-xlarge-mnli``), or by an LLM judge (``--vqa-judge
  llm``, the A.6 GPT-assisted check), or by normalised exact match (``--vqa-judge exact``, for tests and quick
  looks). An answer is right when it matches the reference or any other true relation of the pair that the
  build lists in ``provenance.accepted_answers``: the question asks for "the relation", and a pair may hold one of
  each category (the arrow pointing at the octagon is also left of it).
* **R_score** (formula 1): ``Avg[sum_i (1 - Halr_i)]`` over the three sets; the paper does not say what is
  averaged, and Table 3's R_score is not reproducible from its own cells by any reading we tried (GPT-4o: the mean
  of its six (1 - Halr) is 66.20, printed 68.32). We report the mean over the six (set, category) cells
  (``r_score``, each category's three sets summed and the two sums averaged, divided by 3 to stay in [0, 100]) and,
  beside it, the item-weighted variant (``r_score_micro``).
* **Per-relation** Halr (set x relation), **Y/N confusion** with the yes-bias (No->Yes vs Yes->No errors, Fig. 5
  left) and the **MCQ letter preference** (truth letter x chosen letter, Fig. 5 right).
"""

from __future__ import annotations

import argparse
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Literal, Mapping, Sequence

from builders.cli import stdout, table
from builders.items import OPTION_LETTERS, Item
from builders.llm import LLMRequest, add_llm_arguments, make_client
from builders.pairs import paired_metric, paired_summary
from builders.semantics.extract import Answer, extract, is_correct, strip_thinking
from commandline.options import add_options, option
from filters.text import plain_sentence
from scoring.llm import llm_config
from scoring.nli import PAPER_MODEL, load_judge
from scoring.plotting import pyplot, save_png
from scoring.predictions import outputs_of
from sources.errors import ConfigError

BENCHMARK = "reefknot"
SETS = ("yes_no", "mcq", "vqa")
SET_NAMES = {"yes_no": "Y/N", "mcq": "MCQ", "vqa": "VQA"}
CATEGORIES = ("perception", "cognition")
CLOSED = ("yes_no", "mcq")
"""The question sets with a gold a blind model could guess, which pairs make blind-proof."""
VqaJudge = Callable[[Sequence[str], Sequence[str]], list[bool]]
"""(references, responses) -> equivalent?"""


@dataclass(frozen=True)
class Scored:
    item: Item
    answer: Answer
    correct: bool


# ------------------------------------------------------------------------------------------------ judging


def normalise_sentence(text: str) -> str:
    """A response's sentence as the exact judge compares it (:func:`filters.text.plain_sentence`), without the
    model's thinking."""
    return plain_sentence(strip_thinking(text))


def exact_judge(references: Sequence[str], responses: Sequence[str]) -> list[bool]:
    return [normalise_sentence(a) == normalise_sentence(b) for a, b in zip(references, responses)]


def llm_judge(client: Any) -> VqaJudge:
    """The GPT-assisted check of App. A.6 / Table 7: the LLM says whether the two sentences mean the same."""

    def judge(references: Sequence[str], responses: Sequence[str]) -> list[bool]:
        requests = [
            LLMRequest(
                messages=[
                    {
                        "role": "system",
                        "content": "You compare a model's answer with a ground-truth sentence about the "
                        "relation between two objects. Reply with one word: yes if they state "
                        "the same relation, no otherwise.",
                    },
                    {"role": "user", "content": f"Ground truth: {ref}\nAnswer: {strip_thinking(resp)}\nSame relation?"},
                ],
                fallback="no",
            )
            for ref, resp in zip(references, responses)
        ]
        return [r.text.strip().lower().startswith("yes") for r in client.complete_many(requests)]

    return judge


def score_items(items: Sequence[Item], outputs: Mapping[str, str], vqa_judge: VqaJudge | None = None) -> list[Scored]:
    """Every predicted item with its extracted answer and correctness (VQA through ``vqa_judge``)."""
    scored: list[Scored] = []
    open_items = []
    for it in items:
        if it.id not in outputs:
            continue
        if it.question_type == "vqa":
            open_items.append(it)
            continue
        answer = extract(outputs[it.id], it)
        scored.append(Scored(it, answer, is_correct(answer, it)))
    if open_items:
        judge = vqa_judge or exact_judge
        responses = [strip_thinking(outputs[it.id]) for it in open_items]
        pairs = [(k, ref) for k, it in enumerate(open_items) for ref in accepted_answers(it)]
        verdicts = judge([ref for _, ref in pairs], [responses[k] for k, _ in pairs])
        right = [False] * len(open_items)
        for (k, _), v in zip(pairs, verdicts):
            right[k] = right[k] or bool(v)
        scored += [Scored(it, Answer("open", r), v and bool(r)) for it, r, v in zip(open_items, responses, right)]
    return scored


def accepted_answers(item: Item) -> list[str]:
    """Every sentence a VQA answer may state to be right: the reference and, where the build listed them, the
    pair's other true relations (``provenance.accepted_answers``: the question asks for "the relation" and a pair
    may hold several, one of each category)."""
    listed = [str(a) for a in item.provenance.get("accepted_answers") or ()]
    return [item.answer] + [a for a in listed if a != item.answer]


# ------------------------------------------------------------------------------------------------ metrics


def halr(scored: Sequence[Scored]) -> float | None:
    """Hallucination rate in percent (None without items)."""
    return round(100.0 * sum(not s.correct for s in scored) / len(scored), 2) if scored else None


def table3(scored: Sequence[Scored]) -> dict[str, dict[str, Any]]:
    """``{category: {set: {"halr", "n"}}}`` plus a ``total`` category (both together)."""
    cells: dict[tuple[str, str], list[Scored]] = defaultdict(list)
    for s in scored:
        cells[(s.item.task, s.item.question_type)].append(s)
        cells[("total", s.item.question_type)].append(s)
    return {
        cat: {qset: {"halr": halr(cells[(cat, qset)]), "n": len(cells[(cat, qset)])} for qset in SETS}
        for cat in (*CATEGORIES, "total")
    }


def r_score(table: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> float | None:
    """Formula 1 as the mean of (1 - Halr) over the (set, category) cells that have items, in percent."""
    values = [
        100.0 - table[cat][qset]["halr"]
        for cat in CATEGORIES
        for qset in SETS
        if table.get(cat, {}).get(qset, {}).get("halr") is not None
    ]
    return round(sum(values) / len(values), 2) if values else None


def r_score_micro(scored: Sequence[Scored]) -> float | None:
    """Item-weighted variant: accuracy over every scored item, in percent."""
    return round(100.0 * sum(s.correct for s in scored) / len(scored), 2) if scored else None


def relation_breakdown(scored: Sequence[Scored]) -> dict[str, dict[str, Any]]:
    """Halr per set and relation (the triplet's relation; for Y/N both the yes and the no question)."""
    groups: dict[tuple[str, str], list[Scored]] = defaultdict(list)
    for s in scored:
        groups[(s.item.question_type, s.item.provenance.get("triplet", {}).get("relation", "?"))].append(s)
    out: dict[str, dict[str, Any]] = defaultdict(dict)
    for (qset, relation), members in sorted(groups.items()):
        out[qset][relation] = {"halr": halr(members), "n": len(members)}
    return dict(out)


def yes_no_confusion(scored: Sequence[Scored]) -> dict[str, Any]:
    """Truth x answer counts (answers: yes, no, other) and the yes-bias of the errors (Fig. 5 left)."""
    matrix = {truth: Counter() for truth in ("yes", "no")}
    for s in scored:
        if s.item.question_type != "yes_no":
            continue
        given = s.answer.value if s.answer.kind == "yes_no" else "other"
        matrix[s.item.answer][given] += 1
    no_to_yes, yes_to_no = matrix["no"]["yes"], matrix["yes"]["no"]
    total = sum(sum(c.values()) for c in matrix.values())
    said_yes = matrix["yes"]["yes"] + matrix["no"]["yes"]
    return {
        "matrix": {t: {a: c[a] for a in ("yes", "no", "other")} for t, c in matrix.items()},
        "no_to_yes": no_to_yes,
        "yes_to_no": yes_to_no,
        "error_ratio_no_to_yes_over_yes_to_no": round(no_to_yes / yes_to_no, 3) if yes_to_no else None,
        "yes_share": round(said_yes / total, 4) if total else None,
    }


def letter_preference(scored: Sequence[Scored]) -> dict[str, Any]:
    """MCQ truth letter x chosen letter counts and the share of each chosen letter (Fig. 5 right)."""
    mcq = [s for s in scored if s.item.question_type == "mcq"]
    letters = OPTION_LETTERS[: max((len(s.item.options) for s in mcq), default=4)]
    matrix = {t: Counter() for t in letters}
    chosen: Counter = Counter()
    for s in mcq:
        given = s.answer.value if s.answer.kind == "option" else "other"
        matrix[s.item.answer][given] += 1
        chosen[given] += 1
    n = len(mcq)
    return {
        "matrix": {t: {a: matrix[t][a] for a in (*letters, "other")} for t in letters},
        "chosen_share": {a: round(chosen[a] / n, 4) if n else None for a in (*letters, "other")},
        "truth_share": {t: round(sum(matrix[t].values()) / n, 4) if n else None for t in letters},
    }


def coverage(items: Sequence[Item], scored: Sequence[Scored]) -> dict[str, Any]:
    kinds = Counter(s.answer.kind for s in scored)
    return {
        "items": len(items),
        "scored": len(scored),
        "missing": len(items) - len(scored),
        "unparsed": kinds["unparsed"],
        "refusals": kinds["refusal"],
    }


def score(
    items: Sequence[Item], outputs: Mapping[str, str], vqa_judge: VqaJudge | None = None, judge_name: str = "exact"
) -> dict[str, Any]:
    """``results.json`` content."""
    scored = score_items(items, outputs, vqa_judge)
    t3 = table3(scored)
    return {
        "table3": t3,
        "r_score": r_score(t3),
        "r_score_micro": r_score_micro(scored),
        "relations": relation_breakdown(scored),
        "yes_no_confusion": yes_no_confusion(scored),
        "mcq_letters": letter_preference(scored),
        "coverage": coverage(items, scored),
        "paired": paired_metric((s.item, s.correct) for s in scored if s.item.question_type in CLOSED),
        "vqa_judge": judge_name,
    }


# ------------------------------------------------------------------------------------------------ front end


@dataclass(kw_only=True)
class ReefknotScoreOptions:
    """Reefknot's own options: how VQA answers are judged."""

    vqa_judge: Literal["nli", "llm", "exact"] = option(
        "nli", help="VQA correctness: bidirectional entailment with an NLI model (the paper's), an LLM judge "
                    "(--llm-model), or normalised exact match (default {default})")
    nli_model: str = option(PAPER_MODEL, metavar="DIR",
                            help="NLI model directory or Hub name in the local cache (default {default})")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """:class:`ReefknotScoreOptions` and, for ``--vqa-judge llm``, the ``--llm-*`` options."""
    add_options(parser, ReefknotScoreOptions)
    if not any(a.dest == "llm_model" for a in parser._actions):
        add_llm_arguments(parser, "LLM judge (with --vqa-judge llm)", "the judge model of --vqa-judge llm")


def make_vqa_judge(args: argparse.Namespace, needed: bool) -> tuple[VqaJudge | None, str]:
    kind = getattr(args, "vqa_judge", "exact")
    if not needed or kind == "exact":
        return exact_judge, "exact"
    if kind == "nli":
        judge = load_judge(args.nli_model)
        return judge.judge, f"nli:{args.nli_model}"
    config = llm_config(args)
    if not config.enabled:
        raise ConfigError("--vqa-judge llm needs --llm-model (and --llm-base-url or OPENAI_BASE_URL)")
    return llm_judge(make_client(config)), f"llm:{config.model}"


def run(items: Sequence[Item], predictions: Mapping[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """``results.json`` content for the front end (``predictions``: id -> ``Prediction``)."""
    outputs = outputs_of(predictions)
    needed = any(it.question_type == "vqa" and it.id in outputs for it in items)
    judge, name = make_vqa_judge(args, needed)
    return score(items, outputs, judge, name)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def print_report(results: Mapping[str, Any]) -> None:
    t3 = results["table3"]
    rows = [[cat] + [_pct(t3[cat][s]["halr"]) for s in SETS] for cat in (*CATEGORIES, "total")]
    stdout.print(table("Reefknot Halr % (lower is better)", ["category", *(SET_NAMES[s] for s in SETS)], rows))
    stdout.print(
        f"R_score {_pct(results['r_score'])} (item-weighted {_pct(results['r_score_micro'])}); "
        f"VQA judged by {results['vqa_judge']}"
    )
    yn = results["yes_no_confusion"]
    m = yn["matrix"]
    stdout.print(
        table(
            "Y/N confusion (rows: truth)",
            ["truth", "yes", "no", "other"],
            [[t, m[t]["yes"], m[t]["no"], m[t]["other"]] for t in ("yes", "no")],
        )
    )
    stdout.print(
        f"No->Yes errors {yn['no_to_yes']}, Yes->No errors {yn['yes_to_no']}, said yes "
        f"{_pct(None if yn['yes_share'] is None else 100 * yn['yes_share'])} %"
    )
    letters = results["mcq_letters"]
    cols = list(letters["chosen_share"])
    stdout.print(
        table(
            "MCQ letters chosen (share)",
            ["", *cols],
            [
                ["chosen", *(_pct(None if v is None else 100 * v) for v in letters["chosen_share"].values())],
                [
                    "truth",
                    *(
                        _pct(None if letters["truth_share"].get(c) is None else 100 * letters["truth_share"][c])
                        for c in cols
                    ),
                ],
            ],
        )
    )
    worst = sorted(
        ((qset, rel, v) for qset, rels in results["relations"].items() for rel, v in rels.items() if v["n"] >= 5),
        key=lambda x: -(x[2]["halr"] or 0),
    )[:8]
    if worst:
        stdout.print(
            table(
                "Most hallucinated relations (n >= 5)",
                ["set / relation", "Halr %", "n"],
                [[f"{SET_NAMES[q]} {r}", _pct(v["halr"]), v["n"]] for q, r, v in worst],
            )
        )
    c = results["coverage"]
    stdout.print(
        f"scored {c['scored']} of {c['items']} items (missing {c['missing']}, unparsed {c['unparsed']}, "
        f"refusals {c['refusals']})"
    )
    if "paired" in results:
        stdout.print(paired_summary(results["paired"]))


def plots(results: Mapping[str, Any], out_dir: str | Path) -> list[Path]:
    """Fig. 5: the Y/N and MCQ confusion matrices side by side."""
    plt = pyplot()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, 2, figsize=(9, 4))
    yn = results["yes_no_confusion"]["matrix"]
    mcq = results["mcq_letters"]["matrix"]
    for ax, matrix, title in ((axes[0], yn, "Y/N"), (axes[1], mcq, "MCQ")):
        rows = list(matrix)
        cols = list(next(iter(matrix.values()))) if matrix else []
        data = [[matrix[r][c] for c in cols] for r in rows]
        ax.imshow(data, cmap="Blues")
        ax.set_xticks(range(len(cols)), cols)
        ax.set_yticks(range(len(rows)), rows)
        ax.set_xlabel("answer")
        ax.set_ylabel("truth")
        ax.set_title(title)
        for i, row in enumerate(data):
            for j, v in enumerate(row):
                ax.text(j, i, str(v), ha="center", va="center", fontsize=8)
    return [save_png(fig, out / "confusion.png")]
