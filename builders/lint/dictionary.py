"""The word list behind the spelling check ("imange" for "image", the POPE generator's fault).

Offline and small: the English frequency list that PyPI's ``pyspellchecker`` ships (``resources/en.json.gz``,
about 160,000 words with their inflections; the ``lint`` extra), read directly rather than through its
``SpellChecker`` class (which builds candidate tables lint does not need). Debian's ``wamerican``
(``/usr/share/dict/words``) is merged in when present. Without either, the spelling rule is skipped and the
summary says so; every other rule still runs.

The allow-list covers words a dictionary lacks but a benchmark legitimately uses: British spellings and the
shape names of the demo world (:data:`EXTRA_WORDS`), the items' own category names (their options and the short
label-like strings of their provenance, :func:`allow_list`) and a user's file (``--allow-words FILE``).
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Container, Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from builders.items import Item

SYSTEM_WORDS = Path("/usr/share/dict/words")
EXTRA_WORDS = frozenset(
    """colour colours coloured grey centre centres metre metres millimetre millimetres centimetre centimetres
    favourite neighbour neighbours organisation organisations behaviour behaviours recognise realise labelled
    travelling analyse catalogue theatre programme dataset datasets
    """.split()
)

WORD_RE = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")


@lru_cache(maxsize=1)
def load_dictionary() -> frozenset[str] | None:
    """Lower-case known words, or ``None`` when no word list is installed (read once per process)."""
    words: set[str] = set()
    try:
        from importlib.resources import files

        resource = files("spellchecker") / "resources" / "en.json.gz"
        with resource.open("rb") as fh:
            words.update(json.loads(gzip.decompress(fh.read())))
    except (ImportError, ModuleNotFoundError, FileNotFoundError, OSError):
        pass
    if SYSTEM_WORDS.is_file():
        words.update(w.strip().lower() for w in SYSTEM_WORDS.read_text(encoding="utf-8", errors="ignore").split())
    if not words:
        return None
    return frozenset(w.lower() for w in words) | EXTRA_WORDS


def _label_strings(value: Any, out: set[str]) -> None:
    """Short strings (a category name, a relation, a colour) anywhere in a provenance value, four levels deep at
    most and the first 50 entries of a list (walked without recursion: a paper-scale build has a million)."""
    if isinstance(value, str):
        _add_label(value, out)
        return
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        value, depth = stack.pop()
        children: Iterable[Any] = value.values() if isinstance(value, (dict, Mapping)) else value[:50]
        for child in children:  # strings are the most common children: asked first, a known one in one lookup
            if isinstance(child, str):
                if child not in out:
                    _add_label(child, out)
            elif depth < 3 and isinstance(child, _CONTAINERS):
                stack.append((child, depth + 1))


_CONTAINERS = (dict, list, tuple, Mapping)
"""What :func:`_label_strings` walks into; ``dict`` first: ``isinstance`` against an abstract class is slow."""


def _add_label(value: str, out: set[str]) -> None:
    if len(value) <= 40 and len(value.split()) <= 4 and not value.endswith(("?", ".")):
        out.add(value)


def allow_list(items: Iterable[Item], extra: Iterable[str] = ()) -> frozenset[str]:
    """Words of the items' own category names: their options and the short strings of their provenance, so a
    dataset's category ("hairdrier", "pickup truck") is never a spelling fault of the question that names it."""
    strings: set[str] = set(extra)
    for it in items:
        _label_strings(list(it.options), strings)  # short options only: a sentence option is not a name
        _label_strings(it.provenance, strings)
    return frozenset(w.lower() for s in strings for w in WORD_RE.findall(s))


class LazyAllowList(Container[str]):
    """:func:`allow_list` of ``items`` and ``extra``, made the first time a word is asked about.

    Why: the spelling rule asks the allow-list only about words the dictionary lacks, and a build whose words are
    all known never asks; walking the provenance of a paper-scale build's 20,000 items took 0.4 s, on the path
    of the lint's slowest check."""

    def __init__(self, items: Sequence[Item], extra: Iterable[str] = ()) -> None:
        self._items: Sequence[Item] | None = items
        self._extra = tuple(extra)
        self._words: frozenset[str] | None = None

    @property
    def words(self) -> frozenset[str]:
        """The allowed words, made now if no word was asked about yet."""
        if self._words is None:
            self._words = allow_list(self._items or (), self._extra)
            self._items = None  # the items are not held past the walk
        return self._words

    def __contains__(self, word: object) -> bool:
        return word in self.words


def read_allow_file(path: str | Path) -> list[str]:
    """One word or phrase a line; ``#`` starts a comment."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [line.split("#", 1)[0].strip() for line in lines if line.split("#", 1)[0].strip()]
