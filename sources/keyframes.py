"""Frame policies for predictive reasoning's real sources (Giraffe-Bench, Sec. 3.1.2-3.1.3, App. D.2-D.3).

Policies for :func:`sources.video.sample_video` (a ``name`` and ``indices(frame_count, fps)``), so the frames go
through the project's video layer and its content-keyed cache like every other sampled frame:

==================  ============================================================================================
:class:`TimeSpans`  ``per_span`` frames inside each ``(start, end)`` span in seconds, at the centres of
                    ``per_span`` equal parts of it (``per_span = 1``: the span's middle frame). ActivityNet's
                    candidate frames per caption segment (CLIP picks one; without CLIP the middle one).
:class:`BeforeCut`  ``n`` evenly spaced frames from frame 0 to the last frame before ``cut`` seconds, both
                    included. Charades' context (the video is cut at the held-out action's start).
:class:`Fractions`  frames at fractions of the clip: ``f`` -> ``ceil(f * n) - 1`` (``1.0`` the last frame,
                    ``0.5`` the middle one). RoboSet's 1-2 keyframes per subtask clip.
==================  ============================================================================================

A frame index is ``floor(t * fps)`` (the frame showing time ``t``), clamped into the video: annotation times run
past the end of real videos (ActivityNet timestamps past ``duration``, Charades actions past ``length``).
Names carry every parameter (spans hashed when long), so two policies with different frames never share a cache
folder.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field

from .video import VideoSkipped


def _frame_at(seconds: float, fps: float, frame_count: int) -> int:
    return max(0, min(frame_count - 1, math.floor(seconds * fps + 1e-9)))


def _need_fps(fps: float | None) -> float:
    if fps is None or not math.isfinite(fps) or fps <= 0:
        raise VideoSkipped("the frame rate is unknown, so annotation times cannot be turned into frames")
    return float(fps)


@dataclass(frozen=True)
class TimeSpans:
    """``per_span`` frames inside each span (seconds), at the centres of equal parts; see the module table."""

    spans: tuple[tuple[float, float], ...]
    per_span: int = 1
    name: str = field(init=False, default="")

    def __post_init__(self) -> None:
        key = ";".join(f"{s:.3f}-{e:.3f}" for s, e in self.spans)
        digest = hashlib.sha256(key.encode()).hexdigest()[:16]
        object.__setattr__(self, "name", f"spans-{self.per_span}-{digest}")

    def groups(self, frame_count: int, fps: float | None) -> list[list[int]]:
        """The frames of each span, in span order (a frame may serve two overlapping spans)."""
        rate = _need_fps(fps)
        out = []
        for start, end in self.spans:
            width = max(0.0, end - start)
            out.append([_frame_at(start + (k + 0.5) * width / self.per_span, rate, frame_count)
                        for k in range(self.per_span)])
        return out

    def indices(self, frame_count: int, fps: float | None) -> list[int]:
        return sorted({i for group in self.groups(frame_count, fps) for i in group})


@dataclass(frozen=True)
class BeforeCut:
    """``n`` evenly spaced frames from 0 to the frame before ``cut`` seconds (both included)."""

    cut: float
    n: int
    name: str = field(init=False, default="")

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", f"before-{self.cut:.3f}-{self.n}")

    def indices(self, frame_count: int, fps: float | None) -> list[int]:
        rate = _need_fps(fps)
        first_held_out = math.floor(self.cut * rate + 1e-9)
        last = min(frame_count, first_held_out) - 1
        if last + 1 < self.n:
            raise VideoSkipped(f"only {last + 1} frames before the cut at {self.cut:g} s, fewer than {self.n}")
        if self.n == 1:
            return [last]
        return [(2 * k * last + (self.n - 1)) // (2 * (self.n - 1)) for k in range(self.n)]


@dataclass(frozen=True)
class Fractions:
    """Frames at fractions of the clip (``1.0``: the last frame); see the module table."""

    fractions: tuple[float, ...]
    name: str = field(init=False, default="")

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", "fractions-" + "-".join(f"{f:g}" for f in self.fractions))

    def indices(self, frame_count: int, fps: float | None = None) -> list[int]:
        if frame_count < len(self.fractions):
            raise VideoSkipped(f"{frame_count} frames is fewer than the {len(self.fractions)} keyframes asked for")
        return sorted({max(0, min(frame_count - 1, math.ceil(f * frame_count - 1e-9) - 1)) for f in self.fractions})
