"""Options declared once on dataclass fields (``commandline.options``): what argparse gets from a declaration."""

from __future__ import annotations

import argparse
import enum
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

import pytest

from commandline.options import add_command, add_options, config_of, option, option_names, run_command
from commandline.parsing import ArgumentParser


@dataclass
class Base:
    OPTION_HELP: ClassVar[dict[str, str]] = {"what": "things"}

    seed: int = option(0, metavar="N", help="seed of {what} (default {default})")
    verbose: bool = option(True, flag="--quiet", help="say less")


@dataclass
class Config(Base):
    NO_OPTIONS: ClassVar[tuple[str, ...]] = ("hidden",)

    tasks: list[str] = option(default_factory=lambda: ["a", "b"], choices=("a", "b", "c"), metavar="TASK",
                              help="tasks (default all); '{{braces}}' stay")
    share: float | None = option(None, metavar="X", help="a share (default none)")
    seed: int = 7
    hidden: int = option(1, metavar="N", help="not on this command line")
    plain: int = 3


def test_types_defaults_and_help_come_from_the_fields() -> None:
    parser = argparse.ArgumentParser()
    assert add_options(parser, Config) == ["tasks", "share", "seed", "verbose"]  # own first, hidden left out
    assert vars(parser.parse_args([])) == {"tasks": ["a", "b"], "share": None, "seed": 7, "verbose": True}
    args = parser.parse_args(["--tasks", "c", "a", "--share", "0.5", "--seed", "2", "--quiet"])
    assert (args.tasks, args.share, args.seed, args.verbose) == (["c", "a"], 0.5, 2, False)
    text = " ".join(parser.format_help().split())
    assert "seed of things (default 7)" in text and "'{braces}' stay" in text and "--hidden" not in text
    assert option_names(Config) == ["tasks", "share", "seed", "verbose"]


def test_a_suppressing_parser_holds_only_what_was_written() -> None:
    parser = argparse.ArgumentParser(argument_default=argparse.SUPPRESS)
    add_options(parser, Config)
    assert vars(parser.parse_args([])) == {}
    assert vars(parser.parse_args(["--quiet", "--seed=4"])) == {"verbose": False, "seed": 4}


def test_a_declaration_that_cannot_be_rendered_is_refused() -> None:
    @dataclass
    class Unfilled:
        seed: int = option(0, metavar="N", help="seed of {nothing}")

    with pytest.raises(ValueError, match="Unfilled.seed"):
        add_options(argparse.ArgumentParser(), Unfilled)

    @dataclass
    class NoFlag:
        on: bool = option(True, help="a switch on by default")

    with pytest.raises(ValueError, match="needs a flag"):
        add_options(argparse.ArgumentParser(), NoFlag)


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclass(kw_only=True)
class Typed:
    build_dir: Path = option(metavar="BUILD_DIR", positional=True, help="a build")
    project: str = option(metavar="NAME", help="required: no default")
    mode: Literal["fast", "exact"] = option("exact", help="how (default {default})")
    colour: Colour = option(Colour.RED, help="which colour (default {default})")
    root: Path | None = option(None, metavar="DIR", help="a folder (default none)")


def test_literal_enum_path_positional_and_required_fields() -> None:
    parser = ArgumentParser(prog="x")
    add_options(parser, Typed)
    config = config_of(Typed, parser.parse_args(["b", "--project", "p", "--mode", "fast", "--colour", "blue",
                                                 "--root", "r"]))
    assert config == Typed(build_dir=Path("b"), project="p", mode="fast", colour=Colour.BLUE, root=Path("r"))
    assert config_of(Typed, parser.parse_args(["b", "--project", "p"])).colour is Colour.RED
    text = " ".join(parser.format_help().split())
    assert "--mode {fast,exact}" in text and "--colour {red,blue}" in text and "(default red)" in text
    assert "BUILD_DIR a build" in text


@pytest.mark.parametrize("argv, expected", [
    (["b"], "the following arguments are required: --project"),
    (["b", "--project", "p", "--mode", "slow"], "invalid choice: 'slow' (choose from 'fast', 'exact')"),
    (["b", "--project", "p", "--colour", "green"], "invalid choice: 'green' (choose from 'red', 'blue')"),
])
def test_a_bad_value_of_a_typed_field_is_one_line_exit_2(argv: list[str], expected: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    parser = ArgumentParser(prog="x")
    add_options(parser, Typed)
    with pytest.raises(SystemExit) as info:
        parser.parse_args(argv)
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.count("\n") == 1 and expected in err, err


def test_a_subcommand_runs_its_handler_with_its_config() -> None:
    seen: list[object] = []
    parser = ArgumentParser(prog="x")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_command(sub, "go", Typed, lambda config: seen.append(config) or 3, help="go somewhere")
    assert run_command(parser, ["go", "b", "--project", "p"]) == 3
    assert seen == [Typed(build_dir=Path("b"), project="p")]
