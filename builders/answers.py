"""How an item is answered: its answer format, the instruction that asks for it, and what a refusal looks like.

Shared by what writes a benchmark out (the harness exports of a release, :mod:`data_cards.harness`) and what
scores it (:mod:`scoring.extract`, :mod:`scoring.harness.lmms_eval_utils`), so that a TSV sheet, an lmms-eval
prompt and ``python -m scoring`` agree on which items are multiple-choice, which options are refusals, and the
words that ask for an answer.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from builders.items import Item

INSTRUCTIONS = {
    "option": "Answer with the option's letter from the given choices.",
    "yes_no": "Answer with yes or no.",
    "open": "Answer the question.",
}
"""The answer instruction closing a prompt, by :func:`answer_format`."""

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


def is_refusal(text: str) -> bool:
    """A refusal in words: "I cannot tell", "Sorry, I can't help with it", "I don't know", "hard to say"...

    "I can't see a dog" is *not* a refusal (it answers "no"); "I can't see the image" is."""
    return bool(_REFUSAL.search(text))


def answer_format(item: Item) -> str:
    """``yes_no`` (answer "yes"/"no", with or without yes/no options), ``option`` (an MCQ) or ``open``."""
    if item.answer.strip().lower() in ("yes", "no"):
        return "yes_no"
    if item.options:
        return "option"
    return "open"
