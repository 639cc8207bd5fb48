"""Items to evaluate, from wherever a benchmark lives: a build dir, an ``items.jsonl``, a release dir, or the Hub.

:func:`load_items` returns :class:`builders.items.Item` objects whose ``images`` are readable absolute paths:

* a build dir (``items.jsonl`` + ``images/``) or an ``items.jsonl``: the build's items (``items.jsonl``, not the
  reviewed subset: a release is what carries reviewed items), relative image paths resolved against the build;
* a release dir (``data/**/*.parquet``, :mod:`data_cards.release`): rows read with pyarrow, the embedded image
  bytes written once under ``<cache>/release_images/<digest>/`` (digest: sha256 of the shards, so another release
  never reuses stale files; names are the build's ``image_names``, so harness exports and ids that hash names
  see the same names as the build);
* ``owner/name@v1.0.0`` (or ``revision=``): the release on the Hugging Face Hub at that tag, fetched with
  ``huggingface_hub.snapshot_download(repo_id, revision=tag, repo_type="dataset")`` (which honours ``HF_ENDPOINT``,
  ``HF_HUB_OFFLINE`` and its own cache), then read as a release dir.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from builders.items import Item, read_items
from sources.atomic import write_atomic
from sources.demo import default_cache_dir
from sources.errors import ConfigError
from sources.hashing import file_sha256

REPO_RE = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+(?:@[\w./+-]+)?$")
"""``owner/name`` or ``owner/name@revision``."""

ROW_COLUMNS = ("id", "benchmark", "task", "question_type", "pressure", "context", "question", "options", "answer",
               "provenance", "image_names", "images")


def load_items(path_or_repo: str | os.PathLike[str], revision: str | None = None,
               cache_dir: str | os.PathLike[str] | None = None, *, with_images: bool = True) -> list[Item]:
    """Every item of a build dir, an ``items.jsonl``, a release dir or a Hub repo at a tag (module docstring).

    ``with_images=False``: a release's images are not written out and ``images`` holds their names only (for
    scorers that never look at pixels, e.g. Mementos' keyword metrics)."""
    path = Path(path_or_repo)
    if path.is_dir() and (path / "items.jsonl").is_file():
        return _build_items(path / "items.jsonl")
    if path.is_file():
        return _build_items(path)
    if path.is_dir() and (path / "data").is_dir():
        return read_release(path, cache_dir, with_images=with_images)
    if path.exists():
        raise ConfigError(f"{path}: neither a build dir, an items.jsonl nor a release dir (data/*.parquet)")
    text = str(path_or_repo)
    if REPO_RE.match(text) and not text.startswith((".", "/")):
        repo_id, _, tag = text.partition("@")
        return read_release(download_release(repo_id, revision or tag or None), cache_dir, with_images=with_images)
    raise ConfigError(f"{text}: no such file or directory (and not a Hub repo id like owner/name@v1.0.0)")


def _build_items(path: Path) -> list[Item]:
    try:
        items = read_items(path)
    except (ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{path}: not an items.jsonl ({type(exc).__name__}: {exc})") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc})") from None
    root = path.parent.resolve()
    return [_with_images(it, tuple(str(p if Path(p).is_absolute() else root / p) for p in it.images))
            for it in items]


def _with_images(item: Item, images: tuple[str, ...]) -> Item:
    from dataclasses import replace

    return replace(item, images=images)


def download_release(repo_id: str, revision: str | None) -> Path:
    """The local snapshot of a Hub dataset repo at ``revision`` (a tag such as ``v1.0.0``)."""
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError, RepositoryNotFoundError
    except ImportError:
        raise ConfigError(f"{repo_id}: reading a release from the Hub needs huggingface_hub: "
                          "pip install 'mirage-bench[release]'") from None
    at = f"{repo_id}@{revision}" if revision else repo_id
    try:
        local = snapshot_download(repo_id, revision=revision, repo_type="dataset",
                                  allow_patterns=["data/**", "manifest.json", "README.md"])
    except RepositoryNotFoundError:
        raise ConfigError(f"{at}: no such dataset repo on the Hub (or no access)") from None
    except LocalEntryNotFoundError:
        raise ConfigError(f"{at}: not in the local Hugging Face cache and the Hub cannot be reached "
                          "(HF_HUB_OFFLINE is set, or no network)") from None
    except HfHubHTTPError as exc:
        raise ConfigError(f"{at}: the Hub refused: {str(exc).splitlines()[0]}") from None
    except (OSError, ValueError) as exc:  # connection errors, a revision that does not exist
        raise ConfigError(f"{at}: cannot download ({type(exc).__name__}: {str(exc).splitlines()[0]})") from None
    path = Path(local)
    if not (path / "data").is_dir():
        raise ConfigError(f"{at}: not a Mirage release (no data/ folder)")
    return path


def _digest(shards: list[Path], root: Path) -> str:
    h = hashlib.sha256()
    for p in shards:
        h.update(f"{p.relative_to(root).as_posix()}\0{file_sha256(p)}\n".encode())
    return h.hexdigest()[:16]


def read_release(release_dir: str | os.PathLike[str], cache_dir: str | os.PathLike[str] | None = None, *,
                 with_images: bool = True) -> list[Item]:
    """The items of a release dir, images written once to the cache (see the module docstring)."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError("reading a release needs pyarrow: pip install 'mirage-bench[release]'") from None

    root = Path(release_dir)
    shards = sorted((root / "data").rglob("*.parquet"))
    if not shards:
        raise ConfigError(f"{root}: a release dir without parquet shards under data/")
    image_root = Path(cache_dir or default_cache_dir()) / "release_images" / _digest(shards, root) if with_images \
        else None
    columns = [c for c in ROW_COLUMNS if with_images or c != "images"]
    items: list[Item] = []
    written: dict[str, int] = {}  # image file -> size: a second image with the same name goes to a sub-folder
    for shard in shards:
        try:
            parquet = pq.ParquetFile(shard)
            missing = [c for c in ROW_COLUMNS if c not in parquet.schema_arrow.names]
            if missing:
                raise ConfigError(f"{shard}: not a Mirage release shard (missing columns {', '.join(missing)})")
            for batch in parquet.iter_batches(columns=columns, batch_size=64):
                for row in batch.to_pylist():
                    items.append(_release_item(row, image_root, written, shard))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{shard}: unreadable parquet ({exc})") from None
    ids = [it.id for it in items]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"{root}: duplicate item ids across shards")
    return items


def _release_item(row: dict[str, Any], image_root: Path | None, written: dict[str, int], shard: Path) -> Item:
    names = row.get("image_names") or []
    paths = [] if image_root is not None else list(names)
    for k, image in enumerate(row.get("images") or [] if image_root is not None else []):
        data = image.get("bytes") if isinstance(image, dict) else None
        if data is None:
            raise ConfigError(f"{shard}: item {row['id']}: image {k + 1} has no embedded bytes")
        assert image_root is not None
        name = Path(names[k] if k < len(names) and names[k] else image.get("path") or f"{row['id']}-{k}.png").name
        target = image_root / name
        key = str(target)
        if key in written and written[key] != len(data) or (target.exists() and target.stat().st_size != len(data)):
            target = image_root / row["id"] / name
        if not target.exists():
            write_atomic(target, data)
        written[str(target)] = len(data)
        paths.append(str(target))
    try:
        provenance = json.loads(row["provenance"]) if row.get("provenance") else {}
    except ValueError:
        raise ConfigError(f"{shard}: item {row['id']}: provenance is not JSON") from None
    return Item(id=row["id"], benchmark=row["benchmark"], task=row["task"], question_type=row["question_type"],
                pressure=row["pressure"], images=tuple(paths), question=row["question"],
                options=tuple(row["options"] or ()), answer=row["answer"], context=row.get("context") or "",
                provenance=provenance)
