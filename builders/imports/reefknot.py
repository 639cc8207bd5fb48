"""The official Reefknot release as Mirage items (read here for ``python -m builders.imports reefknot`` and for
the Reefknot builder's importer, :mod:`builders.reefknot.importer`); ``--images`` is optional: images not at hand
are counted in one warning line, and every check runs on the text.

The release is JSON lines, one question each: ``image_id`` (a string of digits: the Visual Genome image),
``query_prompt`` (the question as put to the model; MCQ options are inside it as ``"A. x B. y C. z D. w, please
choose."``), ``label`` (``yes``/``no``, an option letter or the option text, or the reference sentence),
``type`` (``Yes/No``, ``Multichoice``, ``VQA``) and ``relation_type`` (``perception``, ``cognitive``). Items keep
the prompt's wording; MCQ options are split out into ``options`` and the answer becomes their letter. Nothing is
dropped or fixed.

The release carries no triplet ids, so the 1:1 yes/no promise of the paper is checked per image
(``lint_promises = {"yes_no_pairs": []}``): every image must hold as many "yes" as "no" questions.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Sequence

from builders.items import OPTION_LETTERS, Item, make_item
from sources import jsonio, validate
from sources.errors import SourceError
from sources.visual_genome import find_image

BENCHMARK = "reefknot"
IMPORTER = "builders.reefknot.importer"
"""Reefknot's release is imported as a build by its own command, which adds the benchmark's validity figures
(:func:`builders.imports.importer_of`); this module reads it for the lint and for that command."""
PROMISES: dict[str, Any] = {"yes_no_pairs": []}


def read(paths: Sequence[Path], images_dir: Path | None = None, warnings: list[str] | None = None) -> list[Item]:
    """Items of Reefknot release files. Images are looked for under ``images_dir`` when given; those not found
    (all of them without it) are one line in ``warnings``, not an error: the lint's checks read the text only."""
    items = []
    for path in paths:
        release = import_release(path, images_dir)
        note = release.image_note(path)
        if note and warnings is not None:
            warnings.append(note)
        items += release.items
    return items


TYPES = {"yes/no": "yes_no", "multichoice": "mcq", "vqa": "vqa"}
CATEGORIES = {
    "perception": "perception",
    "perceptive": "perception",
    "cognitive": "cognition",
    "cognition": "cognition",
}
_OPTIONS = re.compile(
    r"^(?P<question>.*?)\s*A\.\s*(?P<A>.+?)\s+B\.\s*(?P<B>.+?)\s+C\.\s*(?P<C>.+?)\s+D\.\s*"
    r"(?P<D>.+?)\s*(?:,\s*)?(?:please choose\.?)?\s*$",
    re.S | re.I,
)


def split_options(prompt: str) -> tuple[str, tuple[str, ...]] | None:
    """``("What is ... photo?", ("on", "beside", "below", "on left of"))`` from an MCQ prompt, or ``None``."""
    m = _OPTIONS.match(prompt.strip())
    if not m:
        return None
    options = tuple(m.group(k).strip().rstrip(",").strip() for k in "ABCD")
    return m.group("question").strip(), options


def _field(row: dict, key: str, path: Path, rec: str) -> str:
    value = validate.require_key(row, key, path, rec)
    if not isinstance(value, (str, int)) or not str(value).strip():
        raise SourceError(path, rec, f"{key!r} must be a non-empty string, got {value!r}")
    return str(value).strip()


@dataclass
class Release:
    """The items of a release file, and which of the images they name were found."""

    items: list[Item]
    images_dir: str | None
    found: int = 0
    """Distinct images found under ``images_dir``."""
    missing: list[str] = field(default_factory=list)
    """Distinct image ids not found (all of them without ``images_dir``), in file order."""

    def image_note(self, path: str | Path) -> str | None:
        """One line on the images not at hand (``None`` when every one was found)."""
        if not self.missing:
            return None
        absent = set(self.missing)
        without = sum(1 for it in self.items if it.provenance["image_id"] in absent)
        if self.images_dir is None:
            return (f"{path}: no images folder given, so the {len(self.missing):,} images are not looked for; the "
                    f"checks of the text run on all {len(self.items):,} questions")
        questions = f"its {without} question names" if without == 1 else f"their {without:,} questions name"
        return (f"{path}: {len(self.missing):,} of {len(self.missing) + self.found:,} images not found under "
                f"{self.images_dir} (nor VG_100K/, VG_100K_2/; first: {int(self.missing[0])}.jpg); {questions} "
                f"the bare file, and the checks of the text run on all {len(self.items):,} questions")

    def image_stats(self) -> dict[str, object]:
        return {"images_dir": self.images_dir, "found": self.found, "missing": len(self.missing),
                "missing_image_ids": self.missing}


def import_release(path: str | Path, images_dir: str | Path | None = None) -> Release:
    """Mirage items of every line of the release; one-line :class:`SourceError` on the first bad line. Images
    not under ``images_dir`` (or without it) are counted, not an error (the module docstring)."""
    p = Path(path)
    items = []
    located: dict[str, str | None] = {}
    for number, row in jsonio.iter_jsonl(p, "release file"):
        rec = f"line {number}"
        validate.expect_dict(row, p, rec, "release record")
        image_id = _field(row, "image_id", p, rec)
        if not image_id.isdigit():
            raise SourceError(p, rec, f"'image_id' must be a string of digits, got {image_id!r}")
        prompt = _field(row, "query_prompt", p, rec)
        label = _field(row, "label", p, rec)
        kind = TYPES.get(_field(row, "type", p, rec).lower())
        if kind is None:
            raise SourceError(p, rec, f"'type' must be one of Yes/No, Multichoice, VQA, got {row['type']!r}")
        category = CATEGORIES.get(_field(row, "relation_type", p, rec).lower())
        if category is None:
            raise SourceError(p, rec, f"'relation_type' must be perception or cognitive, got {row['relation_type']!r}")
        name = f"{int(image_id)}.jpg"
        if image_id not in located:
            located[image_id] = find_image(images_dir, name) if images_dir is not None else None
        image = located[image_id] or name
        question, options, answer = prompt, (), label
        if kind == "yes_no":
            answer = label.lower().strip(". ")
            if answer not in ("yes", "no"):
                raise SourceError(p, rec, f"a Yes/No 'label' must be yes or no, got {label!r}")
        elif kind == "mcq":
            parsed = split_options(prompt)
            if parsed is None:
                raise SourceError(p, rec, "MCQ 'query_prompt' holds no 'A. .. B. .. C. .. D. ..' options")
            question, options = parsed
            answer = _letter(label, options)
            if answer is None:
                raise SourceError(p, rec, f"MCQ 'label' {label!r} is neither a letter A-D nor one of the options")
        items.append(
            make_item(
                benchmark=BENCHMARK,
                task=category,
                question_type=kind,
                pressure="none",
                images=[image],
                question=question,
                options=options,
                answer=answer,
                provenance={
                    "source": "reefknot-release",
                    "line": number,
                    "image_id": image_id,
                    "original": {k: row[k] for k in ("query_prompt", "label", "type", "relation_type")},
                    **({"answer_slots": 4} if kind == "mcq" else {}),
                },
            )
        )
    if not items:
        raise SourceError(p, "", "release file holds no questions")
    return Release(_unique_ids(items), None if images_dir is None else str(images_dir),
                   found=sum(1 for v in located.values() if v is not None),
                   missing=[i for i, v in located.items() if v is None])


def _unique_ids(items: list[Item]) -> list[Item]:
    """The release repeats some (image, prompt) pairs; repeats get ids ``<id>-2``, ``<id>-3``... so every line
    stays one item a prediction can name (``provenance.duplicate_of`` names the first)."""
    seen: Counter = Counter()
    out = []
    for it in items:
        seen[it.id] += 1
        if seen[it.id] > 1:
            it = replace(it, id=f"{it.id}-{seen[it.id]}", provenance={**it.provenance, "duplicate_of": it.id})
        out.append(it)
    return out


def _letter(label: str, options: tuple[str, ...]) -> str | None:
    text = label.strip().rstrip(".").strip()
    if len(text) == 1 and text.upper() in OPTION_LETTERS[: len(options)]:
        return text.upper()
    lowered = [o.lower() for o in options]
    return OPTION_LETTERS[lowered.index(text.lower())] if text.lower() in lowered else None
