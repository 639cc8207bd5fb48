"""Demo human activity and physical interaction items from the demo videos (:mod:`sources.demo.video`).

Both tasks run with no data: the demo videos' event scripts are the ground truth, and what the frames show of
them is decided by :mod:`sources.demo.shown` (pixel tests on each shape's rasterised mask).

* **human activity** (here: what the shapes will do): videos whose free shape keeps a routine
  (:data:`sources.demo.video.ROUTINES`: the same move again, back and forth, round a square, shrinking steadily to
  nothing, growing and shrinking in turn). The context is ``context_frames`` frames, one after each of the last
  steps, and the held-out event is the step that follows (or the disappearance the shrinking runs into): its cue
  is in the frames, and the item records it (``cue``). This mirrors the paper's ActivityNet/Charades construction
  (Sec. 3.1.2, App. D.2: "the starting timestamp of this annotated action as the cutoff point"). The context
  captions are the shown events of the context frames.
* **physical interaction**: videos whose script stages an interaction (:data:`sources.demo.video.OUTCOMES`): one
  shape runs at another and, as the frames before show, collides with it (constant speed on its line; then the
  bigger shape pushes the smaller on, or the smaller bounces back), stops short (it visibly slows down) or passes
  it (its line clears the other shape). The context is evenly spaced frames from the start of the run to the
  frame before the touch (the stop, or the moment it comes level); the reference says what happens and which
  other shapes continue unscathed (the CLEVRER query asks for both).

A context in which most consecutive frames are the same is left out (the video is skipped with the reason).
Frames are sampled through :func:`sources.video.sample_video` (cached by content) with a :class:`Window` policy.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sources.demo.shown import Shown, mostly_static
from sources.demo.video import _sentence
from sources.records import VideoRecord


@dataclass(frozen=True)
class Window:
    """``n`` evenly spaced frames from ``first`` to ``last`` inclusive (a frame policy for :func:`sample_video`)."""

    first: int
    last: int
    n: int
    name: str = field(init=False, default="")

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", f"window-{self.first}-{self.last}-{self.n}")

    def indices(self, frame_count: int, fps: float | None = None) -> list[int]:
        span = self.last - self.first
        if self.n == 1:
            return [self.first]
        return [self.first + (2 * k * span + (self.n - 1)) // (2 * (self.n - 1)) for k in range(self.n)]


@dataclass
class Clip:
    """One demo item to be: a video, the frames to show, the captions before and the held-out text."""

    task: str
    record: VideoRecord
    window: Window
    captions: list[str]
    reference: str
    held_out: list[dict[str, Any]]
    attributes: str = ""
    frames: tuple[str, ...] = ()
    indices: tuple[int, ...] = ()
    sha256: str = ""
    cue: dict[str, str] = field(default_factory=dict)
    """What in the frames the held-out event follows from (human activity: the routine's kind and its sentence)."""


def _start(event: dict[str, Any]) -> int:
    return int(event.get("frame", event.get("start", 0)))


def _end(event: dict[str, Any]) -> int:
    return int(event.get("end", event.get("frame", 0)))


def _way(direction: str) -> str:
    return f"to the {direction}" if direction in ("left", "right") else direction


def _cast(record: VideoRecord) -> str:
    """The shapes as the MGAE prompt's "Attributes": colour, pattern and shape of each."""
    looks = [f"{c['colour']} {c['pattern'] + ' ' if c['pattern'] != 'solid' else ''}{c['category']}"
             for c in record.meta["cast"]]
    return "; ".join(looks)


def _consequence(record: VideoRecord, hit: dict[str, Any]) -> dict[str, Any] | None:
    """The move that follows a collision: the other shape pushed on, or the mover bouncing back."""
    return next((e for e in record.meta["events"] if e["action"] == "moves" and e["start"] == hit["frame"]
                 and e["object"] in (hit["object"], hit["target"])), None)


def outcome_frames(record: VideoRecord, event: dict[str, Any]) -> list[int]:
    """The frames after the cut in which a held-out event shows: the last context frame, the middle of the event
    and its end (a collision: the end of what follows it; a pass: the end of the run)."""
    cut = _start(event)
    if event["action"] == "stops short of":
        return [cut - 1, min(record.frame_count - 1, cut + 10)]
    if event["action"] == "collides with":
        then = _consequence(record, event)
        end = _end(then) if then else cut
    elif event["action"] == "passes":
        end = max(_end(e) for e in record.meta["events"] if e["object"] == event["object"] and e["action"] == "moves"
                  and _start(e) < cut <= _end(e))
    else:
        end = _end(event)
    return sorted({cut - 1, (cut + end) // 2, end}) if end > cut else [cut - 1, cut]


def activity_clip(record: VideoRecord, n_frames: int) -> Clip | str:
    """The human-activity clip of a demo video: the last ``n_frames`` frames of its routine (one after each step,
    :data:`sources.demo.video.ROUTINES`) and the step that follows, or why there is none. A video without a
    routine has no item: its next event would have no cue in the frames."""
    routine = record.meta.get("routine") or {}
    if not routine:
        return "no shape keeps a routine (its next event would have no cue)"
    frames = routine["frames"]
    if not 3 <= n_frames <= len(frames):
        return f"a routine shows its cue in 3 to {len(frames)} context frames, not {n_frames}"
    window = Window(frames[-n_frames], frames[-1], n_frames)
    captions = Shown(record.meta, window.indices(record.frame_count)).description()
    held = routine["next"]
    clip = Clip("human_activity", record, window, captions, _sentence(held), [held], attributes=_cast(record))
    clip.cue = {"kind": routine["kind"], "said": f"The {routine['object']} {routine['cue']}."}
    return clip


def activity_clips(records: list[VideoRecord], n_frames: int) -> tuple[list[Clip], list[dict[str, str]]]:
    """One clip per video with a routine."""
    clips, skipped = [], []
    for rec in records:
        clip = activity_clip(rec, n_frames)
        if isinstance(clip, str):
            skipped.append({"task": "human_activity", "video": rec.id, "reason": clip})
        else:
            clips.append(clip)
    return clips, skipped


def physics_reference(staged: dict[str, Any], others: list[str]) -> str:
    """What happens when the run ends, worded by its outcome (:data:`sources.demo.video.OUTCOMES`), and which other
    shapes continue unscathed (the CLEVRER query asks for both)."""
    mover, other, way = staged["object"], staged["target"], _way(staged["direction"])
    if staged["outcome"] == "stops short":
        text = f"The {mover} slows down moving {way} and stops before it reaches the {other}: they do not collide."
    elif staged["outcome"] == "passes":
        text = f"The {mover} passes {staged['side']} the {other} without touching it: they do not collide."
    elif staged["outcome"] == "pushed":
        text = f"The {mover} collides with the {other}. The {other} is pushed {way}."
    else:
        back = {"left": "right", "right": "left", "up": "down", "down": "up"}[staged["direction"]]
        text = f"The {mover} collides with the {other} and bounces back {_way(back)}."
    if others:
        text += f" The {' and the '.join(others)} {'does' if len(others) == 1 else 'do'} not collide with anything."
    return text


def physics_clip(record: VideoRecord, n_frames: int) -> Clip | str:
    """The physical-interaction clip of a demo video (its staged interaction held out), or why there is none."""
    staged = record.meta.get("interaction") or {}
    if not staged:
        return "no interaction staged in the video"
    t, mover, other = int(staged["frame"]), staged["object"], staged["target"]
    run = [e for e in record.meta["events"] if e["object"] == mover and e["action"] == "moves"
           and _start(e) < t <= _end(e)]
    first = int(run[0]["start"]) if run else 0
    if t - first < n_frames:
        return f"the run reaching its end at frame {t} leaves fewer than {n_frames} frames of approach"
    held = {k: v for k, v in staged.items() if k not in ("outcome", "direction")}
    if staged["outcome"] in ("pushed", "bounces back"):
        hit = next(e for e in record.meta["events"] if e["action"] == "collides with" and e["frame"] == t)
        then = _consequence(record, hit)
        held_out = [hit] + ([then] if then else [])
    else:
        held_out = [held]
    others = [c["name"] for c in record.meta["cast"] if c["name"] not in (mover, other)]
    window = Window(first, t - 1, n_frames)
    captions = Shown(record.meta, window.indices(record.frame_count)).description()
    return Clip("physical_interaction", record, window, captions, physics_reference(staged, others), held_out,
                attributes=_cast(record))


def drop_static(clips: list[Clip]) -> tuple[list[Clip], list[dict[str, str]]]:
    """Clips whose context frames are mostly the same, pixel for pixel, are left out: nothing moves in them."""
    kept, skipped = [], []
    for clip in clips:
        why = mostly_static(clip.frames)
        if why is None:
            kept.append(clip)
        else:
            skipped.append({"task": clip.task, "video": clip.record.id,
                            "reason": why.replace(" frames", " context frames")})
    return kept, skipped


def sample_clips(clips: list[Clip], cache_dir: str, backend: str, update: Callable[[int, int], None]
                 ) -> tuple[list[Clip], list[dict[str, str]]]:
    """Frames of every clip (from the frame cache when sampled before); unreadable videos are skipped."""
    from sources.video import VideoSkipped, sample_video

    kept, skipped = [], []
    for n, clip in enumerate(clips, 1):
        try:
            s = sample_video(clip.record, clip.window, cache_dir, backend=backend)
        except VideoSkipped as exc:
            skipped.append({"task": clip.task, "video": clip.record.id, "reason": exc.reason})
        else:
            clip.frames, clip.indices, clip.sha256 = s.frames, s.indices, s.sha256
            kept.append(clip)
        update(n, len(clips))
    return kept, skipped


def frame_name(clip: Clip, index: int) -> str:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", clip.record.id).strip("_") or "video"
    return f"{slug}-{clip.sha256[:8]}-f{index:06d}{Path(clip.frames[0]).suffix if clip.frames else '.png'}"
