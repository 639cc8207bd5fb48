"""``mirage COMMAND ...``: every job of Mirage under one command (the ``mirage`` console script).

Each command is the module that owns the job, run as it is: ``mirage build mioh --n-images 8`` calls the very
``main`` that ``python -m builders.mioh --n-images 8`` calls, with the same parser and handler, so the two cannot
drift; only the name ``--help`` and errors show differs (:func:`commandline.parsing.invoked_as`). Modules are
imported when their command runs, so ``mirage --help`` and ``mirage list`` stay quick (no torch, no pandas).
"""

from __future__ import annotations

import importlib
import sys
from dataclasses import dataclass
from typing import Callable, Sequence

from builders.registry import load, spec, specs
from commandline.parsing import ArgumentParser, invoked_as


@dataclass(frozen=True)
class Command:
    """A job of the ``mirage`` command: the module whose function runs it, and how it is named there."""

    summary: str
    module: str
    function: str = "main"
    """``run`` for the commands ``python -m scoring`` dispatches to (``health``, ``twin``)."""
    subcommand: str | None = None
    """The module's own subcommand that is this job (``data_cards release``): ``mirage release
    ...`` runs the module with it prepended, and its ``--help`` reads ``mirage release``; ``None``: the command is
    the whole module (``mirage review`` is ``python -m annotation``)."""

    def run(self, name: str, argv: Sequence[str]) -> int:
        from builders.cli import exit_on_error  # one-line errors for the scoring commands' ``run`` too

        entry: Callable[[Sequence[str]], int] = exit_on_error(getattr(importlib.import_module(self.module),
                                                                      self.function))
        if self.subcommand is None:
            with invoked_as(f"mirage {name}"):
                return entry(list(argv))
        with invoked_as("mirage"):
            return entry([self.subcommand, *argv])


COMMANDS: dict[str, Command] = {
    "import": Command("a published benchmark's files as a build (pope, mementos-csv, reefknot)",
                      "builders.imports.cli"),
    "twin": Command("a twin of a build: its config from a derived seed", "builders.twin"),
    "lint": Command("lint builds, releases or published files", "lint.cli"),
    "review": Command("three-reviewer validation in Label Studio (serve, push, pull, author, restart-room)",
                      "annotation.cli"),
    "release": Command("a reviewed build as a versioned dataset", "data_cards.cli", subcommand="release"),
    "publish": Command("a release to the Hugging Face Hub as one commit and tag", "data_cards.cli",
                       subcommand="publish"),
    "predict": Command("a vision model answers every item of a release", "scoring.run"),
    "score": Command("score one model's predictions on a benchmark", "scoring.__main__"),
    "health": Command("item health over several models' predictions", "scoring.health_report", "run"),
    "twin-gap": Command("models' accuracy on a release against its twin", "scoring.twins", "run"),
    "compare": Command("MIOH's accuracy-robustness plot over several results", "scoring.mioh",
                       subcommand="compare"),
    "synonyms": Command("Mementos synonym graphs (import-pickle, build, propose)", "scoring.synonyms"),
    "harness": Command("lmms-eval and VLMEvalKit exports; CircularEval of a result sheet", "scoring.harness.cli"),
}
"""Every command but ``list`` and ``build`` (which :func:`main` answers itself), in ``--help`` order."""


def benchmark_names() -> list[str]:
    """The benchmarks ``mirage build`` builds: those whose spec (:mod:`builders.registry`) has a command line."""
    return [spec.name for spec in specs() if spec.cli]


def summary_of(benchmark: str) -> str:
    """What ``mirage list`` says of a benchmark: its name as its paper writes it and the paper's venue (the title
    is on its data card)."""
    found = spec(benchmark)
    return f"{found.pretty}, {found.paper.venue}"


def parser() -> ArgumentParser:
    """The ``mirage`` parser: it names the commands for ``--help`` and refuses an unknown one in one line; each
    command's own options are its module's (``mirage COMMAND --help``)."""
    p = ArgumentParser(prog="mirage", description="Build benchmarks that catch multimodal LLMs hallucinating, "
                       "review them, release them and score models on them. Each command has its own --help.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND", required=True)
    sub.add_parser("list", help="the benchmarks this Mirage builds", add_help=False)
    sub.add_parser("build", help=f"build a benchmark ({', '.join(benchmark_names())})", add_help=False)
    for name, command in COMMANDS.items():
        sub.add_parser(name, help=command.summary, add_help=False)
    return p


def list_parser() -> ArgumentParser:
    return ArgumentParser(prog="mirage list", description="The benchmarks this Mirage builds (builders/registry.py), "
                          "one a line with its paper's venue; `mirage build NAME --help` gives a builder's options.")


def build_parser() -> ArgumentParser:
    p = ArgumentParser(prog="mirage build", description="Build a benchmark: `mirage build NAME [OPTIONS]` runs "
                       "what `python -m builders.NAME [OPTIONS]` runs; `mirage build NAME --help` lists its options.")
    p.add_argument("benchmark", choices=benchmark_names(), metavar="NAME",
                   help=f"the benchmark to build ({', '.join(benchmark_names())})")
    return p


def list_benchmarks(argv: Sequence[str]) -> int:
    list_parser().parse_args(argv)
    for name in benchmark_names():
        print(f"{name:<12} {summary_of(name)}")
    return 0


def build(argv: Sequence[str]) -> int:
    if not argv or argv[0].startswith("-"):
        build_parser().parse_args(argv[:1] or ["--help"])
    build_parser().parse_args(argv[:1])  # an unknown benchmark: one line, exit status 2
    with invoked_as(f"mirage build {argv[0]}"):
        return load(spec(argv[0]).cli)(list(argv[1:]))


def import_published(argv: Sequence[str]) -> int:
    """``mirage import FORMAT ...``: ``python -m builders.imports``, or for a format a benchmark imports itself
    (:func:`builders.imports.importer_of`: Reefknot's release) that benchmark's importer, so each format has one
    command."""
    from builders.imports import formats, importer_of

    if argv and argv[0] in formats() and importer_of(argv[0]):
        with invoked_as(f"mirage import {argv[0]}"):
            return importlib.import_module(importer_of(argv[0])).main(list(argv[1:]))
    return COMMANDS["import"].run("import", argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mirage`` console script (and of ``python -m mirage``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0].startswith("-"):
        parser().parse_args(argv[:1] or ["--help"])
    name, rest = argv[0], argv[1:]
    if name == "list":
        return list_benchmarks(rest)
    if name == "build":
        return build(rest)
    if name == "import":
        return import_published(rest)
    if name not in COMMANDS:
        parser().parse_args([name])  # one line naming the commands, exit status 2
    return COMMANDS[name].run(name, rest)
