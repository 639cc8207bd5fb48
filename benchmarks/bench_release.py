"""How fast is ``python -m data_cards release`` compared with pyarrow writing the same bytes directly?

Makes a synthetic reviewed build (default 5,000 items x 4 small PNG images, random pixels so they do not
compress), then times:

- ``release``: the whole release (read + check images, parquet shards, card, plots, changelog, manifest sha256);
- ``shards only``: ``data_cards.export.write_shards`` alone (the parquet part of a release);
- ``pyarrow direct``: the same rows (same schema, image bytes read from the same files) written with one
  ``pyarrow.parquet.write_table`` call, no checks - the floor for writing these bytes.

MB/s is image payload (sum of the image files) per second. Run: ``python benchmarks/bench_release.py``.
Never asserted in tests.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def make_build(root: Path, n_items: int, n_images: int, size: int, seed: int = 0) -> tuple[Path, int]:
    import numpy as np
    from PIL import Image

    from builders.items import make_item, write_items

    build = root / "builds" / "mioh" / "bench"
    (build / "images").mkdir(parents=True)
    rng = np.random.default_rng(seed)
    items, total = [], 0
    for i in range(n_items):
        paths = []
        for j in range(n_images):
            rel = f"images/bench-{i:06d}-{j}.png"
            Image.fromarray(rng.integers(0, 256, (size, size, 3), dtype=np.uint8)).save(build / rel, compress_level=1)
            total += (build / rel).stat().st_size
            paths.append(rel)
        items.append(
            make_item(
                benchmark="mioh",
                task=["existence", "counting", "attribute", "position"][i % 4],
                question_type="selective",
                pressure=["easy", "hard_negative", "hard_positive", "n_images"][i % 4],
                images=paths,
                question=f"Which image shows a red circle? ({i})",
                options=("Image 1", "Image 2", "Image 3", "Image 4", "None of the above"),
                answer="ABCDE"[i % 5],
                provenance={"source_ids": [i], "template": "bench"},
            )
        )
    write_items(build / "items.jsonl", items)
    write_items(build / "reviewed.jsonl", items)
    review = {
        "project": "bench", "label_studio_url": "", "pulled_at": "2025-01-01T00:00:00Z", "raw_export": "",
        "counts": {"total": n_items, "keep": n_items, "fix": 0, "drop": 0, "adjudicate": 0, "pending": 0},
        "fleiss_kappa": 1.0, "reviewers": {"r@example.org": {"annotations": n_items, "agreement_with_majority": 1.0}},
        "problems": [], "items": {it.id: {"status": "keep"} for it in items},
    }
    (build / "review.json").write_text(json.dumps(review))
    (build / "build.json").write_text(json.dumps({
        "benchmark": "mioh", "name": "bench", "seed": seed, "config": {"sources": ["demo"]},
        "code_version": "bench", "input_hashes": {}, "stats": {}, "skipped": [],
    }))
    return build, total


def pyarrow_direct(build: Path, out: Path) -> None:
    """The same rows, same schema, one write_table call: no checks, no card, no manifest."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from builders.items import canonical_json, read_items
    from data_cards.features import release_features

    schema = release_features().arrow_schema
    rows = []
    for it in read_items(build / "reviewed.jsonl"):
        rows.append({
            "id": it.id, "benchmark": it.benchmark, "task": it.task, "question_type": it.question_type,
            "pressure": it.pressure,
            "images": [{"bytes": (build / p).read_bytes(), "path": Path(p).name} for p in it.images],
            "image_names": [Path(p).name for p in it.images], "context": it.context, "question": it.question,
            "options": list(it.options), "answer": it.answer, "answer_text": it.answer_text,
            "review_status": "keep", "provenance": canonical_json(dict(it.provenance)),
        })
    table = pa.Table.from_pylist(rows, schema=schema)
    out.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, out / "test-00000-of-00001.parquet", row_group_size=100)


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=5000, help="number of items (default 5000)")
    parser.add_argument("--images", type=int, default=4, help="images per item (default 4)")
    parser.add_argument("--size", type=int, default=32, help="image side in pixels (default 32)")
    parser.add_argument("--repeat", type=int, default=2, help="timed runs of each; the best is reported")
    args = parser.parse_args(argv)
    os.environ.setdefault("MPLBACKEND", "Agg")

    from builders.items import read_items
    from data_cards.export import write_shards
    from data_cards.release import release

    tmp = Path(tempfile.mkdtemp(prefix="mirage-bench-release-"))
    try:
        t0 = time.perf_counter()
        build, payload = make_build(tmp, args.items, args.images, args.size)
        print(f"build: {args.items} items x {args.images} images ({args.size}x{args.size} PNG), "
              f"{payload / 1e6:.1f} MB of image bytes, made in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
        items = read_items(build / "reviewed.jsonl")
        status = {it.id: "keep" for it in items}
        results = {}
        for name, fn in {
            "release (full)": lambda k: release(build, f"1.0.{k}", out=tmp / "releases"),
            "shards only": lambda k: write_shards(tmp / f"shards{k}", items, status, build),
            "pyarrow direct": lambda k: pyarrow_direct(build, tmp / f"direct{k}"),
        }.items():
            results[name] = min(timed(lambda: fn(k)) for k in range(args.repeat))
        base = results["pyarrow direct"]
        print(f"{'writer':<16} {'seconds':>8} {'MB/s':>8} {'vs pyarrow':>11}")
        for name, secs in results.items():
            print(f"{name:<16} {secs:>8.2f} {payload / 1e6 / secs:>8.1f} {secs / base:>10.2f}x")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
