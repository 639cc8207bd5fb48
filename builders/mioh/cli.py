"""``python -m builders.mioh``: options, the summary tables, the entry point."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

from rich.console import Console

from builders.cli import add_build_arguments, builder_parser, exit_on_error, run_builder, stderr, stdout, table
from builders.items import Item
from builders.llm import add_llm_arguments
from builders.mioh import prepared
from builders.mioh.builder import write_build
from builders.mioh.config import MiohConfig
from builders.mioh.refusals import print_refusals
from builders.mioh.questions import (
    IMAGE_LADDER,
    PRESSURES,
    QUESTION_TYPES,
    TASKS,
)
from filters.clip import add_clip_arguments
from sources.executors import add_executor_arguments

# ------------------------------------------------------------------------------------------------ the CLI


def parser() -> argparse.ArgumentParser:
    p = builder_parser(
        "mioh",
        "Build MIOH (multi-image object hallucination): 4 tasks x 3 question types x adversarial "
        "pressures, multiple-choice with 'None of the above'. Runs on the embedded demo world unless COCO-ReM / "
        "PACO / SVG (Synthetic Visual Genome) files are given.",
    )
    d = MiohConfig()
    a = p.add_argument
    a("--n-images", type=int, choices=IMAGE_LADDER, help=f"images per question (default {d.n_images})")
    a("--n-questions", type=int, metavar="N", help=f"questions per (task, type, pressure) cell (default {d.n_questions})")
    a("--tasks", nargs="+", choices=TASKS, metavar="TASK", help=f"tasks to build: {', '.join(TASKS)} (default all)")
    a("--pressures", nargs="+", choices=PRESSURES, metavar="PRESSURE",
      help=f"pressures to build: {', '.join(PRESSURES)} (default all)")
    a("--n-options", type=int, metavar="N", help=f"object/number options before 'None of the above' (default {d.n_options})")
    a("--nota-share", type=float, metavar="X",
      help="share of the eligible items whose answer is 'None of the above'. Eligible: questions that can have no "
           "right option (all, differs, which, total, exact), not in hard_positive cells (a hard positive needs a "
           "present object). Scheduled per cell and question form, so cells of few questions round it, down to "
           f"none with --n-questions 2 (the build warns) (default {d.nota_share})")
    cache_of = (f"demo scenes, model outputs and the prepared pools of real sources (the {prepared.KEEP} most "
                f"recently used kept; ${prepared.KEEP_VARIABLE} sets how many)")
    add_build_arguments(p, d, seed_of="every random choice", name="n<N>-seed<S>, -decomposed added with --decomposed",
                        cache_of=cache_of,
                        demo=("images", "size of the demo world when no data is given"))
    a("--coco-rem", metavar="FILE", help="COCO-ReM instances JSON (existence, counting)")
    a("--coco-images", metavar="DIR", help="directory of the COCO images the JSON names")
    a("--paco", metavar="FILE", help="PACO (LVIS-style) annotations JSON (attribute)")
    a("--paco-images", metavar="DIR", help="directory of the PACO images")
    a("--svg", metavar="FILE", help="SVG (Synthetic Visual Genome) scene graphs, JSON or JSON lines (position)")
    a("--svg-images", metavar="DIR", help="directory of the SVG images")
    a("--verify-absence-with", metavar="FILE",
      help="COCO / COCO-ReM instances JSON sharing images with --svg (same file name, or the row's coco_id): "
           "where it shows none of a COCO category, SVG names mapping to it are verified absent. Without it an "
           "object missing from a scene graph is undecidable, never a negative (default none)")
    a("--min-visible", type=float, metavar="X", help=f"relative area below which an object is unusable (default {d.min_visible})")
    a("--max-occlusion", type=float, metavar="X", help=f"occlusion above which an object is unusable (default {d.max_occlusion})")
    a("--hard-area", type=float, metavar="X", help=f"relative area below which a present object is a hard positive (default {d.hard_area})")
    a("--hard-occlusion", type=float, metavar="X", help=f"occlusion from which a present object is a hard positive (default {d.hard_occlusion})")
    a("--hard-truncation", type=float, metavar="X", help=f"truncation from which a present object is a hard positive (default {d.hard_truncation})")
    a("--hn-min-p", type=float, metavar="X",
      help="an absent object is a hard negative when an object in the image (the cue) predicts it: among the "
           f"source's images showing the cue, at least this share also show the object (default {d.hn_min_p})")
    a("--hn-min-lift", type=float, metavar="X",
      help="a hard negative's cue (see --hn-min-p) must also make the object at least X times likelier than its "
           f"base rate, so that frequent objects do not pass from any cue (default {d.hn_min_lift})")
    a("--hn-min-support", type=int, metavar="N",
      help="a hard negative's cue (see --hn-min-p) must have been seen with the object in at least N images, so "
           f"that a rare cue seen once with it (share 1.0) cannot decide; raise it on large sources (default {d.hn_min_support})")
    a("--count-max-objects", type=int, metavar="N", help=f"counting uses images with at most this many objects (default {d.count_max_objects})")
    a("--count-scope", choices=("image", "category"), help=f"count limit over all objects of the image or the asked category (default {d.count_scope})")
    a("--max-attempts", type=int, metavar="N", help=f"samples tried per question before giving up (default {d.max_attempts})")
    a("--decomposed", action="store_true", help="also ask every comprehensive existence question image by image, "
      "'Is there a {object} in this image?' (the Sec. 5.5 ablation; scored by python -m scoring mioh) (default off)")
    add_clip_arguments(p)
    add_executor_arguments(p, "CLIP image embeddings")
    add_llm_arguments(p)
    return p


PRESSURE_HEADERS = {"easy": "easy", "hard_positive": "hard+", "hard_negative": "hard-", "n_images": "n_img",
                    "sycophantic": "syco", "instructional_override": "instr"}
"""Short column headers that keep the cell table within 80 columns; the legend under it spells them out."""


def print_summary(path: Path, items: Sequence[Item], stats: dict[str, Any]) -> None:
    cells = Counter((it.task, it.question_type, it.pressure) for it in items)
    pressures = [p for p in PRESSURES if any(k[2] == p for k in cells)]
    rows = [
        [f"{task}/{qtype}"] + [cells.get((task, qtype, p), 0) for p in pressures]
        for task in TASKS for qtype in QUESTION_TYPES if any(k[:2] == (task, qtype) for k in cells)
    ]
    legend = "items per cell; " + ", ".join(f"{PRESSURE_HEADERS[p]} = {p}" for p in pressures if PRESSURE_HEADERS[p] != p)
    stdout.print(table(f"MIOH build: {len(items)} items -> {path}", ["task/type", *(PRESSURE_HEADERS[p] for p in pressures)],
                       rows, legend=legend))
    q = stats["quality"]
    bal = q["answer_balance"]
    stdout.print(table(
        "Answer letters", ["letter", "observed", "expected"],
        [[k, bal["observed"][k], f"{bal['expected'][k]:.1f}"] for k in bal["observed"]],
        legend="NOTA answers not counted; expected if uniform",
    ))
    base = q["blind_baselines"]
    hn, hp = q["hard_negative_cooccurrence"], q["hard_positive_relative_area"]
    nota = stats["nota"]
    stdout.print(table("Quality", ["check", "value"], [
        ["answer balance chi2 / dof / p", f"{bal['chi2']} / {bal['dof']} / {bal['p_value']}"],
        ["'None of the above' answers", f"{nota['answers']} = {nota['share']:.1%} of {nota['eligible']} eligible "
                                        f"(--nota-share {nota['requested']})"],
        ["blind: chance / always-A", f"{base['chance']:.1%} / {base['always_A']:.1%}"],
        ["blind: most frequent / longest", f"{base['most_frequent_letter']:.1%} / {base['longest_option']:.1%}"],
        ["hard-neg P(obj|cue) chosen vs random", f"{hn['chosen_mean_p']} vs {hn['random_absent_mean_p']} (x{hn['lift']})"],
        ["hard-pos median rel. area vs easy", f"{hp['hard_positive_median']} vs {hp['easy_positive_median']}"],
        *_service_rows(stats, q),
    ], numeric=False))
    if nota["warning"]:
        stdout.print(f"warning: {nota['warning']}", markup=False, style="yellow")
    print_refusals(stats)
    print_skipped(stats, stdout)


def print_skipped(stats: dict[str, Any], console: Console = stderr) -> None:
    """The tasks and cells that were skipped or fell short, with the most frequent reason (nothing if none)."""
    if not stats.get("skipped"):
        return
    rows = []
    for s in stats["skipped"]:
        if "cell" in s:
            c = s["cell"]
            top = max(c["reasons"].items(), key=lambda kv: kv[1])[0] if c["reasons"] else ""
            rows.append([f"{c['task']}/{c['question_type']}/{c['pressure']}", f"{c['made']}/{c['wanted']}", top])
        else:
            rows.append([s["task"], "skipped", s["reason"]])
    console.print(table("Skipped", ["what", "made", "why"], rows, numeric=False))


def _service_rows(stats: dict[str, Any], q: dict[str, Any]) -> list[list[str]]:
    clip = stats["clip"]
    rows = [["CLIP stage", "ran" if clip["ran"] else "skipped (why: on stderr and in build.json)"]]
    if "clip_z" in q:
        z = q["clip_z"]
        rows.append(["CLIP z hard-neg vs random absent", f"{z['hard_negative_chosen_mean']} vs {z['random_absent_mean']}"])
        rows.append(["CLIP z hard-pos vs easy pos", f"{z['hard_positive_mean']} vs {z['easy_positive_mean']}"])
    llm = stats["llm"]
    rows.append(["contexts written by", llm["writer"] + (f" {llm['contexts']}" if "contexts" in llm else "")])
    return rows


@exit_on_error
def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m builders.mioh``."""
    return run_builder(MiohConfig, parser(), argv, write_build, print_summary, print_skipped)
