"""Push a build to a Label Studio project: create or reuse it, then import only the items it lacks.

Label Studio itself would happily import the same item twice, so idempotence is Mirage's job: every task carries
the item id in ``data.mirage_id``, and a push first lists the project's tasks and imports only unknown ids.
(Two pushes to the same project at the same moment could still race; a team pushes from one place.)

Images are served by Label Studio's local-files storage from a dedicated folder holding links to exactly the
images the tasks show (:mod:`annotation.serving`); the build dir itself, with ``review.json``, ``reviews/`` and
``adjudications.json``, is never connected. The task holds ``/data/local-files/?d=<path>`` URLs relative to the
server's ``LOCAL_FILES_DOCUMENT_ROOT`` (``serve``'s ``--files-root``).

Independent reviewers: push once per *room* (one Label Studio server per reviewer slot, see ``serve --rooms``);
each room's project takes ``maximum_annotations = ceil(overlap / rooms)``, so with three rooms every server holds
one annotation per item and no reviewer can see another room's votes. ``annotation.pull`` merges the rooms.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from annotation.builddir import Build
from annotation.client import LabelStudioClient
from annotation.config import (
    CORRECT_OPTION,
    CORRECT_TEXT,
    DM_HIDDEN_COLUMNS,
    DM_HIDDEN_META,
    config_interface,
    INSTRUCTIONS,
    ITEM_ID_FIELD,
    KIND_NAMES,
    MCQ,
    VQA,
    item_kind,
    labeling_config,
    resolve_image,
    task_data,
)
from annotation.errors import AnnotationError
from annotation.recheck import MODELS_FIELD
from annotation.serving import check_files_root, link_images, serving_folder
from builders.registry import find

DEFAULT_BATCH = 250
STORAGE_TITLE = "Mirage images (serving only; do not sync)"
DEFAULT_FILES_ROOT = Path(".cache/label-studio/files")
"""``serve``'s default ``--files-root`` (under its default ``--data-dir``)."""


@dataclass
class PushResult:
    project_id: int
    project_url: str
    created: bool
    total: int
    already_there: int
    imported: int
    config_updated: bool
    storages_added: list[str]
    refreshed: int = 0


def default_files_root() -> Path:
    """The server's document root as this side knows it: ``$LOCAL_FILES_DOCUMENT_ROOT``, else the one ``serve``
    uses by default (``.cache/label-studio/files``)."""
    env = os.environ.get("LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT") or os.environ.get("LOCAL_FILES_DOCUMENT_ROOT")
    return Path(env) if env else DEFAULT_FILES_ROOT


def item_images(build: Build) -> list[Path]:
    """Every image file the build's items show (checked to exist), in item order."""
    paths: list[Path] = []
    for it in build.items:
        for img in it.images:
            path = resolve_image(build.path, img)
            if not path.is_file():
                raise AnnotationError(f"{build.path / 'items.jsonl'}: item {it.id}: image {img} not found ({path})")
            paths.append(path)
    return paths


def kinds_in_config(config: str) -> set[str]:
    """The item kinds a project's existing labeling config already supports."""
    kinds = set()
    if f'name="{CORRECT_OPTION}"' in config:
        kinds.add(MCQ)
    if f'name="{CORRECT_TEXT}"' in config:
        kinds.add(VQA)
    return kinds


def project_settings(title: str, build: Build, config: str, overlap: int) -> dict:
    """Everything push sets on a project. No path in the description: every member reads it."""
    return {
        "title": title,
        "description": f"Mirage review of {build.label}",
        "label_config": config,
        **review_settings(overlap),
    }


def review_settings(overlap: int) -> dict:
    """The settings a review depends on, which push restores and pull checks (a member can change any of them in
    the community edition): the overlap, the guide, skips that come back to their reviewer (a room has one
    reviewer, so "requeue for others" would leave a skipped item waiting forever), no one else's work shown."""
    return {
        "expert_instruction": INSTRUCTIONS,
        "show_instruction": False,  # the guide is one click away (the "Instructions" button), not a pop-up each time
        "maximum_annotations": overlap,
        "overlap_cohort_percentage": 100,
        "sampling": "Sequential sampling",
        "show_skip_button": True,
        "skip_queue": "REQUEUE_FOR_ME",
        "enable_empty_annotation": False,
        "show_annotation_history": False,
        "show_collab_predictions": False,
    }


def wanted_config(build: Build, existing: str = "") -> str:
    """The labeling config for the build's item kinds and those the project's config already holds."""
    return labeling_config({item_kind(it) for it in build.items} | kinds_in_config(existing))


def settings_changes(project: Mapping[str, Any], build: Build, overlap: int) -> dict[str, Any]:
    """What differs in ``project`` from what push sets: ``{field: wanted value}`` (empty when nothing does)."""
    wanted = {"label_config": wanted_config(build, str(project.get("label_config") or "")), **review_settings(overlap)}
    changes = {}
    for key, value in wanted.items():
        have = project.get(key)
        if key == "label_config":
            same = str(have or "").strip() == value.strip()
        elif isinstance(value, str):
            same = str(have or "").strip() == value.strip()
        else:
            same = have == value
        if not same:
            changes[key] = value
    return changes


def _batches(seq: Sequence, size: int):
    for i in range(0, len(seq), size):
        yield seq[i : i + size]


def check_kinds(build: Build) -> None:
    """Refuse an item of a kind its benchmark's spec does not declare (``review_kinds``): a reviewer would judge
    it on a screen made for another kind. Items of a benchmark the registry does not know are not checked."""
    for it in build.items:
        spec = find(it.benchmark)
        kind = item_kind(it)
        if spec is not None and kind not in spec.review_kinds:
            declared = ", ".join(KIND_NAMES[k] for k in spec.review_kinds)
            raise AnnotationError(f"{build.path / 'items.jsonl'}: item {it.id} is {KIND_NAMES[kind]}, which "
                                  f"{spec.name} items never are ({declared}); not pushed")


def push(
    client: LabelStudioClient,
    build: Build,
    project: str,
    *,
    files_root: Path | None = None,
    batch_size: int = DEFAULT_BATCH,
    overlap: int = 3,
    progress: bool = True,
    log: Callable[[str], None] = lambda s: print(s, file=sys.stderr),
    models: Mapping[str, str] | None = None,
) -> PushResult:
    """Create or reuse ``project`` and import the build's items it does not hold yet.

    ``models``: a re-review (:mod:`annotation.recheck`), ``{item id: the models' answer}`` shown beside each
    proposed answer; such a project must hold re-review tasks only, so no first-review vote is counted again."""
    models = models or {}
    if not build.items:
        raise AnnotationError(f"{build.path / 'items.jsonl'}: no items to push")
    if batch_size < 1:
        raise AnnotationError("--batch-size must be at least 1")
    files_root = check_files_root(Path(files_root or default_files_root()))
    folder = serving_folder(build.path, files_root)
    links = link_images(item_images(build), folder)
    kinds = {item_kind(it) for it in build.items}
    check_kinds(build)

    existing = client.find_project(project)
    created = False
    config_updated = False
    if existing is None:
        config = labeling_config(kinds)
        config_interface(config)
        proj = client.create_project(project_settings(project, build, config, overlap))
        client.create_view(int(proj["id"]), "Mirage review", DM_HIDDEN_COLUMNS, DM_HIDDEN_META)
        created = True
        log(f"created project {project!r} (id {proj['id']})")
    else:
        proj = existing
        config_interface(wanted_config(build, str(proj.get("label_config") or "")))
        changes = settings_changes(proj, build, overlap)
        if changes:
            proj = client.update_project(proj["id"], changes)
            config_updated = "label_config" in changes
            log(f"updated project {project!r} (id {proj['id']}): {', '.join(sorted(changes))}")
    pid = int(proj["id"])

    storages = client.local_storages(pid)
    have = [Path(s["path"]) for s in storages if s.get("path")]
    added: list[str] = []
    if folder not in have:
        client.add_local_storage(pid, str(folder), STORAGE_TITLE)
        added.append(str(folder))

    by_id = {it.id: it for it in build.items}
    known: set[str] = set()
    refreshed = 0
    for t in client.iter_tasks(pid):
        data = t.get("data") or {}
        iid = data.get(ITEM_ID_FIELD)
        known.add(iid)
        if models and MODELS_FIELD not in data:
            raise AnnotationError(f"project {project!r} on {client.url} holds a first review (task {t['id']}); "
                                  "push the re-review to a project of its own")
        if iid in by_id:  # a task pushed by an older Mirage shows what this one would show
            fresh = task_data(by_id[iid], build.path, files_root, links, models.get(iid))
            if data != fresh:
                client.update_task_data(int(t["id"]), fresh)
                refreshed += 1
    if refreshed:
        log(f"project {project!r} (id {pid}): {refreshed} task(s) shown as this version of Mirage shows them")
    todo = [it for it in build.items if it.id not in known]
    imported = 0
    if todo:
        tasks = [{"data": task_data(it, build.path, files_root, links, models.get(it.id))} for it in todo]
        if progress:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            with Progress(
                TextColumn("[bold]push[/] {task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
            ) as bar:
                t = bar.add_task(project, total=len(tasks))
                for batch in _batches(tasks, batch_size):
                    client.import_tasks(pid, batch)
                    imported += len(batch)
                    bar.advance(t, len(batch))
        else:
            for batch in _batches(tasks, batch_size):
                client.import_tasks(pid, batch)
                imported += len(batch)
    return PushResult(
        project_id=pid,
        project_url=f"{client.url}/projects/{pid}/data",
        created=created,
        total=len(build.items),
        already_there=len(build.items) - len(todo),
        imported=imported,
        config_updated=config_updated,
        storages_added=added,
        refreshed=refreshed,
    )
