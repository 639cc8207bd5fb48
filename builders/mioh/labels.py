"""What the pools say of one (image, probe) pair - a :class:`Label` - and labels kept as numpy columns.

A table of labels is four arrays: the code (status and difficulty: :data:`UNDECIDED`, :data:`NEG`, ...), the signal
(an index into :data:`SIGNALS`), the score and the CLIP z (``NaN`` for none). Why: a paper-scale pool decides
millions of pairs at once (:mod:`builders.mioh.rules`); as columns they are computed with numpy, kept in the
prepared-pools cache as they are, and give back a :class:`Label` for the pair asked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

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

    @classmethod
    def of(cls, table: Mapping[str, Any], prefix: str, clip: Any = None) -> LabelColumns:
        """The labels a table holds under :meth:`columns` names (``clip``: whether CLIP z-scores are there)."""
        name = f"{prefix}_" if prefix else ""
        return cls(*(np.asarray(table[name + key]) for key in ("code", "signal", "score")),
                   np.asarray(table[name + "clip_z"]) if clip is not None and name + "clip_z" in table else None)

    def columns(self, prefix: str) -> dict[str, np.ndarray]:
        """The arrays by column name (``<prefix>_code``, ... or ``code``, ... without a prefix)."""
        name = f"{prefix}_" if prefix else ""
        found = {name + "code": self.codes, name + "signal": self.signals, name + "score": self.scores}
        return found if self.clip_z is None else {**found, name + "clip_z": self.clip_z}

    def take(self, order: np.ndarray) -> LabelColumns:
        """The labels of the cells ``order``, in that order."""
        return LabelColumns(self.codes[order], self.signals[order], self.scores[order],
                            None if self.clip_z is None else self.clip_z[order])

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
