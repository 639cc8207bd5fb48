"""``python -m builders.reefknot``: options, the summary tables, the entry point."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Sequence

from builders.cli import add_build_arguments, builder_parser, exit_on_error, run_builder, stdout, table
from builders.items import Item
from builders.llm import add_llm_arguments
from builders.reefknot.builder import write_build
from builders.reefknot.config import CATEGORIES, MISSING_IMAGE, SETS, ReefknotConfig


def parser() -> argparse.ArgumentParser:
    p = builder_parser(
        "reefknot",
        "Build Reefknot (relation hallucination): triplets from scene graphs, filtered, split into "
        "perceptive and cognitive relations, asked as Y/N (1:1 yes/no), MCQ (1 + 3) and VQA questions. Runs on the "
        "embedded demo scenes unless Visual Genome (--vg-relationships, --vg-images) or SVG files are given.",
    )
    d = ReefknotConfig()
    a = p.add_argument
    for qset, flag, label in (("yes_no", "yn", "Y/N"), ("mcq", "mcq", "MCQ"), ("vqa", "vqa", "VQA")):
        for cat in CATEGORIES:
            a(
                f"--{flag}-{cat}",
                type=int,
                metavar="N",
                help=f"{label} questions on {cat} relations "
                f"(default {d.counts()[(qset, cat)]}, the paper's Table 2; scaled down for small sources)",
            )
    add_build_arguments(
        p,
        d,
        seed_of="every random choice",
        name="<source>-seed<S>",
        cache_of="demo scenes and LLM answers",
        demo=("images", "demo scenes when no data is given"),
    )
    a("--vg-relationships", metavar="FILE", help="Visual Genome relationships.json (v1.0, v1.2 or v1.4; streamed)")
    a("--vg-images", metavar="DIR", help="directory of the VG images (also searched: VG_100K/, VG_100K_2/)")
    a("--vg-image-data", metavar="FILE", help="VG image_data.json: sizes without opening images (default read headers)")
    a(
        "--vg-objects",
        metavar="FILE",
        help="VG objects.json: every object, for the several-instances rule (default relationship endpoints only)",
    )
    a(
        "--on-missing-image",
        choices=MISSING_IMAGE,
        help=f"a VG image whose file is not under --vg-images: skip it (its triplets dropped, counted and its id in "
        f"build.json) or fail with one line naming the file (default {d.on_missing_image})",
    )
    a("--svg", metavar="FILE", help="SVG scene graphs, JSON or JSON lines")
    a("--svg-images", metavar="DIR", help="directory of the SVG images")
    a(
        "--min-area",
        type=float,
        metavar="SHARE",
        help=f"boxes below this share of the image are minor details (default {d.min_area})",
    )
    a(
        "--min-name-count",
        type=int,
        metavar="N",
        help=f"names seen fewer times in the source are noise (default {d.min_name_count})",
    )
    a(
        "--min-predicate-count",
        type=int,
        metavar="N",
        help=f"predicates seen fewer times are noise (default {d.min_predicate_count})",
    )
    a(
        "--prior-share",
        type=float,
        metavar="SHARE",
        help=f"a pair's most frequent relation is image-independent when it holds at least this share of the pair's "
        f"triplets (default {d.prior_share}: always)",
    )
    a(
        "--prior-support",
        type=int,
        metavar="N",
        help=f"...when the pair has at least this many triplets in the source (default {d.prior_support})",
    )
    a(
        "--relation-cap",
        type=int,
        metavar="N",
        help="most triplets per relation in one set and category (default 0: no cap beyond round-robin balance)",
    )
    add_llm_arguments(p)
    return p


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
