"""The columns of a released Mirage benchmark, as explicit ``datasets.Features``.

One row per :class:`builders.items.Item`. Images are embedded as bytes (``List(Image())``), never as local paths;
``image_names`` keeps the file names the build used (no directories), so a scorer or a reader of the provenance can
still refer to an image by name. ``provenance`` is an arbitrary JSON object in the build, stored as a JSON string so
the features stay the same for every benchmark and every version.
"""

from __future__ import annotations

from typing import Any

COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", "Stable item id: the first 16 hex digits of the SHA-256 of what a model is shown."),
    ("benchmark", "The Mirage benchmark the item belongs to, by its name in the benchmark registry."),
    ("task", "The task, e.g. `existence`, `counting`, `relation`."),
    ("question_type", "How the question is asked, e.g. `yes_no`, `comparative`, `selective`, `vqa`."),
    ("pressure", "The adversarial pressure applied, e.g. `easy`, `hard_negative`, `sycophantic`."),
    ("images", "The images shown to the model, in order, embedded as encoded image bytes."),
    ("image_names", "File names of the images in the build (no directories), aligned with `images`."),
    ("context", "Text placed before the question (linguistic pressure, instructions); may be empty."),
    ("question", "The question put to the model."),
    ("options", "Answer options for multiple-choice items; empty for yes/no and open answers."),
    ("answer", "The expected answer: an option letter, `yes`/`no`, or the reference text."),
    ("answer_text", "The text of the correct option (equal to `answer` for yes/no and open items)."),
    ("review_status", "Human review outcome: `keep`, `fix` (answer corrected by reviewers) or `unreviewed`."),
    ("provenance", "JSON object: source ids, per-image difficulty, template id, scores that chose the item."),
)


def release_features() -> Any:
    """The ``datasets.Features`` of every release (imported lazily: ``datasets`` is the ``release`` extra)."""
    from datasets import Features, Image, List, Value

    string = Value("string")
    types = {
        "images": List(Image()),
        "image_names": List(string),
        "options": List(string),
    }
    return Features({name: types.get(name, string) for name, _ in COLUMNS})
