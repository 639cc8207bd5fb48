"""``python -m builders.mmsap``: options, the summary tables, the entry point."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

from builders.cli import add_build_arguments, builder_parser, exit_on_error, run_builder, stdout, table
from builders.items import Item
from builders.llm import add_llm_arguments
from builders.mmsap.builder import write_build
from builders.mmsap.config import MAX_SHUFFLES, MISSING_IMAGE, MmsapConfig
from builders.mmsap.questions import SUBSET_NAMES


def parser() -> argparse.ArgumentParser:
    p = builder_parser(
        "mmsap",
        "Build MM-SAP (self-awareness in perception): BasicVisQA, KnowVisQA and BeyondVisQA, every "
        "question with 4 options and the refusal \"Sorry, I can't help with it\". Runs on the embedded demo world "
        "(and the shipped authored knowledge file) unless VQAv2 / COCO files are given.",
    )
    d = MmsapConfig()
    a = p.add_argument
    a("--n-basic", type=int, metavar="N", help=f"BasicVisQA questions per type (default {d.n_basic})")
    a("--n-beyond", type=int, metavar="N", help=f"BeyondVisQA questions per category (default {d.n_beyond})")
    a("--shuffles", type=int, metavar="K",
      help=f"option orders per question, linked by provenance.group (1..{MAX_SHUFFLES}; the paper uses 5) "
           f"(default {d.shuffles})")
    a("--min-agreement", type=float, metavar="SHARE",
      help=f"share of the ten VQAv2 answers that must agree with the majority answer (default {d.min_agreement})")
    a("--vqav2-questions", metavar="FILE", help="VQAv2 questions JSON (v2_OpenEnded_mscoco_*_questions.json)")
    a("--vqav2-annotations", metavar="FILE", help="VQAv2 annotations JSON (v2_mscoco_*_annotations.json)")
    a("--coco-images", metavar="DIR", help="folder of the COCO images the VQAv2 / COCO files refer to")
    a("--on-missing-image", choices=MISSING_IMAGE,
      help="a chosen VQAv2 question whose image is not in --coco-images: skip it for the next one (listed in "
           f"build.json) or fail with one line naming the file (default {d.on_missing_image})")
    a("--coco-instances", metavar="FILE", help="COCO instances JSON: grounds BeyondVisQA in real images")
    a("--authored", metavar="FILE",
      help="authored questions, YAML or JSON lines (KnowVisQA and hand-made BasicVisQA) "
           "(default the shipped demo knowledge file on the demo world, none otherwise)")
    add_build_arguments(p, d, seed_of="every random choice",
                        name="demo-seed<S> or real-seed<S>, -shuffles<K> added with --shuffles K", cache_of="demo scenes",
                        demo=("images", "size of the demo world"))
    add_llm_arguments(p)
    return p


def print_summary(path: Path, items: Sequence[Item], stats: dict[str, Any]) -> None:
    first = [it for it in items if it.provenance.get("shuffle") == 0]
    cells = Counter((it.task, it.question_type) for it in first)
    rows = [[f"{SUBSET_NAMES[s]}/{t}", n] for (s, t), n in sorted(cells.items())]
    stdout.print(table(f"MM-SAP build: {len(first)} questions x {stats['shuffles']} order(s) = {len(items)} items -> "
                       f"{path}", ["subset/subtask", "questions"], rows))
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
    ]))
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
