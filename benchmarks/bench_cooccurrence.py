"""Co-occurrence counting at COCO train scale: ``CooccurrenceStats.from_indices`` against a plain-Python baseline.

The corpus is synthetic but shaped like COCO train2017 (118k images, 860k instances, 80 categories): images get a
"scene" each (kitchen-like, street-like, ...) whose category mix is skewed, on top of a global popularity skew
(one category plays "person"), and some images have many more instances than others. It is drawn from a seeded
``numpy.random.Generator``, so every run times the same data.

The baseline is what one would write without numpy: a dict of per-image category sets, then a ``Counter`` over
every sorted pair of each set. Both must produce the same ``n(a)`` and ``n(a, b)``; the run fails otherwise.

    python benchmarks/bench_cooccurrence.py [--annotations N] [--images N] [--categories N] [--seed N]

``run()`` returns the numbers as a dict, for ``benchmarks/bench_mioh.py`` to combine with other stages.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from filters.cooccurrence import CooccurrenceStats, incidence_matrix  # noqa: E402

TARGET_SECONDS = 5.0


def synthetic_corpus(
    n_annotations: int, n_images: int, n_categories: int, seed: int, n_scenes: int = 12
) -> tuple[np.ndarray, np.ndarray]:
    """``(image_idx, category_idx)`` per annotation, COCO-like skew, deterministic from ``seed``."""
    rng = np.random.default_rng(seed)
    popularity = 1.0 / np.arange(1, n_categories + 1) ** 0.8  # global Zipf-like skew; category 0 ~ "person"
    scene_mix = rng.dirichlet(np.full(n_categories, 0.2), size=n_scenes) * popularity  # (S, C)
    scene_mix /= scene_mix.sum(axis=1, keepdims=True)
    image_weight = rng.gamma(1.0, 1.0, n_images)  # some images are crowded, most hold a few objects
    image_idx = rng.choice(n_images, size=n_annotations, p=image_weight / image_weight.sum())
    scene = rng.integers(0, n_scenes, n_images)[image_idx]
    category_idx = np.empty(n_annotations, dtype=np.int64)
    for s in range(n_scenes):  # a loop over scenes, not annotations
        rows = np.flatnonzero(scene == s)
        category_idx[rows] = rng.choice(n_categories, size=rows.size, p=scene_mix[s])
    return image_idx.astype(np.int64), category_idx


def python_pair_counts(image_idx: Sequence[int], category_idx: Sequence[int]) -> tuple[Counter, Counter]:
    """The baseline: per-image category sets, then every sorted pair counted in a ``Counter``."""
    per_image: defaultdict[int, set[int]] = defaultdict(set)
    for i, c in zip(image_idx, category_idx):
        per_image[i].add(c)
    singles: Counter[int] = Counter()
    pairs: Counter[tuple[int, int]] = Counter()
    for cats in per_image.values():
        ordered = sorted(cats)
        singles.update(ordered)
        pairs.update(combinations(ordered, 2))
    return singles, pairs


def _best_of(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def _agree(stats: CooccurrenceStats, singles: Counter, pairs: Counter) -> bool:
    """True when the baseline's counts equal ours, cell by cell."""
    c = len(stats.categories)
    ref = np.zeros((c, c), dtype=np.int64)
    for k, v in singles.items():
        ref[k, k] = v
    for (a, b), v in pairs.items():
        ref[a, b] = ref[b, a] = v
    return bool(np.array_equal(ref, stats.pair_counts))


def run(
    n_annotations: int = 860_000,
    n_images: int = 118_000,
    n_categories: int = 80,
    seed: int = 0,
    repeats: int = 3,
    baseline_repeats: int = 1,
) -> dict[str, Any]:
    """Generate the corpus, time both counters (best of ``repeats``), check they agree; return the numbers."""
    image_idx, category_idx = synthetic_corpus(n_annotations, n_images, n_categories, seed)
    categories = [f"cat{k:03d}" for k in range(n_categories)]
    img_list, cat_list = image_idx.tolist(), category_idx.tolist()  # the baseline's natural input, not timed

    ours_s, stats = _best_of(
        lambda: CooccurrenceStats.from_indices(image_idx, category_idx, categories, n_images), repeats
    )
    base_s, (singles, pairs) = _best_of(lambda: python_pair_counts(img_list, cat_list), baseline_repeats)
    incidence = incidence_matrix(image_idx, category_idx, n_images, n_categories)
    bulk_s, _ = _best_of(lambda: stats.context_scores(incidence), repeats)
    return {
        "n_annotations": n_annotations,
        "n_images": n_images,
        "n_categories": n_categories,
        "seed": seed,
        "images_with_objects": int(incidence.any(axis=1).sum()),
        "ours_s": ours_s,
        "baseline_s": base_s,
        "speedup": base_s / ours_s if ours_s > 0 else float("inf"),
        "agree": _agree(stats, singles, pairs),
        "context_scores_all_pairs_s": bulk_s,
        "target_s": TARGET_SECONDS,
        "within_target": ours_s < TARGET_SECONDS,
    }


def print_table(result: dict[str, Any]) -> None:
    """Side-by-side table on stdout."""
    from rich.console import Console
    from rich.table import Table

    title = (
        f"co-occurrence counts: {result['n_annotations']:,} annotations, {result['n_images']:,} images, "
        f"{result['n_categories']} categories (seed {result['seed']})"
    )
    table = Table(title=title)
    table.add_column("method")
    table.add_column("seconds", justify="right")
    table.add_column("time / ours", justify="right")
    table.add_row("CooccurrenceStats.from_indices (numpy)", f"{result['ours_s']:.3f}", "1.0x")
    table.add_row(
        "plain Python (dict of sets + Counter of pairs)", f"{result['baseline_s']:.3f}", f"{result['speedup']:.1f}x"
    )
    table.add_row(
        "context_scores, every (image, category) pair", f"{result['context_scores_all_pairs_s']:.3f}", "(ours only)"
    )
    console = Console()
    console.print(table)
    console.print(
        f"counts agree: {'yes' if result['agree'] else 'NO'}; "
        f"target < {result['target_s']:.0f} s: {'met' if result['within_target'] else 'MISSED'}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--annotations", type=int, default=860_000, help="number of annotations (default 860,000)")
    parser.add_argument("--images", type=int, default=118_000, help="number of images (default 118,000)")
    parser.add_argument("--categories", type=int, default=80, help="number of categories (default 80)")
    parser.add_argument("--seed", type=int, default=0, help="corpus seed (default 0)")
    parser.add_argument("--repeats", type=int, default=3, help="timed repeats of the numpy path, best kept (default 3)")
    args = parser.parse_args(argv)
    result = run(args.annotations, args.images, args.categories, args.seed, args.repeats)
    print_table(result)
    return 0 if result["agree"] else 1


if __name__ == "__main__":
    sys.exit(main())
