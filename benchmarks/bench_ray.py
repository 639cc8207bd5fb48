"""The two heavy stages through the local executor and through Ray on 1 and 2 workers: throughput side by side
and Ray's overhead per item (issue 18).

* **CLIP stage**: ``ClipScorer.image_embeddings`` over ``--images`` photo-like PNGs (``bench_clip.make_pngs``)
  with the tiny random-weight open_clip model of the tests (``tests/support/tiny_clip.py``), cold in-memory
  cache: locally the DataLoader path (decode workers + encoding in this process), on Ray the Ray Data pipeline
  of :mod:`filters.clip_ray` (CPU encoder actors that decode their own batches). The model build is part of both
  timings, as in a build. The embeddings are checked equal to the local ones.
* **frame sampling**: :func:`sources.video_jobs.sample_videos` of ``--videos`` demo videos (``uniform:8``) into
  an empty frame cache: locally a loop, on Ray one task per video. The frames are checked equal.

"N workers" is a Ray instance started with ``num_cpus=N`` on this machine (CPU only): its start-up is timed
apart and not counted in the stage. On CPU, each encoder actor holds one CPU and decodes its own batches, so N
workers run N actors (GPU actors, ``--gpus-per-actor``, leave the CPUs to decode tasks). Each measurement is the
best of ``--repeat`` runs (the machine is shared). Ray's overhead per item is ``(Ray seconds - local seconds) /
items`` at the full size; the "1st unit" columns time the stage over one batch or one video, i.e. what it costs
before it is under way. On a machine with a GPU and 16 cores run ``--workers 1 4 16 --gpus-per-actor 0.25`` for
the scaling curve.

    python benchmarks/bench_ray.py [--images 256] [--videos 12] [--batch-size 32] [--workers 1 2] [--repeat 2]

``run()`` returns the rows as dicts.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_clip import make_pngs  # noqa: E402
from builders.cli import stdout, table  # noqa: E402
from filters.clip import ClipConfig, load_scorer  # noqa: E402
from sources.demo.video import load_demo_videos  # noqa: E402
from sources.executors import RayExecutor, RaySettings  # noqa: E402
from sources.video_jobs import VideoJob, sample_videos  # noqa: E402
from tests.support.tiny_clip import register_tiny_clip  # noqa: E402


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def clip_stage(model: str, paths: list[str], batch_size: int, executor: Any) -> tuple[float, np.ndarray]:
    """Seconds of a cold CLIP stage (fresh in-memory cache, model built inside) and its embeddings."""
    config = ClipConfig(model=model, pretrained=None, batch_size=batch_size, cache_dir=None)
    return timed(lambda: load_scorer(config, executor).image_embeddings(paths))


def frame_stage(videos: list, cache: Path, executor: Any) -> tuple[float, list]:
    """Seconds of a cold frame-sampling stage (empty cache) and the frame indices."""
    jobs = [VideoJob(v, "uniform:8", cache) for v in videos]
    return timed(lambda: [s.indices for s in sample_videos(jobs, executor)])


def best(repeat: int, fn: Callable[[], tuple[float, Any]]) -> tuple[float, Any]:
    """The fastest of ``repeat`` runs: other tenants' load on a shared machine only ever adds time."""
    runs = [fn() for _ in range(repeat)]
    return min(runs, key=lambda r: r[0])


def run(images: int, n_videos: int, batch_size: int, workers: list[int], gpus_per_actor: float,
        repeat: int = 2) -> list[dict]:
    import ray

    root = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    model = register_tiny_clip(root / "configs")
    (root / "img").mkdir()
    paths = make_pngs(root / "img", images, (320, 240))
    videos = load_demo_videos(seed=0, n_videos=n_videos, cache_dir=root / "demo")
    caches = (root / f"frames-{k}" for k in range(10**6))

    def measure(executor_for: Callable[[], Any], name: str, n: Any, **extra: Any) -> tuple[list[dict], Any, Any]:
        frame_stage(videos[:1], next(caches), executor_for())  # untimed warm-up: imports, Ray's task workers
        one_batch, _ = best(repeat, lambda: clip_stage(model, paths[:batch_size], batch_size, executor_for()))
        clip_s, vectors = best(repeat, lambda: clip_stage(model, paths, batch_size, executor_for()))
        one_video, _ = best(repeat, lambda: frame_stage(videos[:1], next(caches), executor_for()))
        frames_s, frames = best(repeat, lambda: frame_stage(videos, next(caches), executor_for()))
        common = {"executor": name, "workers": n, **extra}
        return [{"stage": "CLIP", "items": images, "seconds": clip_s, "first_unit_s": one_batch, **common},
                {"stage": "frames", "items": n_videos, "seconds": frames_s, "first_unit_s": one_video, **common}], \
            vectors, frames

    rows, reference, frames = measure(lambda: None, "local", "-")
    for n in workers:
        start_s, _ = timed(lambda n=n: ray.init(num_cpus=n, include_dashboard=False, log_to_driver=False,
                                                _temp_dir=str(root / f"ray{n}")))
        try:
            got, vectors, sampled = measure(lambda: RayExecutor(RaySettings(gpus_per_actor=gpus_per_actor)), "ray",
                                            n, ray_start=start_s)
        finally:
            ray.shutdown()
        assert np.array_equal(vectors, reference), "Ray embeddings differ from the local ones"
        assert sampled == frames, "Ray frames differ from the local ones"
        rows += got
    local = {r["stage"]: r for r in rows if r["executor"] == "local"}
    for row in rows:
        base, on_ray = local[row["stage"]], row["executor"] == "ray"
        row["per_second"] = row["items"] / row["seconds"]
        row["overhead_ms"] = (row["seconds"] - base["seconds"]) / row["items"] * 1000 if on_ray else None
        row["overhead_first_s"] = row["first_unit_s"] - base["first_unit_s"] if on_ray else None
    return rows


NEEDS = (
    ("ray", "Ray", "pip install 'mirage-bench[scale]' (or bash .ci/install-scale.sh)"),
    ("open_clip", "open_clip and torch", "pip install 'mirage-bench[clip]' (or bash .ci/install-services.sh)"),
    ("cv2", "OpenCV", "pip install 'mirage-bench[video]' (or bash .ci/install-video.sh)"),
)
"""(module, what, how to install it) of what the benchmark runs: Ray, the CLIP stage, the demo videos."""


def missing() -> str | None:
    """What to install, in one line, when a module the benchmark needs is not importable (``None``: all are)."""
    import importlib.util

    for module, what, install in NEEDS:
        if importlib.util.find_spec(module) is None:
            return f"bench_ray needs {what}: {install}"
    return None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    p.add_argument("--images", type=int, default=256, metavar="N", help="images for the CLIP stage (default 256)")
    p.add_argument("--videos", type=int, default=12, metavar="N", help="demo videos to sample (default 12)")
    p.add_argument("--batch-size", type=int, default=32, metavar="N", help="CLIP batch size (default 32)")
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2], metavar="N",
                   help="Ray instances of N CPUs to measure (default 1 2)")
    p.add_argument("--repeat", type=int, default=2, metavar="N", help="runs of each measurement, best kept "
                   "(default 2)")
    p.add_argument("--gpus-per-actor", type=float, default=0.0, metavar="X",
                   help="GPUs per CLIP encoder actor on a GPU machine (default 0: CPU actors)")
    args = p.parse_args(argv)
    problem = missing()
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    rows = run(args.images, args.videos, args.batch_size, args.workers, args.gpus_per_actor, args.repeat)
    stdout.print(table(
        f"Local vs Ray ({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}): tiny CLIP over {args.images} "
        f"images (batch {args.batch_size}), {args.videos} demo videos (uniform:8); best of {args.repeat}",
        ["stage", "executor", "workers", "seconds", "items/s", "Ray +ms/item", "1st unit s", "Ray start s"],
        [[r["stage"], r["executor"], r["workers"], f"{r['seconds']:.2f}", f"{r['per_second']:.1f}",
          _opt(r["overhead_ms"], ".1f"), f"{r['first_unit_s']:.2f}", _opt(r.get("ray_start"), ".1f")]
         for r in rows],
        legend="Ray +ms/item: (Ray seconds - local seconds) / items; 1st unit: the stage over one batch of images "
               "or one video (what it costs before it is under way); Ray start-up is not in the stage's time",
    ))
    return 0


def _opt(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


if __name__ == "__main__":
    raise SystemExit(main())
