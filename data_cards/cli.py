"""``python -m data_cards``: release a reviewed build as a versioned dataset, publish it to the Hub.

Errors a user can act on are one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from builders.cli import ArgumentParser, exit_on_error, stdout, table
from commandline.options import add_command, option, run_command
from commandline.parsing import prog
from sources.errors import MirageError

from .publish import plan_operations, publish
from .release import plan_release, release

DESCRIPTION = """\
Release a reviewed Mirage build as a versioned Hugging Face dataset, and publish a release to the Hub
as one commit and one tag (vX.Y.Z).

  python -m data_cards release builds/mioh/demo --version 1.0.0 --dry-run
  python -m data_cards release builds/mioh/demo --version 1.0.0
  python -m data_cards publish releases/mioh/1.0.0 --repo ORG/NAME \\
      --dry-run ops.json
  python -m data_cards publish releases/mioh/1.0.0 --repo ORG/NAME
"""


@dataclass(kw_only=True)
class ReleaseOptions:
    """``release``: a build's reviewed items as a versioned dataset."""

    build_dir: str = option(metavar="BUILD_DIR", positional=True, help="a finished build: builds/<benchmark>/<name>/")
    version: str = option(metavar="VERSION", help="semantic version MAJOR.MINOR.PATCH[-pre] of this release")
    name: str | None = option(None, metavar="NAME",
                              help="release name, the folder under --out (default the build's benchmark)")
    include_unreviewed: bool = option(
        False, help="also release items no human reviewed (no review, pending, adjudication); the card says so. "
        "Items the reviewers dropped stay out")
    out: str = option("releases", metavar="DIR", help="root folder of releases (default {default}/)")
    license: str | None = option(None, metavar="NAME",
                                 help="Hub licence id for the card (default from the sources' licences, else "
                                      "'unknown')")
    repo: str | None = option(None, metavar="ORG/NAME",
                              help="ORG/NAME the release is meant for, used in the card's loading examples")
    notes: str = option("", metavar="TEXT", help="text for this version's CHANGELOG.md entry")
    project_url: str | None = option(
        default_factory=lambda: os.environ.get("MIRAGE_PROJECT_URL") or None, metavar="URL",
        help="the project's URL, for the card and its citation (default $MIRAGE_PROJECT_URL, else none)")
    maintainers: str | None = option(
        default_factory=lambda: os.environ.get("MIRAGE_MAINTAINERS") or None, metavar="NAMES",
        help="who curates the release, as the citation's authors ('A. One and B. Two') (default "
             "$MIRAGE_MAINTAINERS, else 'the Mirage maintainers')")
    max_shard_size: int = option(500, metavar="MB", help="largest parquet shard, in MB (default {default})")
    dry_run: bool = option(False, help="make every check and print the files the release would write (shard sizes "
                                       "estimated); write nothing")


@dataclass(kw_only=True)
class PublishOptions:
    """``publish``: a release to the Hub as one commit and one tag."""

    release_dir: str = option(metavar="RELEASE_DIR", positional=True, help="a release: releases/<name>/<version>/")
    repo: str = option(metavar="ORG/NAME", help="the dataset repo on the Hub")
    dry_run: str | None = option(None, metavar="FILE",
                                 help="write the exact operations (paths, sizes, sha256) to FILE as JSON and print "
                                      "them; no network")
    token_env: str | None = option(None, metavar="VAR",
                                   help="read the token from environment variable VAR (default HF_TOKEN, then the "
                                        "stored login)")
    private: bool = option(False, help="create the repo private if it does not exist yet")


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog=prog("python -m data_cards"), description=DESCRIPTION)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_command(sub, "release", ReleaseOptions, cmd_release,
                help="write releases/<name>/<version>/ from a build dir and its review",
                description="Write a build's reviewed items as a Hub-layout dataset: parquet shards with embedded "
                "images, a README.md data card, plots, CHANGELOG.md and manifest.json. Written to <version>.partial "
                "and renamed when complete; an existing version is never overwritten.")
    add_command(sub, "publish", PublishOptions, cmd_publish,
                help="publish a release to the Hub as one commit + tag v<version>",
                description="Create the dataset repo if needed, upload every file of the release (and delete "
                "shards of earlier versions) in ONE commit, then tag that commit v<version>. Refuses before "
                "committing when the tag exists. The token comes from HF_TOKEN or your stored login (`hf auth "
                "login`), or --token-env.")
    return parser


def _progress():
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.console import Console

    console = Console(stderr=True)
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
        disable=not console.is_terminal,  # a bar only on a terminal: logs keep errors on one line
    )


def cmd_release(args: ReleaseOptions) -> int:
    from rich.console import Console

    if args.max_shard_size <= 0:
        raise MirageError(f"--max-shard-size {args.max_shard_size}: must be a positive number of MB")
    if args.dry_run:
        return dry_run_release(args)
    progress = _progress()
    state: dict = {}

    def on_total(n: int) -> None:  # started only once the inputs passed their checks
        progress.start()
        state["task"] = progress.add_task("writing shards", total=n)

    try:
        result = release(
            args.build_dir,
            args.version,
            name=args.name,
            include_unreviewed=args.include_unreviewed,
            out=args.out,
            license=args.license,
            repo_id=args.repo,
            notes=args.notes,
            project_url=args.project_url,
            maintainers=args.maintainers,
            max_shard_bytes=args.max_shard_size * 1024 * 1024,
            progress=lambda n: progress.advance(state["task"], n),
            on_total=on_total,
        )
    finally:
        if state:
            progress.stop()
    console = Console(stderr=True)
    console.print(table(f"release {result.name} {result.version}", ["task", "items"],
                        [*result.stats["tasks"].items(), ["total", result.num_items]]))
    for k, v in result.stats["review_status"].items():
        console.print(f"review_status {k}: {v}")
    print(result.path)
    return 0


def dry_run_release(args: ReleaseOptions) -> int:
    """``release --dry-run``: the files the release would write, its items per task; nothing is written."""
    plan = plan_release(args.build_dir, args.version, name=args.name, include_unreviewed=args.include_unreviewed,
                        out=args.out, max_shard_bytes=args.max_shard_size * 1024 * 1024)
    stdout.print(table(f"release {plan.name} {plan.version} -> {plan.path} (dry run: nothing written)",
                       ["file", "holds"], plan.files, numeric=False))
    counts = [*plan.stats["tasks"].items(), ["total", plan.num_items]]
    stdout.print(table("items per task", ["task", "items"], counts))
    for k, v in plan.stats["review_status"].items():
        stdout.print(f"review_status {k}: {v}", markup=False, highlight=False)
    for k, v in plan.excluded.items():
        stdout.print(f"left out ({k}): {v}", markup=False, highlight=False)
    return 0


def cmd_publish(args: PublishOptions) -> int:
    if args.dry_run:
        plan = plan_operations(Path(args.release_dir), args.repo, private=args.private)
        text = json.dumps(plan, indent=2, sort_keys=False)
        Path(args.dry_run).write_text(text + "\n", encoding="utf-8")
        print(text)
        return 0
    result = publish(Path(args.release_dir), args.repo, token_env=args.token_env, private=args.private)
    print(json.dumps(result, indent=2))
    return 0


@exit_on_error
def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m data_cards``."""
    return run_command(build_parser(), argv)
