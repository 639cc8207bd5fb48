"""What a benchmark gives ``annotation author``: the hooks of one authoring flow, declared beside its builder.

Some references cannot be derived: Mementos' robot and comic sequences need a description written by a person,
MM-SAP's KnowVisQA questions and the predictive benchmark's hand-made entries are written by people. Each is
one :class:`AuthoringHook` in its benchmark's package (``builders/<name>/authoring.py``, named in the spec's
``authoring``), and ``annotation author`` runs every hook through one flow (:mod:`annotation.author`):

- **push**: the hook lists the :class:`Subject` s to write about (what the builder's own readers find: a sequence
  without a description, an image, a folder of images), each shown as its images in order with a title, under
  the hook's :class:`Form` (text boxes and choices);
- **pull**: the flow hands the hook each task's latest submitted :class:`Answer` (the texts and choices by field,
  and who wrote them); the hook validates them with the builder's own reader and says what to write
  (:class:`Output`: a file, its bytes, who wrote each record). The flow writes the files and their authors'
  sidecars (:mod:`builders.authorship`), so the builder copies the author into each item's provenance and the
  review does not count the author's vote on it.

The hooks know nothing of Label Studio; the flow knows nothing of any benchmark.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Mapping, Sequence

from sources.errors import ConfigError, SourceError

Inputs = Mapping[str, Any]
"""The options ``annotation author`` was given, by name (``images``, ``out``, ``cache_dir``, ...): each hook reads
those it needs and names a missing one (:meth:`AuthoringHook.need`)."""


@dataclass(frozen=True)
class Field:
    """One thing a person writes or picks: a text box (``rows`` lines) or one choice among ``choices``."""

    name: str
    label: str
    kind: Literal["text", "choice"] = "text"
    rows: int = 1
    required: bool = True
    choices: tuple[str, ...] = ()
    placeholder: str = ""
    required_message: str = ""


@dataclass(frozen=True)
class Form:
    """The authoring screen below the images: a guide (plain text) and the fields, in order."""

    guide: str
    fields: tuple[Field, ...]


@dataclass(frozen=True)
class Subject:
    """One thing to write about: its key (the task's identity; pushing again adds only new keys), the images
    shown in order with their titles, the header above them, and task data the hook reads back at pull."""

    key: str
    images: tuple[Path, ...]
    titles: tuple[str, ...]
    header: str
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Answer:
    """A task's latest submitted annotation: its key and task data, the values by field name, and its author."""

    key: str
    task: int
    data: Mapping[str, Any]
    values: Mapping[str, list[str]]
    author: str

    def text(self, name: str) -> str:
        """The text of field ``name``, whitespace collapsed (``""`` when not written)."""
        return " ".join(" ".join(str(v) for v in self.values.get(name, [])).split())

    def choice(self, name: str) -> str:
        """The choice picked in field ``name`` (``""`` when none)."""
        return str((self.values.get(name) or [""])[0])

    def problem(self, what: str) -> str:
        """One line saying why this answer is not used: key, task, author and the problem."""
        return f"{self.key} (task {self.task}, by {self.author}): {what}; left out"


@dataclass(frozen=True)
class Output:
    """A file to write: its bytes, the sidecar's ``{record key: author}``, and what the report lists for it.
    ``keep_existing``: a file that exists is never replaced (a description beside a sequence); the same text is
    reported unchanged, another text as a problem."""

    path: Path
    body: bytes
    authors: Mapping[str, str]
    written: tuple[str, ...]
    keep_existing: bool = False


class AuthoringHook:
    """One authoring flow of a benchmark. Subclasses set the class attributes and implement the three methods."""

    kind: str = ""
    """Its name in ``annotation author --kind``; unique over all benchmarks."""
    benchmark: str = ""
    summary: str = ""
    """One line for ``--help``: what people write, for which builder option."""
    noun: str = "entr(y/ies)"
    """What pull counts in its summary line."""

    def form(self, inputs: Inputs) -> Form:
        raise NotImplementedError

    def subjects(self, inputs: Inputs) -> list[Subject]:
        """What to write about (only what is not written yet); a ``ConfigError`` when an input is missing."""
        raise NotImplementedError

    def outputs(self, answers: Sequence[Answer], inputs: Inputs) -> tuple[list[Output], list[str]]:
        """The files to write from the submitted answers, and one line per answer left out."""
        raise NotImplementedError

    def need(self, inputs: Inputs, name: str, what: str) -> Any:
        """``inputs[name]``, or a one-line error naming the option and what it must be."""
        value = inputs.get(name)
        if value is None:
            raise ConfigError(f"author {self.kind} needs --{name.replace('_', '-')} {what}")
        return value


def jsonl(records: Sequence[Mapping[str, Any]]) -> bytes:
    """Records as the JSONL the builders read: one sorted-key object per line, UTF-8."""
    return "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records).encode()


def image_files(folder: Path) -> list[Path]:
    """The images directly in ``folder`` (PNG, JPEG, WebP), sorted by name."""
    return sorted(p for p in Path(folder).iterdir() if p.suffix.lower() in (".png", ".jpg", ".jpeg", ".webp"))


def reader_problem(record: Mapping[str, Any], read: Any, folder: Path | None = None) -> str | None:
    """Why the builder's own reader ``read(path)`` rejects ``record`` (written alone as a JSONL file in
    ``folder``, where its relative paths resolve), or ``None``: the reader is the validator."""
    with tempfile.NamedTemporaryFile("wb", suffix=".jsonl", dir=folder, delete=False) as fh:
        fh.write(jsonl([record]))
    try:
        read(Path(fh.name))
    except SourceError as exc:
        return exc.problem
    finally:
        os.unlink(fh.name)
    return None
