"""What every builder's command line shares: config files, one-line errors, progress bars, summary tables.

``python -m builders.<bench>`` and the tests call the same ``main(argv)``; bad input ends in one line on stderr
and exit status 2 (never a traceback), progress goes to stderr, the summary table to stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence, TypeVar

import yaml
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from builders.lint import summary_rows
from builders.run import build_guard, empty_tasks
from builders.lint.report import BLIND_COLUMNS, BLIND_TITLE, blind_caption, blind_rows
from commandline.options import add_options, option_names
from commandline.parsing import ArgumentParser, HelpFormatter, count, prog  # noqa: F401 - re-exported
from sources.errors import ConfigError, MirageError

C = TypeVar("C")

stderr = Console(stderr=True)
stdout = Console(width=None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 80)
"""Summary tables: the terminal's width, ``$COLUMNS``, else 80 when stdout is not a terminal (rich alone would take
the width of whichever of stdin and stderr is a terminal, so ``> file`` or ``| less`` got wide lines). Tables fit
80 columns (see :func:`table`); long text cells use the room there is."""

def builder_parser(benchmark: str, description: str, config_type: type,
                   help_values: Mapping[str, str] | None = None) -> ArgumentParser:
    """The parser of ``python -m builders.<benchmark>``: ``--config``, then an option for every option field of
    ``config_type`` (:func:`commandline.options.add_options`; ``help_values`` fills in its help texts, e.g. the
    ``seed_of``, ``build_name`` and ``cache_of`` of :class:`builders.options.BuildOptions`).

    ``argument_default=SUPPRESS``: an option not written on the command line is not in the parsed namespace at
    all, so :func:`parse_config` lets the config file and the dataclass defaults speak for it."""
    parser = ArgumentParser(prog=prog(f"python -m builders.{benchmark}"), description=description,
                            argument_default=argparse.SUPPRESS)
    parser.add_argument("--config", metavar="FILE",
                        help="YAML file of options (field names with underscores); flags override it")
    add_options(parser, config_type, help_values=help_values)
    return parser


def paired_row(pairs: Mapping[str, Any]) -> str:
    """A summary's value for :func:`builders.pairs.paired_share`: how many items have their partner."""
    share = "-" if pairs["share"] is None else f"{pairs['share']:.1%}"
    return f"{pairs['paired']} of {pairs['items']} = {share} ({pairs['pairs']} pairs); {pairs['unpaired']} unpaired"


def print_reason_counts(title: str, counts: Mapping[str, int], console: Console | None = None,
                        what: str = "videos") -> None:
    """A table of how many ``what`` were left out for each reason (nothing when none were): the
    :data:`REASON_ROWS` most frequent, then one row for the rest (build.json lists every input and its reason)."""
    if not counts:
        return
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if len(rows) > REASON_ROWS:
        rest = rows[REASON_ROWS - 1:]
        rows = rows[:REASON_ROWS - 1] + [(f"{len(rest)} other reasons (build.json lists each)", sum(n for _, n in rest))]
    (console or stderr).print(table(title, ["why", what], rows))


REASON_ROWS = 15
"""At most this many rows in a table of skip reasons, so it stays on one screen."""


class EmptyBuildError(ConfigError):
    """A build that yielded no items. ``skipped`` (cells, tasks or videos with their reasons) is printed as a
    table by :func:`run_builder` before the one-line error, so the user sees why without a build.json."""

    def __init__(self, message: str, stats: Mapping[str, Any]) -> None:
        super().__init__(message)
        self.stats = stats


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
    print_skipped: Callable[[Any], None] | None = None,
) -> int:
    """What every builder's ``main`` does: parse the config, write the build, print its summary and its lint.

    A build that yields nothing prints what was skipped and why (``print_skipped(stats)``, on stderr) before
    its one-line error. The build's folder is locked, and a reviewed one refused, before any work
    (:func:`builders.run.build_guard`)."""
    config = parse_config(config_type, parser, argv)
    try:
        with build_guard(Path(config.out) / config.build_name(), config.replace):
            path, items, stats = write_build(config)
    except EmptyBuildError as exc:
        if print_skipped is not None:
            print_skipped(exc.stats)
        raise
    print_summary(path, items, stats)
    print_lint(path)
    return print_tasks(path, config.allow_empty_tasks)


def print_tasks(path: Path, allow_empty: bool) -> int:
    """The table of build.json's ``"tasks"`` (:func:`builders.run.record_tasks`: items and skips per task asked
    for) and the exit status: 1, with one line per task that made no items, unless ``allow_empty``."""
    try:
        build = json.loads((Path(path) / "build.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    tasks = build.get("tasks") or {}
    rows = [(task, entry["items"], sum(entry["skipped"].values()),
             max(entry["skipped"], key=entry["skipped"].get) if entry["skipped"] else "")
            for task, entry in tasks.items()]
    if rows:
        stdout.print(table("Tasks", ["task", "items", "skipped", "most frequent reason"], rows, numeric=False))
    empty = empty_tasks(build)
    for line in empty:
        if allow_empty:
            print(f"note: {line}", file=sys.stderr)
        else:
            print(f"error: {line} (the build is in {path}; --allow-empty-tasks accepts it)", file=sys.stderr)
    return 1 if empty and not allow_empty else 0


def print_lint(path: Path) -> None:
    """The lint's table (``build.json`` ``"lint"``, written by :func:`builders.run.open_build`): one row per
    check, 80 columns; task-level findings below it."""
    try:
        section = json.loads((Path(path) / "build.json").read_text(encoding="utf-8")).get("lint")
    except (OSError, ValueError):
        return
    if not section:
        return
    parts = [f"{section['flagged_items']} item(s) flagged"] if section["flagged_items"] else []
    parts += [f"{len(section['findings'])} task finding(s)"] if section["findings"] else []
    verdict = "clean" if section["clean"] else f"{', '.join(parts)}; python -m lint {path} lists them"
    if section.get("cache") == "reused":  # the same items, promises, lint code and libraries as an earlier build
        verdict += " (reused from cache)"
    stdout.print(table(f"Lint: {verdict}", ["check", "flagged", "finding"],
                       summary_rows(section), numeric=False))
    print_blind(section.get("blind"), every_cell=False)
    for finding in section["findings"]:
        if not finding.startswith("answerable blind:"):  # the table above shows those
            stdout.print(f"  task finding: {finding}", markup=False, highlight=False)
    for note in section.get("notes", []):
        stdout.print(f"  note: {note}", markup=False, highlight=False)


def print_blind(audit: Mapping[str, Any] | None, every_cell: bool) -> None:
    """The blind audit's table (:func:`builders.lint.report.blind_rows`): each task whole and its flagged cells,
    or (``every_cell``) every pressure and question type too."""
    if not audit:
        return
    if audit.get("off") or not audit["cells"]:
        reason = audit.get("off") or "no multiple-choice or yes/no items"
        stdout.print(f"{BLIND_TITLE} not audited: {reason}", markup=False, highlight=False)
        return
    flagged = len(audit["flagged"])
    title = f"{BLIND_TITLE} {flagged} of {len(audit['cells'])} cells flagged"
    stdout.print(table(title, BLIND_COLUMNS, blind_rows(audit, every_cell), legend=blind_caption(audit),
                       numeric=False))


def read_config_file(path: str | Path, config_type: type) -> dict[str, Any]:
    """The fields of a YAML config file, checked against the dataclass ``config_type``."""
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"{path}: --config takes a YAML file, not a directory")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read config file: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: config file is not UTF-8 text (byte {exc.start})") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: malformed YAML: {str(exc).splitlines()[0]}") from None
    if data is None:
        raise ConfigError(f"{path}: config file is empty; write option names and values, e.g. 'seed: 1'")
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path}: a config file must hold a mapping of option names to values")
    known = set(option_names(config_type))
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(f"{path}: unknown option(s) {', '.join(unknown)}; valid: {', '.join(sorted(known))}")
    return dict(data)


def parse_config(config_type: type[C], parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> C:
    """The dataclass defaults, then the ``--config`` file, then the options written on the command line (the
    namespace of a :func:`builder_parser` holds only those)."""
    given = vars(parser.parse_args(sys.argv[1:] if argv is None else list(argv)))
    values: dict[str, Any] = {}
    config_file = given.pop("config", None)
    if config_file:
        values.update(read_config_file(config_file, config_type))
    values.update(given)
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


def table(
    title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]], *, legend: str | None = None,
    show_header: bool = True, numeric: bool = True,
) -> Table:
    """A summary table that stays readable at 80 columns: the first column (the labels) keeps its width when
    it fits in half the terminal, the others wrap at spaces (a word longer than its column folds onto the next
    line; nothing is cut to "…"), ``legend`` explains abbreviated headers below it. Columns after the first are
    right-aligned numbers unless ``numeric`` is false. Cells are plain text: "pip install '.[lint]'" is not
    rich markup."""
    cells = [[str(v) for v in row] for row in rows]
    label_width = max((len(line) for row in cells if row for line in row[0].splitlines()), default=0)
    out = Table(title=title, title_justify="left", show_header=show_header, caption=legend, caption_justify="left")
    for i, col in enumerate(columns):
        keep = i == 0 and max(label_width, len(col)) <= _LABEL_KEEP
        out.add_column(col, justify="right" if i and numeric else "left", overflow="fold", no_wrap=keep)
    for row in cells:
        out.add_row(*(Text(v) for v in row))
    return out


_LABEL_KEEP = 40
"""Labels up to half an 80-column terminal are never wrapped (rich would shrink the widest column first);
longer ones wrap like the other cells, so nothing is cropped."""
