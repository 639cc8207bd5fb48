"""Fixed options - "None of the above", "I don't know", a refusal - and the blind guesses over option texts.

A benchmark offers a few options that are not about the image: MIOH's "None of the above" and "I don't know",
MM-SAP's refusal "Sorry, I can't help with it". The quality report counts how often they are right, the lint
leaves them out of its wording comparisons and lets a blind rule always pick the refusal, the VLMEvalKit export
keeps them in place when it rotates the others, the extractor maps a refusal in words to the refusal option, and
MIOH's scorer reports how often a model abstains wrongly. Each asks one predicate of this module:

* :func:`is_none_of_the_above`: "None of the above" (also "None of these", "None of them"), any case;
* :func:`is_dont_know`: "I don't know";
* :func:`is_refusal`: a refusal in words, as an option or as a model's answer ("Sorry, I can't help with it",
  "I cannot tell", "I don't know", "hard to say");
* :func:`is_abstention`: the options that answer "none of these" or "I won't say" (the first or the third);
* :func:`is_fixed_option`: the options whose place and wording do not depend on the question (an abstention, or
  "All of the above" / "Neither of them").
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Sequence

from builders.semantics.format import OPTION_LETTERS

_REFUSAL = re.compile(
    r"\b(?:"
    r"(?:i\s*(?:'m|am)\s*)?(?:sorry|apologi[sz]e)\b[^.]*\b(?:can(?:no|'|’)?t|cannot|unable|not able)"
    r"|(?:i|we)\s+(?:can(?:no|'|’)?t|cannot|could\s*n[o'’]t|am\s+unable\s+to|'m\s+unable\s+to|am\s+not\s+able\s+to)"
    r"\s+(?:tell|determine|say|answer|help|assist|be\s+(?:sure|certain)|decide|know|identify|verify|confirm|judge"
    r"|provide|see\s+(?:the\s+)?images?\b(?!\s+(?:any|a|an|the)\b)|view|access|process)"
    r"|(?:i\s+)?(?:do\s*n[o'’]?t|don't|dont)\s+know"
    r"|not\s+(?:sure|certain)\b"
    r"|(?:unable|impossible|not\s+possible|difficult|hard)\s+to\s+(?:tell|determine|say|answer|know|judge|decide)"
    r"|cannot\s+be\s+determined|can(?:no|'|’)?t\s+be\s+(?:determined|answered)"
    r"|(?:no|insufficient|not\s+enough)\s+(?:information|evidence|context)\s+to"
    r"|unanswerable|i\s+refuse"
    r")",
    re.I,
)
_OF_THE_OPTIONS = r"\s+of\s+(?:the\s+)?(?:above|these|them|the\s+options)\b"
_NONE_OF_THE_ABOVE = re.compile(r"^\s*none" + _OF_THE_OPTIONS, re.I)
_COLLECTIVE = re.compile(r"^\s*(?:all|neither)" + _OF_THE_OPTIONS, re.I)
_DONT_KNOW = re.compile(r"^\s*i\s+(?:do\s*n[o'’]?t|dont)\s+know\s*[.!]?\s*$", re.I)


def is_refusal(text: str) -> bool:
    """A refusal in words: "I cannot tell", "Sorry, I can't help with it", "I don't know", "hard to say"...

    "I can't see a dog" is *not* a refusal (it answers "no"); "I can't see the image" is."""
    return bool(_REFUSAL.search(text))


def is_none_of_the_above(text: str) -> bool:
    """An option that opens with "None of the above" (any case; "None of these", "None of them", "None of the
    options" too)."""
    return bool(_NONE_OF_THE_ABOVE.match(text))


def is_dont_know(text: str) -> bool:
    """"I don't know" as an option's whole text (any case, any apostrophe)."""
    return bool(_DONT_KNOW.match(text))


def is_abstention(text: str) -> bool:
    """An option that declines to name a content option: "None of the above", or a refusal ("I don't know",
    "Sorry, I can't help with it")."""
    return is_none_of_the_above(text) or is_refusal(text)


def is_fixed_option(text: str) -> bool:
    """An option whose wording and place do not depend on the question: an abstention, or a collective option
    ("All of the above", "Neither of them")."""
    return is_abstention(text) or bool(_COLLECTIVE.match(text))


def refusal_letters(options: Sequence[str]) -> tuple[str, ...]:
    """Letters of the options that are themselves refusals ("I don't know", "Sorry, I can't help with it")."""
    return _refusal_letters(tuple(options))


@lru_cache(maxsize=4096)
def _refusal_letters(options: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(OPTION_LETTERS[i] for i, o in enumerate(options[: len(OPTION_LETTERS)]) if is_refusal(o))


def refusal_option(options: Sequence[str]) -> int | None:
    """The index of the item's one refusal option (the blind "always refuse" guess); ``None`` unless exactly one
    option refuses."""
    letters = refusal_letters(options)
    return OPTION_LETTERS.index(letters[0]) if len(letters) == 1 else None


ALWAYS_A = 0
"""The blind "always A" guess: the first option."""


def longest_option_index(options: Sequence[str]) -> int:
    """The index of the longest option (the first one on a tie): the blind "longest option" guess."""
    lengths = [len(o) for o in options]
    return lengths.index(max(lengths))
