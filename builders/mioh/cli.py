"""``python -m builders.mioh``: options, the summary tables, the entry point."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

from rich.console import Console

from builders.cli import builder_parser, exit_on_error, paired_row, run_builder, stderr, stdout, table
from builders.items import Item
from builders.mioh import prepared
from builders.mioh.builder import write_build
from builders.mioh.config import MiohConfig
from builders.mioh.refusals import print_refusals
from builders.mioh.questions import PRESSURES, QUESTION_TYPES, TASKS

# ------------------------------------------------------------------------------------------------ the CLI


def parser() -> argparse.ArgumentParser:
    cache_of = (f"demo scenes, model outputs and the prepared pools of real sources (the {prepared.KEEP} most "
                f"recently used kept; ${prepared.KEEP_VARIABLE} sets how many)")
    return builder_parser(
        "mioh",
        "Build MIOH (multi-image object hallucination): 4 tasks x 3 question types x adversarial "
        "pressures, multiple-choice with 'None of the above'. Runs on the embedded demo world unless COCO-ReM / "
        "PACO / SVG (Synthetic Visual Genome) files are given.",
        MiohConfig,
        {"cache_of": cache_of},
    )


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
                                        f"(asked: {nota['requested']}, {nota['expected']:.1%})"],
        ["paired items (same question, other images)", paired_row(stats["pairs"])],
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
