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
from typing import Callable, Sequence

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
    MCQ,
    VQA,
    item_kind,
    labeling_config,
    resolve_image,
    task_data,
)
from annotation.errors import AnnotationError
from annotation.serving import check_files_root, link_images, serving_folder

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
    return {
        "title": title,
        "description": f"Mirage review of {build.label} ({build.path})",
        "label_config": config,
        "expert_instruction": INSTRUCTIONS,
        "show_instruction": True,
        "maximum_annotations": overlap,
        "overlap_cohort_percentage": 100,
        "sampling": "Sequential sampling",
        "show_skip_button": True,
        "enable_empty_annotation": False,
        "show_annotation_history": False,
        "show_collab_predictions": False,
    }


def _batches(seq: Sequence, size: int):
    for i in range(0, len(seq), size):
        yield seq[i : i + size]


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
) -> PushResult:
    """Create or reuse ``project`` and import the build's items it does not hold yet."""
    if not build.items:
        raise AnnotationError(f"{build.path / 'items.jsonl'}: no items to push")
    if batch_size < 1:
        raise AnnotationError("--batch-size must be at least 1")
    files_root = check_files_root(Path(files_root or default_files_root()))
    folder = serving_folder(build.path, files_root)
    links = link_images(item_images(build), folder)
    kinds = {item_kind(it) for it in build.items}

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
        wanted = labeling_config(kinds | kinds_in_config(proj.get("label_config", "")))
        config_interface(wanted)
        changes = {}
        if proj.get("label_config", "").strip() != wanted.strip():
            changes["label_config"] = wanted
        if proj.get("maximum_annotations") != overlap:
            changes["maximum_annotations"] = overlap
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

    known = {(t.get("data") or {}).get(ITEM_ID_FIELD) for t in client.iter_tasks(pid)}
    todo = [it for it in build.items if it.id not in known]
    imported = 0
    if todo:
        tasks = [{"data": task_data(it, build.path, files_root, links)} for it in todo]
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
    )
