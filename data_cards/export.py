"""Writing items as Hub-layout parquet shards with the image bytes embedded.

Layout (one split, ``test``: a benchmark is an evaluation set):

- one task: ``data/test-NNNNN-of-NNNNN.parquet``;
- several tasks: ``data/<task>/test-NNNNN-of-NNNNN.parquet``, so that the card can declare one HF config per task
  (``load_dataset(repo, "counting")``) next to the default ``all`` config (``data/*/test-*.parquet``).

Images are read as the bytes on disk (no re-encoding, so pixels are exactly the build's) and stored with their
file *name* only: never a local path.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from builders.items import Item, canonical_json
from sources.errors import MirageError

from .features import release_features

SPLIT = "test"
ROWS_PER_ROW_GROUP = 100
"""Row groups of 100 rows, as ``datasets`` writes image data: small enough for the dataset viewer."""
DEFAULT_MAX_SHARD_BYTES = 500 * 1024 * 1024


def task_slug(task: str) -> str:
    """A config name / folder name for a task: ``beyond/temporal`` -> ``beyond-temporal``."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", task).strip("-.")
    return slug or "task"


@dataclass
class TaskShards:
    task: str
    slug: str
    files: list[str] = field(default_factory=list)
    """Paths relative to the release dir."""
    num_examples: int = 0
    num_bytes: int = 0
    """In-memory (Arrow) size, as ``datasets`` reports ``num_bytes``."""
    download_size: int = 0
    """Total size of the parquet files."""


def resolve_image(build_dir: Path, image: str) -> Path:
    path = Path(image)
    return path if path.is_absolute() else build_dir / path


def _plan_shards(items: list[Item], sizes: list[int], max_bytes: int) -> list[list[int]]:
    shards: list[list[int]] = [[]]
    acc = 0
    for i, size in enumerate(sizes):
        if shards[-1] and acc + size > max_bytes:
            shards.append([])
            acc = 0
        shards[-1].append(i)
        acc += size
    return shards


def item_row(
    item: Item,
    status: str,
    build_dir: Path,
    scrub: Callable[[Any], Any] = lambda v: v,
    check_images: bool = True,
) -> dict[str, Any]:
    """One parquet row for an item (image bytes read from disk)."""
    images = []
    for image in item.images:
        path = resolve_image(build_dir, image)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise MirageError(f"{build_dir / 'items.jsonl'}: item {item.id}: image not found: {path}") from None
        except OSError as exc:
            raise MirageError(f"{build_dir / 'items.jsonl'}: item {item.id}: cannot read image {path}: {exc}") from None
        if check_images:
            _check_image(data, path, item, build_dir)
        images.append({"bytes": data, "path": path.name})
    return {
        "id": item.id,
        "benchmark": item.benchmark,
        "task": item.task,
        "question_type": item.question_type,
        "pressure": item.pressure,
        "images": images,
        "image_names": [Path(p).name for p in item.images],
        "context": item.context,
        "question": item.question,
        "options": list(item.options),
        "answer": item.answer,
        "answer_text": item.answer_text,
        "review_status": status,
        "provenance": canonical_json(scrub(dict(item.provenance))),
    }


_SIGNATURES = (
    b"\x89PNG\r\n\x1a\n",  # PNG
    b"\xff\xd8\xff",  # JPEG
    b"GIF87a",
    b"GIF89a",
    b"BM",  # BMP
    b"II*\x00",  # TIFF
    b"MM\x00*",
)


def _check_image(data: bytes, path: Path, item: Item, build_dir: Path) -> None:
    """Cheap check that the bytes are an image: a known signature, else PIL must identify it (header only)."""
    if data.startswith(_SIGNATURES) or (data[:4] == b"RIFF" and data[8:12] == b"WEBP"):
        return
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as im:
            im.size  # noqa: B018 - parse the header
    except (UnidentifiedImageError, OSError) as exc:
        raise MirageError(
            f"{build_dir / 'items.jsonl'}: item {item.id}: not a readable image: {path} (unknown or corrupt format)"
        ) from None


@dataclass
class ShardPlan:
    """Where one task's items go: ``shards[n]`` (indices into ``items``) is written to ``files[n]``."""

    task: str
    slug: str
    items: list[Item]
    """The task's items, sorted by id."""
    shards: list[list[int]]
    files: list[str]
    """Paths relative to the release dir."""
    sizes: list[int]
    """Estimated bytes of each shard (image files plus text), what the split into shards goes by."""


def plan_shards(items: list[Item], build_dir: Path, max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES) -> list[ShardPlan]:
    """How :func:`write_shards` splits ``items`` into files, one :class:`ShardPlan` per task (sorted); reads only
    the image files' sizes, so ``release --dry-run`` can show it."""
    by_task: dict[str, list[Item]] = {}
    for it in items:
        by_task.setdefault(it.task, []).append(it)
    tasks = sorted(by_task)
    slugs = {t: task_slug(t) for t in tasks}
    if len(set(slugs.values())) != len(slugs):
        raise MirageError(f"{build_dir}: two task names map to the same config name: {sorted(slugs.items())}")
    folder = "data/{slug}/" if len(tasks) > 1 else "data/"
    plans = []
    for task in tasks:
        task_items = sorted(by_task[task], key=lambda it: it.id)
        sizes = [
            sum(_size(resolve_image(build_dir, p), it, build_dir) for p in it.images)
            + len(it.question) + len(it.context) + sum(map(len, it.options)) + 256
            for it in task_items
        ]
        shards = _plan_shards(task_items, sizes, max_shard_bytes)
        prefix = folder.format(slug=slugs[task])
        files = [f"{prefix}{SPLIT}-{n:05d}-of-{len(shards):05d}.parquet" for n in range(len(shards))]
        plans.append(ShardPlan(task, slugs[task], task_items, shards, files,
                               [sum(sizes[i] for i in shard) for shard in shards]))
    return plans


def write_shards(
    out_dir: Path,
    items: list[Item],
    status: dict[str, str],
    build_dir: Path,
    *,
    scrub: Callable[[Any], Any] = lambda v: v,
    max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES,
    progress: Callable[[int], None] | None = None,
) -> list[TaskShards]:
    """Write ``items`` (sorted by id) as parquet shards under ``out_dir/data`` (:func:`plan_shards`); one
    :class:`TaskShards` per task."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = release_features().arrow_schema
    result = []
    for plan in plan_shards(items, build_dir, max_shard_bytes):
        info = TaskShards(task=plan.task, slug=plan.slug)
        task_items = plan.items
        for indices, rel in zip(plan.shards, plan.files):
            path = out_dir / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            with pq.ParquetWriter(path, schema) as writer:
                for start in range(0, len(indices), ROWS_PER_ROW_GROUP):
                    chunk = indices[start : start + ROWS_PER_ROW_GROUP]
                    rows = [item_row(task_items[i], status[task_items[i].id], build_dir, scrub) for i in chunk]
                    batch = pa.RecordBatch.from_pylist(rows, schema=schema)
                    writer.write_batch(batch, row_group_size=ROWS_PER_ROW_GROUP)
                    info.num_bytes += batch.nbytes
                    if progress:
                        progress(len(chunk))
            info.files.append(rel)
            info.download_size += path.stat().st_size
        info.num_examples = len(task_items)
        result.append(info)
    return result


def _size(path: Path, item: Item, build_dir: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        raise MirageError(f"{build_dir / 'items.jsonl'}: item {item.id}: image not found: {path}") from None


def read_columns(release_dir: Path, columns: Iterable[str]) -> dict[str, list[Any]]:
    """Read some (non-image) columns of every shard of a release, e.g. for a changelog diff."""
    import pyarrow.parquet as pq

    columns = list(columns)
    out: dict[str, list[Any]] = {c: [] for c in columns}
    for path in sorted((release_dir / "data").rglob("*.parquet")):
        table = pq.read_table(path, columns=columns)
        for c in columns:
            out[c].extend(table.column(c).to_pylist())
    return out
