"""The MM-SAP build: sources -> decided questions per subset -> laid-out items, with statistics and quality report."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Iterator, Sequence

from builders.authorship import authors_sidecar
from builders.cli import progress_bar
from builders.items import Item
from builders.llm import make_client
from builders.mmsap.answers import answer_table
from builders.mmsap.authored import DEMO_SELECTOR, OBJECT, AuthoredRecord, Resolved, authored_questions, read_authored
from builders.mmsap.config import BENCHMARK, MmsapConfig
from builders.mmsap.layout import lint_promises, refusal_wording, to_items
from builders.mmsap.llm_writer import fill_authored, reword_beyond, rewrite
from builders.mmsap.questions import DEMO_BASIC_TYPES, PAIRED_SUBSETS, Question
from builders.mmsap.report import mmsap_quality
from builders.mmsap.scenes import Scene, basic_makers, beyond_makers, referring_expression, sample, scenes_of
from builders.mmsap.vqa import basic_questions, intern_corpus, type_map
from builders.pairs import paired_share
from builders.run import file_sha256, write_items_build
from builders.seeding import rng
from filters.geometry import GeometryThresholds
from sources.errors import ConfigError, SourceError
from sources.records import RecordSet
from templates.loader import TEMPLATE_ROOT

DEMO_AUTHORED = TEMPLATE_ROOT / "mmsap" / "demo_authored.yaml"
SHIPPED_AUTHORED = "mirage:templates/mmsap/demo_authored.yaml"
"""How build.json names :data:`DEMO_AUTHORED` (like the demo world's ``demo:...``): the same on every machine."""


def build(config: MmsapConfig, stats: dict[str, Any] | None = None) -> Iterator[Item]:
    """Yield the items of an MM-SAP build (no files written); ``stats`` receives the stage statistics."""
    stats = stats if stats is not None else {}
    with progress_bar(config.progress) as task_bar:
        yield from _build(config, stats, task_bar)


def _build(config: MmsapConfig, stats: dict[str, Any], task_bar) -> Iterator[Item]:
    started = time.perf_counter()
    table, types = answer_table(), type_map()
    llm = config.llm()
    client = make_client(llm) if llm.enabled else None
    thresholds = GeometryThresholds()
    questions: list[Question] = []
    skipped: list[dict[str, str]] = []
    inputs: dict[str, str] = {}
    records = _instances(config, task_bar)
    scenes = scenes_of(records, thresholds) if records is not None else []
    if records is not None:
        inputs[records.path] = "generated" if records.generated else "sha256:" + file_sha256(records.path)
    vqa_by_id = {}
    if config.uses_demo:
        makers = basic_makers(records, thresholds, config.seed)  # type: ignore[arg-type]
        made, counts = sample(makers, scenes, config.n_basic, config.seed, "basic", pair=True)
        questions += made
        stats["basic"] = {"source": "demo", "made": counts}
    elif config.vqav2_questions:
        from sources.vqav2 import image_index, read_vqav2

        corpus = read_vqav2(config.vqav2_questions, config.vqav2_annotations)  # type: ignore[arg-type]
        interned = intern_corpus(corpus.questions, types, table)
        images_dir = str(config.coco_images)
        made, vqa_stats = basic_questions(interned, types, table, image_index(images_dir), images_dir,
                                          config.min_agreement, config.n_basic, config.seed,
                                          config.on_missing_image)
        questions += made
        vqa_by_id = {q.question_id: q for q in corpus.questions}
        stats["basic"] = {"source": "vqav2", **vqa_stats}
        for path in (corpus.questions_path, corpus.annotations_path):
            inputs[path] = "sha256:" + file_sha256(path)
    else:
        skipped.append({"subset": "basic", "reason": "no VQAv2 files given (--vqav2-questions, --vqav2-annotations)"})
    if records is not None:
        made, counts = sample(beyond_makers(records, thresholds), scenes, config.n_beyond, config.seed, "beyond")
        questions += made
        stats["beyond"] = {"source": records.source, "made": counts}
    else:
        skipped.append({"subset": "beyond", "reason": "no instance annotations given (--coco-instances)"})
    authored = config.authored or (str(DEMO_AUTHORED) if config.uses_demo else None)
    if authored:
        basic_types = tuple(types.names) + DEMO_BASIC_TYPES
        recs = read_authored(authored, basic_types, refusal_wording(), table)
        resolve = _resolver(authored, records, scenes, config)
        generate = fill_authored(client, table, refusal_wording()) if client is not None else None
        made = authored_questions(authored, recs, resolve, table, config.seed, generate)
        questions += made
        named = authored if config.authored else SHIPPED_AUTHORED  # the shipped file: not this checkout's path
        stats["authored"] = {"file": named, "questions": len(made),
                             "generated_distractors": sum(q.provenance["generated_distractors"] for q in made)}
        inputs[named] = "sha256:" + file_sha256(authored)
        if authors_sidecar(authored).is_file():  # who wrote each record (provenance.author)
            inputs[str(authors_sidecar(authored))] = "sha256:" + file_sha256(authors_sidecar(authored))
    else:
        skipped.append({"subset": "know", "reason": "no authored-questions file given (--authored)"})
    if client is not None:
        questions, counts = rewrite(questions, client, table, refusal_wording())
        questions, reworded = reword_beyond(questions, client, records.categories if records is not None else ())
        stats["llm"] = {"writer": "llm", "config": llm.to_dict(), "vqav2_distractors": counts,
                        "beyond_rewordings": reworded, **client.usage()}
    else:
        stats["llm"] = {"writer": "statistics", "reason": "no --llm-model configured: options from answer statistics"}
    update = task_bar("items", len(questions))
    items = to_items(questions, config.shuffles, config.seed)
    update(len(questions), len(questions))
    stats.update(
        refusal=refusal_wording(),
        shuffles=config.shuffles,
        questions=len(questions),
        items=len(items),
        skipped=skipped,
        input_hashes=dict(sorted(inputs.items())),
        generated=bool(records is not None and records.generated),
        sources=_sources(config, records),
        pairs=pair_counts(items),
        quality=mmsap_quality(items, refusal_wording(), table, vqa_by_id, records) if items else {},
        seconds=round(time.perf_counter() - started, 2),
    )
    yield from items


def pair_counts(items: Sequence[Item]) -> dict[str, Any]:
    """How many closed items (BasicVisQA, KnowVisQA) are in pairs, overall and per subset, for build.json, the
    summary and the card; an unpaired one is a question the source offered no partner for."""
    closed = {s: [it for it in items if it.task == s] for s in PAIRED_SUBSETS}
    return {"closed": paired_share([it for mine in closed.values() for it in mine]),
            **{s: paired_share(mine) for s, mine in closed.items() if mine}}


def _instances(config: MmsapConfig, task_bar) -> RecordSet | None:
    """The instance annotations BeyondVisQA (and the demo's BasicVisQA) is grounded in."""
    if config.uses_demo:
        from sources.demo import load_demo

        return load_demo(seed=config.seed, n_images=config.demo_images, cache_dir=config.cache_dir,
                         progress=task_bar("demo world", config.demo_images))
    if config.coco_instances:
        from sources.coco import read_coco

        return read_coco(config.coco_instances, config.coco_images, source="coco")  # type: ignore[arg-type]
    return None


def _sources(config: MmsapConfig, records: RecordSet | None) -> list[dict[str, str]]:
    out = []
    if records is not None:
        out.append({"name": records.source, "path": records.path, "license_note": records.license})
    if config.vqav2_questions:
        from sources.vqav2 import LICENSE

        out.append({"name": "vqav2", "path": config.vqav2_annotations or "", "license_note": LICENSE})
    return out


def _resolver(authored: str, records: RecordSet | None, scenes: list[Scene], config: MmsapConfig):
    """How an authored record's ``image`` becomes a file: a demo selector, an image id, or a file name."""
    by_id = {im.id: im.file for im in records.images} if records is not None else {}
    folders = [Path(authored).parent] + ([Path(config.coco_images)] if config.coco_images else [])
    coco_ids = None

    def resolve(rec: AuthoredRecord, pointing: str | None = None) -> Resolved:
        nonlocal coco_ids
        if rec.image.startswith(DEMO_SELECTOR):
            if records is None or not records.generated:
                raise SourceError(authored, rec.where, f"image {rec.image!r}: demo selectors need the demo world")
            return _demo_image(authored, rec, scenes, config.seed, pointing)
        if rec.image in by_id:
            return Resolved(by_id[rec.image], rec.image)
        for folder in folders:
            if (folder / rec.image).is_file():
                return Resolved(str(folder / rec.image), Path(rec.image).stem)
        if config.coco_images and rec.image.isdigit():
            from sources.vqav2 import image_index

            coco_ids = coco_ids if coco_ids is not None else image_index(config.coco_images)
            if int(rec.image) in coco_ids:
                return Resolved(coco_ids[int(rec.image)], rec.image)
        raise SourceError(authored, rec.where, f"image {rec.image!r} not found (not an image id of the source, nor a "
                                               f"file in {', '.join(str(f) for f in folders)})")

    return resolve


def _demo_image(authored: str, rec: AuthoredRecord, scenes: list[Scene], seed: int,
                words: str | None = None) -> Resolved:
    """A demo image that shows exactly one clear, legible instance of the selector's category (seeded pick); when
    the question says ``{object}``, one where that instance can be pointed at without naming it (in the words
    ``words`` when given: a partner's question reads like its pair's)."""
    category = rec.image[len(DEMO_SELECTOR):]
    pointing = OBJECT in rec.question
    words = words if pointing else None
    fitting = []
    for scene in scenes:
        for inst in scene.clear():
            if inst.category == category:
                refer = referring_expression(scene, inst) if pointing else None
                if (refer is not None or not pointing) and (words is None or refer == words):
                    fitting.append((scene, inst, refer))
    if not fitting:
        how = f" pointed at as {words!r}" if words else \
            " that can be pointed at by its pattern or size" if pointing else ""
        raise SourceError(authored, rec.where, f"no demo image shows one clear {category!r}{how}")
    scene, inst, refer = fitting[int(rng(seed, f"mmsap/authored-image/{rec.where}").integers(len(fitting)))]
    facts = {"instance": inst.id, **({"referring": refer} if refer else {})}
    return Resolved(scene.image.file, scene.image.id, refer, {"grounding": facts})


def write_build(config: MmsapConfig) -> tuple[Path, list[Item], dict[str, Any]]:
    """Run a build and write its directory atomically; returns (path, items, stats)."""
    stats: dict[str, Any] = {}
    items = list(build(config, stats))
    if not items:
        raise ConfigError("the build produced no items: see the skipped subsets (no source given?)")
    promises = lint_promises(it.task for it in items)
    path, items = write_items_build(config, BENCHMARK, items, stats, stats["sources"], localise=stats["generated"],
                                    internal=("sources", "generated"),
                                    extra={"lint_promises": promises} if promises else None)
    return path, items, stats
