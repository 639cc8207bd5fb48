"""Descriptions of Mementos' robot episodes and comics, written by people (``annotation author --kind descriptions``).

The paper's descriptions were written by people, and ``builders.mementos`` skips a robot episode or comic without
one ("no description (write description.txt beside it)"). Push shows every such sequence (read by the readers
the builder uses, ``sources.robot.read_robot_episodes`` and ``sources.comics.read_comics``) as the builder will
sample it (the ``robotics`` policy; every panel of a comic), titled "Frame k (t = s)"; pull validates each
description (one paragraph, at least ``--min-words`` words) and writes exactly the file the reader looks for
(:func:`builders.authorship.description_file`), never over an existing one.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Sequence

from builders.authoring import Answer, AuthoringHook, Field, Form, Inputs, Output, Subject
from builders.authorship import description_file
from sources.comics import read_comics
from sources.robot import read_robot_episodes
from sources.video import sample_video

DESCRIPTION = "description"
MIN_WORDS = 8
"""A description shorter than this cannot name the objects and the behaviours Mementos extracts keywords from."""

GUIDE = (
    "Describe what happens across the frames, in order, in one paragraph: the objects, what each does and how "
    "things change. Only what the frames show: no guesses about what came before or after."
)


def description_rule(min_words: int = MIN_WORDS) -> str:
    """What pull accepts, said where the person writes (a shorter text is not used)."""
    return f"One paragraph, at least {min_words} words; a shorter text is not used."


def validate_description(text: str, min_words: int = MIN_WORDS) -> str | None:
    """Why a description cannot be used, or ``None``: empty, shorter than ``min_words`` words, several paragraphs."""
    if not text.strip():
        return "empty"
    if "\n\n" in text.strip():
        return "several paragraphs (write one)"
    words = len(re.findall(r"\w+", text))
    if words < min_words:
        return f"{words} word(s), fewer than {min_words}"
    return None


def _sequence_records(robot: Path | None, comics: Path | None) -> list[tuple[str, Any]]:
    """``(source, record)`` of every robot episode and comic, read by the readers the builder uses."""
    out = []
    for source, root, reader in (("robot", robot, read_robot_episodes), ("comics", comics, read_comics)):
        if root is not None:
            out.extend((source, rec) for rec in reader(root))
    return out


def _frames_of(record: Any, source: str, cache_dir: Path | None) -> tuple[tuple[Path, ...], tuple[str, ...]]:
    if source == "comics":
        panels = tuple(Path(p) for p in record.meta["panels"])
        return panels, tuple(f"Panel {k}" for k in range(1, len(panels) + 1))
    sampled = sample_video(record, "robotics", cache_dir, on_error="fail")
    fps = sampled.fps
    titles = tuple(
        f"Frame {k} (t = {i / fps:.2f} s)" if fps else f"Frame {k} (frame {i})"
        for k, i in enumerate(sampled.indices, 1)
    )
    return tuple(Path(p) for p in sampled.frames), titles


def description_targets(robot: Path | None = None, comics: Path | None = None) -> dict[str, Path]:
    """``{key: file}`` for every sequence: where pull writes its description. Tasks carry only the key (every
    member of the room can read task data; no path of the maintainer's machine is shown)."""
    return {f"{source}/{rec.id}": description_file(rec.file).resolve()
            for source, rec in _sequence_records(robot, comics)}


class Descriptions(AuthoringHook):
    kind = "descriptions"
    benchmark = "mementos"
    summary = "descriptions of robot episodes (--robot) and comics (--comics) the Mementos builder skips"
    noun = "description(s)"

    def _roots(self, inputs: Inputs) -> tuple[Path | None, Path | None]:
        robot, comics = inputs.get("robot"), inputs.get("comics")
        if not (robot or comics):
            self.need(inputs, "robot", "DIR and/or --comics DIR (the sequences, as builders.mementos reads them)")
        return robot, comics

    def form(self, inputs: Inputs) -> Form:
        rule = description_rule(inputs.get("min_words") or MIN_WORDS)
        return Form(f"{GUIDE} {rule}", (Field(
            DESCRIPTION, f"Description ({rule})", rows=5, required_message=f"Write the description: {rule}",
            placeholder="What happens across the frames, in order"),))

    def subjects(self, inputs: Inputs) -> list[Subject]:
        """The robot episodes and comics that have no description yet, with the frames the builder would show."""
        out = []
        for source, rec in _sequence_records(*self._roots(inputs)):
            if rec.meta.get("description"):
                continue
            frames, titles = _frames_of(rec, source, inputs.get("cache_dir"))
            unit = "panels" if source == "comics" else "frames"
            key = f"{source}/{rec.id}"
            out.append(Subject(key, frames, titles, f"{source} / {key} / {len(frames)} {unit}: write the description"))
        return out

    def outputs(self, answers: Sequence[Answer], inputs: Inputs) -> tuple[list[Output], list[str]]:
        targets = description_targets(*self._roots(inputs))
        min_words = inputs.get("min_words") or MIN_WORDS
        outputs, problems = [], []
        for a in answers:
            target = targets.get(a.key) or a.data.get("target")  # a task pushed by an older Mirage names its file
            if not target:
                problems.append(a.problem("no such robot episode or comic in the folders given (pass the --robot / "
                                          "--comics of author push)"))
                continue
            text = " ".join(str(t) for t in a.values.get(DESCRIPTION, [])).strip()
            problem = validate_description(text, min_words)
            if problem:
                problems.append(a.problem(f"description {problem}"))
                continue
            path = Path(target)
            outputs.append(Output(path, (text + "\n").encode(), {path.name: a.author}, (str(path),),
                                  keep_existing=True))
        return outputs, problems


DESCRIPTIONS = Descriptions()
