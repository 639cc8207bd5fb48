"""Predictive reasoning scores (Giraffe-Bench Sec. 3.2): three LLM judges, per-task averages, Table 11.

``python -m scoring predictive --release BUILD --predictions preds.jsonl --llm-model NAME [--llm-base-url URL]
[--validate-judge]``

* every predicted item is judged by its task's evaluator (:mod:`scoring.predictive.judges`): SGAE for abstract
  patterns (Logical Consistency, Accuracy, Specificity, 0-5), PPE for human activity (Plausibility,
  Specificity, Diversity, 0-5), MGAE for physical interaction (Specificity, Logical Consistency 0-5; Accuracy 1
  when any prediction matches the true outcome);
* per task and dimension, the mean over judged items (formula 8) and their mean (the tables' "Avg."), also as a
  percentage of full marks; abstract patterns are also split into hand-made ("Human Generated") and generated
  ("Automated Generated") entries in the layout of Table 11;
* items from the paper's datasets are also scored per dataset (ActivityNet Captions, Charades: Table 2; CLEVRER,
  RoboSet: Table 3; the demo videos as ``demo``), from each item's ``provenance["source"]``;
* ``--validate-judge`` scores the references themselves (formula 3) and reports how far from full marks the judge
  puts them: a judge that cannot give the gold answer near-full marks is not fit to judge.

Choices where the paper is silent: judge failures (a malformed reply twice) are counted and left out of the
averages; items without a prediction are reported as missing, not scored 0; MGAE's binary Accuracy enters the
"Avg." as a percentage (0-100) like the others, and raw means are reported beside the percentages.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from collections.abc import Mapping, Sequence
from typing import Any

from builders.cli import stdout, table
from builders.items import Item
from builders.llm import add_llm_arguments, make_client
from commandline.options import add_options, option
from scoring.llm import llm_config
from scoring.predictions import output_of
from scoring.predictive.judges import (
    JUDGE_NAMES,
    TASK_JUDGE,
    Judgement,
    averages,
    by_task,
    judge_gap,
    judge_outputs,
    judges,
    percent,
    reference_output,
)
from sources.errors import ConfigError

BENCHMARK = "predictive"
TASKS = ("abstract_pattern", "human_activity", "physical_interaction")
TABLE11 = (("human", "Human Generated", "authored"), ("automated", "Automated Generated", "generated"))
SHORT = {"LogicalConsistency": "Logic.", "Logical Consistency": "Logic.", "Accuracy": "Acc.",
         "Specificity": "Spec.", "Plausibility": "Plaus.", "Diversity": "Div."}


@dataclass(kw_only=True)
class PredictiveScoreOptions:
    validate_judge: bool = option(False, help="also score the references themselves and report the judge's distance "
                                              "from full marks (formula 3) (default off)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The judge (an OpenAI-compatible endpoint through :mod:`builders.llm`) and the judge validation."""
    add_options(parser, PredictiveScoreOptions)
    add_llm_arguments(parser, "the judge (required: an OpenAI-compatible endpoint)",
                      "the judge model the endpoint serves (required)")


def summarise(judgements: Sequence[Judgement]) -> dict[str, Any]:
    """Per task: counts, mean per dimension (formula 8), percentages of full marks and their average."""
    table = judges()
    out: dict[str, Any] = {}
    for task, group in sorted(by_task(judgements).items()):
        judge = table[TASK_JUDGE[task]]
        stats = averages(group, judge.dimensions)
        stats["judge"] = judge.name
        stats["percent"] = {d: percent(v, d, judge) for d, v in stats["dimensions"].items()}
        known = [v for v in stats["percent"].values() if v is not None]
        stats["percent_average"] = sum(known) / len(known) if known else None
        out[task] = stats
    return out


def table11(items: Sequence[Item], judgements: Sequence[Judgement]) -> dict[str, Any]:
    """Abstract patterns split by origin (hand-made vs generated), in percent (Table 11's columns)."""
    source = {it.id: it.provenance.get("source", "generated") for it in items}
    out = {}
    for key, _, origin in TABLE11:
        group = [j for j in judgements if j.task == "abstract_pattern" and source.get(j.item_id) == origin]
        out[key] = summarise(group).get("abstract_pattern") if group else None
    return out


DATASETS = (("activitynet", "human_activity"), ("charades", "human_activity"), ("demo", "human_activity"),
            ("clevrer", "physical_interaction"), ("roboset", "physical_interaction"), ("demo", "physical_interaction"))
"""(source, task) rows of the per-dataset layout (Tables 2 and 3), in the paper's order; demo clips last."""


def per_dataset(items: Sequence[Item], judgements: Sequence[Judgement]) -> dict[str, Any]:
    """Activity and physics items per (task, source), keyed ``"<task>/<source>"``; only those with judged items."""
    source = {it.id: it.provenance.get("source", "") for it in items}
    out = {}
    for name, task in DATASETS:
        group = [j for j in judgements if j.task == task and source.get(j.item_id) == name]
        if group:
            out[f"{task}/{name}"] = summarise(group)[task]
    return out


def judge_client(args: argparse.Namespace) -> Any:
    if not getattr(args, "llm_model", None):
        raise ConfigError("predictive scoring needs an LLM judge: --llm-model NAME (and --llm-base-url URL or "
                          "$OPENAI_BASE_URL)")
    return make_client(llm_config(args))


def run(items: Sequence[Item], predictions: Mapping[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """Judge every predicted item; ``results.json`` content."""
    client = judge_client(args)
    ours = [it for it in items if it.benchmark == BENCHMARK and it.task in TASK_JUDGE]
    pairs = [(it, output_of(predictions[it.id])) for it in ours if it.id in predictions]
    judged = judge_outputs(client, pairs)
    results: dict[str, Any] = {
        "tasks": summarise(judged),
        "table11": table11(ours, judged),
        "datasets": per_dataset(ours, judged),
        "missing": len(ours) - len(pairs),
        "judgements": [j.as_dict() for j in judged],
    }
    if getattr(args, "validate_judge", False):
        table = judges()
        refs = judge_outputs(client, [(it, reference_output(it)) for it in ours])
        results["judge_validation"] = {task: judge_gap(group, table[TASK_JUDGE[task]])
                                       for task, group in sorted(by_task(refs).items())}
    results["judge"] = client.usage()
    return results


def _num(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def print_report(results: Mapping[str, Any]) -> None:
    model = (results.get("meta") or {}).get("model", "") or "model"
    rows = []
    for task in TASKS:
        s = results["tasks"].get(task)
        if not s:
            continue
        dims = ", ".join(f"{SHORT.get(d, d)} {_num(v)}" for d, v in s["dimensions"].items())
        rows.append([task, s["judge"].upper(), s["judged"], s["failures"], dims, _num(s["percent_average"], 1)])
    stdout.print(table(f"Predictive reasoning: {model} (means 0-5; Acc. of MGAE 0-1)",
                       ["task", "judge", "judged", "failed", "mean per dimension (formula 8)", "Avg. %"], rows))
    header, cells = ["model"], [model]
    for key, _, _ in TABLE11:
        s = results["table11"].get(key)
        letter = key[0].upper()
        for d in ("Accuracy", "LogicalConsistency", "Specificity"):
            header.append(f"{letter} {SHORT[d].rstrip('.')}")
            cells.append(_num(s["percent"][d], 1) if s else "-")
        header.append(f"{letter} Avg")
        cells.append(_num(s["percent_average"], 1) if s else "-")
    stdout.print(table("Table 11 layout: abstract patterns, % of full marks", header, [cells],
                       legend="H: Human Generated (hand-made entries), A: Automated Generated (the generator)"))
    if results.get("datasets"):
        drows = [[key.split("/")[1], s["judge"].upper(), s["judged"],
                  ", ".join(f"{SHORT.get(d, d)} {_num(v)}" for d, v in s["dimensions"].items()),
                  _num(s["percent_average"], 1)] for key, s in results["datasets"].items()]
        stdout.print(table("Tables 2 and 3 layout: per dataset", ["dataset", "judge", "judged",
                                                                  "mean per dimension", "Avg. %"], drows))
    if results.get("judge_validation"):
        vrows = [[task, ", ".join(f"{SHORT.get(d, d)} {_num(v)}" for d, v in s["dimensions"].items()),
                  ", ".join(f"{SHORT.get(d, d)} {_num(v)}" for d, v in s["gap"].items()), s["failures"]]
                 for task, s in results["judge_validation"].items()]
        stdout.print(table("Judge validation: the references scored (formula 3)",
                           ["task", "mean", "distance from full marks", "failed"], vrows))
    if results.get("missing"):
        stdout.print(f"{results['missing']} item(s) had no prediction and were not judged.")


__all__ = ["JUDGE_NAMES", "add_arguments", "per_dataset", "print_report", "run", "summarise"]
