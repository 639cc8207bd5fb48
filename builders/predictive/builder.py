"""The predictive build: generated and authored pattern sequences, demo activity and physics clips -> items."""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from builders.cli import EmptyBuildError, progress_bar
from builders.items import Item, make_item
from builders.predictive.config import (
    BENCHMARK,
    PRESSURE,
    QUESTION_TYPE,
    PredictiveConfig,
)
from builders.run import build_record, file_sha256, open_build, planned_items, reason_kind, write_failed_record
from templates.loader import load_templates, render

GENERATOR = "mirage.predictive.patterns"


def queries() -> dict[str, Any]:
    return dict(load_templates(BENCHMARK, "queries"))


@dataclass
class Plan:
    items: list[Item]
    writers: dict[str, Callable[[Path], None]] = field(default_factory=dict)
    """``images/<name>`` -> a function writing that image to the path it is given."""
    stats: dict[str, Any] = field(default_factory=dict)


# ----------------------------------------------------------------------------------------- abstract patterns


def pattern_items(config: PredictiveConfig, task_bar: Any, plan: Plan) -> None:
    from builders.predictive.canvas import draw, png_bytes
    from builders.predictive.icons import builtin_icons, read_icon_folder
    from builders.predictive.patterns import generate, params_key

    icons = read_icon_folder(config.icons) if config.icons else builtin_icons()
    question = queries()["abstract_pattern"]["image"]
    update = task_bar("pattern sequences", config.patterns)
    scenarios: Counter = Counter()
    for entry in generate(config.seed, config.patterns, icons, progress=update):
        stem = "pattern-" + hashlib.sha256((params_key(entry) + icons.origin).encode()).hexdigest()[:16]
        images = [f"images/{stem}-{k}.png" for k in range(entry.n_images)]
        for rel, frame in zip(images, entry.frames):
            plan.writers[rel] = (lambda path, f=frame, e=entry: path.write_bytes(png_bytes(draw(e.width, e.height, f,
                                                                                                  icons))))
        provenance = {
            "source": "generated", "generator": GENERATOR, "scenario": entry.scenario, "dimension": entry.dimension,
            "named_scenario": entry.named, "rule": entry.rule, "params": entry.params, "n_images": entry.n_images,
            "canvas": [entry.width, entry.height], "pattern": entry.pattern, "pred": entry.pred,
            "icons": icons.origin if icons.builtin else {c: str(icons.files_of(c)[0]) for c in entry.icons
                                                          if icons.files_of(c)},
        }
        plan.items.append(make_item(benchmark=BENCHMARK, task="abstract_pattern", question_type=QUESTION_TYPE,
                                    pressure=PRESSURE, images=images, question=question, options=(),
                                    answer=entry.pred, provenance=provenance))
        scenarios[entry.scenario] += 1
    plan.stats["scenarios"] = dict(sorted(scenarios.items()))
    plan.stats["icons"] = icons.origin


def authored_items(config: PredictiveConfig, plan: Plan) -> None:
    from builders.authorship import read_authors
    from builders.predictive.authored import read_authored

    assert config.authored
    question = queries()["abstract_pattern"]["image"]
    entries = read_authored(config.authored)
    authors = read_authors(config.authored)  # who wrote each entry, when `annotation author pull` wrote the file
    for e in entries:
        images = []
        for f in e.images:
            rel = f"images/authored-{file_sha256(f)[:16]}{f.suffix.lower()}"
            plan.writers[rel] = (lambda path, src=f: path.write_bytes(src.read_bytes()))
            images.append(rel)
        provenance = {"source": "authored", "generator": "authored", "authored_id": e.id, "line": e.line,
                      "dimension": e.dimension, "n_images": len(images), "pattern": e.pattern, "pred": e.pred,
                      "files": list(e.written)}
        if authors.get(e.id):
            provenance["author"] = authors[e.id]
        plan.items.append(make_item(benchmark=BENCHMARK, task="abstract_pattern", question_type=QUESTION_TYPE,
                                    pressure=PRESSURE, images=images, question=question, options=(),
                                    answer=e.pred, provenance=provenance))
    plan.stats["authored"] = len(entries)


# ------------------------------------------------------------------------------------- activity and physics


def clip_items(config: PredictiveConfig, task_bar: Any, plan: Plan) -> None:
    from builders.predictive.demo import (
        activity_clips,
        drop_static,
        frame_name,
        outcome_frames,
        physics_clip,
        sample_clips,
    )
    from sources.demo.video import load_demo_videos

    videos = load_demo_videos(seed=config.seed, n_videos=config.demo_videos, cache_dir=config.cache_dir,
                              progress=task_bar("demo videos", config.demo_videos))
    clips, skipped = [], []
    if "human_activity" in config.tasks:
        clips, skipped = activity_clips(videos, config.context_frames)
    if "physical_interaction" in config.tasks:
        for rec in videos:
            clip = physics_clip(rec, config.context_frames)
            if isinstance(clip, str):
                skipped.append({"task": "physical_interaction", "video": rec.id, "reason": clip})
            else:
                clips.append(clip)
    clips, unreadable = sample_clips(clips, config.resolved_cache_dir(), config.backend,
                                     task_bar("sampling frames", len(clips)))
    clips, static = drop_static(clips)
    q = queries()
    for clip in clips:
        images = [f"images/{frame_name(clip, i)}" for i in clip.indices]
        for rel, src in zip(images, clip.frames):
            plan.writers[rel] = (lambda path, s=src: path.write_bytes(Path(s).read_bytes()))
        if clip.task == "human_activity":
            question = q["demo_activity"]["image"]
        else:
            question = render(q["demo_physics"]["image"], count=len(images))
        provenance = {
            "source": "demo", "video_id": clip.record.id, "video_sha256": clip.sha256,
            "frame_indices": list(clip.indices), "frame_count": clip.record.frame_count, "fps": clip.record.fps,
            "context_captions": clip.captions, "held_out_events": clip.held_out, "attributes": clip.attributes,
            "outcome_frames": outcome_frames(clip.record, clip.held_out[0]), "n_images": len(images),
        }
        if clip.cue:
            provenance["cue"] = clip.cue
        plan.items.append(make_item(benchmark=BENCHMARK, task=clip.task, question_type=QUESTION_TYPE,
                                    pressure=PRESSURE, images=images, question=question, options=(),
                                    answer=clip.reference, provenance=provenance))
    plan.stats["demo_videos"] = len(videos)
    plan.stats["skipped"] = skipped + unreadable + static


# ------------------------------------------------------------------------------ the paper's datasets


class ClipChoice:
    """The CLIP scorer that picks ActivityNet's frames, or why there is none (then: middle frames)."""

    def __init__(self, config: PredictiveConfig) -> None:
        from filters.clip import ClipUnavailable, load_scorer

        self.config, self.scorer, self.skipped = config, None, None
        if config.no_clip:
            self.skipped = "--no-clip given"
            return
        try:
            self.scorer = load_scorer(config.clip_config(config.resolved_cache_dir()))
        except ClipUnavailable as exc:
            self.skipped = str(exc)

    def notice(self) -> None:
        from builders.cli import stderr

        if self.skipped:
            stderr.print(f"CLIP stage skipped: {self.skipped} (ActivityNet shows each segment's middle frame)",
                         markup=False, style="yellow")

    def record(self) -> dict[str, Any]:
        if self.scorer is None:
            return {"ran": False, "skipped": self.skipped, "frame_choice": "middle frame of each segment"}
        return {"ran": True, "config": self.config.clip_config(self.config.resolved_cache_dir()).to_dict(),
                **self.scorer.describe(), "frame_choice": "best CLIP match of each segment's caption"}


def real_items(config: PredictiveConfig, task_bar: Any, plan: Plan) -> None:
    """Items of ActivityNet Captions, Charades, CLEVRER and RoboSet (:mod:`builders.predictive.real`)."""
    from builders.predictive import real
    from filters.clip import ClipUnavailable

    q = queries()
    per_source: dict[str, Any] = {}
    for source in real.iterate_sources(config):
        update = task_bar(source, 1)
        if source == "activitynet":
            choice = ClipChoice(config)
            try:
                result = real.activitynet_clips(config, choice.scorer, update)
            except ClipUnavailable as exc:  # raised on first use, before any frame was chosen
                choice.scorer, choice.skipped = None, str(exc)
                result = real.activitynet_clips(config, None, update)
            choice.notice()
            plan.stats["clip"] = choice.record()
        elif source == "charades":
            result = real.charades_clips(config, update)
        elif source == "clevrer":
            result = real.clevrer_clips(config, update)
        else:
            result = real.roboset_clips(config, update)
        for clip in result.clips:
            images = []
            for frame in clip.frames:
                rel = f"images/{real.frame_name(clip, frame)}"
                plan.writers[rel] = (lambda path, s=frame[0]: path.write_bytes(Path(s).read_bytes()))
                images.append(rel)
            provenance = {"source": source, "video_id": clip.video_id, "video_sha256": sorted({f[1] for f in clip.frames}),
                          "n_images": len(images), **clip.provenance}
            plan.items.append(make_item(benchmark=BENCHMARK, task=clip.task, question_type=QUESTION_TYPE,
                                        pressure=PRESSURE, images=images, question=q[source]["image"], options=(),
                                        answer=clip.reference, provenance=provenance))
        plan.stats["skipped"] += result.skipped
        per_source[source] = {"read": result.read, "items": len(result.clips), "skipped": len(result.skipped),
                              **result.notes}
    plan.stats["sources"] = per_source


# --------------------------------------------------------------------------------------------- the build


def plan(config: PredictiveConfig) -> Plan:
    """Everything a build writes, computed (demo frames sampled into the cache; nothing written to ``out``)."""
    started = time.perf_counter()
    result = Plan(items=[], stats={"skipped": []})
    with progress_bar(config.progress) as task_bar:
        if "abstract_pattern" in config.tasks:
            if config.patterns:
                pattern_items(config, task_bar, result)
            if config.authored:
                authored_items(config, result)
        if config.real_sources:
            real_items(config, task_bar, result)
        elif {"human_activity", "physical_interaction"} & set(config.tasks):
            clip_items(config, task_bar, result)
    result.stats["tasks"] = dict(sorted(Counter(i.task for i in result.items).items()))
    result.stats["skipped_by_reason"] = dict(sorted(Counter(  # like reasons grouped (builders.run.reason_kind)
        f"{s['task']}: {reason_kind(s['reason'])}" for s in result.stats["skipped"]).items()))
    result.stats["items"] = len(result.items)
    result.stats["seconds"] = round(time.perf_counter() - started, 2)
    return result


def build(config: PredictiveConfig, stats: dict[str, Any] | None = None) -> Iterator[Item]:
    """Yield the items of a build (images are referred to by their ``images/<name>`` path; :func:`write_build`
    draws and copies them)."""
    yield from planned_items(plan(config), stats)


def write_build(config: PredictiveConfig) -> tuple[Path, list[Item], dict[str, Any]]:
    """Run a build and write its directory atomically; returns (path, items, stats)."""
    result = plan(config)
    if not result.items:
        raise EmptyBuildError(f"the build produced no items: {why_no_items(config, result.stats)}", result.stats)
    with open_build(config.out, config.build_name(), config.resolved_cache_dir(),
                    replace=config.replace) as out:
        out.images.mkdir(parents=True, exist_ok=True)
        with progress_bar(config.progress) as task_bar:
            update = task_bar("writing images", len(result.writers))
            for n, (rel, write) in enumerate(sorted(result.writers.items()), 1):
                write(out.path / rel)
                update(n, len(result.writers))
        n_items = out.write_items(result.items)
        stats = result.stats
        record_stats = {**stats, "input_hashes": _input_hashes(config)}  # hashed here: plan() does not read them
        out.write_json("build.json", build_record(BENCHMARK, config, record_stats, _sources(config), n_items))
        path = out.final
    return path, result.items, result.stats


def why_no_items(config: PredictiveConfig, stats: dict[str, Any]) -> str:
    """One line for a build without items: how many videos were read and left out, the commonest reasons as
    written (not digit-masked), and the file that holds every left-out input with its reason
    (:func:`builders.run.write_failed_record`): a Charades CSV without its videos gave one line of 86 KB."""
    skipped = stats["skipped"]
    if not skipped:
        return "no task had input"
    read = sum(s["read"] for s in stats.get("sources", {}).values())
    common = Counter(s["reason"] for s in skipped).most_common()
    common.sort(key=lambda kv: (-kv[1], kv[0]))
    shown = "; ".join(f"{_shorten(reason)} ({n:,})" for reason, n in common[:3])
    more = f"; {len(common) - 3:,} other reasons" if len(common) > 3 else ""
    path = write_failed_record(config.out, config.build_name(), {
        "benchmark": BENCHMARK, "name": config.build_name(), "config": config.as_record(), "items": 0,
        "skipped": skipped, "skipped_by_reason": dict(common), "sources": stats.get("sources", {}),
    })
    of = f" of {read:,}" if read else ""
    return f"{len(skipped):,}{of} videos left out; commonest reasons: {shown}{more}; every video's reason: {path}"


def _shorten(text: str, width: int = 70) -> str:
    return text if len(text) <= width else text[:width - 3].rstrip() + "..."


def _input_hashes(config: PredictiveConfig) -> dict[str, str]:
    out = {"authored": "sha256:" + file_sha256(config.authored)} if config.authored else {}
    if not config.real_sources:
        out[f"demo-video:seed={config.seed}:n={config.demo_videos}"] = "generated"
    for key in ("activitynet", "charades", "charades_classes", "roboset_combinations"):
        value = getattr(config, key)
        if value and Path(value).is_file():
            out[key] = "sha256:" + file_sha256(value)
    return out


def _sources(config: PredictiveConfig) -> list[dict[str, str]]:
    """What the items were made from, for the data card's licence table: Mirage's own drawings and demo videos
    (``demo``, CC0), and the user's icons and authored entries when given (their terms are the user's to state)."""
    out = [{"name": "demo", "path": f"generated patterns and demo-video:seed={config.seed}"}]
    for name, key in (("activitynet", "activitynet"), ("charades", "charades"), ("clevrer", "clevrer_annotations"),
                      ("roboset", "roboset")):
        if getattr(config, key):
            out.append({"name": name, "path": getattr(config, key)})
    if config.icons:
        out.append({"name": "icons", "path": config.icons})
    if config.authored:
        out.append({"name": "authored", "path": config.authored})
    return out
