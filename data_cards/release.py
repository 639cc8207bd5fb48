"""``release``: a reviewed build -> an immutable, versioned, Hub-layout dataset directory.

``releases/<name>/<version>/`` holds ``data/**.parquet`` (embedded images), ``README.md`` (the card),
``plots/*.png``, ``harness/`` (an lmms-eval task folder and VLMEvalKit TSVs, :mod:`data_cards.harness`),
``CHANGELOG.md`` (this version's entry on top of the previous version's changelog) and
``manifest.json`` (what it was made from, and the SHA-256 and size of every other file). It is written into
``<version>.partial.<random>`` (private to the run, under a lock on the version) and renamed when complete; an
existing version is never touched.
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

from sources.atomic import FolderBusy, folder_lock
from sources.errors import MirageError
from sources.hashing import file_sha256

from .export import DEFAULT_MAX_SHARD_BYTES, plan_shards, read_columns, write_shards
from .harness import write_harness_exports
from .inputs import PSEUDONYMS_FILE, ReleaseInputs, load_inputs, read_pseudonyms, write_pseudonyms
from .metadata import config_entries
from .plots import plot_specs, write_plots
from .rechecks import recheck_lines
from .statistics import compute_stats

SEMVER_RE = re.compile(
    r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)"
    r"(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?$"
)
MANIFEST = "manifest.json"
RELEASE_FORMAT = 1


def parse_version(version: str) -> tuple:
    """A sort key for a semantic version ``X.Y.Z[-pre]``; :class:`MirageError` if it is not one."""
    m = SEMVER_RE.match(version or "")
    if not m:
        raise MirageError(
            f"--version {version!r}: not a semantic version MAJOR.MINOR.PATCH (e.g. 1.0.0 or 1.1.0-rc.1)"
        )
    major, minor, patch, pre = m.groups()
    # A pre-release sorts before its release (1.0.0-rc.1 < 1.0.0).
    pre_key: tuple = (1,) if pre is None else (0,) + tuple(
        (0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split(".")
    )
    return (int(major), int(minor), int(patch), pre_key)


def existing_versions(name_dir: Path) -> list[str]:
    """Finished versions under ``releases/<name>/``, oldest first."""
    if not name_dir.is_dir():
        return []
    found = [p.name for p in name_dir.iterdir() if p.is_dir() and SEMVER_RE.match(p.name)]
    return sorted(found, key=parse_version)


def file_entries(root: Path, exclude: tuple[str, ...] = (MANIFEST,)) -> dict[str, dict[str, Any]]:
    """``{relative posix path: {"sha256", "size"}}`` for every file under ``root``."""
    out = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        if rel in exclude:
            continue
        out[rel] = {"sha256": file_sha256(path), "size": path.stat().st_size}
    return out


@dataclass
class ReleaseResult:
    path: Path
    version: str
    name: str
    num_items: int
    files: int
    stats: dict[str, Any]


def release(
    build_dir: str | Path,
    version: str,
    *,
    name: str | None = None,
    include_unreviewed: bool = False,
    out: str | Path = "releases",
    license: str | None = None,
    repo_id: str | None = None,
    notes: str = "",
    project_url: str | None = None,
    maintainers: str | None = None,
    max_shard_bytes: int | None = None,
    progress: Callable[[int], None] | None = None,
    on_total: Callable[[int], None] | None = None,
) -> ReleaseResult:
    """Make ``<out>/<name>/<version>/`` from a build dir (see the module docstring)."""
    name, inputs, known = _prepare(build_dir, version, name, include_unreviewed, out)
    cards = _card_module()
    name_dir = Path(out) / name
    final = name_dir / version
    name_dir.mkdir(parents=True, exist_ok=True)
    with _release_lock(final):
        partial = Path(tempfile.mkdtemp(prefix=f"{version}.partial.", dir=name_dir))  # private to this run
        try:
            if on_total:
                on_total(len(inputs.items))
            shards = write_shards(
                partial,
                inputs.items,
                inputs.status,
                inputs.build_dir,
                scrub=inputs.scrubber.value if inputs.scrubber else (lambda v: v),
                max_shard_bytes=max_shard_bytes or DEFAULT_MAX_SHARD_BYTES,
                progress=progress,
            )
            stats = compute_stats(inputs.items, inputs.status, inputs.build_dir)
            configs = config_entries(shards)
            write_plots(partial, stats)
            # lmms-eval task folder + VLMEvalKit TSVs under harness/ (listed in the manifest like every file)
            write_harness_exports(partial, release=name, version=version, repo_id=repo_id)
            card = cards.render_card(
                version=version,
                name=name,
                build=inputs.build,
                stats=stats,
                configs=configs,
                review=inputs.review,
                excluded=inputs.excluded,
                license_override=license,
                scrub=inputs.scrubber.value if inputs.scrubber else (lambda v: v),
                repo_id=repo_id,
                project_url=project_url,
                maintainers=maintainers,
            )
            (partial / "README.md").write_text(card, encoding="utf-8", newline="\n")
            previous = _previous_version(name_dir, version)
            released_at = datetime.now(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
            (partial / "CHANGELOG.md").write_text(
                _changelog(name, version, released_at, inputs, stats, previous, notes), encoding="utf-8", newline="\n"
            )
            manifest = _manifest(name, version, released_at, inputs, stats, configs, previous, license, repo_id)
            manifest["files"] = file_entries(partial)
            (partial / MANIFEST).write_text(
                json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8", newline="\n"
            )
            os.rename(partial, final)
            if inputs.scrubber and inputs.scrubber.mapping:
                write_pseudonyms(name_dir, known, inputs.scrubber.mapping)
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)
            raise
    return ReleaseResult(
        path=final, version=version, name=name, num_items=len(inputs.items), files=len(manifest["files"]) + 1,
        stats=stats,
    )


def _card_module() -> Any:
    """:mod:`data_cards.card`, which writes the card with ``huggingface_hub`` (the release extra): imported when
    a release is made, after its inputs were checked, and a one-line error without the extra."""
    try:
        from . import card
    except ImportError as exc:
        raise MirageError(f"releasing needs the release extra ({exc.name} is not installed): pip install "
                          "'mirage-bench[release]' or bash .ci/install-release.sh") from None
    return card


def _prepare(build_dir: str | Path, version: str, name: str | None, include_unreviewed: bool,
             out: str | Path) -> tuple[str, ReleaseInputs, dict[str, str]]:
    """The checks a release passes before it writes anything: the release name, the inputs chosen from the build
    and its review, and the reviewer pseudonyms known from earlier versions."""
    parse_version(version)
    name = name or _benchmark_name(Path(build_dir))
    known = read_pseudonyms(Path(out) / name) if name else {}
    inputs = load_inputs(build_dir, include_unreviewed=include_unreviewed, known_pseudonyms=known)
    name = name or inputs.build["benchmark"]
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name) or name.endswith(".partial"):
        raise MirageError(f"--name {name!r}: use letters, digits, '-', '_' and '.' only")
    final = Path(out) / name / version
    if final.exists():
        raise MirageError(f"{final}: version {version} of {name} already exists; releases are never overwritten, "
                          "choose a new version")
    return name, inputs, known


@contextmanager
def _release_lock(final: Path) -> Iterator[None]:
    """One release of a name and version at a time (a second one ends in one line). Under the lock, the private
    folders of killed releases of it are removed (they never became a release), and a version that another run
    finished meanwhile is refused."""
    try:
        with folder_lock(final):
            for leftover in final.parent.glob(glob.escape(final.name) + ".partial*"):
                shutil.rmtree(leftover, ignore_errors=True)
            if final.exists():
                raise MirageError(f"{final}: version {final.name} of {final.parent.name} already exists; releases "
                                  "are never overwritten, choose a new version")
            yield
    except FolderBusy as exc:
        raise MirageError(f"{final}: another release of this name and version is running (pid {exc.pid or '?'}); "
                          "wait for it to finish") from None


@dataclass
class ReleasePlan:
    """What :func:`release` would write (``release --dry-run``): ``files`` are ``(path, what it holds)``, paths
    relative to ``path``; a path ending in ``/`` is a folder of files."""

    path: Path
    version: str
    name: str
    num_items: int
    files: list[tuple[str, str]]
    stats: dict[str, Any]
    excluded: dict[str, int]


def plan_release(
    build_dir: str | Path,
    version: str,
    *,
    name: str | None = None,
    include_unreviewed: bool = False,
    out: str | Path = "releases",
    max_shard_bytes: int | None = None,
) -> ReleasePlan:
    """Every check :func:`release` makes before it writes, and the files it would write; writes nothing (the
    images are not encoded, so shard sizes are estimates: image bytes plus text)."""
    name, inputs, _ = _prepare(build_dir, version, name, include_unreviewed, out)
    _card_module()  # a plan fails where the release would: without the release extra
    stats = compute_stats(inputs.items, inputs.status, inputs.build_dir)
    files = [(path, f"{len(shard)} item(s), ~{_megabytes(size)}")
             for plan in plan_shards(inputs.items, inputs.build_dir, max_shard_bytes or DEFAULT_MAX_SHARD_BYTES)
             for path, shard, size in zip(plan.files, plan.shards, plan.sizes)]
    files += [(path, "plot") for path, _, _ in plot_specs(stats)]
    files += [("harness/lmms_eval/", "lmms-eval tasks"), ("harness/vlmevalkit/", "VLMEvalKit TSVs"),
              ("harness/README.md", "how to run them"), ("README.md", "the data card"),
              ("CHANGELOG.md", "this version's entry"), (MANIFEST, "sources, sha256 of files")]
    if inputs.scrubber and inputs.scrubber.mapping:
        files.append((f"../{PSEUDONYMS_FILE}", "reviewer pseudonyms"))
    return ReleasePlan(path=Path(out) / name / version, version=version, name=name, num_items=len(inputs.items),
                       files=files, stats=stats, excluded=inputs.excluded)


def _megabytes(size: int) -> str:
    return f"{size / 1e6:.1f} MB" if size >= 100_000 else f"{size / 1e3:.1f} kB"


def _benchmark_name(build_dir: Path) -> str | None:
    """The build's benchmark, read early to find the release's pseudonym file (``None``: load_inputs says why)."""
    try:
        value = json.loads((build_dir / "build.json").read_text(encoding="utf-8")).get("benchmark")
    except (OSError, ValueError, AttributeError):
        return None
    return value if isinstance(value, str) and value else None


def _previous_version(name_dir: Path, version: str) -> Path | None:
    """The release just below ``version`` (the one its changelog continues), if any."""
    key = parse_version(version)
    older = [v for v in existing_versions(name_dir) if parse_version(v) < key]
    return name_dir / older[-1] if older else None


def _manifest(
    name: str,
    version: str,
    released_at: str,
    inputs: ReleaseInputs,
    stats: dict[str, Any],
    configs: list[dict[str, Any]],
    previous: Path | None,
    license: str | None,
    repo_id: str | None,
) -> dict[str, Any]:
    build = inputs.build
    scrub = inputs.scrubber.value if inputs.scrubber else (lambda v: v)
    return {
        "format": RELEASE_FORMAT,
        "name": name,
        "version": version,
        "tag": f"v{version}",
        "released_at": released_at,
        "previous_version": previous.name if previous else None,
        "repo_id": repo_id,
        "license_override": license,
        "include_unreviewed": inputs.include_unreviewed,
        "build": {
            "benchmark": build.get("benchmark"),
            "name": build.get("name"),
            "seed": build.get("seed"),
            "code_version": build.get("code_version"),
            "config": scrub(build.get("config") or {}),
            "input_hashes": scrub(build.get("input_hashes") or {}),
            "stats": scrub(build.get("stats") or {}),
            "skipped": len(build.get("skipped") or []),
            "files_sha256": inputs.input_files,
            "lint_promises": build.get("lint_promises") or {},
            "twin_of": build.get("twin_of"),  # python -m builders.twin: the build this one re-draws  # what `python -m lint RELEASE` may take as by design
        },
        "review": inputs.review,
        "excluded": inputs.excluded,
        "counts": stats,
        "configs": [
            {k: c[k] for k in ("name", "task", "glob", "num_examples", "num_bytes", "download_size", "default")}
            for c in configs
        ],
    }


def _changelog(
    name: str,
    version: str,
    released_at: str,
    inputs: ReleaseInputs,
    stats: dict[str, Any],
    previous: Path | None,
    notes: str,
) -> str:
    """This version's entry, with the diff against the previous version, on top of that version's changelog."""
    lines = [f"## v{version} - {released_at[:10]}", ""]
    if notes:
        lines += [notes.strip(), ""]
    review = "not reviewed" if inputs.review is None else "reviewed"
    if inputs.review is not None and stats["review_status"].get("unreviewed"):
        review = f"reviewed, plus {stats['review_status']['unreviewed']} unreviewed item(s)"
    lines.append(
        f"- {stats['num_items']} items ({review}) in {len(stats['tasks'])} task(s), {stats['num_images']} images; "
        f"build `{inputs.build.get('name')}`, seed {inputs.build.get('seed')}, code `{inputs.build.get('code_version')}`."
    )
    twin = inputs.build.get("twin_of")
    if isinstance(twin, dict):
        shared = twin.get("shared_images") or {}
        shown = (f" {shared['shared']} of its {shared['images']} images are the original's too."
                 if "shared" in shared else "")
        lines.append(f"- A twin of build `{twin.get('name')}` (seed {twin.get('seed')}): the same cells drawn "
                     f"again from a derived seed (`python -m builders.twin`), for `python -m scoring twin`.{shown}")
    old_log = ""
    if previous is not None:
        old = read_columns(previous, ["id", "answer"])
        old_answers = dict(zip(old["id"], old["answer"]))
        new_answers = {it.id: it.answer for it in inputs.items}
        added = len(new_answers.keys() - old_answers.keys())
        removed = len(old_answers.keys() - new_answers.keys())
        changed = sum(1 for k in new_answers.keys() & old_answers.keys() if new_answers[k] != old_answers[k])
        lines.append(f"- Since {previous.name}: {added} item(s) added, {removed} removed, {changed} answer(s) changed.")
        log = previous / "CHANGELOG.md"
        if log.exists():
            text = log.read_text(encoding="utf-8")
            old_log = text.split("\n", 2)[2] if text.startswith("# Changelog") else text
    else:
        lines.append("- First release.")
    lines += recheck_lines(inputs.rechecked)
    return f"# Changelog of {name}\n\n" + "\n".join(lines).rstrip() + "\n\n" + old_log.lstrip()
