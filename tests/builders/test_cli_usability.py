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
    out["scoring.synonyms"] = importlib.import_module("scoring.synonyms").parser
    out["annotation"] = importlib.import_module("annotation.cli").build_parser
    out["data_cards"] = importlib.import_module("data_cards.cli").build_parser
    out["lint"] = importlib.import_module("lint.cli").parser
    out["scoring.mioh"] = importlib.import_module("scoring.mioh").compare_parser
    out["scoring health"] = importlib.import_module("scoring.health_report").parser
    out["scoring twin"] = importlib.import_module("scoring.twins").parser
    out["builders.twin"] = importlib.import_module("builders.twin").parser
    out["builders.reefknot.importer"] = importlib.import_module("builders.reefknot.importer").parser
    mirage = importlib.import_module("mirage.cli")
    out["mirage"], out["mirage list"], out["mirage build"] = mirage.parser, mirage.list_parser, mirage.build_parser
    scoring_parser = out["scoring"]
    for benchmark in importlib.import_module("scoring.registry").scorers():
        out[f"scoring {benchmark}"] = lambda b=benchmark: scoring_parser(b)
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
    """The one ``--help`` test: every option of every command is in its ``--help``, with a help text, an explicit
    metavar and its default written one way."""
    problems = []
    for parser, action in walk(parsers()[name]()):
        text = parser.format_help()
        missing = [flag for flag in action.option_strings if flag not in text]
        if missing:
            problems.append(f"{parser.prog}: {', '.join(missing)} not in --help")
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
    ("scoring.__main__", "python -m scoring", ["mementos", "--release", "x"], "required: --predictions"),
    ("scoring.synonyms", "python -m scoring.synonyms import-pickle", ["import-pickle", "a.pkl", "--out", "d",
                                                                      "--kind", "verbs"], "choose from 'objects'"),
    ("annotation.cli", "python -m annotation", ["pul"], "(choose from 'serve', 'restart-room', 'push', 'author', 'pull')"),
    ("data_cards.cli", "python -m data_cards release", ["release", "b", "--version", "1.0.0", "--max-shard-size",
                                                        "big"], "invalid int value: 'big'"),
    ("lint.cli", "python -m lint", ["x.jsonl", "--show", "-3"], "argument --show: -3 is negative"),
    ("lint.cli", "python -m lint", ["x.jsonl", "--show", "many"], "argument --show: invalid count: 'many'"),
    ("builders.mioh", "python -m builders.mioh", ["--n-quest", "7"], "unrecognized arguments: --n-quest 7"),
    ("scoring.__main__", "python -m scoring", ["mioh", "--release", "r", "--predictions", "p", "--mod", "m"],
     "unrecognized arguments: --mod m"),
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


def test_table_cells_are_plain_text_not_markup() -> None:
    """An install hint names an extra in brackets; rich would read ``[lint]`` as a style and drop it."""
    text = render(lambda c: c.print(table("t", ["check", "why"], [["independence", "pip install -e '.[lint]'"]])))
    assert "'.[lint]'" in text


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
    import annotation.builddir
    import annotation.cli as cli
    import annotation.commands.server
    import annotation.pull

    long = tmp_path / ("a-build-directory-with-a-long-name-" * 2) / "n8-seed0"
    review = {"counts": {"total": 480, "pending": 20, "keep": 400, "fix": 30, "drop": 25, "adjudicate": 5},
              "fleiss_kappa": 0.8123, "raw_export": str(long / "reviews" / "export-2026-11-22T23-00-00.json"),
              "reviewers": {"alice.long-address@example.org": {"annotations": 480, "agreement_with_majority": 0.95}},
              "items": {}, "problems": []}
    result = SimpleNamespace(review=review, review_path=long / "review.json", export_is_new=True,
                             reviewed_path=long / "reviewed.jsonl", quarantined=[])
    monkeypatch.setattr(annotation.builddir, "load_build", lambda path: SimpleNamespace(path=long, label="mioh"))
    monkeypatch.setattr(annotation.pull, "pull", lambda *a, **k: result)
    monkeypatch.setattr(annotation.commands.server, "clients", lambda options: [SimpleNamespace(url="http://127.0.0.1:8080")])
    monkeypatch.setenv("COLUMNS", "80")
    assert cli.main(["pull", str(long), "--project", "MIOH n8 review", "--token", "t"]) == 0
    text = capsys.readouterr().out
    assert_readable(text)
    assert "Fleiss' kappa (verdicts)" in text and "agreement with majority" in text


# ------------------------------------------------------------------------------------------ --help


def every_parser() -> Iterator[argparse.ArgumentParser]:
    """Every parser of every command line, subcommands included."""
    for make in parsers().values():
        stack = [make()]
        while stack:
            parser = stack.pop()
            yield parser
            stack += [sub for action in parser._actions if isinstance(action, argparse._SubParsersAction)
                      for sub in action.choices.values()]


SPLIT_WORD = re.compile(r"\w-$")
"""A help line that ends inside a hyphenated word ("(default --clip-" / "batch-size)")."""


def help_problems(text: str, width: int = 80) -> list[str]:
    return [f"{len(line)} columns: {line}" for line in text.splitlines() if len(line) > width] + \
           [f"split word: {line}" for line in text.splitlines() if SPLIT_WORD.search(line)]


def test_every_help_is_80_columns_with_no_word_split(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # a wide terminal: help stays at 80 all the same
    problems = {parser.prog: help_problems(parser.format_help()) for parser in every_parser()}
    problems = {prog: found for prog, found in problems.items() if found}
    assert not problems, "\n".join(f"{prog}: {line}" for prog, found in problems.items() for line in found)
    progs = {parser.prog for parser in every_parser()}
    assert {"python -m data_cards release", "python -m scoring.harness export", "python -m annotation push",
            "python -m lint", "python -m builders.imports", "python -m scoring.mioh compare"} <= progs


def test_the_help_checks_can_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    """argparse's own formatter splits option names at hyphens and follows a wide terminal."""
    plain = argparse.ArgumentParser(prog="x", formatter_class=lambda prog: argparse.HelpFormatter(prog, width=78))
    plain.add_argument("--ray-batch-size", metavar="N", help="images per CLIP encoder call on Ray (default "
                                                               "--clip-batch-size)")
    assert any(line.startswith("split word") for line in help_problems(plain.format_help()))
    monkeypatch.setenv("COLUMNS", "200")
    wide = argparse.ArgumentParser(prog="x", description="word " * 40)
    assert help_problems(wide.format_help())
    ours = ArgumentParser(prog="x", description="word " * 40)
    ours.add_argument("--ray-batch-size", metavar="N", help="images per CLIP encoder call on Ray (default "
                                                            "--clip-batch-size) " + "word " * 30)
    assert not help_problems(ours.format_help()) and "--clip-batch-size" in ours.format_help()


def test_indented_description_lines_are_kept_as_written() -> None:
    p = ArgumentParser(prog="x", description="Text that is wrapped. " * 6 + "\n\n  python -m x --flag a-b\n")
    text = p.format_help()
    assert "\n  python -m x --flag a-b\n" in text and "Text that is wrapped. Text" in text


def test_help_says_what_the_command_has() -> None:
    """Mementos samples frames on Ray and has no CLIP stage; lint's model answers items, it writes no text."""
    from builders.mementos.cli import parser as mementos
    from builders.mioh.cli import parser as mioh
    from lint.cli import parser as lint

    text = mementos().format_help()
    assert "CLIP" not in text and "--ray-actors" not in text and "--ray-cpus-per-task" in text
    assert "--ray-actors" in mioh().format_help() and "CLIP encoder" in mioh().format_help()
    text = " ".join(lint().format_help().split())
    assert "templates" not in text and "text-only model" in text


# ------------------------------------------------------------------------------------------ options


def test_no_parser_takes_abbreviations() -> None:
    """``--n-quest 7`` was parsed and then dropped by the config merge, which reads options by full name."""
    assert all(not parser.allow_abbrev for parser in every_parser())


def test_config_merge_takes_what_the_command_line_gives(tmp_path: Path) -> None:
    """The namespace of a builder's parser holds only the options written on the command line, whatever their
    spelling (``--n-questions=6``), so none is dropped and none overrides the config file by its default."""
    from builders.cli import parse_config
    from builders.mioh.cli import parser
    from builders.mioh.config import MiohConfig

    config = tmp_path / "mioh.yaml"
    config.write_text("n_questions: 3\nseed: 5\nno_clip: true\n")
    merged = parse_config(MiohConfig, parser(), ["--config", str(config), "--n-questions", "7", "--no-clip"])
    assert (merged.n_questions, merged.seed, merged.no_clip) == (7, 5, True)
    merged = parse_config(MiohConfig, parser(), ["--config", str(config), "--n-questions=6"])
    assert (merged.n_questions, merged.seed, merged.no_clip, merged.n_options) == (6, 5, True, 4)
    assert vars(parser().parse_args(["--n-questions=6", "--no-progress"])) == {"n_questions": 6, "progress": False}


CONFIGS = {"mioh": "MiohConfig", "mementos": "MementosConfig", "mmsap": "MmsapConfig",
           "predictive": "PredictiveConfig", "reefknot": "ReefknotConfig"}
"""Each builder's config dataclass (``builders.imports`` converts published files and has no config)."""


def test_every_builder_has_its_config_listed() -> None:
    assert set(BUILDER_PACKAGES) - {"imports"} == set(CONFIGS)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_each_option_is_declared_once_on_the_config(name: str) -> None:
    """A builder's command line, its ``--config`` keys and its ``--help`` are made from the config dataclass:
    every field is an option (unless the config has no use for it: ``NO_OPTIONS``) with the field's name, and
    nothing written nowhere is set."""
    import dataclasses

    from commandline.options import option_names

    config_type = getattr(importlib.import_module(f"builders.{name}.config"), CONFIGS[name])
    parser = importlib.import_module(f"builders.{name}.cli").parser()
    names = option_names(config_type)
    fields = {f.name for f in dataclasses.fields(config_type)}
    assert set(names) == fields - set(getattr(config_type, "NO_OPTIONS", ()))
    assert vars(parser.parse_args([])) == {}  # nothing given, nothing set: the config file and defaults speak
    dests = {action.dest for _, action in walk(parser)} - {"help", "config"}
    assert dests == set(names)


@pytest.mark.parametrize("content, expected", [
    (None, "not a directory"),
    ("", "config file is empty"),
    ("# only a comment\n", "config file is empty"),
    ("- a\n- b\n", "must hold a mapping"),
    ("n_quest: 3\n", "unknown option(s) n_quest"),
])
def test_a_bad_config_file_is_one_line_exit_2(tmp_path: Path, content: str | None, expected: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from builders.mioh import main

    path = tmp_path
    if content is not None:
        path = tmp_path / "mioh.yaml"
        path.write_text(content)
    assert main(["--config", str(path), "--out", str(tmp_path / "out")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and expected in err and str(path) in err, err
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------------------------------ piped output


def test_piped_summaries_are_80_columns(tmp_path: Path) -> None:
    """A summary written to a pipe or a file is 80 columns wide ($COLUMNS, when set, wins)."""
    import os
    import subprocess
    import sys

    script = ("from builders.cli import stdout, table\n"
              "stdout.print(table('Quality', ['check', 'value'], [['hard-neg P(obj|cue) chosen vs random', "
              "'0.41 vs 0.12 (x3.4) ' * 6]], numeric=False))\n")
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}

    def widest(extra: dict[str, str]) -> int:
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                              env={**env, **extra}, cwd=Path(__file__).resolve().parents[2])
        return max(len(line) for line in done.stdout.splitlines())

    assert widest({}) == 80
    assert widest({"COLUMNS": "120"}) == 120  # the check can fail: a wider console makes wider lines


# ------------------------------------------------------------------------------------------ build names


def test_a_build_of_another_shape_gets_its_own_default_name() -> None:
    from builders.mioh.config import MiohConfig
    from builders.mmsap.config import MmsapConfig

    assert MiohConfig().build_name() == "n4-seed0"
    assert MiohConfig(decomposed=True).build_name() == "n4-seed0-decomposed"
    assert MiohConfig(decomposed=True, name="mine").build_name() == "mine"
    assert MmsapConfig().build_name() == "demo-seed0"
    assert MmsapConfig(shuffles=5).build_name() == "demo-seed0-shuffles5"
    assert MmsapConfig(shuffles=5, seed=2, vqav2_questions="q.json", vqav2_annotations="a.json",
                       coco_images="val2014").build_name() == "real-seed2-shuffles5"


# ------------------------------------------------------------------------------------------ progress


def test_the_mioh_question_bar_ends_at_its_total() -> None:
    from builders.mioh.builder import draw_cells

    class Builder:
        config = SimpleNamespace(n_questions=1, processes=None)

        def build_cell(self, qtype: str, pressure: str) -> SimpleNamespace:
            return SimpleNamespace(items=(), cell=f"{qtype}/{pressure}")

    updates: list[tuple[int, int]] = []
    cells = [(task, qtype, pressure) for task in ("existence", "counting") for qtype in ("all", "which")
             for pressure in ("easy", "hard_negative", "n_images")]
    drawn = draw_cells({"existence": Builder(), "counting": Builder()}, cells, {},
                       lambda done, total: updates.append((done, total)))
    assert updates == [(6, 12), (12, 12)] and drawn[5].cell == "which/n_images" and len(drawn) == 12


# ------------------------------------------------------------------------------------------ missing extras


def test_bench_ray_without_ray_says_what_to_install() -> None:
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    script = ("import runpy, sys\n"
              "sys.modules['ray'] = None  # as if Ray were not installed\n"
              "sys.argv = ['bench_ray.py', '--images', '4']\n"
              f"runpy.run_path({str(root / 'benchmarks' / 'bench_ray.py')!r}, run_name='__main__')\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=root)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == "error: bench_ray needs Ray: pip install 'mirage-bench[scale]' " \
                          "(or bash .ci/install-scale.sh)\n"


def mioh_results(tmp_path: Path, model: str) -> Path:
    """A results.json of ``python -m scoring mioh`` for a few MIOH items, as the front end writes it."""
    from builders.items import make_item
    from scoring.mioh import score
    from scoring.results import write_json_atomic

    items = [make_item(benchmark="mioh", task="existence", question_type="all", pressure=pressure,
                       images=[f"{k}.png", f"{k + 1}.png"], question=f"Which object is in every image? ({k})",
                       options=["cat", "dog", "None of the above"], answer="A")
             for k, pressure in enumerate(["easy", "easy", "hard_negative", "sycophantic"])]
    results = score(items, {it.id: "A" if k % 2 == 0 else "B" for k, it in enumerate(items)})
    results["meta"] = {"benchmark": "mioh", "model": model, "items": len(items)}
    return write_json_atomic(tmp_path / f"mioh-{model}" / "results.json", results)


def other_results(tmp_path: Path) -> Path:
    from scoring.results import write_json_atomic

    return write_json_atomic(tmp_path / "reefknot-m" / "results.json",
                             {"meta": {"benchmark": "reefknot", "model": "m"}, "by_task": {}})


def test_mioh_compare_skips_other_benchmarks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from scoring.mioh import main
    from tests.conftest import have, require

    require(have("matplotlib"), "matplotlib", "bash .ci/install-release.sh")
    paths = [mioh_results(tmp_path, "a"), other_results(tmp_path), mioh_results(tmp_path, "b")]
    assert main(["compare", *map(str, paths), "--out", str(tmp_path / "fig4.png")]) == 0
    out, err = capsys.readouterr()
    assert err == f"skipped {paths[1]}: a reefknot results.json, not MIOH\n"
    assert (tmp_path / "fig4.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["compare", str(paths[1]), "--out", str(tmp_path / "none.png")]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == "error: no MIOH results among the 1 file(s) given"
    assert not (tmp_path / "none.png").exists()


def test_mioh_compare_without_matplotlib_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    from scoring.mioh import main

    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    assert main(["compare", str(mioh_results(tmp_path, "a")), "--out", str(tmp_path / "fig4.png")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == "error: the plot needs matplotlib: pip install 'mirage-bench[release]' " \
                                "(or bash .ci/install-release.sh)\n"


# ------------------------------------------------------------------------------------------ JSON errors


def truncated_items(tmp_path: Path) -> Path:
    """An items.jsonl of three items whose download stopped inside the third."""
    from builders.items import make_item, write_items

    items = [make_item(benchmark="mioh", task="existence", question_type="all", pressure="easy",
                       images=[f"{k}.png"], question="Which object is in the image? " + "long " * 100,
                       options=["cat", "dog"], answer="A") for k in range(3)]
    path = tmp_path / "items.jsonl"
    write_items(path, items)
    data = path.read_bytes()
    path.write_bytes(data[:len(data) - 200])
    return path


@pytest.mark.parametrize("module, argv", [
    ("lint.cli", []),
    ("scoring.__main__", ["mioh", "--predictions", "p.jsonl", "--release"]),
])
def test_a_truncated_items_file_is_reported_at_its_line(tmp_path: Path, module: str, argv: list[str],
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = truncated_items(tmp_path)
    assert _main(module)([*argv, str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{path}: line 3: malformed JSON at column " in err, err
    assert "line 1" not in err and "is the file truncated?" in err


def test_json_errors_are_whole_sentences(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """json's "Unterminated string starting at" was printed with " at line N" after it: "starting at at"."""
    from data_cards.cli import main as data_cards
    from lint.cli import main as lint

    build = tmp_path / "build"
    build.mkdir()
    (build / "build.json").write_text('{"benchmark": "mioh", "name": "dem')
    pope = tmp_path / "coco_pope_random.json"
    pope.write_text('{"question_id": 1, "image": "a.jpg", "text": "Is there a cat in the image?", "label": "yes"}\n'
                    '{"question_id": 2, "image": "b.jpg", "text": "Is there a dog')
    assert data_cards(["release", str(build), "--version", "1.0.0", "--out", str(tmp_path / "r")]) == 2
    assert lint(["--format", "pope", str(pope)]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == f"error: {build / 'build.json'}: malformed JSON at line 1, column 31: a string starts here " \
                       "and is never closed (is the file truncated?)"
    assert lines[1].startswith(f"error: {pope}: line 2: malformed JSON at column ") and "at at" not in lines[1]
