"""Push a build to a Label Studio project: create or reuse it, then import only the items it lacks.

Label Studio itself would happily import the same item twice, so idempotence is Mirage's job: every task carries
the item id in ``data.mirage_id``, and a push first lists the project's tasks and imports only unknown ids.
(Two pushes to the same project at the same moment could still race; a team pushes from one place.)

Images are served by Label Studio's local-files storage: the task holds ``/data/local-files/?d=<path>`` URLs
relative to the server's ``LOCAL_FILES_DOCUMENT_ROOT`` (``/`` by default, see ``serve``), and the push connects
one local-files storage per image folder to the project, since Label Studio only serves a file to logged-in
users with access to a project whose storage contains it.
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

DEFAULT_BATCH = 250
STORAGE_TITLE = "Mirage images (serving only; do not sync)"


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
    """The server's document root as this side knows it: ``$LOCAL_FILES_DOCUMENT_ROOT`` or ``/``."""
    return Path(os.environ.get("LABEL_STUDIO_LOCAL_FILES_DOCUMENT_ROOT") or os.environ.get("LOCAL_FILES_DOCUMENT_ROOT") or "/")


def image_folders(build: Build, files_root: Path) -> list[Path]:
    """Check every image exists under ``files_root``; return the fewest folders that contain them all.

    Images inside the build dir are covered by the build dir itself; others (source images) by their folder.
    """
    root = Path(files_root).resolve()
    folders: set[Path] = set()
    for it in build.items:
        for img in it.images:
            path = resolve_image(build.path, img)
            if not path.is_file():
                raise AnnotationError(f"{build.path / 'items.jsonl'}: item {it.id}: image {img} not found ({path})")
            if root != path and root not in path.parents:
                raise AnnotationError(
                    f"item {it.id}: image {path} is outside the server's files root {root}: "
                    "pass --files-root (the LOCAL_FILES_DOCUMENT_ROOT of the server)"
                )
            folders.add(build.path if build.path in path.parents else path.parent)
    cover: list[Path] = []
    for f in sorted(folders, key=lambda p: (len(p.parts), str(p))):
        if not any(c == f or c in f.parents for c in cover):
            cover.append(f)
    if root in cover:
        raise AnnotationError(
            f"images lie directly in the files root {root}; Label Studio cannot serve from the root itself: "
            "move them into a sub-folder or pass a higher --files-root"
        )
    return sorted(cover)


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
    files_root = Path(files_root or default_files_root())
    folders = image_folders(build, files_root)
    kinds = {item_kind(it) for it in build.items}

    existing = client.find_project(project)
    created = False
    config_updated = False
    if existing is None:
        proj = client.create_project(project_settings(project, build, labeling_config(kinds), overlap))
        created = True
        log(f"created project {project!r} (id {proj['id']})")
    else:
        proj = existing
        wanted = labeling_config(kinds | kinds_in_config(proj.get("label_config", "")))
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
    for folder in folders:
        if not any(h == folder or h in folder.parents for h in have):
            client.add_local_storage(pid, str(folder), STORAGE_TITLE)
            have.append(folder)
            added.append(str(folder))

    known = {(t.get("data") or {}).get(ITEM_ID_FIELD) for t in client.iter_tasks(pid)}
    todo = [it for it in build.items if it.id not in known]
    imported = 0
    if todo:
        tasks = [{"data": task_data(it, build.path, files_root)} for it in todo]
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
