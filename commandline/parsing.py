"""What every command line's parser shares: one-line errors, ``--help`` at 80 columns, no abbreviations, and the
name a command goes by (``python -m builders.mioh``, or ``mirage build mioh`` when the ``mirage`` command runs it).

The bottom layer (beside :mod:`commandline.options`), so that every layer's commands use the one parser class.
"""

from __future__ import annotations

import argparse
import re
import shutil
import textwrap
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Iterator, NoReturn

HELP_WIDTH = 80
"""``--help`` is at most this wide (narrower on a narrower terminal)."""


class HelpFormatter(argparse.HelpFormatter):
    """``--help`` at most :data:`HELP_WIDTH` columns, option names never split at their hyphens.

    argparse wraps to the terminal's width and lets ``textwrap`` break after hyphens, which printed
    "(default --clip-" with "batch-size)" on the next line. Descriptions and epilogs are wrapped too, except
    paragraphs whose lines are all indented: those (command examples) are printed as written.
    """

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        if width is None:
            width = min(shutil.get_terminal_size().columns, HELP_WIDTH) - 2  # argparse's own margin
        super().__init__(prog, indent_increment, max_help_position, width)

    def _split_lines(self, text: str, width: int) -> list[str]:
        return _HelpWrapper(width).wrap(" ".join(text.split()))

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = [p for p in re.split(r"\n\s*\n", text.strip("\n")) if p.strip()]
        out = []
        for paragraph in paragraphs:
            lines = paragraph.splitlines()
            if all(line[:1].isspace() for line in lines):
                out.append("\n".join(indent + line for line in lines))
            else:
                wrapper = _HelpWrapper(width, initial_indent=indent, subsequent_indent=indent)
                out.append(wrapper.fill(" ".join(paragraph.split())))
        return "\n\n".join(out)


class _HelpWrapper(textwrap.TextWrapper):
    """Lines break at spaces and after the commas of a list written without spaces (``a,b,c``), never inside
    a word or after a hyphen, so ``--clip-batch-size`` stays whole."""

    wordsep_simple_re = re.compile(r"(\s+|(?<=,)(?=[^\s,]))")

    def __init__(self, width: int, **kwargs: Any) -> None:
        super().__init__(width, break_on_hyphens=False, break_long_words=False, **kwargs)


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose errors are one line: ``prog: error: message``, exit status 2, with
    :class:`HelpFormatter` and no abbreviated options.

    argparse prints the whole usage block before an error (40 lines for MIOH) and hides the one line that
    matters; an invalid choice names the valid ones in its message already. Subcommand parsers inherit it.

    Abbreviations (``--n-quest`` for ``--n-questions``) are refused: one that works today breaks as soon as
    another option starts the same way.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def count(text: str) -> int:
    """``type=`` of an option that takes a whole number of things, 0 or more (argparse's ``int`` takes -3)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid count: {text!r} (a whole number, 0 or more)") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative (a whole number, 0 or more)")
    return value


_INVOKED_AS: ContextVar[str | None] = ContextVar("invoked_as", default=None)


def prog(own: str) -> str:
    """The name ``--help``, usage and errors give a command: ``own`` (``python -m lint``), or the name the ``mirage``
    command ran it by (``mirage lint``, :func:`invoked_as`). The parser and handler are the same either way."""
    return _INVOKED_AS.get() or own


@contextmanager
def invoked_as(name: str) -> Iterator[None]:
    """Within the block, :func:`prog` answers ``name``: the ``mirage`` command runs a module's ``main`` in it."""
    token = _INVOKED_AS.set(name)
    try:
        yield
    finally:
        _INVOKED_AS.reset(token)
