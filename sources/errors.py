"""Errors a user can act on.

Every error Mirage raises for bad input is a :class:`MirageError`. Its ``str`` is one line that names the
file, the record inside it and what is wrong, so a command-line entry point can print it and exit with status 2
instead of showing a traceback.
"""

from __future__ import annotations

from pathlib import Path


class MirageError(Exception):
    """Base class of all user-facing errors (bad input, bad configuration)."""


class SourceError(MirageError):
    """A source file is missing, malformed or inconsistent.

    ``file`` is the file being read, ``record`` locates the offending record inside it (for example
    ``"annotations[17] (id=42)"``; empty when the whole file is at fault) and ``problem`` says what is wrong.
    """

    def __init__(self, file: str | Path, record: str, problem: str) -> None:
        self.file = str(file)
        self.record = record
        self.problem = problem
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.file}: {self.record}" if self.record else self.file
        return f"{where}: {self.problem}"

    def __reduce__(self) -> tuple[type[SourceError], tuple[str, str, str]]:
        """Rebuilt from its three parts when unpickled (a forked worker hands its error to the caller)."""
        return (type(self), (self.file, self.record, self.problem))


class ConfigError(MirageError):
    """A configuration value or command-line option is invalid."""
