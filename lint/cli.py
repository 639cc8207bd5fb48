"""``python -m lint PATH [PATH ...]``: lint a build dir, an items.jsonl, a release dir, a Hub repo@tag, or a
published benchmark's own files (``--format pope`` / ``mementos-csv`` / ``reefknot``).

Prints one table per input (check, items flagged, the main finding; 80 columns) and the first flagged items;
``--out DIR`` writes ``lint.json`` (build.json's ``"lint"`` section) and ``issues.jsonl`` (per item: every
check's score, flag and reasons, as cleanlab's ``Datalab.get_issues()``). Exit status 0, or 1 with
``--fail-on-findings`` when anything was flagged; bad input is one line and exit status 2. Lint never changes
the data it reads.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Sequence

from builders.cli import ArgumentParser, count, exit_on_error, print_blind, stderr, stdout, table
from builders.imports import formats, read_published
from builders.items import Item
from builders.lint import CHECKS, lint, summary_rows
from builders.lint.dictionary import read_allow_file
from builders.llm import LLMConfig, add_llm_arguments
from commandline.options import add_options, config_of, option
from commandline.parsing import prog
from sources.errors import ConfigError


@dataclass(kw_only=True)
class LintOptions:
    """What ``mirage lint`` reads and how it reports (the text-only model's options are :class:`LLMOptions`)."""

    OPTION_HELP: ClassVar[dict[str, str]] = {"all_checks": ",".join(CHECKS)}

    paths: list[str] = option(metavar="PATH", positional=True,
                              help="a build dir, an items.jsonl, a release dir, owner/name@vX.Y.Z on the Hub, or "
                                   "(with --format) a published benchmark's files")
    format: str | None = option(None,
                                help="read PATH as a published benchmark's own files instead of Mirage items "
                                     "(default Mirage items)")
    images: str | None = option(None, metavar="DIR",
                                help="with --format: the folder of the images the files name (reefknot: images not "
                                     "there are counted, the text is checked all the same; default the names as "
                                     "written)")
    checks: str = option(",".join(CHECKS), metavar="LIST", help="comma-separated checks to run (default {all_checks})")
    allow_words: str | None = option(None, metavar="FILE",
                                     help="words the spelling rule accepts, one a line (the items' own category names "
                                          "are always allowed)")
    out: str | None = option(None, metavar="DIR", help="write lint.json and issues.jsonl there (default print only)")
    show: int = option(10, metavar="N", type=count, help="flagged items listed on screen (default {default})")
    fail_on_findings: bool = option(False, help="exit status 1 when any item or task is flagged (default exit "
                                                "status 0)")
    cache_dir: str | None = option(None, metavar="DIR",
                                   help="cache of the text-only model's answers (default $MIRAGE_CACHE_DIR or "
                                        "~/.cache/mirage)")


def parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog=prog("python -m lint"),
        description="Lint a build dir, an items.jsonl, a release dir, a Hub repo@tag, or a published benchmark's "
                    "own files: contradictions, duplicates, wording, options, balance, image independence. Never "
                    "changes the data.",
        epilog="With --llm-model NAME a text-only model answers every yes/no and MCQ item without its images "
               "(cached under --cache-dir); the items it gets right are flagged.")
    add_options(p, LintOptions, choices={"format": sorted(formats())})
    add_llm_arguments(p, "text-only model (optional; default none)", "model that answers each item without its images")
    return p


def read_input(path: str, fmt: str | None, images: str | None = None) -> tuple[list[Item], dict[str, Any]]:
    """The items at ``path`` and the build.json beside them (empty when there is none)."""
    if fmt is not None:
        items, promises, warnings = read_published(fmt, [Path(path)], Path(images) if images else None)
        for line in warnings:
            stderr.print(f"warning: {line}", markup=False, highlight=False)
        return items, {"benchmark": items[0].benchmark if items else fmt, "lint_promises": promises}
    from scoring.releases import REPO_RE, download_release, load_items

    target = Path(path)
    if not target.exists() and REPO_RE.match(path) and not path.startswith((".", "/")):
        repo_id, _, tag = path.partition("@")
        target = download_release(repo_id, tag or None)  # the snapshot: its manifest.json holds the promises
    items = load_items(target, with_images=False)
    return items, build_record_of(target)


def build_record_of(path: Path) -> dict[str, Any]:
    """What the lint may read about how ``path`` was built: the build.json beside the items, or in a release the
    build's benchmark and ``lint_promises`` kept in manifest.json; empty when there is neither."""
    folder = path if path.is_dir() else path.parent
    for name in ("build.json", "manifest.json"):
        record = folder / name
        if not record.is_file():
            continue
        try:
            data = json.loads(record.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{record}: malformed JSON ({exc})") from None
        if name == "build.json":
            return data
        build = data.get("build") or {}
        return {"benchmark": build.get("benchmark"), "lint_promises": build.get("lint_promises") or {}}
    return {}


@exit_on_error
def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m lint``."""
    namespace = parser().parse_args(argv)
    args = config_of(LintOptions, namespace)
    checks = [c.strip() for c in args.checks.split(",") if c.strip()]
    unknown = sorted(set(checks) - set(CHECKS))
    if unknown:
        raise ConfigError(f"--checks: unknown check(s) {', '.join(unknown)}; valid: {', '.join(CHECKS)}")
    allow = read_allow_file(args.allow_words) if args.allow_words else []
    llm = None
    if namespace.llm_model:
        from builders.options import BuildOptions

        cache = BuildOptions(cache_dir=args.cache_dir).resolved_cache_dir()
        llm = LLMConfig.from_args(namespace, cache_dir=cache)
    found = False
    for path in args.paths:
        items, build = read_input(path, args.format, args.images)
        if not items:
            raise ConfigError(f"{path}: no items to lint")
        try:
            report = lint(items, build, allow=allow, llm=llm, checks=checks)
        except ConfigError as exc:  # what the build promises (lint_promises) is malformed
            raise ConfigError(f"{path}: {exc}") from None
        section = report.section()
        found |= not section["clean"]
        stdout.print(table(f"Lint of {path}: {len(items)} items, {section['flagged_items']} flagged "
                           f"({report.seconds:.1f} s)", ["check", "flagged", "finding"],
                           summary_rows(section), numeric=False))
        print_blind(section.get("blind"), every_cell=True)
        for finding in section["findings"]:
            if not finding.startswith("answerable blind:"):  # the table above shows those
                stdout.print(f"  task finding: {finding}", markup=False, highlight=False)
        for note in section["notes"]:
            stdout.print(f"  note: {note}", markup=False, highlight=False)
        shown = [(r["id"], "; ".join(r["reasons"])) for r in report.item_rows() if r["reasons"]][: args.show]
        if shown:
            stdout.print(table("First flagged items", ["id", "why"], shown, numeric=False))
        if args.out:
            out = Path(args.out) if len(args.paths) == 1 else Path(args.out) / Path(path).name
            out.mkdir(parents=True, exist_ok=True)
            (out / "lint.json").write_text(json.dumps(section, sort_keys=True, indent=2) + "\n", encoding="utf-8")
            from builders.lint.report import write_item_scores

            write_item_scores(report, out / "issues.jsonl")
    return 1 if found and args.fail_on_findings else 0
