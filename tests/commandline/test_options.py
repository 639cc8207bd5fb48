"""Options declared once on dataclass fields (``commandline.options``): what argparse gets from a declaration."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import ClassVar

import pytest

from commandline.options import add_options, option, option_names


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
