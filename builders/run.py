"""The build runner: one atomic build directory per run.

A build is written into a folder of its own beside ``<out>/<name>/`` (``<name>.partial.<random>``) and swapped into
place only when everything is on disk, so a crash, a ``kill -9`` or a bad input never leaves a directory that looks
finished, and never a torn one. One build per folder and name runs at a time (a lock; a second one exits 2). A
finished build with the same name is replaced only after the new one is complete, and never when it holds a
review (``review.json``, ``reviews/``, ``adjudications.json``, ``recheck.json``) unless ``--replace`` moves it aside.

Layout (``docs/architecture.md``, "A build directory")::

    build.json    config, seed, code version, hashes of inputs, stage statistics, what was skipped and why
    items.jsonl   one canonical JSON item per line, sorted by id
    images/       images Mirage made itself (demo scenes, sampled frames)
"""

from __future__ import annotations

import json
import os
import glob
import re
import shutil
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Protocol, Sequence

from builders.items import Item, write_items
from builders.lint import lint_build_dir
from builders.review import RECHECK_FILE
from sources.atomic import FolderBusy, exchange, folder_lock, unfinished, write_atomic
from sources.errors import MirageError
from sources.hashing import file_sha256  # noqa: F401  (re-exported: builders hash their inputs)

CODE_ROOT = Path(__file__).resolve().parent.parent


def code_version() -> str:
    """The git commit of the code that made the build (``+dirty`` when uncommitted changes exist)."""
    try:
        head = subprocess.run(
            ["git", "-C", str(CODE_ROOT), "rev-parse", "--short=12", "HEAD"],
            capture_output=True, text=True, timeout=5, check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(CODE_ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=5, check=True,
        ).stdout.strip()
        return head + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("mirage-bench")
        except PackageNotFoundError:
            return "unknown"


class BuildDir:
    """A build being written into ``path``, a folder private to it; see :func:`open_build`."""

    def __init__(self, final: Path, path: Path) -> None:
        self.final = final
        self.path = path
        self.images = self.path / "images"

    def add_image(self, source: str | Path, name: str | None = None) -> str:
        """Copy an image Mirage made into ``images/``; returns its path relative to the build dir."""
        target = self.images / (name or Path(source).name)
        if not target.exists():
            self.images.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        return f"images/{target.name}"

    def write_items(self, items: Iterable[Item]) -> int:
        """Write items.jsonl; an absolute image path (the user's own images, left where they are) is written
        relative to the build folder (:func:`relative_images`), so the folder can move with its sources."""
        return write_items(self.path / "items.jsonl", (relative_images(it, self.final) for it in items))

    def localise(self, items: Iterable[Item]) -> list[Item]:
        """Copy the images Mirage made for ``items`` (demo scenes) into ``images/`` and point the items at
        ``images/<name>``; the user's own images are not copied by builders that leave them where they are."""
        return [replace(it, images=tuple(self.add_image(p) for p in it.images)) for it in items]

    def write_json(self, name: str, data: Mapping[str, Any]) -> None:
        text = json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False, default=_jsonable)
        (self.path / name).write_text(text + "\n", encoding="utf-8")


def relative_images(item: Item, build: Path) -> Item:
    """``item`` with its absolute image paths made relative to ``build`` (``../../coco/val2017/x.jpg``).

    Why: items.jsonl held absolute paths into the source folders, so a build could not be moved or shared. Every
    reader resolves a relative path against the build folder (annotation, release, scoring), so a build and its
    sources moved together (a project folder holding both, or the same layout on another machine) keep working;
    README "Moving a build" says how. The image's file name, which item ids hash, is unchanged."""
    if not any(os.path.isabs(p) for p in item.images):
        return item
    base = os.path.abspath(build)
    return item.with_images(_relative_path(p, base) if os.path.isabs(p) else p for p in item.images)


def _relative_path(path: str, base: str) -> str:
    """``Path(os.path.relpath(path, base)).as_posix()``, made from the path's folder's, which is remembered: a
    build's images lie in a few folders, and the full computation for each of a paper-scale build's 74,000
    image paths cost about a second."""
    folder, name = os.path.split(path)
    if not name or name in (".", ".."):
        return Path(os.path.relpath(path, base)).as_posix()
    relative = _relative_folder(folder, base)
    return name if relative == "." else f"{relative}/{name}"


@lru_cache(maxsize=4096)
def _relative_folder(folder: str, base: str) -> str:
    return Path(os.path.relpath(folder, base)).as_posix()


def _jsonable(value: Any) -> Any:
    if isinstance(value, (set, frozenset, tuple)):
        return sorted(value) if isinstance(value, (set, frozenset)) else list(value)
    if isinstance(value, Path):
        return str(value)
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


REVIEW_STATE = ("review.json", "reviews", "adjudications.json", RECHECK_FILE)
"""What ``annotation pull`` and the maintainer's adjudications leave in a build folder: a build never deletes it."""


def review_state(folder: Path) -> list[str]:
    """The names of :data:`REVIEW_STATE` that ``folder`` holds."""
    return [n for n in REVIEW_STATE if (folder / n).exists()]


@contextmanager
def build_guard(final: Path, replace: bool = False) -> Iterator[Path | None]:
    """Hold the lock of build folder ``final`` (one build per folder and name at a time) and refuse, before any
    work, a build that would delete a review; yields where ``--replace`` will move the reviewed folder, or None.

    A second build of the same folder ends here with one line (exit status 2), whichever of them got the lock
    first; taking the guard again in the process that holds it (``run_builder`` then :func:`open_build`) is free.
    """
    try:
        with folder_lock(final):
            held = review_state(final)
            if held and not replace:
                raise MirageError(
                    f"{final}: holds a review ({', '.join(held)}) that a rebuild would delete; choose another "
                    "--name, or pass --replace to move the old folder aside")
            yield _aside_name(final) if held else None
    except FolderBusy as exc:
        raise MirageError(f"{final}: another build of this folder and name is running (pid {exc.pid or '?'}); "
                          "wait for it to finish, or choose another --name") from None


def _aside_name(final: Path) -> Path:
    """Where ``--replace`` keeps a reviewed build: ``<name>.replaced-<UTC time>[-N]`` beside it."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    aside = final.with_name(f"{final.name}.replaced-{stamp}")
    n = 1
    while aside.exists():
        n += 1
        aside = final.with_name(f"{final.name}.replaced-{stamp}-{n}")
    return aside


_PARTIAL = ".partial."
"""A build is written into ``<name>.partial.<8 random characters>`` (``tempfile.mkdtemp``): private to it."""


@contextmanager
def open_build(out_dir: str | Path, name: str, cache_dir: str | Path | None = None, *,
               replace: bool = False) -> Iterator[BuildDir]:
    """Yield a :class:`BuildDir` writing into a folder private to this build; on success it becomes ``<name>``.

    Under the lock of :func:`build_guard` (a second build of the name exits 2; a reviewed build is refused unless
    ``replace``). On any exception the private folder is removed and an earlier finished build is left untouched.
    Before the swap, the lint (:mod:`builders.lint`) reads the finished items.jsonl and adds its ``"lint"``
    section to build.json, so every builder's build carries it; items.jsonl is never touched. ``cache_dir``: the
    build's cache, where the lint of the same items is reused from (:mod:`builders.lint.cache`).

    The finished folder replaces an earlier one in one atomic swap (:func:`sources.atomic.exchange`), so a build
    killed at any point (even ``kill -9``) leaves the old folder or the new one whole at ``<name>``; what a killed
    build leaves beside it (its private folder, or the old build on its way out) is removed by the next build of
    the name, except an old build holding a review, which is moved aside like ``--replace`` does.
    """
    final = Path(out_dir) / name
    with build_guard(final, replace) as aside:
        if aside is not None:
            print(f"--replace: {final} holds a review; once the new build is complete it is moved to {aside}",
                  file=sys.stderr)
        _clear_leftovers(final)
        build = BuildDir(final, Path(tempfile.mkdtemp(prefix=final.name + _PARTIAL, dir=final.parent)))
        try:
            yield build
            record_tasks(build.path)
            lint_build_dir(build.path, cache_dir)
        except BaseException:
            shutil.rmtree(build.path, ignore_errors=True)
            raise
        failed_record(final).unlink(missing_ok=True)  # the reasons of an earlier failed build no longer apply
        if not final.exists():
            os.rename(build.path, final)
            return
        if exchange(build.path, final):
            retired = build.path  # the swap left the old build there
        else:  # no atomic swap on this system: two renames; a kill between them is repaired by the next build
            retired = final.with_name(final.name + _PARTIAL + "retired")
            os.rename(final, retired)
            os.rename(build.path, final)
        _retire(retired, aside)


def _retire(old: Path, aside: Path | None) -> None:
    """Delete an old build, or move it to ``aside`` (a reviewed one; the name is printed)."""
    if aside is None:
        shutil.rmtree(old, ignore_errors=True)
        return
    os.rename(old, aside)
    print(f"--replace: the reviewed build was moved to {aside}", file=sys.stderr)


def _clear_leftovers(final: Path) -> None:
    """Remove what killed builds of ``final`` left beside it (called under its lock, so none of them still runs):
    private folders, and an old build on its way out, which is put back when ``final`` is missing and moved
    aside when it holds a review."""
    ours = (*final.parent.glob(glob.escape(final.name) + ".partial*"), final.with_name(final.name + ".old"))
    for path in sorted(p for p in ours if p.is_dir() and (unfinished(p) or p.name.endswith(".old"))):
        if path.name.endswith(".retired") and not final.exists():
            os.rename(path, final)
        elif review_state(path):
            _retire(path, _aside_name(final))
        else:
            shutil.rmtree(path, ignore_errors=True)


def record_tasks(folder: Path) -> dict[str, dict[str, Any]] | None:
    """Add ``"tasks"`` to a finished build's build.json: for every task the build was asked for, its item count
    and why its inputs were skipped (``{task: {"items": n, "skipped": {reason: count}}}``); returns it.
    ``"not_given": true`` marks a task skipped whole by a record naming only the task and the reason (MIOH's "no
    PACO data given"), or one with neither items nor skips (``--patterns 0``): its input was not given, so its
    absence is the user's choice, not a loss.

    Asked for: the config's ``tasks`` (MIOH, predictive), else the domains of the sources given (Mementos:
    ``stats.sources[*].domain``), else the tasks that have items. A skip counts for a task when its record
    names the task (``"task"``), a source of that domain (``"source"``) or a cell of the task that fell short
    (MIOH's ``"cell"``, with its reasons). A task asked for with no items is
    what :func:`empty_tasks` reports and the command line refuses (issue 51: a build whose decoder could not
    open any video exited 0 with two of its three tasks gone). ``None`` when the folder has no build.json.
    """
    build_path, items_path = folder / "build.json", folder / "items.jsonl"
    if not build_path.is_file() or not items_path.is_file():
        return None
    build = json.loads(build_path.read_text(encoding="utf-8"))
    counts: dict[str, int] = {}
    with items_path.open(encoding="utf-8") as lines:
        for line in lines:
            task = json.loads(line).get("task") if line.strip().startswith("{") else None
            if isinstance(task, str):
                counts[task] = counts.get(task, 0) + 1
    sources = (build.get("stats") or {}).get("sources")
    domains = {k: v["domain"] for k, v in sources.items() if isinstance(v, dict) and "domain" in v} \
        if isinstance(sources, dict) else {}
    asked = (build.get("config") or {}).get("tasks")
    if not isinstance(asked, list):
        asked = sorted(set(domains.values())) or sorted(counts)
    section: dict[str, dict[str, Any]] = {task: {"items": counts.get(task, 0), "skipped": {}} for task in asked}
    for skip in build.get("skipped") or []:
        if not isinstance(skip, dict):
            continue
        cell = skip.get("cell") if isinstance(skip.get("cell"), dict) else None
        task = (cell or skip).get("task", domains.get(skip.get("source")))
        if task not in section:
            continue
        reasons = (cell.get("reasons") or {"fewer questions than wanted": 1}) if cell else \
            {str(skip.get("reason") or "no reason recorded"): 1}
        for reason, n in reasons.items():
            section[task]["skipped"][reason] = section[task]["skipped"].get(reason, 0) + int(n)
            if set(skip) == {"task", "reason"}:  # the whole task, for want of an input the user did not give
                section[task]["not_given"] = True
    for entry in section.values():
        if not entry["items"] and not entry["skipped"]:  # no input at all (``--patterns 0``): nothing was lost
            entry["not_given"] = True
    build["tasks"] = section
    write_atomic(build_path, (json.dumps(build, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    return section


def empty_tasks(build: Mapping[str, Any]) -> list[str]:
    """One line for each task a build was asked for that has no items (build.json's ``"tasks"``), with its
    reasons, most frequent first."""
    lines = []
    for task, entry in (build.get("tasks") or {}).items():
        if entry.get("items") or entry.get("not_given"):
            continue
        reasons = sorted(entry.get("skipped", {}).items(), key=lambda kv: (-kv[1], kv[0]))
        why = "; ".join(f"{reason} ({n})" for reason, n in reasons[:3]) or "nothing was skipped: no input for it"
        more = f"; and {len(reasons) - 3} more reasons in build.json" if len(reasons) > 3 else ""
        lines.append(f"task {task} made no items: {why}{more}")
    return lines


def reason_kind(reason: str) -> str:
    """The kind of a skip reason, so that the summary groups like reasons: quoted text and bracketed details
    (``'pick book'``, ``(best c012 at 0.33)``) dropped, class codes and measured numbers shown as ``…``; a step
    number (``step 2``) is kept. Why: Charades' reasons name each video's words and numbers, and masking only
    digits left 1,743 rows reading "step N" and "cN" (issue 51)."""
    kind = re.sub(r"\s*\([^()]*\)", "", reason)
    kind = re.sub(r"(?<![\w'])'[^']*'(?![\w'])|\"[^\"]*\"", "…", kind)
    kind = re.sub(r"(?<!step )\b[a-z]?\d+(?:\.\d+)?\b", "…", kind)
    return re.sub(r"\s+", " ", kind).strip()


def failed_record(final: Path) -> Path:
    """Where a build that stopped without items leaves its reasons: ``<name>.failed.json`` beside the build it
    would have been (:func:`write_failed_record`); a later successful build of the name removes it."""
    return final.with_name(final.name + ".failed.json")


def write_failed_record(out_dir: str | Path, name: str, record: Mapping[str, Any]) -> Path:
    """Write :func:`failed_record` (atomically) and return its path: what a build that made no items read and
    why each input was left out, for the many inputs no one-line error can list."""
    path = failed_record(Path(out_dir) / name)
    text = json.dumps(record, sort_keys=True, indent=2, ensure_ascii=False, default=_jsonable)
    return write_atomic(path, (text + "\n").encode("utf-8"))


def build_record(benchmark: str, config: Any, stats: Mapping[str, Any], sources: Iterable[Mapping[str, str]],
                 items: int, internal: Iterable[str] = ()) -> dict[str, Any]:
    """The ``build.json`` every builder writes: what was built, from what, by which code, and its statistics.

    ``config`` is a builder config (``BuildOptions``: ``build_name()``, ``seed``, ``as_record()``); ``stats`` must
    hold ``input_hashes`` and ``skipped``, which get their own keys; ``internal`` names further stats kept out."""
    hidden = {"input_hashes", "skipped", *internal}
    return {
        "benchmark": benchmark,
        "name": config.build_name(),
        "seed": config.seed,
        "config": config.as_record(),
        "code_version": code_version(),
        "input_hashes": stats["input_hashes"],
        "sources": list(sources),
        "items": items,
        "stats": {k: v for k, v in stats.items() if k not in hidden},
        "skipped": stats["skipped"],
    }


def write_items_build(
    config: Any, benchmark: str, items: Sequence[Item], stats: Mapping[str, Any], sources: Iterable[Mapping[str, str]],
    *, localise: bool, internal: Iterable[str] = (), extra: Mapping[str, Any] | None = None,
) -> tuple[Path, list[Item]]:
    """Write a build whose only files are items.jsonl, build.json (:func:`build_record`, plus ``extra`` keys) and
    the generated images (copied in when ``localise``); returns the build's path and the items as written."""
    with open_build(config.out, config.build_name(), config.resolved_cache_dir(), replace=config.replace) as out:
        written = out.localise(items) if localise else list(items)
        n = out.write_items(written)
        out.write_json("build.json", {**build_record(benchmark, config, stats, sources, n, internal), **(extra or {})})
    return out.final, written


class Planned(Protocol):
    """What a builder's ``plan(config)`` returns when it computes everything before writing (images included)."""

    items: list[Item]
    stats: dict[str, Any]


def planned_items(planned: Planned, stats: dict[str, Any] | None) -> Iterator[Item]:
    """``build(config, stats)`` of a builder that plans first: the plan's statistics into ``stats``, then its
    items."""
    if stats is not None:
        stats.update(planned.stats)
    yield from planned.items
