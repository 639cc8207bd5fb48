"""The Mementos build: videos -> sampled frames -> reference descriptions -> keywords -> items."""


from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Sequence

from builders.authorship import description_author
from builders.cli import EmptyBuildError, progress_bar
from builders.items import Item, make_item
from builders.llm import make_client
from builders.mementos.config import (
    BENCHMARK,
    DOMAINS,
    PRESSURE,
    QUESTION_TYPE,
    SOURCE_DOMAIN,
    Draft,
    MementosConfig,
)
from builders.run import build_record, file_sha256, open_build, planned_items
from builders.seeding import rng
from sources.demo.shown import Shown
from sources.records import VideoRecord
from templates.loader import load_templates

# ------------------------------------------------------------------------------------------------ sources


def load_sources(config: MementosConfig, task_bar: Any) -> dict[str, list[VideoRecord]]:
    """Video records per source name: the demo videos, or the readers of the paths given."""
    if config.uses_demo:
        from sources.demo.video import load_demo_videos

        demo = load_demo_videos(seed=config.seed, n_videos=config.demo_videos, cache_dir=config.cache_dir,
                                progress=task_bar("demo videos", config.demo_videos))
        return {"demo": select(demo, config, "demo")}
    out: dict[str, list[VideoRecord]] = {}
    if config.nextqa:
        from sources.nextqa import read_nextqa

        out["nextqa"] = read_nextqa(config.nextqa, config.videos, config.nextqa_map)  # type: ignore[arg-type]
    if config.robot:
        from sources.robot import read_robot_episodes

        out["robot"] = read_robot_episodes(config.robot)
    if config.comics:
        from sources.comics import read_comics

        out["comics"] = read_comics(config.comics)
    return {s: select(records, config, s) for s, records in out.items()}


def select(records: list[VideoRecord], config: MementosConfig, source: str) -> list[VideoRecord]:
    """All records, or a seeded sample of ``max_videos`` kept in source order."""
    if config.max_videos is None or len(records) <= config.max_videos:
        return records
    chosen = rng(config.seed, f"mementos/select/{source}").choice(len(records), config.max_videos, replace=False)
    return [records[i] for i in sorted(int(i) for i in chosen)]


def input_hashes(config: MementosConfig) -> dict[str, str]:
    """sha256 of the annotation files given (videos are hashed one by one into each item's provenance)."""
    if config.uses_demo:
        return {f"demo-video:seed={config.seed}:n={config.demo_videos}": "generated"}
    return {p: "sha256:" + file_sha256(p) for p in (config.nextqa, config.nextqa_map) if p}


# ----------------------------------------------------------------------------------------------- frames


def sample_sequences(
    config: MementosConfig, sources: dict[str, list[VideoRecord]], task_bar: Any, executor: Any = None
) -> tuple[list[Draft], list[dict[str, str]], Counter]:
    """Frames of every video (comics: their panels), sampled on ``executor`` (``None``: this process); videos a
    policy leaves out or that cannot be read are skipped with the reason (``--on-error fail`` turns an unreadable
    video into an error instead)."""
    from sources.video import VideoSkipped, content_sha256
    from sources.video_jobs import VideoJob, sample_videos

    cache = Path(config.resolved_cache_dir())
    total = sum(len(r) for r in sources.values())
    update = task_bar("sampling frames", total)
    videos = [(source, rec) for source, records in sources.items() if source != "comics" for rec in records]
    jobs = [VideoJob(rec, config.policy_for(source), cache, config.backend, config.on_error)  # type: ignore[arg-type]
            for source, rec in videos]
    sampled = iter(sample_videos(jobs, executor, on_progress=lambda done, _: update(done, total)))
    done, out, skipped, counts = len(jobs), [], [], Counter()
    for source, records in sources.items():
        policy = config.policy_for(source)
        for rec in records:
            if source == "comics":
                done += 1
                panels = tuple(rec.meta.get("panels") or ())
                digest = content_sha256(rec.file, cache / "frames" / "hashes")
                out.append(Draft(source, rec, panels, tuple(range(len(panels))), policy, "frames", digest,
                                 len(panels), None))
                update(done, total)
                continue
            s = next(sampled)
            if isinstance(s, VideoSkipped):
                skipped.append({"source": source, "video": rec.id, "stage": "frames", "reason": s.reason})
                continue
            counts["from_cache" if s.cached else "decoded"] += 1
            out.append(Draft(source, rec, s.frames, s.indices, policy, s.backend, s.sha256, s.frame_count, s.fps))
    return out, skipped, counts


# ---------------------------------------------------------------------------------------- descriptions


def describe(seqs: list[Draft], client: Any, task_bar: Any) -> tuple[list[Draft], list[dict[str, str]]]:
    """Reference descriptions; sequences without one are skipped with the reason."""
    from builders.mementos.descriptions import describe_videos

    update = task_bar("descriptions", len(seqs))
    nextqa = [s for s in seqs if s.source == "nextqa" and s.record.meta.get("qa")]
    if nextqa:
        nlp = _nlp_or_none()
        qa = [[(q["question"], q["answer_text"]) for q in s.record.meta["qa"]] for s in nextqa]
        texts = describe_videos(client, list(zip(qa, [s.frames for s in nextqa])), nlp)
        how = "qa_llm" if client.backend != "template" else "qa_template"
        for s, text in zip(nextqa, texts):
            s.description, s.description_from = text, how
            s.qa_ids = tuple(str(q.get("qid", "")) for q in s.record.meta["qa"])
    kept, skipped = [], []
    for n, s in enumerate(seqs, 1):
        if not s.description and s.source == "demo" and _scripted(s.record):
            shown = Shown(s.record.meta, s.indices)
            if not shown.events():
                skipped.append({"source": s.source, "video": s.record.id, "stage": "description",
                                "reason": "no event of the script shows in the sampled frames"})
                update(n, len(seqs))
                continue
            s.description, s.description_from = " ".join(shown.description()), "script (shown frames)"
            s.keywords, s.keywords_from = shown.keywords(), "script (shown frames)"
        if not s.description:
            text = s.record.meta.get("description")
            if isinstance(text, (list, tuple)):
                text = " ".join(str(t).strip() for t in text)
            if text:
                s.description, s.description_from = str(text).strip(), "script" if s.source == "demo" else "human"
        if s.description:
            kept.append(s)
        else:
            skipped.append({"source": s.source, "video": s.record.id, "stage": "description",
                            **_missing_description(s)})
        update(n, len(seqs))
    return kept, skipped


def _scripted(record: VideoRecord) -> bool:
    """A demo video whose meta can be replayed (its cast carries the starting geometry)."""
    return all("start" in c for c in record.meta.get("cast", ())) and "events" in record.meta


def drop_static(seqs: list[Draft]) -> tuple[list[Draft], list[dict[str, str]]]:
    """Sequences in which most consecutive sampled frames are pixel for pixel the same are left out: nothing
    happens in them to describe (comic panels are never compared)."""
    from sources.demo.shown import mostly_static

    kept, skipped = [], []
    for s in seqs:
        why = mostly_static(s.frames) if s.source != "comics" and len(s.frames) > 1 else None
        if why is None:
            kept.append(s)
        else:
            skipped.append({"source": s.source, "video": s.record.id, "stage": "frames",
                            "reason": f"{why.replace(' frames', ' sampled frames')}: the sequence is nearly static"})
    return kept, skipped


def _missing_description(s: Draft) -> dict[str, str]:
    """Why a sequence has no description, and for a sequence a person describes, the file the reader looks in:
    ``<name>.txt`` beside a video file, ``description.txt`` in a frame folder or comic. The reason stays the same
    for every sequence of a kind, so the skipped-videos table counts them on one row."""
    if s.source == "nextqa":
        return {"reason": "no QA pairs"}
    from sources.video import description_path

    where = "description.txt in its folder" if Path(s.record.file).is_dir() else "<video name>.txt beside the video"
    return {"reason": f"no description (write {where})", "file": str(description_path(s.record.file))}


def _nlp_or_none() -> Any:
    """spaCy for the template merge's rules when installed (without it the merge is question + answer)."""
    from filters.text import NlpUnavailable, load_nlp

    try:
        return load_nlp()
    except NlpUnavailable:
        return None


def add_keywords(seqs: list[Draft], client: Any, task_bar: Any) -> tuple[str, int]:
    """Reference keywords into each sequence: the demo script's lists, else the extractor's; returns how the
    extracted ones were made (``spacy:...``, ``llm:...`` or ``script``) and how many LLM answers had no readable
    lists (spaCy stood in for those)."""
    from builders.mementos.keywords import KeywordExtractor

    update = task_bar("keywords", len(seqs))
    method, fallbacks = "script", 0
    for s in seqs:
        if s.keywords_from:
            continue
        if s.source == "demo" and "objects" in s.record.meta and "behaviours" in s.record.meta:
            s.keywords = {"objects": list(s.record.meta["objects"]), "behaviours": list(s.record.meta["behaviours"])}
            s.keywords_from = "script"
    todo = [s for s in seqs if not s.keywords_from]
    if todo:
        extractor = KeywordExtractor(client)
        method = extractor.method
        for s, kw in zip(todo, extractor.references([s.description for s in todo])):
            s.keywords, s.keywords_from = kw.as_dict(), method
        fallbacks = extractor.fallbacks
    update(len(seqs), len(seqs))
    return method, fallbacks


# -------------------------------------------------------------------------------------------- the items


def image_name(seq: Draft, index: int) -> str:
    """File name of a sampled frame in the build: video id, content hash and frame index (unique, stable)."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", seq.record.id).strip("_") or "video"
    return f"{slug}-{seq.sha256[:8]}-f{index:06d}.png"


def make_items(seqs: list[Draft]) -> tuple[list[Item], dict[str, str]]:
    """One item per sequence, and the copies to make: ``{"images/<name>": cached frame}`` (comic panels are the
    user's own files and are referred to where they are)."""
    question = load_templates("mementos", "describe")["question"]
    items, copies = [], {}
    for s in seqs:
        if s.source == "comics":
            images = list(s.frames)
        else:
            images = [f"images/{image_name(s, i)}" for i in s.indices]
            copies.update(zip(images, s.frames))
        provenance = {
            "source": s.record.source,
            "video_id": s.record.id,
            "video_sha256": s.sha256,
            "frame_indices": list(s.indices),
            "frame_count": s.frame_count,
            "fps": s.fps,
            "policy": s.policy,
            "backend": s.backend,
            "n_frames": len(images),
            "keywords": s.keywords,
            "keywords_from": s.keywords_from,
            "episode_length": len(s.keywords.get("behaviours", [])),
            "description_from": s.description_from,
            "needs_review": s.description_from in ("qa_template", "qa_llm"),
        }
        if s.qa_ids:
            provenance["qa_ids"] = list(s.qa_ids)
        author = description_author(s.record.file) if s.description_from == "human" else None
        if author:
            provenance["author"] = author
        items.append(make_item(benchmark=BENCHMARK, task=s.domain, question_type=QUESTION_TYPE, pressure=PRESSURE,
                               images=images, question=question, options=(), answer=s.description,
                               provenance=provenance))
    return items, copies


# --------------------------------------------------------------------------------------------- the build


@dataclass
class Plan:
    items: list[Item]
    copies: dict[str, str]
    stats: dict[str, Any]


def plan(config: MementosConfig) -> Plan:
    """Everything a build writes, computed (frames sampled into the cache, nothing written to ``out``)."""
    started = time.perf_counter()
    llm = config.llm()
    client = make_client(llm)
    with progress_bar(config.progress) as task_bar, config.make_executor() as executor:
        sources = load_sources(config, task_bar)
        seqs, skipped, frame_counts = sample_sequences(config, sources, task_bar, executor)
        seqs, static = drop_static(seqs)
        seqs, no_text = describe(seqs, client, task_bar)
        keywords_method, keyword_fallbacks = add_keywords(seqs, client, task_bar)
    items, copies = make_items(seqs)
    skipped = skipped + static + no_text
    stats: dict[str, Any] = {
        "sources": {s: {"videos": len(r), "policy": config.policy_for(s), "domain": SOURCE_DOMAIN[s]}
                    for s, r in sources.items()},
        "frames": dict(sorted(frame_counts.items())),
        "executor": executor.describe(),
        "descriptions": dict(sorted(Counter(s.description_from for s in seqs).items())),
        "keywords": keywords_method,
        "keyword_fallbacks": keyword_fallbacks,
        "llm": client.usage() if llm.enabled else {"writer": "template",
                                                   "reason": "no --llm-model configured: template merge and spaCy"},
        "domains": {
            d: {"items": len(g), "frames_mean": _mean([len(s.indices) for s in g]),
                "objects_mean": _mean([len(s.keywords["objects"]) for s in g]),
                "behaviours_mean": _mean([len(s.keywords["behaviours"]) for s in g])}
            for d in DOMAINS if (g := [s for s in seqs if s.domain == d])
        },
        "skipped_by_reason": dict(sorted(Counter(f"{k['stage']}: {_reason_key(k['reason'])}" for k in skipped).items())),
        "items": len(items),
        "seconds": round(time.perf_counter() - started, 2),
        "input_hashes": input_hashes(config),
        "generated_sources": ["demo"] if config.uses_demo else [],
        "skipped": skipped,
    }
    return Plan(items, copies, stats)


def _reason_key(reason: str) -> str:
    """A reason with its numbers masked, so counts group "412 frames is outside ..." with "2600 frames ..."."""
    return re.sub(r"\d+(\.\d+)?", "N", reason)


def _mean(values: Sequence[int]) -> float:
    return round(sum(values) / len(values), 2) if values else 0.0


def build(config: MementosConfig, stats: dict[str, Any] | None = None) -> Iterator[Item]:
    """Yield the items of a Mementos build (frames sampled into the cache; the build dir is not written).
    Sampled frames are referred to by their ``images/<name>`` path in the build; :func:`write_build` copies them."""
    yield from planned_items(plan(config), stats)


def write_build(config: MementosConfig) -> tuple[Path, list[Item], dict[str, Any]]:
    """Run a build and write its directory atomically; returns (path, items, stats)."""
    result = plan(config)
    if not result.items:
        reasons = "see the skipped videos above" if result.stats["skipped"] else "the sources hold no videos"
        raise EmptyBuildError(f"the build produced no items: {reasons}", result.stats)
    with open_build(config.out, config.build_name(), config.resolved_cache_dir(),
                    replace=config.replace) as out:
        for rel, src in sorted(result.copies.items()):
            out.add_image(src, Path(rel).name)
        n = out.write_items(result.items)
        stats = result.stats
        sources = [{"name": s, "path": _source_path(config, s)} for s in stats["sources"]]
        out.write_json("build.json", build_record(BENCHMARK, config, stats, sources, n))
        path = out.final
    return path, result.items, result.stats


def _source_path(config: MementosConfig, source: str) -> str:
    return {"demo": f"demo-video:seed={config.seed}", "nextqa": config.nextqa, "robot": config.robot,
            "comics": config.comics}[source] or ""

