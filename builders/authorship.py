"""Who wrote the texts a builder reads: the sidecar ``<file>.authors.json`` that ``annotation author pull`` writes.

The files people write (a Mementos ``description.txt``, MM-SAP's authored-questions JSONL, the predictive
builder's authored entries) keep their formats; their readers reject unknown fields, so the author of each record
lives beside the file instead: ``{"authors": {record key: author}}``, the author being the Label Studio user's
e-mail (or whatever pseudonymous name the server gives). A builder copies it into the item's ``provenance.author``
and ``annotation pull`` refuses that person's vote on the item: what a person wrote is validated by three others.

No sidecar (a file written by hand) means no recorded author: the builds stay exactly as before.
"""

from __future__ import annotations

import json
from pathlib import Path

from sources.errors import SourceError
from sources.video import DESCRIPTION_FILE

SUFFIX = ".authors.json"


def authors_sidecar(path: str | Path) -> Path:
    """The sidecar of ``path``: the same name with ``.authors.json`` appended."""
    return Path(str(path) + SUFFIX)


def question_key(image: str, question: str) -> str:
    """The record key of an MM-SAP authored question (the reader's own identity: image and question)."""
    return f"{image} | {' '.join(question.lower().split())}"


def read_authors(path: str | Path) -> dict[str, str]:
    """``{record key: author}`` from the sidecar of ``path``; ``{}`` when there is none."""
    side = authors_sidecar(path)
    if not side.is_file():
        return {}
    try:
        data = json.loads(side.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise SourceError(side, "", f"not a JSON authors file ({type(exc).__name__})") from None
    authors = data.get("authors") if isinstance(data, dict) else None
    if not isinstance(authors, dict) or not all(isinstance(k, str) and isinstance(v, str) and v.strip()
                                                for k, v in authors.items()):
        raise SourceError(side, "authors", "expected {\"authors\": {record key: author name}}")
    return {k: v.strip() for k, v in authors.items()}


def authors_json(authors: dict[str, str]) -> bytes:
    """The sidecar's bytes (canonical: sorted keys, so a re-pull writes the same file)."""
    return (json.dumps({"authors": dict(sorted(authors.items()))}, indent=2, ensure_ascii=False) + "\n").encode()


def description_file(sequence: str | Path) -> Path:
    """The description a person writes for a sequence: ``<folder>/description.txt`` beside a frame folder or comic,
    ``<video>.txt`` beside a video file (where ``sources.video.description_beside`` reads it)."""
    p = Path(sequence)
    return p / DESCRIPTION_FILE if p.is_dir() else p.with_suffix(".txt")


def description_author(sequence: str | Path) -> str | None:
    """Who wrote the description of ``sequence``, when its sidecar says so."""
    target = description_file(sequence)
    return read_authors(target).get(target.name)
