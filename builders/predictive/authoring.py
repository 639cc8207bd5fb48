"""Predictive pattern entries written by people (``annotation author --kind patterns``): for folders of 3 to 5
images in order, the rule they follow and what the next image shows, as the JSONL ``builders.predictive
--authored`` reads (the paper's hand-made entries, App. D.1).

Push makes one task per sub-folder of ``--images`` holding 3 to 5 images; pull writes every submitted entry,
validated by the builder's own reader (:func:`builders.predictive.authored.read_authored`), to ``--out`` (image
paths relative to it, where the reader resolves them).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

from builders.authoring import Answer, AuthoringHook, Field, Form, Inputs, Output, Subject, jsonl, reader_problem
from builders.predictive.authored import MAX_IMAGES, MIN_IMAGES, read_authored
from builders.predictive.patterns.base import DIMENSIONS
from sources.video import frame_images, natural_key

PATTERN, PRED, DIMENSION = "pattern", "pred", "dimension"


def pattern_sequences(root: Path) -> list[tuple[str, tuple[Path, ...]]]:
    """``(id, images in natural order)`` for each sub-folder of ``root`` holding 3 to 5 images."""
    out = []
    for folder in sorted((p for p in Path(root).iterdir() if p.is_dir()), key=lambda p: natural_key(p.name)):
        frames = tuple(Path(f) for f in frame_images(folder))
        if MIN_IMAGES <= len(frames) <= MAX_IMAGES:
            out.append((folder.name, frames))
    return out


class Patterns(AuthoringHook):
    kind = "patterns"
    benchmark = "predictive"
    summary = ("predictive pattern entries for the sequence folders of --images, 3-5 images each (the JSONL "
               "builders.predictive --authored reads)")

    def form(self, inputs: Inputs) -> Form:
        return Form("Write the rule the images follow (the pattern) and what the next image will show (the "
                    "prediction), as in the predictive-reasoning paper's authored entries.", (
            Field(PATTERN, "Pattern: what changes from image to image", rows=3),
            Field(PRED, "Prediction: what the next image will show", rows=2),
            Field(DIMENSION, "Dimension", kind="choice", choices=tuple(DIMENSIONS), required=False),
        ))

    def _root(self, inputs: Inputs) -> Path:
        out = inputs.get("out")
        if inputs.get("images") is None and out is not None:  # pull: by default the folder of --out
            return Path(out).resolve().parent
        return Path(self.need(inputs, "images", "DIR (a folder of sequence folders, 3 to 5 images each)")).resolve()

    def subjects(self, inputs: Inputs) -> list[Subject]:
        """One subject per sequence folder (its name the key), the images relative to the folder pushed."""
        root = self._root(inputs)
        return [Subject(key, frames, tuple(f"Image {k}" for k in range(1, len(frames) + 1)),
                        f"{key}: {len(frames)} images in order",
                        {"files": [f.resolve().relative_to(root).as_posix() for f in frames]})
                for key, frames in pattern_sequences(root)]

    def outputs(self, answers: Sequence[Answer], inputs: Inputs) -> tuple[list[Output], list[str]]:
        out = Path(self.need(inputs, "out", "FILE.jsonl (the entries file to write)")).resolve()
        root = self._root(inputs)
        entries, authors, problems = [], {}, []
        for a in answers:
            entry = {"id": a.key, "images": [os.path.relpath(root / f, out.parent) for f in a.data.get("files") or []],
                     "pattern": a.text(PATTERN), "pred": a.text(PRED)}
            if a.choice(DIMENSION):
                entry["dimension"] = a.choice(DIMENSION)
            problem = reader_problem(entry, read_authored, out.parent)  # images resolve beside --out
            if problem:
                problems.append(a.problem(problem))
                continue
            entries.append(entry)
            authors[entry["id"]] = a.author
        entries.sort(key=lambda e: e["id"])
        return [Output(out, jsonl(entries), authors, tuple(e["id"] for e in entries))], problems


PATTERNS = Patterns()
