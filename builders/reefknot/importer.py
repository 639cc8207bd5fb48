"""Import the official Reefknot release into Mirage items, so the published benchmark can be reviewed, linted,
released and scored with the same tools as a Mirage build. The file is read by :mod:`builders.imports.reefknot`
(as ``python -m builders.imports reefknot`` reads it); this command adds the Reefknot validity figures.

``python -m builders.reefknot.importer RELEASE.jsonl [--images DIR] [--out DIR] [--name NAME]``

The release is JSON lines, one question each: ``image_id`` (a string of digits: the Visual Genome image),
``query_prompt`` (the question as put to the model; MCQ options are inside it as ``"A. x B. y C. z D. w, please
choose."``), ``label`` (``yes``/``no``, an option letter or the option text, or the reference sentence),
``type`` (``Yes/No``, ``Multichoice``, ``VQA``) and ``relation_type`` (``perception``, ``cognitive``). Items keep
the prompt's wording; MCQ options are split out into ``options`` and the answer becomes their letter. Nothing is
dropped or fixed: the release's faults (questions with two answers, duplicates) are counted in build.json and
shown by the summary, for the linter and reviewers to act on.

Images are looked for under ``--images`` (and its ``VG_100K/``, ``VG_100K_2/``), but none is needed to read the
release: the text checks (lint, validity) use only the questions, and the release names 11,084 Visual Genome
images that few users hold in full. An image not found is counted, not a stop: its items name the bare file
(``<image_id>.jpg``, the name ids hash either way, so ids do not depend on which images are at hand), build.json
says how many were found and which were not (``stats.images``), and a release of the build will ask for them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Sequence

from builders.cli import ArgumentParser, exit_on_error, stderr, stdout, table
from builders.imports.reefknot import BENCHMARK, import_release, split_options  # noqa: F401 - re-exported
from builders.reefknot.validity import validity
from builders.run import code_version, file_sha256, open_build
from commandline.options import add_options, config_of, option
from commandline.parsing import prog

@dataclass(kw_only=True)
class ImporterOptions:
    release: str = option(metavar="FILE", positional=True, help="the release's JSON lines file")
    images: str | None = option(None, metavar="DIR",
                                help="directory of the Visual Genome images (also searched: VG_100K/, VG_100K_2/); "
                                     "images not there are counted and their items name the bare file (default "
                                     "none looked for)")
    out: str = option("builds/reefknot", metavar="DIR", help="parent directory of the build (default {default})")
    name: str = option("official-release", metavar="NAME", help="build name (default {default})")


def parser() -> ArgumentParser:
    p = ArgumentParser(
        prog=prog("python -m builders.reefknot.importer"),
        description="Import the official Reefknot release (JSON lines) as a Mirage build.",
    )
    add_options(p, ImporterOptions)
    return p


@exit_on_error
def main(argv: Sequence[str] | None = None) -> int:
    args = config_of(ImporterOptions, parser().parse_args(argv))
    release = import_release(args.release, args.images)
    items = release.items
    note = release.image_note(args.release)
    if note:
        stderr.print(f"warning: {note}", markup=False, highlight=False)
    quality = validity(items)
    with open_build(args.out, args.name) as out:
        n = out.write_items(items)
        out.write_json(
            "build.json",
            {
                "benchmark": BENCHMARK,
                "name": args.name,
                "seed": None,
                "code_version": code_version(),
                "config": {"release": args.release, "images": args.images, "importer": True},
                "input_hashes": {args.release: "sha256:" + file_sha256(args.release)},
                "sources": [
                    {
                        "name": "reefknot-release",
                        "path": args.release,
                        "license_note": "see the Reefknot release (github.com/JackChen-seu/Reefknot)",
                    }
                ],
                "items": n,
                "stats": {"quality": quality, "images": release.image_stats()},
                "skipped": [],
            },
        )
        path = out.final
    cells = Counter((it.question_type, it.task) for it in items)
    stdout.print(
        table(
            f"Imported {n} Reefknot items -> {path}",
            ["set", "perception", "cognition"],
            [[s, cells[(s, "perception")], cells[(s, "cognition")]] for s in ("yes_no", "mcq", "vqa")],
        )
    )
    stdout.print(
        table(
            "Release checks",
            ["check", "value"],
            [
                ["(image, question) with two answers", quality["two_answers"]],
                ["duplicate questions", quality["duplicate_questions"]],
                *[[f"Y/N {c} yes / no", f"{v['yes']} / {v['no']}"] for c, v in quality["yes_no_balance"].items()],
            ],
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
