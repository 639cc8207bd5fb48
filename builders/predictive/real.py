"""Human activity and physical interaction items from the paper's datasets (Sec. 3.1.2-3.1.3, App. D.2-D.3).

* **ActivityNet Captions**: a video's segments in time order, the first ``segments_per_item`` of them; the last
  is held out (its caption is the reference), every earlier one gives one image: of ``clip_candidates`` frames
  inside the segment (cut at the held-out segment's start, so no image shows it) the one CLIP finds closest to
  the segment's caption (the paper: CLIP ViT-L/14, cosine similarity); without CLIP weights the segment's middle
  frame, and build.json says so. Each segment's image comes after the one before (overlapping captions would
  otherwise put frames out of time order, against the prompt's "chronological order"), and a frame whose
  pixels an earlier segment's image already shows is passed over (overlapping segments, still stretches); a
  segment left without a frame skips the video, and so does a video more than a second shorter than its
  annotation (its times no longer point at its frames). The context captions
  go to the provenance (the PPE evaluator's D).
* **Charades**: :mod:`builders.predictive.charades_steps` picks the held-out action; ``context_frames`` evenly
  spaced frames before its start are the images.
* **CLEVRER**: the last frame of each of the first five seconds; the reference words every collision after the
  last shown frame from the annotation ("The red rubber cube collides with the blue metal sphere.") and names the
  objects that continue unscathed; a share of items (``clevrer_no_collision_share``) comes from videos with no
  later collision ("No collision happens. ...").
* **RoboSet**: the subtasks before the last give 1-2 keyframes each (two - the middle and the last frame - while
  that stays within five images, else one, the last), 3-5 in all; the last subtask is the reference.

Choices where the paper is silent: which videos when there are more than the paper's sizes (a seeded order,
``rng(seed, "predictive/<source>/order")``, taken until the size is reached; unreadable videos are skipped and the
next one taken); ActivityNet items need at least ``min_segments`` segments (two images) and use the first
``segments_per_item``; a CLEVRER collision repeated between the same two objects is said once; RoboSet references
read "The robotic arm will <subtask caption>.".
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from builders.predictive.config import PredictiveConfig
from builders.seeding import rng

Update = Callable[[int, int], None]


@dataclass
class RealClip:
    """One item to be: its frames (cache paths with their video's hash and frame index) and texts."""

    source: str
    task: str
    video_id: str
    frames: list[tuple[str, str, int]]
    """``(png path, video sha256, frame index)`` in display order."""
    reference: str
    provenance: dict[str, Any] = field(default_factory=dict)


@dataclass
class SourceResult:
    clips: list[RealClip] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    read: int = 0
    notes: dict[str, Any] = field(default_factory=dict)

    def skip(self, task: str, video: str, reason: str) -> None:
        self.skipped.append({"task": task, "video": video, "reason": reason})


def seeded_order(records: Sequence[Any], seed: int, source: str) -> list[Any]:
    order = rng(seed, f"predictive/{source}/order").permutation(len(records))
    return [records[int(i)] for i in order]


def _sample(out: SourceResult, task: str, record: Any, policy: Any, config: PredictiveConfig, step: str) -> Any:
    """The record's frames under ``policy``, or ``None`` with the skip recorded (``step``: where it failed)."""
    from sources.video import VideoSkipped, sample_video

    if not record.file:
        out.skip(task, record.id, f"{step}: video file not found")
        return None
    try:
        return sample_video(record, policy, config.resolved_cache_dir(), backend=config.backend)
    except VideoSkipped as exc:
        out.skip(task, record.id, f"{step}: {exc.reason}")
        return None


def _limit(records: list[Any], config: PredictiveConfig) -> list[Any]:
    return records if config.max_videos is None else records[:config.max_videos]


# ------------------------------------------------------------------------------------------------ ActivityNet


def activitynet_clips(config: PredictiveConfig, scorer: Any, update: Update) -> SourceResult:
    from sources.activitynet import read_activitynet
    from sources.keyframes import TimeSpans

    task, out = "human_activity", SourceResult()
    records = _limit(read_activitynet(config.activitynet, config.videos), config)
    out.read = len(records)
    candidates = config.clip_candidates if scorer is not None else 1
    for n, rec in enumerate(seeded_order(records, config.seed, "activitynet"), 1):
        update(n, len(records))
        if len(out.clips) >= config.activitynet_items:
            break
        segments = rec.meta["segments"][:config.segments_per_item]
        if len(segments) < config.min_segments:
            out.skip(task, rec.id, f"activitynet: {len(rec.meta['segments'])} segments, fewer than "
                                   f"{config.min_segments}")
            continue
        held, context = segments[-1], segments[:-1]
        if any(s["start"] >= held["start"] for s in context):
            out.skip(task, rec.id, "activitynet: a context segment starts with the held-out one")
            continue
        policy = TimeSpans(tuple((s["start"], min(s["end"], held["start"])) for s in context), candidates)
        sampled = _sample(out, task, rec, policy, config, "activitynet")
        if sampled is None:
            continue
        shorter = _shorter_than_annotated(rec.meta["duration"], sampled.frame_count, sampled.fps)
        if shorter:
            out.skip(task, rec.id, f"activitynet: {shorter}")
            continue
        by_index = dict(zip(sampled.indices, sampled.frames))
        groups = policy.groups(sampled.frame_count, sampled.fps)
        if any(i >= held["start"] * sampled.fps for g in groups for i in g):
            out.skip(task, rec.id, "activitynet: the held-out segment starts within a context segment's first frame")
            continue
        chosen, scores, shown = [], [], set()
        for group, seg in zip(groups, context):
            # after the image of the segment before: the prompt promises the images in time order, and where
            # captions overlap, a frame of a later segment can come before one of an earlier segment
            options = [i for i in group if (not chosen or i > chosen[-1]) and _pixels(by_index[i]) not in shown]
            if not options:
                break
            if scorer is None:
                chosen.append(options[0])
                scores.append(None)
            else:
                sims = scorer.similarity([by_index[i] for i in options], [seg["sentence"]])[:, 0]
                best = int(max(range(len(options)), key=lambda k: (round(float(sims[k]), 6), -k)))
                chosen.append(options[best])
                scores.append(round(float(sims[best]), 4))
            shown.add(_pixels(by_index[chosen[-1]]))
        if len(chosen) < len(context):
            out.skip(task, rec.id, f"activitynet: context segment {len(chosen) + 1} has no frame after, and unlike, "
                                   "the frames of the segments before it")
            continue
        out.clips.append(RealClip("activitynet", task, rec.id, [(by_index[i], sampled.sha256, i) for i in chosen],
                                  held["sentence"], {
            "context_captions": [s["sentence"] for s in context], "segments": segments,
            "held_out_segment": held, "frame_indices": chosen, "fps": sampled.fps,
            "frame_count": sampled.frame_count, "frame_choice": "clip" if scorer is not None else "middle",
            "clip_scores": scores, "candidates_per_segment": candidates,
        }))
    return out


ANNOTATION_SLACK = 1.0
"""Seconds an ActivityNet video may be shorter than its annotation's ``duration`` (containers round their
length); a video shorter by more was cut or re-encoded, and its annotated times no longer point at its frames."""


def _shorter_than_annotated(duration: float, frame_count: int, fps: float | None) -> str | None:
    """Why a video cannot carry its annotation's times (``None`` when it can): it lasts more than
    :data:`ANNOTATION_SLACK` less than the annotation says, or it does not say its frame rate."""
    if not fps:
        return "the video does not give its frame rate, so the annotation's times cannot be found in it"
    lasts = frame_count / fps
    if lasts < duration - ANNOTATION_SLACK:
        return f"the video lasts {lasts:.2f} s, {duration - lasts:.2f} s less than its annotation's {duration:g} s"
    return None


def _pixels(png: str) -> str:
    """A digest of a frame's pixels: two segments must not show the same picture (overlapping segments give the
    same middle frame, a still video the same pixels at two indices)."""
    import hashlib

    import numpy as np
    from PIL import Image

    with Image.open(png) as im:
        return hashlib.sha256(np.ascontiguousarray(np.asarray(im.convert("RGB"))).tobytes()).hexdigest()


# --------------------------------------------------------------------------------------------------- Charades


def charades_clips(config: PredictiveConfig, update: Update) -> SourceResult:
    from builders.predictive.charades_steps import Failure, lemma_bag, predict
    from filters.text import load_nlp, nlp_name
    from sources.charades import read_charades, read_charades_classes
    from sources.keyframes import BeforeCut

    task, out = "human_activity", SourceResult()
    assert config.charades_classes
    classes = read_charades_classes(config.charades_classes)
    records = _limit(read_charades(config.charades, classes, config.videos), config)
    out.read = len(records)
    nlp = load_nlp()
    bags = {code: lemma_bag(text, nlp) for code, text in classes.items()}
    out.notes["spacy"] = nlp_name(nlp)
    for n, rec in enumerate(seeded_order(records, config.seed, "charades"), 1):
        update(n, len(records))
        if len(out.clips) >= config.charades_items:
            break
        found = predict(rec.meta["description"], rec.meta["actions"], classes, nlp, bags, config.min_similarity)
        if isinstance(found, Failure):
            out.skip(task, rec.id, f"charades {found}")
            continue
        if found.start >= rec.meta["length"]:
            out.skip(task, rec.id, f"charades step 3: the action starts at {found.start:g} s, past the video's "
                                   f"length {rec.meta['length']:g} s")
            continue
        sampled = _sample(out, task, rec, BeforeCut(found.start, config.context_frames), config, "charades step 3")
        if sampled is None:
            continue
        out.clips.append(RealClip("charades", task, rec.id,
                                  [(f, sampled.sha256, i) for f, i in zip(sampled.frames, sampled.indices)],
                                  found.clause, {
            "context_captions": [found.context_text] if found.context_text else [],
            "description": rec.meta["description"], "verb": found.verb, "noun": found.noun,
            "action": found.code, "action_text": classes[found.code], "similarity": found.similarity,
            "cut_seconds": found.start, "frame_indices": list(sampled.indices), "fps": sampled.fps,
            "frame_count": sampled.frame_count,
        }))
    return out


# ---------------------------------------------------------------------------------------------------- CLEVRER


def _look(obj: dict[str, str]) -> str:
    return f"{obj['color']} {obj['material']} {obj['shape']}"


def clevrer_reference(objects: dict[str, dict[str, str]], collisions: list[dict[str, Any]], last_shown: int
                      ) -> tuple[str, list[dict[str, Any]]]:
    """The reference and the collisions it says: every collision after frame ``last_shown`` (a pair once), then
    the objects that continue unscathed."""
    later, pairs = [], set()
    for hit in collisions:
        pair = tuple(sorted(hit["objects"]))
        if hit["frame"] > last_shown and pair not in pairs:
            pairs.add(pair)
            later.append(hit)
    sentences = [f"The {_look(objects[str(a)])} collides with the {_look(objects[str(b)])}."
                 for a, b in (h["objects"] for h in later)]
    hit_ids = {i for h in later for i in h["objects"]}
    calm = [f"the {_look(o)}" for k, o in objects.items() if int(k) not in hit_ids]
    if not later:
        sentences.append("No collision happens.")
    if calm:
        names = calm[0] if len(calm) == 1 else ", ".join(calm[:-1]) + " and " + calm[-1]
        sentences.append(f"{names[0].upper()}{names[1:]} {'continues' if len(calm) == 1 else 'continue'} unscathed.")
    return " ".join(sentences), later


def clevrer_clips(config: PredictiveConfig, update: Update) -> SourceResult:
    from sources.clevrer import read_clevrer
    from sources.video import LastFramePerSecond

    task, out = "physical_interaction", SourceResult()
    records = _limit(read_clevrer(config.clevrer_annotations, config.videos), config)
    out.read = len(records)
    want_none = round(config.clevrer_items * config.clevrer_no_collision_share)
    want = {True: config.clevrer_items - want_none, False: want_none}
    got: Counter = Counter()
    for n, rec in enumerate(seeded_order(records, config.seed, "clevrer"), 1):
        update(n, len(records))
        frames = len(rec.meta["visible"]) or 128
        expected_last = LastFramePerSecond().indices(frames, rec.fps)[:5][-1]
        has_later = any(h["frame"] > expected_last for h in rec.meta["collisions"])
        if got[has_later] >= want[has_later]:
            continue
        looks = Counter(_look(o) for o in rec.meta["objects"].values())
        twins = [look for look, k in looks.items() if k > 1]
        if twins:
            out.skip(task, rec.id, f"clevrer: two objects look alike ({twins[0]}), a reference could not tell them "
                                   f"apart")
            continue
        sampled = _sample(out, task, rec, LastFramePerSecond(), config, "clevrer")
        if sampled is None:
            continue
        if len(sampled.indices) < 5:
            out.skip(task, rec.id, f"clevrer: {len(sampled.indices)} full seconds, fewer than 5")
            continue
        indices, files = sampled.indices[:5], sampled.frames[:5]
        reference, later = clevrer_reference(rec.meta["objects"], rec.meta["collisions"], indices[-1])
        got[bool(later)] += 1
        out.clips.append(RealClip("clevrer", task, rec.id, [(f, sampled.sha256, i) for f, i in zip(files, indices)],
                                  reference, {
            "held_out_events": later, "objects": rec.meta["objects"], "frame_indices": list(indices),
            "fps": sampled.fps, "frame_count": sampled.frame_count, "no_collision": not later,
            "attributes": "; ".join(_look(o) for o in rec.meta["objects"].values()),
        }))
    out.notes["no_collision_items"] = got[False]
    return out


# ---------------------------------------------------------------------------------------------------- RoboSet


def keyframes_per_subtask(context_subtasks: int) -> int:
    """Two keyframes per context subtask while that stays within five images, else one."""
    return 2 if 2 * context_subtasks <= 5 else 1


def roboset_clips(config: PredictiveConfig, update: Update) -> SourceResult:
    from sources.keyframes import Fractions
    from sources.roboset import read_roboset
    from sources.video import VideoSkipped, sample_video

    task, out = "physical_interaction", SourceResult()
    sequences = _limit(read_roboset(config.roboset, config.roboset_combinations), config)
    out.read = len(sequences)
    for n, seq in enumerate(seeded_order(sequences, config.seed, "roboset"), 1):
        update(n, len(sequences))
        if len(out.clips) >= config.roboset_items:
            break
        context = seq.subtasks[:-1]
        per = keyframes_per_subtask(len(context))
        if not 3 <= per * len(context) <= 5:
            out.skip(task, seq.id, f"roboset: {len(context)} context subtasks give {per * len(context)} keyframes, "
                                   f"not 3-5")
            continue
        policy = Fractions((0.5, 1.0) if per == 2 else (1.0,))
        frames: list[tuple[str, str, int]] = []
        try:
            for sub in context:
                s = sample_video(sub.file, policy, config.resolved_cache_dir(), backend=config.backend)
                frames += [(f, s.sha256, i) for f, i in zip(s.frames, s.indices)]
        except VideoSkipped as exc:
            out.skip(task, seq.id, f"roboset: {exc.reason}")
            continue
        if not 3 <= len(frames) <= 5:
            out.skip(task, seq.id, f"roboset: {len(frames)} distinct keyframes, not 3-5")
            continue
        target = seq.subtasks[-1]
        out.clips.append(RealClip("roboset", task, seq.id, frames, f"The robotic arm will {target.caption}.", {
            "combination": seq.combination, "activity": seq.activity, "variant": seq.variant,
            "subtasks": [s.name for s in seq.subtasks], "context_captions": [s.caption for s in context],
            "held_out_subtask": target.name, "keyframes_per_subtask": per,
            "frame_indices": [i for _, _, i in frames],
        }))
    return out


def frame_name(clip: RealClip, frame: tuple[str, str, int]) -> str:
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", clip.video_id).strip("_") or "video"
    return f"{clip.source}-{slug}-{frame[1][:8]}-f{frame[2]:06d}.png"


SOURCE_TASK = {"activitynet": "human_activity", "charades": "human_activity", "clevrer": "physical_interaction",
               "roboset": "physical_interaction"}


def iterate_sources(config: PredictiveConfig) -> Iterator[str]:
    """The real sources the config names whose task is asked for (``--tasks``), in a fixed order."""
    for name, given in (("activitynet", config.activitynet), ("charades", config.charades),
                        ("clevrer", config.clevrer_annotations), ("roboset", config.roboset)):
        if given and SOURCE_TASK[name] in config.tasks:
            yield name
