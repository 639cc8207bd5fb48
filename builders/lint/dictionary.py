"""The word list behind the spelling check ("imange" for "image", the POPE generator's fault).

Offline, from three sources, all optional:

* the English frequency list that PyPI's ``pyspellchecker`` ships (``resources/en.json.gz``, about 160,000 words
  with their inflections; the ``lint`` extra), read directly rather than through its ``SpellChecker`` class
  (which builds candidate tables lint does not need);
* SCOWL, the word lists behind most English spell checkers, as Debian's ``scowl`` package installs them
  (``/usr/share/dict/scowl/``, ``.ci/install-lint.sh``): every spelling (American, British, Canadian,
  Australian), words, abbreviations and contractions, up to size 80, the largest SCOWL recommends for spell
  checking. pyspellchecker alone lacks ordinary words that benchmark text uses ("cds", "atm", "hoodie",
  "countertop": Reefknot's references); SCOWL 80 has them;
* SCOWL's size 95 (rare and obscure words) under a guard: a rare word is known unless it is one edit (a letter
  dropped, added, changed or two swapped) from a common word, because size 95 also lists common misspellings
  ("teh", "thier", "untill"): "bruschetta" passes, "teh" does not (:class:`Lexicon`);
* Debian's ``wamerican`` (``/usr/share/dict/words``), merged in when present.

Without any of them the spelling rule is skipped and the summary says so; every other rule still runs.

The allow-list covers words a dictionary lacks but a benchmark legitimately uses: British spellings and the
shape names of the demo world (:data:`EXTRA_WORDS`), the items' own category names (their options and the short
label-like strings of their provenance, :func:`allow_list`) and a user's file (``--allow-words FILE``).
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from builders.items import Item

SYSTEM_WORDS = Path("/usr/share/dict/words")
SCOWL_DIR = Path("/usr/share/dict/scowl")
SCOWL_COMMON = 80
"""The largest SCOWL size recommended for spell checking; larger sizes are read as rare words."""
SCOWL_SPELLINGS = frozenset({"english", "american", "british", "british_z", "canadian", "australian", "variant_1"})
"""SCOWL categories read: every spelling of English and the common variants (``variant_1``: "catalog" beside
"catalogue"); less common variants (2, 3) and proper names are left out."""
SCOWL_KINDS = frozenset({"words", "abbreviations", "contractions"})
EXTRA_WORDS = frozenset(
    """colour colours coloured grey centre centres metre metres millimetre millimetres centimetre centimetres
    favourite neighbour neighbours organisation organisations behaviour behaviours recognise realise labelled
    travelling analyse catalogue theatre programme dataset datasets
    """.split()
)

WORD_RE = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
_LETTERS = "abcdefghijklmnopqrstuvwxyz'"


class Lexicon(Container[str]):
    """Known words: every ``common`` word, and a ``rare`` word unless it is one edit from a common word (the
    verdict on each rare word is kept: the spelling rule asks about few)."""

    def __init__(self, common: frozenset[str], rare: frozenset[str] = frozenset()) -> None:
        self.common = common
        self.rare = rare - common
        self._verdicts: dict[str, bool] = {}

    def __contains__(self, word: object) -> bool:
        if word in self.common:
            return True
        if not isinstance(word, str) or word not in self.rare:
            return False
        verdict = self._verdicts.get(word)
        if verdict is None:
            verdict = self._verdicts[word] = not any(e in self.common for e in _one_edit(word))
        return verdict

    def __len__(self) -> int:
        return len(self.common) + len(self.rare)


def _one_edit(word: str) -> Iterator[str]:
    """Every string one edit from ``word``: a letter dropped, two neighbours swapped, a letter changed or added."""
    splits = [(word[:i], word[i:]) for i in range(len(word) + 1)]
    for left, right in splits:
        if right:
            yield left + right[1:]
            if len(right) > 1:
                yield left + right[1] + right[0] + right[2:]
            for c in _LETTERS:
                yield left + c + right[1:]
        for c in _LETTERS:
            yield left + c + right


def _scowl(low: int, high: int, directory: Path = SCOWL_DIR) -> set[str]:
    """Lower-case words of the SCOWL lists of sizes ``low < size <= high`` (:data:`SCOWL_SPELLINGS`,
    :data:`SCOWL_KINDS`); empty when SCOWL is not installed."""
    words: set[str] = set()
    if not directory.is_dir():
        return words
    for path in sorted(directory.iterdir()):
        name, _, size = path.name.rpartition(".")
        category, _, kind = name.rpartition("-")
        spelling = category.removesuffix("_variant_1")
        if not size.isdigit() or not low < int(size) <= high or kind not in SCOWL_KINDS:
            continue
        if spelling in SCOWL_SPELLINGS and (category == spelling or category.endswith("_variant_1")):
            words.update(w.lower() for w in path.read_text(encoding="utf-8", errors="ignore").split())
    return words


@lru_cache(maxsize=1)
def load_dictionary() -> Lexicon | None:
    """The known words, or ``None`` when no word list is installed (read once per process)."""
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
    words.update(_scowl(0, SCOWL_COMMON))
    if not words:
        return None
    common = frozenset(w.lower() for w in words) | EXTRA_WORDS
    return Lexicon(common, frozenset(_scowl(SCOWL_COMMON, 100)))


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
