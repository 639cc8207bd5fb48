"""What every builder's command line shares: config files, one-line errors, progress bars, summary tables.

``python -m builders.<bench>`` and the tests call the same ``main(argv)``; bad input ends in one line on stderr
and exit status 2 (never a traceback), progress goes to stderr, the summary table to stdout.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence, TypeVar

import yaml
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from sources.errors import ConfigError, MirageError

C = TypeVar("C")

stderr = Console(stderr=True)
stdout = Console(width=None if sys.stdout.isatty() else 120)
"""Summary tables; 120 columns when piped (rich would fall back to 80 and truncate the cells)."""


def exit_on_error(main: Callable[[Sequence[str] | None], int]) -> Callable[[Sequence[str] | None], int]:
    """Wrap a ``main`` so user errors print one line and return exit status 2."""

    def wrapped(argv: Sequence[str] | None = None) -> int:
        try:
            return main(argv)
        except MirageError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("interrupted: nothing half-written was left behind", file=sys.stderr)
            return 130

    wrapped.__doc__ = main.__doc__
    wrapped.__name__ = main.__name__
    return wrapped


def run_builder(
    config_type: type[C],
    parser: argparse.ArgumentParser,
    argv: Sequence[str] | None,
    write_build: Callable[[C], tuple[Path, Sequence[Any], Any]],
    print_summary: Callable[[Path, Sequence[Any], Any], None],
) -> int:
    """What every builder's ``main`` does: parse the config, write the build, print its summary."""
    config = parse_config(config_type, parser, argv)
    path, items, stats = write_build(config)
    print_summary(path, items, stats)
    return 0


def read_config_file(path: str | Path, config_type: type) -> dict[str, Any]:
    """The fields of a YAML config file, checked against the dataclass ``config_type``."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: malformed YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path}: a config file must hold a mapping of option names to values")
    known = {f.name for f in dataclasses.fields(config_type)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"{path}: unknown option(s) {', '.join(unknown)}; valid: {', '.join(sorted(known))}")
    return dict(data)


def explicit_options(parser: argparse.ArgumentParser, argv: Sequence[str]) -> set[str]:
    """Destinations of the options written on the command line (not those left at their defaults)."""
    given = set()
    for action in parser._actions:
        for flag in action.option_strings:
            if any(arg == flag or arg.startswith(flag + "=") for arg in argv):
                given.add(action.dest)
    return given


def parse_config(config_type: type[C], parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> C:
    """The dataclass defaults, then the ``--config`` file, then the options written on the command line."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    values: dict[str, Any] = {}
    if getattr(args, "config", None):
        values.update(read_config_file(args.config, config_type))
    names = {f.name for f in dataclasses.fields(config_type)}  # type: ignore[arg-type]
    given = explicit_options(parser, argv)
    values.update({k: v for k, v in vars(args).items() if k in names and k in given})
    try:
        return config_type(**values)
    except TypeError as exc:
        raise ConfigError(f"invalid configuration: {exc}") from None


@contextmanager
def progress_bar(enabled: bool = True) -> Iterator[Callable[[str, int], Callable[[int, int], None]]]:
    """Yield ``task(description, total) -> update(done, total)``; bars render on stderr."""
    if not enabled:
        yield lambda description, total: (lambda done, total: None)
        return
    bar = Progress(
        TextColumn("{task.description:<28}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        console=stderr, transient=False,
    )
    with bar:
        def task(description: str, total: int) -> Callable[[int, int], None]:
            tid = bar.add_task(description, total=total)
            return lambda done, total: bar.update(tid, completed=done, total=total)

        yield task


def table(title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> Table:
    out = Table(title=title, title_justify="left")
    for i, col in enumerate(columns):
        out.add_column(col, justify="left" if i == 0 else "right")
    for row in rows:
        out.add_row(*(str(v) for v in row))
    return out
