"""Demo human activity and physical interaction items from the demo videos (:mod:`sources.demo.video`).

Both tasks run with no data: the demo videos' event scripts are the ground truth.

* **human activity**: the held-out event is the video's last event (with any event starting on the same frame);
  the context is ``context_frames`` evenly spaced frames from frame 0 to the frame before it starts, the context
  captions are the script's sentences of everything before it, the reference is its sentence. This mirrors the
  paper's ActivityNet/Charades construction (Sec. 3.1.2, App. D.2: "the starting timestamp of this annotated
  action as the cutoff point").
* **physical interaction**: videos whose script stages a collision (the demo videos already have them; no new
  videos are made, so Mementos' demo build is untouched). The context is evenly spaced frames from the start of
  the mover's run to the frame before the shapes touch; the reference names who collides with whom and which
  shapes continue unscathed (the CLEVRER query asks for both).

Frames are sampled through :func:`sources.video.sample_video` (cached by content) with a :class:`Window` policy.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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


def _narrated(record: VideoRecord) -> list[tuple[dict[str, Any], str]]:
    """Events paired with their sentences (``description[0]`` is the opening; shapes there from frame 0 have no
    sentence of their own)."""
    events = [e for e in record.meta["events"] if not (e["action"] == "appears" and e["frame"] == 0)]
    sentences = list(record.meta["description"])[1:]
    return list(zip(events, sentences))


def activity_clip(record: VideoRecord, n_frames: int) -> Clip | str:
    """The human-activity clip of a demo video, or why there is none."""
    narrated = _narrated(record)
    if not narrated:
        return "nothing happens in the video"
    cutoff = _start(narrated[-1][0])
    if cutoff < n_frames:
        return f"the last event starts at frame {cutoff}, before {n_frames} context frames"
    before = [s for e, s in narrated if _start(e) < cutoff]
    after = [(e, s) for e, s in narrated if _start(e) >= cutoff]
    captions = [record.meta["description"][0]] + before
    return Clip("human_activity", record, Window(0, cutoff - 1, n_frames), captions, " ".join(s for _, s in after),
                [e for e, _ in after], attributes=_cast(record))


def physics_clip(record: VideoRecord, n_frames: int) -> Clip | str:
    """The physical-interaction clip of a demo video (its collision held out), or why there is none."""
    narrated = _narrated(record)
    hits = [(e, s) for e, s in narrated if e["action"] == "collides with"]
    if not hits:
        return "no collision in the video"
    hit, sentence = hits[0]
    t = int(hit["frame"])
    run = [e for e, _ in narrated if e["object"] == hit["object"] and e["action"] == "moves" and e.get("end") == t]
    first = int(run[0]["start"]) if run else 0
    if t - first < n_frames:
        return f"the collision at frame {t} leaves fewer than {n_frames} frames of approach"
    pushed = [e for e, _ in narrated if e["object"] == hit["target"] and e["action"] == "moves" and e["start"] == t]
    reference = sentence
    if pushed:
        reference += f" The {hit['target']} is pushed {_way(pushed[0]['direction'])}."
    others = [c["name"] for c in record.meta["cast"] if c["name"] not in (hit["object"], hit["target"])]
    if others:
        reference += f" The {' and the '.join(others)} {'does' if len(others) == 1 else 'do'} not collide with anything."
    captions = [record.meta["description"][0]] + [s for e, s in narrated if _start(e) < t]
    return Clip("physical_interaction", record, Window(first, t - 1, n_frames), captions, reference,
                [hit] + pushed, attributes=_cast(record))


def _way(direction: str) -> str:
    return f"to the {direction}" if direction in ("left", "right") else direction


def _cast(record: VideoRecord) -> str:
    """The shapes as the MGAE prompt's "Attributes": colour, pattern and shape of each."""
    looks = [f"{c['colour']} {c['pattern'] + ' ' if c['pattern'] != 'solid' else ''}{c['category']}"
             for c in record.meta["cast"]]
    return "; ".join(looks)


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
