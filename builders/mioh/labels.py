"""What the pools say of one (image, probe) pair - a :class:`Label` - and labels kept as numpy columns, the
pools' decision tables (:meth:`builders.mioh.pools.Pools.prepare`).

A label is five fields; a table of them - every category an image shows, every
attribute of its instances, every relation a scene graph annotates - is five arrays here: the code
(:func:`builders.mioh.labels.label_code`, which holds status and difficulty), the signal (an index into
:data:`SIGNALS`), the score and the CLIP z (``NaN`` for none). Why: a paper-scale pool decides millions of pairs;
as Python objects they took a prepared (cached) pool most of its load time, as columns they load as a few
arrays and give back an equal :class:`Label` for the pair asked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Label:
    """Whether a probe holds in an image (``pos``/``neg``), how hard that is to see, and why."""

    status: str
    hard: bool = False
    signal: str | None = None
    """What made it hard: ``small``/``occluded``/``truncated``, ``cooccurrence``, ``attribute``, ``relation``, ``clip``."""
    score: float | None = None
    """The score behind the signal (relative area, occlusion, P(object | cue), CLIP z)."""
    clip_z: float | None = None
    """CLIP z-score of the pair when the CLIP stage ran (recorded whichever signal decided)."""


SIGNALS: tuple[str | None, ...] = (None, "small", "occluded", "truncated", "cooccurrence", "attribute", "relation",
                                   "clip")
"""Every :attr:`Label.signal`, numbered (0: none)."""

UNDECIDED, NEG, NEG_HARD, POS, POS_HARD = -1, 0, 1, 2, 3
"""Labels as small integers (label rows, attribute columns, these tables): undecidable, then status x hard."""


def label_code(label: Label | None) -> int:
    """The code of one label (``None``: :data:`UNDECIDED`)."""
    if label is None:
        return UNDECIDED
    return (POS if label.status == "pos" else NEG) + int(label.hard)


@dataclass
class LabelColumns:
    """Labels of the cells of an array shape (image x category, images x attributes, or a flat run of pairs)."""

    codes: np.ndarray
    signals: np.ndarray
    scores: np.ndarray
    clip_z: np.ndarray | None = None
    """Only where some label has a CLIP z (the CLIP stage ran)."""

    @classmethod
    def undecided(cls, shape: int | tuple[int, ...]) -> LabelColumns:
        """Every cell undecidable."""
        return cls(np.full(shape, UNDECIDED, dtype=np.int8), np.zeros(shape, dtype=np.int8),
                   np.full(shape, np.nan, dtype=np.float64))

    def put(self, cell: Any, label: Label | None) -> None:
        """Write ``label`` into ``cell`` (an index into the arrays)."""
        self.codes[cell] = label_code(label)
        if label is None:
            return
        self.signals[cell] = SIGNALS.index(label.signal)
        self.scores[cell] = np.nan if label.score is None else label.score
        if label.clip_z is not None:
            if self.clip_z is None:
                self.clip_z = np.full(self.codes.shape, np.nan, dtype=np.float64)
            self.clip_z[cell] = label.clip_z

    def get(self, cell: Any) -> Label | None:
        """The label written into ``cell`` (an equal one), or ``None`` where undecidable."""
        code = int(self.codes[cell])
        if code == UNDECIDED:
            return None
        return Label("pos" if code >= POS else "neg", code in (NEG_HARD, POS_HARD), SIGNALS[int(self.signals[cell])],
                     _number(self.scores[cell]), None if self.clip_z is None else _number(self.clip_z[cell]))


def _number(value: np.floating) -> float | None:
    x = float(value)
    return None if math.isnan(x) else x
