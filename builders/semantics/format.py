"""How an item is answered: its answer format, and the closed choices a model picks from.

Every module that asks "is this item multiple choice?" (the quality report, the lint, the card, the review rooms,
the harness exports, the scorers) asks :func:`answer_format` or :func:`is_multiple_choice`, so a TSV sheet, a
Label Studio task, a lint cell and ``python -m scoring`` cannot disagree on what an item is.

The three formats, decided in this order:

* ``open``: the builder declares an open question (``question_type`` in :data:`OPEN_QUESTION_TYPES`: Reefknot's
  VQA), whatever its reference text says (a reference "yes" is still a description to judge), or the item has
  neither options nor a yes/no answer;
* ``yes_no``: the answer is "yes" or "no" (with or without yes/no options);
* ``option``: the item has options; its answer should be the letter of one of them. An item whose answer names
  none (an answer off the list, the lint's options check's finding) is still *shown* as multiple choice, but
  :func:`is_multiple_choice` is false for it, so statistics over answer letters leave it alone.
"""

from __future__ import annotations

from typing import Any, Mapping, Protocol, Sequence

OPTION_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
YES_NO = ("yes", "no")
"""The two choices of a yes/no item, in the order the lint's learner and the scorers number them."""
OPEN_QUESTION_TYPES = ("vqa", "open", "open_ended")
"""Question types that declare an open answer (compared lower case)."""
FORMATS = ("option", "yes_no", "open")


class ItemLike(Protocol):
    """What the item semantics read of an item (:class:`builders.items.Item` has it; a test may pass less)."""

    question_type: str
    question: str
    options: Sequence[str]
    answer: str
    context: str
    images: Sequence[str]
    provenance: Mapping[str, Any]


def declared_open(item: ItemLike) -> bool:
    """Whether the builder declares the question open (:data:`OPEN_QUESTION_TYPES`)."""
    return item.question_type.lower() in OPEN_QUESTION_TYPES


def answer_format(item: ItemLike) -> str:
    """``open``, ``yes_no`` or ``option`` (see the module docstring)."""
    if declared_open(item):
        return "open"
    if item.answer.strip().lower() in YES_NO:
        return "yes_no"
    if item.options:
        return "option"
    return "open"


def letter_index(answer: str, options: Sequence[str]) -> int | None:
    """The index of the option ``answer`` names by its letter (``"B"`` -> 1), ``None`` when it names none of
    ``options``."""
    if len(answer) == 1 and answer in OPTION_LETTERS[: len(options)]:
        return OPTION_LETTERS.index(answer)
    return None


def is_multiple_choice(item: ItemLike) -> bool:
    """An item shown with options whose answer is the letter of one of them (a letter is never "yes"/"no", so
    such an item's format is ``option`` unless the question is declared open)."""
    return letter_index(item.answer, item.options) is not None and not declared_open(item)


def is_yes_no(item: ItemLike) -> bool:
    return answer_format(item) == "yes_no"


def is_open(item: ItemLike) -> bool:
    return answer_format(item) == "open"


def is_closed(item: ItemLike) -> bool:
    """A well-formed closed item: multiple choice, or yes/no (the items a blind strategy can pick an answer of)."""
    return is_multiple_choice(item) or is_yes_no(item)


def yes_no_answer(item: ItemLike) -> str:
    """A yes/no item's answer as written in :data:`YES_NO` (case and surrounding space dropped)."""
    return item.answer.strip().lower()


def answer_text(item: ItemLike) -> str:
    """The text of the right option of a multiple-choice item, else the answer as written (never raises)."""
    index = letter_index(item.answer, item.options)
    return item.answer if index is None or declared_open(item) else item.options[index]


def choices(item: ItemLike) -> tuple[str, ...]:
    """What a model picks from: the options of a multiple-choice item, :data:`YES_NO` otherwise."""
    return tuple(item.options) if answer_format(item) == "option" else YES_NO


def gold_index(item: ItemLike) -> int:
    """The index of a closed item's answer among its :func:`choices` (``ValueError`` for any other item)."""
    if answer_format(item) == "yes_no":
        return YES_NO.index(yes_no_answer(item))
    index = letter_index(item.answer, item.options)
    if index is None:
        raise ValueError(f"{item.answer!r} names none of the item's {len(item.options)} options")
    return index
