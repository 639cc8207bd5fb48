"""``python -m builders.reefknot``: options, the summary tables, the entry point."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Sequence

from builders.cli import builder_parser, exit_on_error, paired_row, run_builder, stdout, table
from builders.items import Item
from builders.reefknot.builder import write_build
from builders.reefknot.config import CATEGORIES, SETS, ReefknotConfig


def parser() -> argparse.ArgumentParser:
    return builder_parser(
        "reefknot",
        "Build Reefknot (relation hallucination): triplets from scene graphs, filtered, split into "
        "perceptive and cognitive relations, asked as Y/N (1:1 yes/no), MCQ (1 + 3) and VQA questions. Runs on the "
        "embedded demo scenes unless Visual Genome (--vg-relationships, --vg-images) or SVG files are given.",
        ReefknotConfig,
    )


def print_summary(path: Path, items: Sequence[Item], stats: dict[str, Any]) -> None:
    e = stats["phases"]["e_questions"]
    rows = [[f"{s}"] + [f"{e['made'][f'{s}/{c}']}/{e['planned'][f'{s}/{c}']}" for c in CATEGORIES] for s in SETS]
    stdout.print(table(f"Reefknot build: {len(items)} items -> {path}", ["set (made/planned)", *CATEGORIES], rows))
    b = stats["phases"]["b_filtering"]
    stdout.print(
        table(
            f"Filtering: {b['in']} relations -> {b['kept']} triplets",
            ["dropped because", "triplets"],
            [[reason[:60], n] for reason, n in b["dropped"].items()],
        )
    )
    missing = stats.get("images") or {}
    if missing.get("not_found"):
        stdout.print(f"{missing['not_found']} images not found under {missing['images_dir']}: left out with "
                     f"their triplets (--on-missing-image skip; their ids: build.json stats.images)",
                     markup=False, highlight=False)
    q = stats["quality"]
    if not q:
        return
    base = q["blind_baselines"]
    rows = [
        ["(image, question) with two answers", q["two_answers"]],
        ["duplicate questions", q["duplicate_questions"]],
        ["agreement faults", q["agreement_faults"]],
        *[[f"Y/N {cat} yes / no", f"{v['yes']} / {v['no']}"] for cat, v in q["yes_no_balance"].items()],
        *[
            [f"relations {k} max/min", f"{v['max']}/{v['min']} ({v['relations']} relations)"]
            for k, v in q["relation_balance"].items()
        ],
        ["MCQ letters chi2 p", q["answer_balance"]["p_value"]],
        ["closed items paired (Y/N, MCQ)", paired_row(stats["pairs"])],
    ]
    if "yes_no" in base:
        y = base["yes_no"]
        rows.append(
            [
                "Y/N blind: chance / yes / prior",
                f"{y['chance']:.1%} / {y['always_yes']:.1%} / {y['language_prior']:.1%}",
            ]
        )
    if "mcq" in base:
        m = base["mcq"]
        rows.append(
            ["MCQ blind: chance / A / prior", f"{m['chance']:.1%} / {m['always_A']:.1%} / {m['language_prior']:.1%}"]
        )
    stdout.print(table("Validity", ["check", "value"], rows))
    cd = stats["phases"]["cd_categories"]
    stdout.print(f"categories decided by: {', '.join(f'{k} {v}' for k, v in cd['methods'].items())}")
    for s in stats["skipped"]:
        stdout.print(f"short: {s['set']}/{s['category']} made {s['made']} of {s['wanted']} ({s['reason']})")


@exit_on_error
def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m builders.reefknot``."""
    return run_builder(ReefknotConfig, parser(), argv, write_build, print_summary)
