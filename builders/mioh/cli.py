"""``python -m builders.mioh``: options, the summary tables, the entry point."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

from builders.cli import exit_on_error, run_builder, stdout, table
from builders.items import Item
from builders.llm import add_llm_arguments
from builders.mioh.builder import write_build
from builders.mioh.config import MiohConfig
from builders.mioh.questions import (
    IMAGE_LADDER,
    PRESSURES,
    QUESTION_TYPES,
    TASKS,
)
from filters.clip import add_clip_arguments

# ------------------------------------------------------------------------------------------------ the CLI


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m builders.mioh",
        description="Build MIOH (multi-image object hallucination): 4 tasks x 3 question types x adversarial "
        "pressures, multiple-choice with 'None of the above'. Runs on the embedded demo world unless COCO-ReM / "
        "PACO / SVG files are given.",
        argument_default=None,
    )
    d = MiohConfig()
    a = p.add_argument
    a("--n-images", type=int, choices=IMAGE_LADDER, help=f"images per question (default {d.n_images})")
    a("--n-questions", type=int, help=f"questions per (task, type, pressure) cell (default {d.n_questions})")
    a("--tasks", nargs="+", choices=TASKS, metavar="TASK", help=f"tasks to build: {', '.join(TASKS)} (default: all)")
    a("--pressures", nargs="+", choices=PRESSURES, metavar="PRESSURE",
      help=f"pressures to build: {', '.join(PRESSURES)} (default: all)")
    a("--n-options", type=int, help=f"object/number options before 'None of the above' (default {d.n_options})")
    a("--nota-share", type=float, help=f"share of eligible items answered by 'None of the above' (default {d.nota_share})")
    a("--seed", type=int, help=f"seed of every random choice (default {d.seed})")
    a("--out", help=f"parent directory of the build (default {d.out})")
    a("--name", help="build name (default n<N>-seed<S>)")
    a("--cache-dir", help="cache for demo scenes and model outputs (default $MIRAGE_CACHE_DIR or ~/.cache/mirage)")
    a("--config", help="YAML file of options (field names as below with underscores); flags override it")
    a("--demo-images", type=int, help=f"size of the demo world when no data is given (default {d.demo_images})")
    a("--coco-rem", help="COCO-ReM instances JSON (existence, counting)")
    a("--coco-images", help="directory of the COCO images the JSON names")
    a("--paco", help="PACO (LVIS-style) annotations JSON (attribute)")
    a("--paco-images", help="directory of the PACO images")
    a("--svg", help="SVG scene graphs, JSON or JSON lines (position)")
    a("--svg-images", help="directory of the SVG images")
    a("--min-visible", type=float, help=f"relative area below which an object is unusable (default {d.min_visible})")
    a("--max-occlusion", type=float, help=f"occlusion above which an object is unusable (default {d.max_occlusion})")
    a("--hard-area", type=float, help=f"relative area below which a present object is a hard positive (default {d.hard_area})")
    a("--hard-occlusion", type=float, help=f"occlusion from which a present object is a hard positive (default {d.hard_occlusion})")
    a("--hard-truncation", type=float, help=f"truncation from which a present object is a hard positive (default {d.hard_truncation})")
    a("--hn-min-p", type=float, help=f"P(absent | present cue) for a hard negative (default {d.hn_min_p})")
    a("--hn-min-lift", type=float, help=f"lift of the cue for a hard negative (default {d.hn_min_lift})")
    a("--hn-min-support", type=int, help=f"images behind the cue's P for a hard negative (default {d.hn_min_support})")
    a("--count-max-objects", type=int, help=f"counting uses images with at most this many objects (default {d.count_max_objects})")
    a("--count-scope", choices=("image", "category"), help="count limit over all objects of the image or the asked category (default image)")
    a("--max-attempts", type=int, help=f"samples tried per question before giving up (default {d.max_attempts})")
    a("--no-progress", dest="progress", action="store_const", const=False, help="hide progress bars")
    add_clip_arguments(p)
    add_llm_arguments(p)
    return p


def print_summary(path: Path, items: Sequence[Item], stats: dict[str, Any]) -> None:
    cells = Counter((it.task, it.question_type, it.pressure) for it in items)
    pressures = [p for p in PRESSURES if any(k[2] == p for k in cells)]
    rows = [
        [f"{task}/{qtype}"] + [cells.get((task, qtype, p), 0) for p in pressures]
        for task in TASKS for qtype in QUESTION_TYPES if any(k[:2] == (task, qtype) for k in cells)
    ]
    stdout.print(table(f"MIOH build: {len(items)} items -> {path}", ["task/type", *pressures], rows))
    q = stats["quality"]
    bal = q["answer_balance"]
    stdout.print(table(
        "Answer letters (non-NOTA answers)", ["", *bal["observed"]],
        [["observed", *bal["observed"].values()], ["expected", *bal["expected"].values()]],
    ))
    base = q["blind_baselines"]
    hn, hp = q["hard_negative_cooccurrence"], q["hard_positive_relative_area"]
    stdout.print(table("Quality", ["check", "value"], [
        ["answer balance chi2 / dof / p", f"{bal['chi2']} / {bal['dof']} / {bal['p_value']}"],
        ["'None of the above' share", f"{q['none_of_the_above']['share']:.1%} of {q['none_of_the_above']['offered']}"],
        ["blind: chance / always-A", f"{base['chance']:.1%} / {base['always_A']:.1%}"],
        ["blind: most frequent / longest", f"{base['most_frequent_letter']:.1%} / {base['longest_option']:.1%}"],
        ["hard-neg P(obj|cue) chosen vs random", f"{hn['chosen_mean_p']} vs {hn['random_absent_mean_p']} (x{hn['lift']})"],
        ["hard-pos median rel. area vs easy", f"{hp['hard_positive_median']} vs {hp['easy_positive_median']}"],
        *_service_rows(stats, q),
    ]))
    if stats["skipped"]:
        rows = []
        for s in stats["skipped"]:
            if "cell" in s:
                c = s["cell"]
                top = max(c["reasons"].items(), key=lambda kv: kv[1])[0] if c["reasons"] else ""
                rows.append([f"{c['task']}/{c['question_type']}/{c['pressure']}", f"{c['made']}/{c['wanted']}", top])
            else:
                rows.append([s["task"], "skipped", s["reason"]])
        stdout.print(table("Skipped", ["what", "made", "why"], rows))


def _service_rows(stats: dict[str, Any], q: dict[str, Any]) -> list[list[str]]:
    clip = stats["clip"]
    rows = [["CLIP stage", "ran" if clip["ran"] else f"skipped: {clip['skipped'][:60]}"]]
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
    return run_builder(MiohConfig, parser(), argv, write_build, print_summary)

