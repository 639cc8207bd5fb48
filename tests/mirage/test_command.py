"""The ``mirage`` command (issue 56): one entry to every job, running the very code of the ``python -m`` forms.

Each command's ``--help`` works and is named ``mirage ...``; ``mirage list`` names every benchmark; ``mirage build
mioh`` and ``python -m builders.mioh`` write the same bytes; an unknown command is one line and exit status 2; and
no command changes ``os.environ`` (the cache dir is passed, never exported)."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from mirage.cli import COMMANDS, benchmark_names, main

ROOT = Path(__file__).resolve().parents[2]
SUBCOMMANDS = {"review": ["serve", "restart-room", "push", "pull", "author"], "release": [None], "publish": [None],
               "synonyms": ["import-pickle", "build", "propose"], "harness": ["export", "circular"]}
"""The commands whose module has subcommands of its own (``None``: the command is one of them)."""


def every_help() -> list[list[str]]:
    argvs = [["list"], ["build"], ["import", "reefknot"]] + [["build", name] for name in benchmark_names()]
    for name in COMMANDS:
        argvs += [[name, *(s for s in [sub] if s)] for sub in SUBCOMMANDS.get(name, [None])]
    return argvs


def test_the_console_script_is_this_main() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    module, _, function = scripts["mirage"].partition(":")
    assert (module, function) == ("mirage.cli", "main")


@pytest.mark.parametrize("argv", every_help(), ids=" ".join)
def test_every_command_has_a_help_named_mirage(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([*argv, "--help"])
    out = capsys.readouterr().out
    assert info.value.code == 0
    assert out.startswith(f"usage: mirage {' '.join(argv)}"), out[:200]
    assert "--help" in out


def test_mirage_alone_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([])
    out = capsys.readouterr().out
    assert info.value.code == 0 and all(name in out for name in ["list", "build", *COMMANDS])


@pytest.mark.parametrize("argv, expected", [
    (["lnt"], "mirage: error: argument COMMAND: invalid choice: 'lnt'"),
    (["build", "miho"], "mirage build: error: argument NAME: invalid choice: 'miho'"),
    (["build", "mioh", "--n-images", "3"], "mirage build mioh: error: argument --n-images: invalid choice: 3"),
    (["review", "pull", "b"], "mirage review pull: error: the following arguments are required: --project"),
    (["release", "b"], "mirage release: error: the following arguments are required: --version"),
    (["import", "reefknot"], "mirage import reefknot: error: the following arguments are required: FILE"),
])
def test_a_bad_command_line_is_one_line_exit_2(argv: list[str], expected: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.count("\n") == 1 and err.startswith(expected), err


def test_each_published_format_has_one_import_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Reefknot's release is imported by its builder's importer (which adds the validity figures); the generic
    importer points there instead of writing a second, poorer build of it."""
    from builders.imports.cli import main as generic

    assert generic(["reefknot", str(tmp_path / "r.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "imported by mirage import reefknot" in err


def test_list_names_every_benchmark(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == benchmark_names()
    assert {"mioh", "mementos", "mmsap", "predictive", "reefknot"} <= set(benchmark_names())
    assert "imports" not in benchmark_names()
    assert all(len(line) <= 80 for line in lines)


def test_build_mioh_writes_the_bytes_python_m_builders_mioh_writes(tmp_path: Path) -> None:
    """The two spellings are one code path: the same items, byte for byte (and the same build.json but for the
    folder it names)."""
    small = ["--n-images", "2", "--n-questions", "2", "--tasks", "existence", "counting", "--no-clip",
             "--no-progress", "--cache-dir", str(tmp_path / "cache"), "--name", "b"]
    assert main(["build", "mioh", *small, "--out", str(tmp_path / "mirage")]) == 0
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "builders.mioh", *small, "--out", str(tmp_path / "python-m")],
                          cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    ours, theirs = tmp_path / "mirage" / "b", tmp_path / "python-m" / "b"
    assert (ours / "items.jsonl").read_bytes() == (theirs / "items.jsonl").read_bytes()
    assert (ours / "items.jsonl").stat().st_size > 0
    assert sorted(p.name for p in (ours / "images").iterdir()) == sorted(p.name for p in (theirs / "images").iterdir())


@pytest.mark.parametrize("argv", [
    ["score", "mioh", "--release", "{tmp}/no-release", "--predictions", "{tmp}/p.jsonl", "--cache-dir", "{tmp}/c"],
    ["health", "{tmp}/no-release", "--predictions", "{tmp}/a.jsonl", "{tmp}/b.jsonl", "--cache-dir", "{tmp}/c"],
    ["twin-gap", "{tmp}/no-release", "{tmp}/no-twin", "--predictions", "{tmp}/a.jsonl", "--twin-predictions",
     "{tmp}/b.jsonl", "--cache-dir", "{tmp}/c"],
    ["lint", "{tmp}/no-build", "--cache-dir", "{tmp}/c"],
    ["predict", "{tmp}/no-release", "--llm-model", "m", "--cache-dir", "{tmp}/c"],
])
def test_no_command_changes_the_environment(argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Three commands used to export --cache-dir as $MIRAGE_CACHE_DIR for the rest of the process (before they
    read the release, so even a failed run left it set)."""
    before = dict(os.environ)
    assert main([a.replace("{tmp}", str(tmp_path)) for a in argv]) == 2
    assert dict(os.environ) == before
    assert capsys.readouterr().err.count("\n") == 1
