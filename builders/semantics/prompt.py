"""The text a model is shown for an item: context, question, lettered options and the instruction that asks for
its answer.

One wording for every place that puts an item to a model: the lmms-eval tasks of a release
(:mod:`scoring.harness.lmms_eval_utils`), the VLMEvalKit yes/no sheets (their instruction), the lint's text-only
model (:mod:`builders.lint.independence`, without the images' announcement and with its own instruction) and the
extractor's LLM fallback (the lettered options).
"""

from __future__ import annotations

from typing import Sequence

from builders.semantics.format import OPTION_LETTERS, ItemLike, answer_format

INSTRUCTIONS = {
    "option": "Answer with the option's letter from the given choices.",
    "yes_no": "Answer with yes or no.",
    "open": "Answer the question.",
}
"""The answer instruction closing a prompt, by :func:`builders.semantics.format.answer_format`."""


def lettered(options: Sequence[str]) -> list[str]:
    """``["A. cat", "B. dog"]``: the options as a model and a reviewer read them."""
    return [f"{OPTION_LETTERS[i]}. {text}" for i, text in enumerate(options)]


def images_announcement(n_images: int) -> str:
    """Several images are announced as "Image 1".."Image N" because questions and options refer to them that way
    (a harness passes them in order; how a model interleaves them is the model wrapper's business)."""
    return f"You are given {n_images} images, Image 1 to Image {n_images}, in order." if n_images > 1 else ""


def prompt_text(item: ItemLike, *, announce_images: bool = True, instruct: bool = True) -> str:
    """Context, question, the lettered options of a multiple-choice item and the answer instruction, one per line;
    the images go separately, in order. ``announce_images=False`` leaves out the images' announcement (a text-only
    model is shown none), ``instruct=False`` the instruction (a caller whose system prompt gives it)."""
    fmt = answer_format(item)
    parts = [p for p in (images_announcement(len(item.images)) if announce_images else "", item.context) if p]
    parts.append(item.question)
    if fmt == "option":
        parts += lettered(item.options)
    if instruct:
        parts.append(INSTRUCTIONS[fmt])
    return "\n".join(parts)
