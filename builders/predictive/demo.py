"""Demo human activity and physical interaction items from the demo videos (:mod:`sources.demo.video`).

Both tasks run with no data: the demo videos' event scripts are the ground truth, and what the frames show of
them is decided by :mod:`sources.demo.shown` (pixel tests on each shape's rasterised mask).

* **human activity** (here: what the shapes will do): the held-out event is one of the video's events (with any
  event starting on the same frame); the context is ``context_frames`` evenly spaced frames from frame 0 to the
  frame before it starts. This mirrors the paper's ActivityNet/Charades construction (Sec. 3.1.2, App. D.2: "the
  starting timestamp of this annotated action as the cutoff point"). A video offers every event that starts late
  enough for the context, shows after the cut (between the last context frame and the event's end: its
  ``outcome_frames``), and leaves a context in which something moves (at least one shown event); across the
  build the held-out kind of action is the one used least so far (ties: a seeded draw), so the references do
  not all read "X disappears". The context captions are the shown events of the context frames.
* **physical interaction**: videos whose script stages an interaction (:data:`sources.demo.video.OUTCOMES`: one
  shape runs at another along a row or a column and pushes it on, bounces back off it, or stops short of it). The
  context is evenly spaced frames from the start of the run to the frame before the touch (or the stop); the
  reference says who collides with whom and what follows, or that nothing collides, and which shapes continue
  unscathed (the CLEVRER query asks for both).

A context in which most consecutive frames are the same is left out (the video is skipped with the reason).
Frames are sampled through :func:`sources.video.sample_video` (cached by content) with a :class:`Window` policy.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from builders.seeding import rng
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
    """The frames after the cut in which a held-out event must show: the last context frame, the middle of the event
    (a jump is seen there) and its end (a collision: the end of what follows it)."""
    cut = _start(event)
    if event["action"] == "stops short of":
        return [cut - 1, min(record.frame_count - 1, cut + 10)]
    if event["action"] == "collides with":
        then = _consequence(record, event)
        end = _end(then) if then else cut
    else:
        end = _end(event)
    return sorted({cut - 1, (cut + end) // 2, end}) if end > cut else [cut - 1, cut]


Memo = dict[str, Any]
"""Shared by the :class:`Shown` of one video: its shapes are rebuilt and rasterised once per frame."""


def shows_after_cut(record: VideoRecord, event: dict[str, Any], memo: Memo | None = None) -> bool:
    """True when the held-out event shows in its :func:`outcome_frames` (for a collision: what follows it)."""
    frames = outcome_frames(record, event)
    if event["action"] == "collides with":
        then = _consequence(record, event)
        return then is not None and Shown(record.meta, frames, memo).event(then)
    return Shown(record.meta, frames, memo).event(event)


def activity_candidates(record: VideoRecord, n_frames: int, memo: Memo | None = None) -> list[dict[str, Any]] | str:
    """The events of a video that can be held out (see the module docstring), or why there is none."""
    events = [e for e in record.meta["events"] if not (e["action"] == "appears" and e["frame"] == 0)]
    if not events:
        return "nothing happens in the video"
    late = [e for e in events if _start(e) >= n_frames]
    if not late:
        return f"no event starts after frame {n_frames - 1} (room for {n_frames} context frames)"
    out = []
    for e in late:
        window = Window(0, _start(e) - 1, n_frames)
        if shows_after_cut(record, e, memo) and Shown(record.meta, window.indices(record.frame_count), memo).events():
            out.append(e)
    return out or "no late event shows after its cut with something moving before it"


def activity_clip(record: VideoRecord, n_frames: int, event: dict[str, Any], memo: Memo | None = None) -> Clip:
    """The human-activity clip holding out ``event`` (and every event starting on its frame that shows)."""
    cutoff = _start(event)
    window = Window(0, cutoff - 1, n_frames)
    held = [e for e in record.meta["events"]
            if _start(e) == cutoff and (e is event or shows_after_cut(record, e, memo))]
    shown = Shown(record.meta, window.indices(record.frame_count), memo)
    return Clip("human_activity", record, window, shown.description(), " ".join(_sentence(e) for e in held),
                held, attributes=_cast(record))


def activity_clips(records: list[VideoRecord], n_frames: int, seed: int) -> tuple[list[Clip], list[dict[str, str]]]:
    """One clip per video that has a candidate; the held-out kind of action is the one used least so far."""
    used: Counter = Counter()
    clips, skipped = [], []
    for rec in records:
        memo: Memo = {}
        candidates = activity_candidates(rec, n_frames, memo)
        if isinstance(candidates, str):
            skipped.append({"task": "human_activity", "video": rec.id, "reason": candidates})
            continue
        order = rng(seed, f"predictive/demo/held-out/{rec.id}").permutation(len(candidates))
        event = min((candidates[int(k)] for k in order), key=lambda e: used[e["action"]])
        used[event["action"]] += 1
        clips.append(activity_clip(rec, n_frames, event, memo))
    return clips, skipped


def physics_clip(record: VideoRecord, n_frames: int) -> Clip | str:
    """The physical-interaction clip of a demo video (its staged interaction held out), or why there is none."""
    staged = record.meta.get("interaction") or {}
    if not staged:
        return "no interaction staged in the video"
    t, mover, other = int(staged["frame"]), staged["object"], staged["target"]
    run = [e for e in record.meta["events"] if e["object"] == mover and e["action"] == "moves" and e.get("end") == t]
    first = int(run[0]["start"]) if run else 0
    if t - first < n_frames:
        return f"the run ending at frame {t} leaves fewer than {n_frames} frames of approach"
    if staged["outcome"] == "stops short":
        held = [{"frame": t, "object": mover, "action": "stops short of", "target": other, "gap": staged["gap"]}]
        reference = f"The {mover} stops before it reaches the {other}: they do not collide."
    else:
        hit = next(e for e in record.meta["events"] if e["action"] == "collides with" and e["frame"] == t)
        then = _consequence(record, hit)
        held = [hit] + ([then] if then else [])
        if staged["outcome"] == "pushed":
            reference = f"The {mover} collides with the {other}. The {other} is pushed {_way(staged['direction'])}."
        else:
            back = then["direction"] if then else staged["direction"]
            reference = f"The {mover} collides with the {other} and bounces back {_way(back)}."
    others = [c["name"] for c in record.meta["cast"] if c["name"] not in (mover, other)]
    if others:
        reference += f" The {' and the '.join(others)} {'does' if len(others) == 1 else 'do'} not collide with anything."
    window = Window(first, t - 1, n_frames)
    captions = Shown(record.meta, window.indices(record.frame_count)).description()
    return Clip("physical_interaction", record, window, captions, reference, held, attributes=_cast(record))


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
