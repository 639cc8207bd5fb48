"""The card's "Dataset Details" numbers and "Dataset Structure" section: the configs, the fields with the values
this release holds, and the counts per task, pressure, question type, number of images and answer."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .features import COLUMNS, release_features
from .tables import count_table, md_table


def structure_values(
    stats: Mapping[str, Any], configs: Sequence[Mapping[str, Any]], *, benchmark: str, repo_id: str, version: str
) -> dict[str, Any]:
    """The template's values for these sections (``stats``: :func:`data_cards.statistics.compute_stats`)."""
    total = stats["num_items"]
    by_options = stats.get("answers_by_options") or {}
    return {
        "num_items": total,
        "num_tasks": len(stats["tasks"]),
        "num_images": stats["num_images"],
        "num_unique_images": stats.get("num_unique_images", stats["num_images"]),
        "images_per_item": _images_per_item(stats["n_images"]),
        "resolution_text": _resolution_text(stats.get("image_sizes") or {}),
        "answers_by_options_text": _answers_by_options_text(by_options, total)
        + "".join(f"\n\n![Answer letters, {n} options](plots/answers-{n}-options.png)" for n in by_options),
        "config_example": _config_example(configs, repo_id, version),
        "configs_table": _configs_table(configs),
        "fields_table": _fields_table(benchmark, stats),
        "task_pressure_table": _task_pressure_table(stats),
        "pressure_table": count_table("pressure", stats["pressures"], total),
        "question_type_table": count_table("question type", stats["question_types"], total),
        "n_images_table": count_table("images", stats["n_images"], total),
        "answer_table": count_table("answer", stats["answers"], total),
    }


def _config_example(configs: Sequence[Mapping[str, Any]], repo_id: str, version: str) -> str:
    """The ``load_dataset`` line of one task's config (none when the release has one config)."""
    first_task = next((c for c in configs if c.get("task")), None)
    if not first_task:
        return ""
    return (f'ds_task = load_dataset("{repo_id}", "{first_task["name"]}", revision="v{version}", '
            'split="test")  # one task')


def _configs_table(configs: Sequence[Mapping[str, Any]]) -> str:
    return md_table(
        ["config", "task", "files", "items"],
        [
            (f"`{c['name']}`" + (" (default)" if c["default"] else ""), f"`{c['task']}`" if c["task"] else "all tasks",
             f"`{c['glob']}`", c["num_examples"])
            for c in configs
        ],
    )


def _fields_table(benchmark: str, stats: Mapping[str, Any]) -> str:
    feats = release_features()
    return md_table(
        ["field", "type", "description"],
        [(f"`{n}`", f"`{_feature_type(feats[n])}`", _field_description(n, d, benchmark, stats)) for n, d in COLUMNS],
    )


def _task_pressure_table(stats: Mapping[str, Any]) -> str:
    pressures = list(stats["pressures"])
    return md_table(
        ["task"] + [f"`{p}`" for p in pressures] + ["total"],
        [[f"`{t}`"] + [c.get(p, 0) for p in pressures] + [stats["tasks"][t]] for t, c in stats["task_pressure"].items()]
        + [["**total**"] + [stats["pressures"][p] for p in pressures] + [stats["num_items"]]],
    )


def _images_per_item(n_images: Mapping[str, int]) -> str:
    values = sorted(int(k) for k in n_images)
    if not values:
        return "no"
    if len(values) == 1:
        return str(values[0])
    if len(values) <= 4:
        return ", ".join(map(str, values[:-1])) + f" or {values[-1]}"
    return f"{values[0]} to {values[-1]}"


def _resolution_text(sizes: Mapping[str, int]) -> str:
    if not sizes:
        return "image resolution not recorded"
    if len(sizes) == 1:
        (size,) = sizes
        return f"every image {size} pixels"
    shown = ", ".join(f"{k} ({v})" for k, v in list(sizes.items())[:3])
    return f"image sizes in pixels: {shown}" + (f" and {len(sizes) - 3} other sizes" if len(sizes) > 3 else "")


def _answers_by_options_text(groups: Mapping[str, Mapping[str, int]], total: int) -> str:
    if not groups:
        return ""
    parts = ["Answer letters of the multiple-choice items, per number of options (chance differs between them):"]
    for n, counts in groups.items():
        m = sum(counts.values())
        cells = ", ".join(f"{k} {v} ({100 * v / m:.1f}%)" for k, v in counts.items())
        parts.append(f"- {n} options ({m} items; uniform {100 / int(n):.1f}% each): {cells}")
    return "\n".join(parts)


def _field_description(name: str, generic: str, benchmark: str, stats: Mapping[str, Any]) -> str:
    """A column's description with the values this release actually holds (not every benchmark's examples)."""
    def values(key: str) -> str:
        return ", ".join(f"`{v}`" for v in stats.get(key) or {})

    if name == "benchmark":
        return f"The Mirage benchmark: `{benchmark}` in this release."
    if name == "task":
        return f"The task: {values('tasks')}."
    if name == "question_type":
        return f"How the question is asked: {values('question_types')}."
    if name == "pressure":
        return f"The adversarial pressure applied: {values('pressures')}."
    if name in ("answer", "options"):
        answers = stats.get("answers") or {}
        kinds = []
        if stats.get("answers_by_options"):
            kinds.append("an option letter (multiple choice)")
        if "yes" in answers or "no" in answers:
            kinds.append("`yes`/`no`")
        if "(open answer)" in answers:
            kinds.append("the reference text (open answers)")
        if name == "answer":
            return "The expected answer: " + (" or ".join(kinds) or "none") + "."
        return ("Answer options of the multiple-choice items" if stats.get("answers_by_options") else
                "Always empty in this release (no multiple-choice items)") + "; empty for other items."
    return generic


def _feature_type(feature: Any) -> str:
    from datasets import Image, List, Value

    if isinstance(feature, List):
        return f"list<{_feature_type(feature.feature)}>"
    if isinstance(feature, Image):
        return "image"
    if isinstance(feature, Value):
        return feature.dtype
    return type(feature).__name__
