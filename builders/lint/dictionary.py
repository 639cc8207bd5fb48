"""The word list behind the spelling check ("imange" for "image", the POPE generator's fault).

Offline, from two PyPI packages of the ``lint`` extra, so that spelling reads the same on every machine:

* the English word list that ``pyspellchecker`` ships (``resources/en.json.gz``, about 160,000 words with their
  inflections), read directly rather than through its ``SpellChecker`` class (which builds candidate tables lint
  does not need): these words are always known;
* ``wordfreq``'s large English frequency list (about 320,000 words seen in Wikipedia, subtitles, books, news and
  the web): the ordinary words a curated list lacks ("hoodie", "countertop", "selfie", "backsplash", "tvs"). A
  frequency list holds common misspellings too ("teh", "thier", "untill"), so a word found only there is known
  unless it is one edit (a letter dropped, added, changed or two swapped; in a word of three letters only a swap,
  :data:`SHORT`) from a word at least :data:`MISSPELLING_RATIO` times as frequent: "teh" beside "the", "recieve" beside "receive" are faults,
  "cafe" beside "care" is not. A word ending in "s" whose stem is known is its plural ("tvs", "dvds").

A word that splits into two words of the curated list ("playingfield": "playing field") and that neither list
holds as a word of its own is a joined compound, a fault even where the allow-list holds it
(:meth:`Lexicon.joined`).

Without either package the spelling rule is off and the wording summary says so in one line (never a false
flag from a partial list); every other rule still runs.

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

MISSPELLING_RATIO = 50.0
"""How many times more frequent a one-edit neighbour must be for a word found only in the frequency list to be
read as its misspelling (about 1.7 on wordfreq's Zipf scale: "seperate" is 100 times rarer than "separate",
"cafe" 30 times rarer than "care")."""
SHORT = 3
"""In a word this short only two letters swapped read as a typo ("teh", "adn"): a letter dropped or changed makes
another word too often ("atm" beside "at" and "arm") to mean one."""
JOINED_FREQUENCY = 10 ** (1.75 - 9)
"""How often (per word of text: 1.75 on wordfreq's Zipf scale, about once in 18 million words) a word that
splits into two curated words must occur to be a word of its own: "backsplash" (1.97) and "wineglass" (1.83)
are, "teddybear" (1.59) and "sportsball" (1.47) are two words run together."""
MIN_PART = 3
"""The shortest part of a joined compound ("playing" + "field"; "a" + "live" is no compound)."""
PACKAGES = ("pyspellchecker", "wordfreq")
INSTALL_HINT = "install the lint extra: pip install pyspellchecker wordfreq, or bash .ci/install-lint.sh"
EXTRA_WORDS = frozenset(
    """colour colours coloured grey centre centres metre metres millimetre millimetres centimetre centimetres
    favourite neighbour neighbours organisation organisations behaviour behaviours recognise realise labelled
    travelling analyse catalogue theatre programme dataset datasets
    """.split()
)

WORD_RE = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
_LETTERS = "abcdefghijklmnopqrstuvwxyz'"


class Lexicon(Container[str]):
    """Known words: every ``curated`` word, and a word of ``frequencies`` unless it reads as a misspelling of a
    far more frequent one (the verdict on each such word is kept: the spelling rule asks about few)."""

    def __init__(self, curated: frozenset[str], frequencies: Mapping[str, float] | None = None) -> None:
        self.curated = curated
        self.frequencies: Mapping[str, float] = frequencies or {}
        self._verdicts: dict[str, bool] = {}

    def __contains__(self, word: object) -> bool:
        if word in self.curated:
            return True
        if not isinstance(word, str) or word not in self.frequencies:
            return False
        verdict = self._verdicts.get(word)
        if verdict is None:
            verdict = self._verdicts[word] = self._plural_of_known(word) or not self._misspelling(word)
        return verdict

    def __len__(self) -> int:
        return len(self.curated | self.frequencies.keys())

    def _plural_of_known(self, word: str) -> bool:
        stems = (word[:-1], word[:-2]) if word.endswith("es") else (word[:-1],) if word.endswith("s") else ()
        return any(len(stem) > 1 and (stem in self.curated or stem in self.frequencies) for stem in stems)

    def _misspelling(self, word: str) -> bool:
        floor = self.frequencies[word] * MISSPELLING_RATIO
        edits = _swaps(word) if len(word) <= SHORT else _one_edit(word)
        return any(self.frequencies.get(e, 0.0) >= floor for e in edits if e != word)

    def joined(self, word: str) -> tuple[str, str] | None:
        """The two curated words ``word`` is made of ("playingfield": ``("playing", "field")``), or ``None``: a
        curated word, or one the frequency list knows at least :data:`JOINED_FREQUENCY` often, is a word of
        its own ("countertop", "backsplash"); "teddybear" and "sportsball", which the web writes now and then,
        are not."""
        if word in self.curated or (self.frequencies.get(word, 0.0) >= JOINED_FREQUENCY and word in self):
            return None
        for cut in range(MIN_PART, len(word) - MIN_PART + 1):
            left, right = word[:cut], word[cut:]
            if left in self.curated and right in self.curated:
                return left, right
        return None


def _swaps(word: str) -> Iterator[str]:
    """Every string with two neighbouring letters of ``word`` swapped."""
    return (word[:i] + word[i + 1] + word[i] + word[i + 2:] for i in range(len(word) - 1))


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


@lru_cache(maxsize=1)
def load_dictionary() -> Lexicon | None:
    """The known words, or ``None`` when either package of the ``lint`` extra is missing (read once per
    process; :func:`dictionary_status` says which)."""
    try:
        from importlib.resources import files

        import wordfreq

        resource = files("spellchecker") / "resources" / "en.json.gz"
        with resource.open("rb") as fh:
            curated = frozenset(w.lower() for w in json.loads(gzip.decompress(fh.read())))
        frequencies = wordfreq.get_frequency_dict("en", wordlist="large")
    except (ImportError, ModuleNotFoundError, FileNotFoundError, OSError):
        return None
    return Lexicon(curated | EXTRA_WORDS, frequencies)


def dictionary_status(dictionary: Lexicon | Container[str] | None) -> str:
    """One line for the wording summary: the size of the word list, or that it is off and how to install it."""
    if dictionary is None:
        return f"off ({INSTALL_HINT})"
    if isinstance(dictionary, Lexicon):
        return f"{len(dictionary.curated):,} curated + {len(dictionary.frequencies):,} frequency-list words"
    return f"{len(dictionary)} words"  # type: ignore[arg-type]


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
