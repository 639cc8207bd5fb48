"""What every command line shares (issue 9): argument errors are one line naming the valid choices (exit 2, no
usage block), ``--help`` documents every option with an explicit metavar and writes defaults one way, and the
summary tables are readable at 80 columns (no "…", no line wider than the terminal)."""

from __future__ import annotations

import argparse
import importlib
import io
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Callable, Iterator

import pytest
from rich.console import Console

import builders
from builders.cli import ArgumentParser, table

BUILDER_PACKAGES = sorted(p.parent.name for p in Path(builders.__file__).parent.glob("*/cli.py"))


def parsers() -> dict[str, Callable[[], argparse.ArgumentParser]]:
    """Every command line of the repository: each builder package's ``cli.parser`` and the tools'."""
    out = {f"builders.{name}": importlib.import_module(f"builders.{name}.cli").parser for name in BUILDER_PACKAGES}
    out["scoring"] = importlib.import_module("scoring.__main__").parser
    out["scoring.run"] = importlib.import_module("scoring.run").parser
    out["scoring.harness"] = importlib.import_module("scoring.harness.cli").parser
    out["scoring.mementos"] = importlib.import_module("scoring.mementos").parser
    out["scoring.synonyms"] = importlib.import_module("scoring.synonyms").parser
    out["annotation"] = importlib.import_module("annotation.__main__").build_parser
    out["data_cards"] = importlib.import_module("data_cards.cli").build_parser
    return out


def walk(parser: argparse.ArgumentParser) -> Iterator[tuple[argparse.ArgumentParser, argparse.Action]]:
    """(parser, action) for every action of ``parser`` and of its subcommands."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from walk(sub)
        else:
            yield parser, action


def test_the_builders_are_found() -> None:
    assert {"mioh", "mementos"} <= set(BUILDER_PACKAGES)


@pytest.mark.parametrize("name", sorted(parsers()))
def test_every_option_has_help_and_an_explicit_metavar(name: str) -> None:
    problems = []
    for parser, action in walk(parsers()[name]()):
        if not isinstance(parser, ArgumentParser):
            problems.append(f"{parser.prog}: use builders.cli.ArgumentParser (one-line errors)")
        flag = "/".join(action.option_strings) or action.dest
        if not action.help:
            problems.append(f"{parser.prog} {flag}: no help")
        elif "(default:" in action.help or re.search(r"\bdefault: ", action.help):
            problems.append(f"{parser.prog} {flag}: write defaults as '(default X)'")
        if action.nargs != 0 and action.metavar is None and action.choices is None:
            problems.append(f"{parser.prog} {flag}: no metavar (FILE, DIR, N, X, NAME, ...)")
    assert not problems, "\n".join(dict.fromkeys(problems))


def test_the_checks_above_can_fail() -> None:
    p = ArgumentParser(prog="x")
    p.add_argument("--n-things", type=int, help="how many (default: 3)")
    [(_, action)] = [pa for pa in walk(p) if pa[1].dest == "n_things"]
    assert action.metavar is None and "(default:" in action.help


def _main(module: str) -> Callable[[list[str]], int]:
    return importlib.import_module(module).main


@pytest.mark.parametrize("module, prog, argv, expected", [
    ("builders.mioh", "python -m builders.mioh", ["--n-images", "3"], "invalid choice: 3 (choose from 2, 4, 8, 10)"),
    ("builders.mioh", "python -m builders.mioh", ["--tasks", "existance"],
     "invalid choice: 'existance' (choose from 'existence', 'counting', 'attribute', 'position')"),
    ("builders.mioh", "python -m builders.mioh", ["--n-questions", "two"], "invalid int value: 'two'"),
    ("builders.mementos", "python -m builders.mementos", ["--on-error", "ignore"], "(choose from 'skip', 'fail')"),
    ("scoring.__main__", "python -m scoring", ["mioh", "--release", "r", "--predictions", "p", "--format", "csv"],
     "(choose from 'mirage', 'lmms-eval', 'vlmevalkit')"),
    ("scoring.mementos", "python -m scoring.mementos", ["--items", "x"], "required: --predictions"),
    ("scoring.synonyms", "python -m scoring.synonyms import-pickle", ["import-pickle", "a.pkl", "--out", "d",
                                                                      "--kind", "verbs"], "choose from 'objects'"),
    ("annotation.__main__", "python -m annotation", ["pul"], "(choose from 'serve', 'push', 'author', 'pull')"),
    ("data_cards.cli", "python -m data_cards release", ["release", "b", "--version", "1.0.0", "--max-shard-size",
                                                        "big"], "invalid int value: 'big'"),
])
def test_a_bad_argument_is_one_line_exit_2(module: str, prog: str, argv: list[str], expected: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        _main(module)(argv)
    out, err = capsys.readouterr()
    assert info.value.code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"{prog}: error: ") and expected in err, err


# ------------------------------------------------------------------------------------------ 80 columns


def render(print_tables: Callable[[Console], None], width: int = 80) -> str:
    """What ``print_tables(console)`` shows on a terminal ``width`` columns wide."""
    console = Console(file=io.StringIO(), width=width, color_system=None)
    print_tables(console)
    return console.file.getvalue()


def assert_readable(text: str, width: int = 80) -> None:
    assert "…" not in text, text
    too_wide = [line for line in text.splitlines() if len(line) > width]
    assert not too_wide, "\n".join(too_wide)


def test_table_wraps_text_cells_and_keeps_labels_whole() -> None:
    long = "a reason that is much longer than the room a narrow terminal leaves for the second column, " * 2
    text = render(lambda c: c.print(table("t", ["what", "why"], [["existence/comprehensive/hard_positive", long]])))
    assert_readable(text)
    assert "existence/comprehensive/hard_positive" in text  # the label column is never folded
    assert "column, a reason" in " ".join(line.strip("│ ") for line in text.splitlines())  # wrapped, not cut
    narrow = render(lambda c: c.print(table("t", ["what", "why"], [["x", long]], legend="x = y")), width=40)
    assert_readable(narrow, 40)
    assert render(lambda c: c.print(table("t", ["a"], [["x" * 100]])), width=40).count("x") == 100  # folded, kept


def test_plain_rich_table_would_fail_the_check() -> None:
    from rich.table import Table

    def plain(console: Console) -> None:
        t = Table()
        t.add_column("label", no_wrap=True)
        t.add_row("existence/comprehensive/hard_positive " * 3)
        console.print(t)

    with pytest.raises(AssertionError):
        assert_readable(render(plain))


def test_mementos_summary_at_80_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from builders.mementos import cli as mementos_cli
    from sources.video_backends import have_opencv
    from tests.conftest import require

    require(have_opencv(), "opencv-python-headless", "bash .ci/install-video.sh")
    from builders.mementos.builder import write_build
    from builders.mementos.config import MementosConfig

    path, items, stats = write_build(MementosConfig(out=str(tmp_path), demo_videos=2, progress=False,
                                                    cache_dir=str(tmp_path / "cache")))
    stats = {**stats, "skipped_by_reason": {"frames: N frames is outside the daily-life range (N..N)": 3}}

    def summary(console: Console) -> None:
        monkeypatch.setattr(mementos_cli, "stdout", console)
        mementos_cli.print_summary(path, items, stats)

    text = render(summary)
    assert_readable(text)
    assert "behaviours (mean)" in text and "Skipped videos" in text


def test_mementos_scores_at_80_columns() -> None:
    from scoring.mementos import Report, print_report

    scores = {"n": 12, "objects": {"recall": 0.5, "precision": 0.25, "f1": 1 / 3},
              "behaviours": {"recall": 1.0, "precision": 0.125, "f1": 0.2}}
    buckets = {"daily_life": {"1-3": scores, "4-6": scores}, "robotics": {"10+": scores}}
    report = Report(by_domain={"daily_life": scores, "robotics": scores, "comics": scores}, overall=scores,
                    by_episode_length=buckets, by_frames=buckets, keywords="spacy:en_core_web_sm 3.8.0",
                    missing={}, sequences=[])
    import scoring.mementos as module

    def report_tables(console: Console) -> None:
        saved, module.stdout = module.stdout, console
        try:
            print_report(report, "a-rather-long-model-name-7b-instruct")
        finally:
            module.stdout = saved

    text = render(report_tables)
    assert_readable(text)
    assert "precision" in text and "12.50%" in text and "comics" in text


def test_annotation_pull_at_80_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    import annotation.__main__ as cli
    import annotation.builddir
    import annotation.pull

    long = tmp_path / ("a-build-directory-with-a-long-name-" * 2) / "n8-seed0"
    review = {"counts": {"total": 480, "pending": 20, "keep": 400, "fix": 30, "drop": 25, "adjudicate": 5},
              "fleiss_kappa": 0.8123, "raw_export": str(long / "reviews" / "export-2026-11-22T23-00-00.json"),
              "reviewers": {"alice.long-address@example.org": {"annotations": 480, "agreement_with_majority": 0.95}},
              "items": {}, "problems": []}
    result = SimpleNamespace(review=review, review_path=long / "review.json", export_is_new=True,
                             reviewed_path=long / "reviewed.jsonl")
    monkeypatch.setattr(annotation.builddir, "load_build", lambda path: SimpleNamespace(path=long, label="mioh"))
    monkeypatch.setattr(annotation.pull, "pull", lambda *a, **k: result)
    monkeypatch.setattr(cli, "_clients", lambda args: [SimpleNamespace(url="http://127.0.0.1:8080")])
    monkeypatch.setenv("COLUMNS", "80")
    assert cli.main(["pull", str(long), "--project", "MIOH n8 review", "--token", "t"]) == 0
    text = capsys.readouterr().out
    assert_readable(text)
    assert "Fleiss' kappa (verdicts)" in text and "agreement with majority" in text
