"""``python -m builders.mmsap``: options, the summary tables, the entry point."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

from builders.cli import builder_parser, exit_on_error, run_builder, stdout, table
from builders.items import Item
from builders.mmsap.builder import write_build
from builders.mmsap.config import MmsapConfig
from builders.mmsap.questions import SUBSET_NAMES


def parser() -> argparse.ArgumentParser:
    return builder_parser(
        "mmsap",
        "Build MM-SAP (self-awareness in perception): BasicVisQA, KnowVisQA and BeyondVisQA, every "
        "question with 4 options and the refusal \"Sorry, I can't help with it\". Runs on the embedded demo world "
        "(and the shipped authored knowledge file) unless VQAv2 / COCO files are given.",
        MmsapConfig,
    )


def print_summary(path: Path, items: Sequence[Item], stats: dict[str, Any]) -> None:
    first = [it for it in items if it.provenance.get("shuffle") == 0]
    cells = Counter((it.task, it.question_type) for it in first)
    rows = [[f"{SUBSET_NAMES[s]}/{t}", n] for (s, t), n in sorted(cells.items())]
    stdout.print(table(f"MM-SAP build: {len(first)} questions x {stats['shuffles']} order(s) = {len(items)} items -> "
                       f"{path}", ["subset/subtask", "questions"], rows))
    pairs = stats.get("pairs", {})
    if pairs.get("closed", {}).get("items"):
        rows = [[SUBSET_NAMES.get(k, "closed items"), v["items"], v["pairs"], v["unpaired"], f"{v['share']:.0%}"]
                for k, v in pairs.items()]
        stdout.print(table("Pairs: one question on two images with different answers (no partner in the source: "
                           "unpaired)", ["items", "n", "pairs", "unpaired", "paired"], rows))
    q = stats["quality"]
    rows = []
    for subset, s in q["subsets"].items():
        b = s["blind_baselines"]
        rows.append([SUBSET_NAMES[subset], f"{b['chance']:.0%}", f"{b['always_refuse']:.0%}", f"{b['always_A']:.0%}",
                     f"{b['longest_option']:.0%}", f"{b['longest_ordinary_option']:.0%}",
                     s["answer_letters"]["p_value"], s["refusal_letters"]["p_value"]])
    stdout.print(table("Blind baselines (self-aware score) and letter balance (chi-square p)",
                       ["subset", "chance", "refuse", "A", "longest", "longest-4", "answer p", "refusal p"], rows))
    v = q["validity"]
    stdout.print(table("Validity", ["check", "value"], [
        ["refusal wording", " | ".join(v["refusal_wordings"])],
        ["items without exactly one refusal", v["items_without_exactly_one_refusal"]],
        ["items with duplicate options", v["duplicate_options"]],
        ["distractor among the ten answers",
         "{violations} of {items_checked}".format(**v["distractor_in_human_answers"])],
        ["nonexistent object present", "{violations} of {items_checked}".format(**v["nonexistent_present"])],
        ["authored questions naming their object",
         "{violations} of {items_checked}".format(**v["authored_names_entity"])],
    ]))
    if v["authored_names_entity"]["violations"]:
        stdout.print("authored questions that name what the image shows are answered without looking: "
                     + ", ".join(v["authored_names_entity"]["records"]), markup=False, highlight=False)
    if stats["skipped"]:
        stdout.print(table("Skipped", ["subset", "why"], [[s["subset"], s["reason"]] for s in stats["skipped"]]))
    missing = (stats.get("basic") or {}).get("missing_images") or {}
    if missing.get("questions_passed_over"):
        stdout.print(f"{missing['questions_passed_over']} VQAv2 questions passed over: their "
                     f"{len(missing['image_ids'])} images are not in {missing['images_dir']} (--on-missing-image "
                     "skip; their ids: build.json stats.basic.missing_images)", markup=False, highlight=False)


@exit_on_error
def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m builders.mmsap``."""
    return run_builder(MmsapConfig, parser(), argv, write_build, print_summary)
