"""``python -m scoring.harness export``: the lmms-eval task folder and VLMEvalKit TSVs of an existing release.

A release made by ``python -m data_cards release`` already carries them under ``harness/``; this command writes
them for a release made before that, or for another repo id. It writes outside the release dir: a release is
immutable (``manifest.json`` lists every file, and publishing refuses anything else).
"""

from __future__ import annotations

import argparse
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from builders.cli import ArgumentParser, exit_on_error, progress_bar, stdout, table
from commandline.options import add_command, option, run_command
from commandline.parsing import prog
from data_cards.harness import write_harness_exports
from data_cards.release import MANIFEST, parse_version
from scoring.results import write_json_atomic
from sources.errors import ConfigError

from .circular import read_result_sheet, score_circular

DESCRIPTION = """\
Write the harness exports of a Mirage release: an lmms-eval task folder (one YAML per task config, a group
YAML, utils.py scoring with Mirage's extraction) and VLMEvalKit TSVs (per task and answer form, plus a
circular variant of each multiple-choice sheet).

  python -m scoring.harness export releases/mioh/1.0.0 --repo ORG/mioh
  lmms-eval --model ... --tasks mirage_mioh \\
      --include_path harness/mioh/1.0.0/lmms_eval
  python -m scoring.harness circular \\
      outputs/MODEL/MODEL_mioh_counting_MCQ_CIRCULAR.xlsx
"""


@dataclass(kw_only=True)
class ExportOptions:
    release_dir: str = option(metavar="RELEASE_DIR", positional=True, help="a release: releases/<name>/<version>/")
    repo: str | None = option(None, metavar="ORG/NAME",
                              help="the Hub dataset the lmms-eval tasks load (default the release's repo, else "
                                   "ORG/NAME)")
    version: str | None = option(None, metavar="X.Y.Z",
                                 help="the release version; the tasks load tag vX.Y.Z (default from manifest.json)")
    name: str | None = option(None, metavar="NAME", help="release name in task names (default from manifest.json)")
    out: str | None = option(None, metavar="DIR", help="output folder (default harness/<name>/<version>)")
    progress: bool = option(True, flag="--no-progress", help="no progress bar (default shown on stderr)")


@dataclass(kw_only=True)
class CircularOptions:
    sheet: str = option(metavar="SHEET", positional=True, help="VLMEvalKit's <model>_<dataset>.xlsx (or .tsv/.csv)")
    out: str | None = option(None, metavar="FILE", help="also write the results as JSON to FILE (default print only)")


def parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog=prog("python -m scoring.harness"), description=DESCRIPTION)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_command(sub, "export", ExportOptions, export,
                help="write the lmms-eval and VLMEvalKit exports of a release dir",
                description="Write RELEASE_DIR's harness exports to --out (replaced if it exists).")
    add_command(sub, "circular", CircularOptions, circular,
                help="score a VLMEvalKit result sheet of a *_MCQ_CIRCULAR dataset",
                description="CircularEval with Mirage's extraction: an item is correct only when every rotation of "
                "its options is answered correctly; unparsed answers are wrong, never guessed.")
    return p


def _manifest(release_dir: Path) -> dict:
    path = release_dir / MANIFEST
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc})") from None


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def circular(args: CircularOptions) -> int:
    results = score_circular(read_result_sheet(args.sheet), source=args.sheet)
    rows = [[c, r["items"], _pct(r["circular_accuracy"]), _pct(r["vanilla_accuracy"]), r["unparsed"]]
            for c, r in [*results["by_category"].items(), ("all", results)]]
    stdout.print(table(f"CircularEval of {Path(args.sheet).name}", ["category", "items", "circular %",
                                                                      "vanilla %", "unparsed"], rows,
                       legend="vanilla: rotation 0 only; unparsed: rows whose answer names no option"))
    if args.out:
        write_json_atomic(args.out, results)
    return 0


@exit_on_error
def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m scoring.harness`` and ``mirage harness``."""
    return run_command(parser(), argv)


def export(args: ExportOptions) -> int:
    """``export``: the lmms-eval task folder and the VLMEvalKit TSVs of a release, written beside it."""
    release_dir = Path(args.release_dir)
    if not (release_dir / "data").is_dir():
        raise ConfigError(f"{release_dir}: not a release dir (no data/ folder)")
    manifest = _manifest(release_dir)
    version = args.version or manifest.get("version")
    name = args.name or manifest.get("name")
    if not version or not name:
        raise ConfigError(f"{release_dir}: no manifest.json to read the version and name from; give --version and "
                          "--name")
    parse_version(version)
    repo = args.repo or manifest.get("repo_id")
    if repo is not None and (repo.count("/") != 1 or not all(repo.split("/"))):
        raise ConfigError(f"--repo {repo!r}: expected ORG/NAME")
    out = Path(args.out) if args.out else Path("harness") / name / version
    if (out.resolve() / MANIFEST).exists() or release_dir.resolve() in (out.resolve(), *out.resolve().parents):
        raise ConfigError(f"--out {out}: inside the release; a release must not change (publishing checks "
                          "manifest.json), choose a folder outside it")
    partial = out.with_name(out.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        with progress_bar(args.progress) as task:
            bars: list = []  # the bar appears with the first update: a release that cannot be read shows none

            def update(done: int, total: int) -> None:
                if not bars:
                    bars.append(task("encoding images", total))
                bars[0](done, total)

            files = write_harness_exports(release_dir, release=name, version=version, repo_id=repo,
                                          out_dir=partial, progress=update)
        if out.exists():
            shutil.rmtree(out)
        partial.rename(out)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    rows = []
    for f in files:
        final = out / f.relative_to(partial)
        rows.append([final.relative_to(out).as_posix(), f"{final.stat().st_size / 1024:.1f}"])
    stdout.print(table(f"harness exports of {name} {version} -> {out}", ["file", "KiB"], rows))
    if not repo:
        stdout.print("note: no --repo and none in manifest.json: the lmms-eval tasks load ORG/NAME; edit "
                     "dataset_path or export again with --repo")
    return 0
