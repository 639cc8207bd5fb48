"""VLMEvalKit TSVs for a release: one sheet per task and answer form, plus a circular variant of each MCQ sheet.

VLMEvalKit reads any ``$LMUData/<NAME>.tsv`` as a custom dataset named ``NAME``: a sheet with ``A`` and ``B``
columns is a multiple-choice set (prompt: ``Hint:``, ``Question:``, ``Options:``), any other a VQA set (prompt:
the question). Hence three sheets per task, by answer form:

* ``<release>_<task>_MCQ.tsv``: ``index``, ``id`` (Mirage's item id), ``image``, ``image_path``, ``question``,
  ``hint`` (= context), option columns ``A``.. (as many as the task's longest option list), ``answer`` (letter),
  ``category`` (= task), ``l2-category`` (= pressure; ``<pressure> (control)`` for an item whose context is true,
  so VLMEvalKit's per-category accuracy separates the paper's misleading items from their controls),
  ``context_truth`` (``false`` / ``true``; a column only where a release has contexts with a truth),
  ``question_type``, ``pair_id`` and ``pair_role`` (``a`` / ``b``; columns only where a release has pairs: the
  same question asked of two images with different answers, scored by group: both right);
* ``<release>_<task>_YN.tsv``: yes/no items, ``answer`` ``Yes``/``No`` (capitalised, as VLMEvalKit's yes/no sets);
* ``<release>_<task>_VQA.tsv``: open answers (reference text).

In the YN and VQA sheets the ``question`` carries the context in front (VLMEvalKit's VQA prompt is the question
alone, and the context is the linguistic pressure being measured; ``hint`` still holds it alone), and a YN question
ends with the instruction Mirage's own prompt gives ("Answer with yes or no.").

Images are the release's bytes, base64-encoded, never re-encoded; an item with several images has a list
(``"['<b64>', '<b64>']"``, the Python list literal VLMEvalKit's ``toliststr`` evaluates) and ``image_path`` names them (VLMEvalKit dumps a
list of images under those names): ``<sha256 prefix><suffix>``, so equal names mean equal bytes.

The circular sheet ``<release>_<task>_MCQ_CIRCULAR.tsv`` follows VLMEvalKit's circular layout (MMBench): the
original row at ``index`` i, and rotation k at ``i + k * 1_000_000``, whose ``image`` is the text ``i`` (VLMEvalKit
resolves an ``image`` of 64 characters or fewer as another row's index). Rotations move only the *content* options;
"None of the above", "I don't know" and refusal options stay where they are, so a model biased towards the last
position or towards abstaining is measured the same way in every rotation. An item with m movable options has m
rows. Integer ``index`` values stay below 1,000,000 (VLMEvalKit's ``g_index = index % 1e6``).
"""

from __future__ import annotations

import base64
import csv
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Iterator, Sequence

from builders.items import OPTION_LETTERS
from builders.pairs import pair_of
from builders.semantics.format import answer_format, letter_index
from builders.semantics.options import is_fixed_option
from builders.semantics.prompt import INSTRUCTIONS
from sources.errors import ConfigError

from .rows import ReleaseTask, context_truth, row_item

YES_NO_INSTRUCTION = INSTRUCTIONS["yes_no"]

ROTATION_OFFSET = 1_000_000
"""VLMEvalKit's circular index offset: rotation k of row i is ``i + k * ROTATION_OFFSET``."""
@dataclass(frozen=True)
class Rotation:
    """Rotation ``k`` of an item's options: the options in shown order and the letter of the answer."""

    k: int
    options: tuple[str, ...]
    answer: str
    source: tuple[int, ...]
    """``source[i]``: the original position of the option shown at position i."""


def rotations(options: Sequence[str], answer: str) -> list[Rotation]:
    """Every rotation of the movable options (rotation 0 is the original order); one if fewer than 2 move, or if
    the answer is not one of the options' letters (nothing to follow through the rotations)."""
    movable = [i for i, o in enumerate(options) if not is_fixed_option(o)]  # fixed options keep their place
    m = len(movable) if letter_index(answer, options) is not None else 0
    if m < 2:
        return [Rotation(k=0, options=tuple(options), answer=answer, source=tuple(range(len(options))))]
    out = []
    for k in range(m):
        source = list(range(len(options)))
        for j, pos in enumerate(movable):
            source[pos] = movable[(j + k) % m]
        shown = tuple(options[s] for s in source)
        original = OPTION_LETTERS.index(answer)
        out.append(Rotation(k=k, options=shown, answer=OPTION_LETTERS[source.index(original)], source=tuple(source)))
    return out


def _image_cells(row: dict[str, Any]) -> tuple[str, str]:
    """``(image, image_path)`` cells: base64 of the release bytes (a list literal for several) and their names."""
    encoded, names = [], []
    for image, name in zip(row["images"], row.get("image_names") or [], strict=True):
        data = image["bytes"]
        encoded.append(base64.b64encode(data).decode("ascii"))
        suffix = PurePosixPath(name or image.get("path") or "").suffix.lower() or ".png"
        names.append(hashlib.sha256(data).hexdigest()[:16] + suffix)
    if len(encoded) == 1:
        return encoded[0], names[0]
    return str(encoded), str(names)


def _sheet_name(release: str, slug: str, form: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{release}_{slug}_{form}")


FORMS = {"option": "MCQ", "yes_no": "YN", "open": "VQA"}


def _rows_by_form(task: ReleaseTask) -> dict[str, list[dict[str, Any]]]:
    by_form: dict[str, list[dict[str, Any]]] = {}
    for row in task.rows:
        by_form.setdefault(FORMS[answer_format(row_item(row))], []).append(row)
    return by_form


def _common(row: dict[str, Any], index: int) -> dict[str, Any]:
    image, image_path = _image_cells(row)
    return {
        "index": index,
        "id": row["id"],
        "image": image,
        "image_path": image_path,
        "hint": row["context"] or "",
        "category": row["task"],
        "l2-category": row["pressure"] + (" (control)" if context_truth(row) == "true" else ""),
        "question_type": row["question_type"],
        **({"context_truth": context_truth(row)} if context_truth(row) else {}),
        **_pair_cells(row),
    }


def _pair_cells(row: dict[str, Any]) -> dict[str, str]:
    """``pair_id`` and ``pair_role`` of an item with a partner (:mod:`builders.pairs`), so a result sheet can be
    scored by group: both items of a pair right."""
    pair = pair_of(row_item(row))
    return {"pair_id": pair[0], "pair_role": pair[1]} if pair else {}


def _with_context(row: dict[str, Any]) -> str:
    return f"{row['context']}\n{row['question']}" if row["context"] else row["question"]


def mcq_records(rows: Sequence[dict[str, Any]], circular: bool = False) -> Iterator[dict[str, Any]]:
    """Records of an MCQ sheet (or its circular variant), ``index`` 1..N in row order."""
    if len(rows) >= ROTATION_OFFSET:
        raise ConfigError(f"{len(rows)} items in one task: VLMEvalKit's circular layout allows < {ROTATION_OFFSET}")
    for i, row in enumerate(rows, 1):
        common = _common(row, i)
        for rot in rotations(row["options"], row["answer"]) if circular else [None]:
            options = rot.options if rot else tuple(row["options"])
            record = dict(common, index=i + (rot.k * ROTATION_OFFSET if rot else 0), question=row["question"])
            if rot and rot.k:
                record["image"] = str(i)  # VLMEvalKit: a short `image` is the index of the row holding the image
            record.update({OPTION_LETTERS[j]: o for j, o in enumerate(options)})
            record["answer"] = rot.answer if rot else row["answer"]
            if circular:
                record["rotation"] = rot.k
            yield record


def plain_records(rows: Sequence[dict[str, Any]], form: str) -> Iterator[dict[str, Any]]:
    """Records of a YN or VQA sheet; YN answers ``Yes``/``No`` and asks for them (:data:`YES_NO_INSTRUCTION`)."""
    for i, row in enumerate(rows, 1):
        if form == "YN":
            answer, question = row["answer"].strip().capitalize(), f"{_with_context(row)}\n{YES_NO_INSTRUCTION}"
        else:
            answer, question = row["answer"], _with_context(row)
        yield dict(_common(row, i), question=question, answer=answer)


LEADING = ("index", "id", "image", "image_path", "question", "hint")
TRAILING = ("answer", "category", "l2-category", "context_truth", "question_type", "pair_id", "pair_role", "rotation")


def write_tsv(path: Path, records: Sequence[dict[str, Any]]) -> Path:
    """A TSV with a header: :data:`LEADING` columns, the option letters used, then :data:`TRAILING` ones."""
    present = {c for r in records for c in r}
    letters = [c for c in OPTION_LETTERS if c in present]
    columns = [c for c in LEADING if c in present] + letters + [c for c in TRAILING if c in present]
    with open(path, "w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, delimiter="\t", lineterminator="\n", extrasaction="raise")
        writer.writeheader()
        for r in records:
            writer.writerow({c: r.get(c, "") for c in columns})
    return path


def write_vlmevalkit(out_dir: Path, tasks: Sequence[ReleaseTask], *, release: str,
                     progress: Callable[[int, int], None] | None = None) -> list[Path]:
    """Write every sheet of the release into ``out_dir`` (created); returns the files written.

    ``progress(done, total)``: items written so far, after each task."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    total, done = sum(len(t.rows) for t in tasks), 0
    for task in tasks:
        for form, rows in sorted(_rows_by_form(task).items()):
            name = _sheet_name(release, task.slug, form)
            if form == "MCQ":
                written.append(write_tsv(out_dir / f"{name}.tsv", list(mcq_records(rows))))
                written.append(write_tsv(out_dir / f"{name}_CIRCULAR.tsv", list(mcq_records(rows, circular=True))))
            else:
                written.append(write_tsv(out_dir / f"{name}.tsv", list(plain_records(rows, form))))
        done += len(task.rows)
        if progress:
            progress(done, total)
    return written
