"""POPE's question files (Li et al., "Evaluating Object Hallucination in Large Vision-Language Models", 2023).

Two layouts, one question per line (JSON lines; a JSON array of the same objects is accepted too):

* POPE v1 (``coco_pope_{random,popular,adversarial}.json``): ``{"question_id": 1, "image": "COCO_val2014_...jpg",
  "text": "Is there a snowboard in the image?", "label": "yes"}``;
* v2 layouts: ``{"query": ..., "image_name": ..., "target_object": ..., "label": "Yes"}`` (``question_id`` or
  ``id`` when present). POPEv2 (Li et al., "Analyzing and Mitigating Object Hallucination: A Training Bias
  Perspective", AAAI 2026; its ``annotations.json``, a JSON array) adds ``image_id`` and asks each question twice:
  of the COCO image (``"image_name": "/normal_images/000000000139.jpg"``) and of its edited, counterfactual copy
  (``"/images/000000000139.jpg"``), which has the same file name.

  The Hugging Face release (``Monosail/POPEv2``, ``test.parquet``) holds the same 1,000 questions as 500 pairs,
  one row each: ``question``, ``target_object``, ``image_id``, ``normal_image`` and ``counterfactual_image``
  (``{"bytes", "path"}``, the images embedded) with their ``normal_label`` and ``counterfactual_label``; each row
  is read as its two questions, the normal one first (:func:`parquet_images` gives the embedded bytes).

Labels are read in either case ("yes", "Yes", "YES"). An image is kept as the file names it, less a leading
``/`` (POPEv2 writes ``/images/...`` relative to its own folder). The setting (random / popular / adversarial)
is taken from the file name when it names one; a file that names none and holds both images under ``images/``
and images elsewhere is POPEv2's pairs, and its settings are ``counterfactual`` (``images/``, as the authors'
``prepare_popev2_hf_parquet.py`` tells them apart) and ``normal``. Every problem is a
:class:`~sources.errors.SourceError` naming the file and the line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterator

from sources.errors import SourceError
from sources.jsonio import decode_problem

SETTINGS = ("random", "popular", "adversarial")
COUNTERFACTUAL_FOLDER = "images"
"""POPEv2's folder of edited images; its originals lie elsewhere (``normal_images/``)."""
QUESTION_OBJECT = re.compile(r"^is there (?:a|an) (.+?) in the image\?$", re.I)


@dataclass(frozen=True)
class PopeQuestion:
    question_id: str
    image: str
    """The image as the file names it (a leading ``/`` removed): a file name, or a path below the file's folder."""
    question: str
    label: str
    """``"yes"`` or ``"no"``, lower case."""
    target_object: str
    """The object asked about: v2's ``target_object``, else read from "Is there a/an X in the image?" ("" if the
    question does not have that form)."""
    image_id: str
    """POPEv2's COCO image id, shared by an image and its edited copy ("" where the file has none)."""
    setting: str
    """``random`` / ``popular`` / ``adversarial`` (from the file name), POPEv2's ``normal`` / ``counterfactual``,
    else ``unknown``."""
    line: int
    """The question's line (JSON lines), its position in the array (a JSON array) or its row (parquet), from 1."""
    embedded: bool = False
    """The image's bytes are in the file itself (POPEv2's parquet release), not in a folder of images."""


def setting_of(path: Path) -> str:
    """``random``, ``popular`` or ``adversarial`` when the file name says so, else ``unknown``."""
    found = [s for s in SETTINGS if s in path.name.lower()]
    return found[0] if len(found) == 1 else "unknown"


PARQUET_SIDES = (("normal", "normal_images"), ("counterfactual", COUNTERFACTUAL_FOLDER))
"""POPEv2's parquet columns ``<side>_image`` / ``<side>_label`` and the folder each side's images came from."""


def _parquet_rows(path: Path) -> list[dict]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise SourceError(path, "file", "reading parquet needs pyarrow: pip install pyarrow") from None
    try:
        return pq.read_table(path).to_pylist()
    except (OSError, ValueError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise SourceError(path, "file", f"not a readable parquet file ({exc})") from None


def _side_image(row: dict, side: str, path: Path, where: str) -> dict:
    image = row.get(f"{side}_image")
    if not isinstance(image, dict) or not image.get("bytes"):
        raise SourceError(path, where, f"no embedded {side}_image (a struct of bytes and path)")
    return image


def _parquet_sides(path: Path) -> Iterator[tuple[int, str, str, dict, dict, str]]:
    """``(row number, side, where, row, embedded image, image name)`` for both questions of every row."""
    for n, row in enumerate(_parquet_rows(path), start=1):
        for side, folder in PARQUET_SIDES:
            where = f"row {n} ({side})"
            image = _side_image(row, side, path, where)
            image_id = _field(row, ("image_id",), path, where)
            default = f"{folder}/{int(image_id):012d}.jpg" if image_id.isdigit() else f"{folder}/{image_id}.jpg"
            yield n, side, where, row, image, (image.get("path") or default).lstrip("/")


def _parquet_records(path: Path) -> list[tuple[int, str, object]]:
    """POPEv2's pairs as two records each, in the JSON layout (``query``, ``image_name``, ``label``, ...)."""
    return [(n, where, {"question_id": f"{_field(row, ('example_id',), path, where)}-{side}",
                        "image_id": row["image_id"], "query": row.get("question"),
                        "target_object": row.get("target_object"), "label": row.get(f"{side}_label"),
                        "image_name": name, "embedded": True})
            for n, side, where, row, _, name in _parquet_sides(path)]


def parquet_images(path: str | Path) -> dict[str, bytes]:
    """The images embedded in POPEv2's parquet release, by their name as :func:`read_pope` gives it."""
    return {name: image["bytes"] for *_, image, name in _parquet_sides(Path(path))}


def _records(path: Path) -> list[tuple[int, str, object]]:
    """``(number, where, record)``: where is "line N" in JSON lines, "record N" in a JSON array, "row N (side)" in
    POPEv2's parquet release."""
    if path.suffix.lower() == ".parquet":
        return _parquet_records(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SourceError(path, f"byte offset {exc.start}", f"not UTF-8 (byte 0x{exc.object[exc.start]:02x})") from None
    except OSError as exc:
        raise SourceError(path, "file", f"cannot read ({exc.strerror or exc})") from None
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SourceError(path, "", decode_problem(exc)) from None
        if not isinstance(data, list):
            raise SourceError(path, "file", f"expected a JSON array of questions, got {type(data).__name__}")
        return [(n, f"record {n}", record) for n, record in enumerate(data, start=1)]
    out = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append((n, f"line {n}", json.loads(line)))
        except json.JSONDecodeError as exc:
            raise SourceError(path, f"line {n}", decode_problem(exc, with_line=False)) from None
    return out


def _field(record: dict, names: tuple[str, ...], path: Path, where: str, required: bool = True) -> str:
    for name in names:
        if name in record and record[name] is not None:
            return str(record[name])
    if required:
        raise SourceError(path, where, f"no {' / '.join(names)} field (has: {', '.join(sorted(record)) or 'none'})")
    return ""


def read_pope(path: str | Path) -> list[PopeQuestion]:
    """Every question of one POPE file, in file order."""
    path = Path(path)
    if not path.is_file():
        raise SourceError(path, "file", "POPE question file not found")
    setting = setting_of(path)
    out = []
    for n, where, record in _records(path):
        if not isinstance(record, dict):
            raise SourceError(path, where, f"expected a JSON object, got {type(record).__name__}")
        question = _field(record, ("text", "query", "question"), path, where).strip()
        label = _field(record, ("label", "answer"), path, where).strip().lower()
        if label not in ("yes", "no"):
            raise SourceError(path, where, f"label {label!r} is neither yes nor no")
        target = _field(record, ("target_object", "object"), path, where, required=False)
        if not target:
            m = QUESTION_OBJECT.match(question)
            target = m.group(1) if m else ""
        out.append(PopeQuestion(
            question_id=_field(record, ("question_id", "id"), path, where, required=False) or str(n),
            image=_field(record, ("image", "image_name", "image_id"), path, where).lstrip("/"),
            question=question, label=label, target_object=target, setting=setting, line=n,
            image_id=_field(record, ("image_id",), path, where, required=False),
            embedded=record.get("embedded") is True,
        ))
    if not out:
        raise SourceError(path, "file", "no questions")
    return _popev2_settings(out) if setting == "unknown" else out


def _popev2_settings(questions: list[PopeQuestion]) -> list[PopeQuestion]:
    """POPEv2's pairs get ``counterfactual`` / ``normal`` settings; other files are returned as they are."""
    edited = [q.image.startswith(COUNTERFACTUAL_FOLDER + "/") for q in questions]
    if all(edited) or not any(edited):
        return questions
    return [replace(q, setting="counterfactual" if e else "normal") for q, e in zip(questions, edited)]
