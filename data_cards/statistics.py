"""Every number the card reports, counted from the released items (and their image files' headers)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from builders.items import Item
from builders.pairs import paired_share
from builders.semantics.format import is_multiple_choice, is_yes_no, yes_no_answer
from builders.semantics.options import is_none_of_the_above


def answer_label(item: Item) -> str:
    """How an answer is counted in the answer distribution: a letter, yes/no, or ``(open answer)``."""
    if is_multiple_choice(item):
        return item.answer
    if is_yes_no(item):
        return yes_no_answer(item)
    return "(open answer)"


def _sorted_counter(counter: Counter, *, numeric: bool = False) -> dict[str, int]:
    keys = sorted(counter, key=(lambda k: int(k)) if numeric else (lambda k: str(k)))
    return {str(k): counter[k] for k in keys}


def _image_sizes(paths: Iterable[Path]) -> dict[str, int]:
    """``{"WxH": number of images}`` read from the image headers (PIL opens lazily: no pixel is decoded)."""
    from PIL import Image

    sizes: Counter = Counter()
    for p in paths:
        try:
            with Image.open(p) as im:
                sizes[f"{im.width}x{im.height}"] += 1
        except (OSError, ValueError):
            sizes["unreadable"] += 1
    return dict(sorted(sizes.items(), key=lambda kv: (-kv[1], kv[0])))


def _answers_by_options(items: Sequence[Item]) -> dict[str, dict[str, int]]:
    """Answer letters of multiple-choice items, one distribution per number of options (4-, 5-, 9-option
    questions have different chance levels, so pooling them hides any imbalance)."""
    groups: dict[int, Counter] = {}
    for it in items:
        if is_multiple_choice(it):
            groups.setdefault(len(it.options), Counter())[it.answer] += 1
    return {str(n): _sorted_counter(c) for n, c in sorted(groups.items())}


FIXED_OPTION_MIN_ITEMS = 10
"""A question form's fixed options (the same text in every one of its items) are weighed from this many items."""


def _fixed_options(items: Sequence[Item]) -> list[dict[str, Any]]:
    """Per question form (``provenance.template``) and option text offered by every one of its items ("None of
    the above", "I don't know", "Yes, in some of them"): how often it is the gold against its fair share (its
    items over their options). A fixed option right far less often than that is one a blind guesser strikes out."""
    by_template: dict[str, list[Item]] = {}
    for it in items:
        if it.options and it.provenance.get("template"):
            by_template.setdefault(str(it.provenance["template"]), []).append(it)
    out = []
    for template, group in sorted(by_template.items()):
        if len(group) < FIXED_OPTION_MIN_ITEMS:
            continue
        shared = set.intersection(*(set(it.options) for it in group))
        for text in sorted(shared):
            fair = sum(1 / len(it.options) for it in group)
            out.append({"template": template, "option": text, "offered": len(group),
                        "correct": sum(1 for it in group if it.answer_text == text), "fair": round(fair, 1)})
    return out


def compute_stats(
    items: Sequence[Item], status: Mapping[str, str], build_dir: Path | None = None
) -> dict[str, Any]:
    """Every number the card reports, from the released items (image sizes read from ``build_dir``'s files)."""
    task_pressure: dict[str, Counter] = {}
    for it in items:
        task_pressure.setdefault(it.task, Counter())[it.pressure] += 1
    unique = sorted({(Path(build_dir) / p).resolve() if build_dir else Path(p) for it in items for p in it.images})
    return {
        "num_items": len(items),
        "num_images": sum(len(it.images) for it in items),
        "num_unique_images": len(unique),
        "image_sizes": _image_sizes(unique) if build_dir else {},
        "answers_by_options": _answers_by_options(items),
        "several_accepted": sum(1 for it in items if len(it.provenance.get("accepted_answers") or ()) > 1),
        "nota": {
            "offered": sum(1 for it in items if any(map(is_none_of_the_above, it.options))),
            "correct": sum(1 for it in items if is_multiple_choice(it) and is_none_of_the_above(it.answer_text)),
        },
        "fixed_options": _fixed_options(items),
        "templates": _sorted_counter(Counter(str(it.provenance.get("template")) for it in items
                                             if it.provenance.get("template"))),
        "tasks": _sorted_counter(Counter(it.task for it in items)),
        "pressures": _sorted_counter(Counter(it.pressure for it in items)),
        "question_types": _sorted_counter(Counter(it.question_type for it in items)),
        "n_images": _sorted_counter(Counter(len(it.images) for it in items), numeric=True),
        "answers": _sorted_counter(Counter(answer_label(it) for it in items)),
        "review_status": _sorted_counter(Counter(status[it.id] for it in items)),
        "task_pressure": {t: dict(sorted(c.items())) for t, c in sorted(task_pressure.items())},
        "pairs": {"all": paired_share(items),
                  "tasks": {t: paired_share([it for it in items if it.task == t]) for t in sorted(task_pressure)}},
    }
