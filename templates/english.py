"""English for templated wording: "a" or "an" by sound, plural forms and counted nouns.

A template that writes ``a {colour}`` or ``'{object}'(s)`` reads wrong for some fillers ("a orange", "How many
'pentagon'(s)"); the fillers come from datasets and the demo world, so the wording must be chosen per word. The
rules are those of the ``inflect`` library (plural forms, and the article by the sound of the next word: "an
hour", "a unicorn", "a one-way", "an MRI"), with three additions:

* a word that starts with a digit is read as its number ("an 8-ball", "an 11", "a 9");
* a category named in the plural because one instance is a pair or a set ("skis", "scissors", "stairs":
  COCO and LVIS names) is counted by its unit: "a pair of skis", "3 pairs of skis", "a flight of stairs"
  (POPE asks "Is there a skis / a scissors / a stairs" 214 times);
* both articles are accepted where English usage divides (:data:`EITHER_ARTICLE`: "a herb" / "an herb"), and
  before an acronym that may be read as a word or spelled out ("a SUV" / "an SUV").

The lint's wording check (:mod:`builders.lint.wording`) judges published text with the same functions, so what
the builders write and what the lint accepts cannot drift apart.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

PLURAL_ONLY: dict[str, str] = {
    **dict.fromkeys(
        """scissors shears clippers pliers tongs tweezers pincers trousers pants jeans shorts leggings tights
        overalls pajamas pyjamas knickers briefs boxers glasses spectacles eyeglasses sunglasses goggles binoculars
        headphones earphones earbuds skis""".split(), "pair"),
    "stairs": "flight",
}
"""Nouns used only in the plural for one thing (pluralia tantum, and dataset categories named by their pair:
COCO's "skis"), with the unit that counts them: "a pair of scissors", never "a scissors"."""

EITHER_ARTICLE = frozenset({"herb", "herbs", "herbal", "historic", "historical", "hotel", "hotels"})
"""Words before which "a" and "an" are both in use (American "an herb", British "a herb"; "an historic")."""

_VOWEL_LETTER_NAMES = frozenset("AEFHILMNORSX")
"""Letters whose names start with a vowel sound ("ef", "aitch", "em", "ess", ...): "an" before them, spelled."""
_NUMBER_START = re.compile(r"^(\d+)")
_QUALIFIER = re.compile(r"^(.*?\S)(\s*\([^()]*\))$")
"""A trailing qualifier in brackets (LVIS ``mouse_(computer_equipment)``): the noun before it is inflected."""
_PHRASE_ENDS = frozenset("""that which who whose and or of in on at by to from with without near next above below
    under over behind beside between left right inside outside""".split())
"""Words after which a noun phrase's head has passed (a preposition, a relative pronoun, a conjunction)."""
_WORD = re.compile(r"[A-Za-z0-9][\w'-]*")


@lru_cache(maxsize=1)
def _engine() -> Any:
    import inflect

    return inflect.engine()


def _spoken(word: str) -> str:
    """``word`` as it is said where that decides the article: a leading number spelled out ("8-ball" ->
    "eight-ball"), the rest as written."""
    m = _NUMBER_START.match(word)
    if not m:
        return word
    return _engine().number_to_words(m.group(1), andword="") + word[m.end():]


@lru_cache(maxsize=1 << 14)
def article(phrase: str) -> str:
    """``"a"`` or ``"an"`` for the noun phrase ``phrase``, by the sound of its first word."""
    m = _WORD.search(phrase)
    if not m:
        return "a"
    return _engine().a(_spoken(m.group(0))).split(" ", 1)[0]


def accepts(art: str, word: str) -> bool:
    """Whether the article ``art`` ("a" / "an", any case) may stand before ``word``."""
    if word.lower() in EITHER_ARTICLE:
        return True
    if art.lower() == article(word):
        return True
    # an acronym may be spelled out ("an SUV": "ess") where inflect reads it as a word ("a SUV")
    return len(word) > 1 and word.isalpha() and word.isupper() and art.lower() == (
        "an" if word[0] in _VOWEL_LETTER_NAMES else "a")


def unit(noun: str) -> str | None:
    """The unit counting a plural-only noun (``"pair"`` for "skis"), or ``None`` for a countable noun. The head
    noun decides: the last word before a preposition or a relative clause ("ski poles" is countable, "snow
    pants" is not, nor is "dog next to the skis")."""
    qualified = _QUALIFIER.match(noun)
    words = []
    for word in (qualified.group(1) if qualified else noun).split():
        if word.lower() in _PHRASE_ENDS:
            break
        words.append(word)
    return PLURAL_ONLY.get(words[-1].lower()) if words else None


def one(phrase: str) -> str:
    """The noun phrase for one thing: itself, or a plural-only noun with its unit (``"pair of skis"``), for
    "at least one {}", "there is no {}"."""
    counted = unit(phrase)
    return f"{counted} of {phrase}" if counted else phrase


def with_article(phrase: str) -> str:
    """``"a dog"``, ``"an orange"``, ``"an hour"``, ``"a pair of skis"``: the indefinite article English puts
    before a noun phrase."""
    phrase = one(phrase)
    return f"{article(phrase)} {phrase}"


@lru_cache(maxsize=1 << 14)
def plural(noun: str) -> str:
    """The plural of a noun phrase: ``"pentagons"``, ``"buses"``, ``"people"``, ``"wine glasses"``, ``"pairs of
    skis"`` (the last word is inflected; a plural-only noun is counted by its unit)."""
    qualified = _QUALIFIER.match(noun)
    if qualified:
        return plural(qualified.group(1)) + qualified.group(2)
    counted = unit(noun)
    if counted:
        return f"{_engine().plural_noun(counted)} of {noun}"
    head, _, last = noun.rpartition(" ")
    inflected = _engine().plural_noun(last)
    return f"{head} {inflected}" if head else inflected


def counted(n: int, noun: str) -> str:
    """``"1 pentagon"``, ``"3 pentagons"``, ``"0 pentagons"``, ``"2 pairs of skis"``."""
    return f"1 {one(noun)}" if n == 1 else f"{n} {plural(noun)}"


def be(n: int) -> str:
    """``"is"`` for one, ``"are"`` for any other number (``there {be} {counted}``)."""
    return "is" if n == 1 else "are"
