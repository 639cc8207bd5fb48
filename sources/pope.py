"""POPE's question files (Li et al., "Evaluating Object Hallucination in Large Vision-Language Models", 2023).

Two layouts, one question per line (JSON lines; a JSON array of the same objects is accepted too):

* POPE v1 (``coco_pope_{random,popular,adversarial}.json``): ``{"question_id": 1, "image": "COCO_val2014_...jpg",
  "text": "Is there a snowboard in the image?", "label": "yes"}``;
* v2 layouts: ``{"query": ..., "image_name": ..., "target_object": ..., "label": "Yes"}`` (``question_id`` or
  ``id`` when present).

Labels are read in either case ("yes", "Yes", "YES"). The setting (random / popular / adversarial) is taken
from the file name when it names one. Every problem is a :class:`~sources.errors.SourceError` naming the file
and the line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from sources.errors import SourceError
from sources.jsonio import decode_problem

SETTINGS = ("random", "popular", "adversarial")
QUESTION_OBJECT = re.compile(r"^is there (?:a|an) (.+?) in the image\?$", re.I)


@dataclass(frozen=True)
class PopeQuestion:
    question_id: str
    image: str
    question: str
    label: str
    """``"yes"`` or ``"no"``, lower case."""
    target_object: str
    """The object asked about: v2's ``target_object``, else read from "Is there a/an X in the image?" ("" if the
    question does not have that form)."""
    setting: str
    line: int


def setting_of(path: Path) -> str:
    """``random``, ``popular`` or ``adversarial`` when the file name says so, else ``unknown``."""
    found = [s for s in SETTINGS if s in path.name.lower()]
    return found[0] if len(found) == 1 else "unknown"


def _records(path: Path) -> list[tuple[int, object]]:
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
        return list(enumerate(data, start=1))
    out = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append((n, json.loads(line)))
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
    for n, record in _records(path):
        where = f"line {n}"
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
            image=_field(record, ("image", "image_name", "image_id"), path, where),
            question=question, label=label, target_object=target, setting=setting, line=n,
        ))
    if not out:
        raise SourceError(path, "file", "no questions")
    return out
