"""The two heavy stages through the local executor and through Ray on 1 and 2 workers: throughput side by side
and Ray's overhead per item (issue 18).

* **CLIP stage**: ``ClipScorer.image_embeddings`` over ``--images`` photo-like PNGs (``bench_clip.make_pngs``)
  with the tiny random-weight open_clip model of the tests (``tests/support/tiny_clip.py``), cold in-memory cache:
  locally the DataLoader path (decode workers + encoding in this process), on Ray the Ray Data pipeline of
  :mod:`filters.clip_ray` (decode tasks + one CPU encoder actor). The model build is part of both timings, as in
  a build. The embeddings are checked equal to the local ones.
* **frame sampling**: :func:`sources.video_jobs.sample_videos` of ``--videos`` demo videos (``uniform:8``) into
  an empty frame cache: locally a loop, on Ray one task per video. The frames are checked equal.

"N workers" is a Ray instance started with ``num_cpus=N`` on this machine (CPU only): its start-up is timed
apart and not counted in the stage. With one worker the encoder actor and the decode tasks hold half a CPU
each (``--ray-cpus-per-task 0.5``), otherwise one. Overhead per item is ``(Ray seconds - local seconds) / items``
on one worker: what a remote executor costs before it buys anything. On a machine with a GPU and 16 cores run
``--workers 1 4 16 --gpus-per-actor 0.25`` for the scaling curve (docs/scale.md says what was measured).

    python benchmarks/bench_ray.py [--images 256] [--videos 12] [--batch-size 32] [--workers 1 2]

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
    config = ClipConfig(model=model, pretrained=None, batch_size=batch_size, cache_dir=None)
    return timed(lambda: load_scorer(config, executor).image_embeddings(paths))


def frame_stage(videos: list, cache: Path, executor: Any) -> tuple[float, list]:
    jobs = [VideoJob(v, "uniform:8", cache) for v in videos]
    return timed(lambda: [s.indices for s in sample_videos(jobs, executor)])


def run(images: int, n_videos: int, batch_size: int, workers: list[int], gpus_per_actor: float) -> list[dict]:
    import ray

    root = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    model = register_tiny_clip(root / "configs")
    (root / "img").mkdir()
    paths = make_pngs(root / "img", images, (320, 240))
    videos = load_demo_videos(seed=0, n_videos=n_videos, cache_dir=root / "demo")
    rows: list[dict] = []
    local_clip_s, reference = clip_stage(model, paths, batch_size, None)
    local_frames_s, frames = frame_stage(videos, root / "frames-local", None)
    rows += [{"stage": "CLIP", "executor": "local", "workers": "-", "items": images, "seconds": local_clip_s},
             {"stage": "frames", "executor": "local", "workers": "-", "items": n_videos, "seconds": local_frames_s}]
    for n in workers:
        start_s, _ = timed(lambda: ray.init(num_cpus=n, include_dashboard=False, log_to_driver=False,
                                            _temp_dir=str(root / f"ray{n}")))
        try:
            share = 0.5 if n == 1 else 1.0
            clip_executor = RayExecutor(RaySettings(cpus_per_task=share, gpus_per_actor=gpus_per_actor))
            seconds, vectors = clip_stage(model, paths, batch_size, clip_executor)
            assert np.array_equal(vectors, reference), "Ray embeddings differ from the local ones"
            rows.append({"stage": "CLIP", "executor": "ray", "workers": n, "items": images, "seconds": seconds,
                         "ray_start": start_s})
            seconds, got = frame_stage(videos, root / f"frames-ray{n}", RayExecutor(RaySettings()))
            assert got == frames, "Ray frames differ from the local ones"
            rows.append({"stage": "frames", "executor": "ray", "workers": n, "items": n_videos, "seconds": seconds,
                         "ray_start": start_s})
        finally:
            ray.shutdown()
    local = {"CLIP": local_clip_s, "frames": local_frames_s}
    for row in rows:
        row["per_second"] = row["items"] / row["seconds"]
        row["overhead_ms"] = (row["seconds"] - local[row["stage"]]) / row["items"] * 1000 if row["executor"] == "ray" else None
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--images", type=int, default=256, metavar="N", help="images for the CLIP stage (default 256)")
    p.add_argument("--videos", type=int, default=12, metavar="N", help="demo videos to sample (default 12)")
    p.add_argument("--batch-size", type=int, default=32, metavar="N", help="CLIP batch size (default 32)")
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2], metavar="N",
                   help="Ray instances of N CPUs to measure (default 1 2)")
    p.add_argument("--gpus-per-actor", type=float, default=0.0, metavar="X",
                   help="GPUs per CLIP encoder actor on a GPU machine (default 0: CPU actors)")
    args = p.parse_args()
    rows = run(args.images, args.videos, args.batch_size, args.workers, args.gpus_per_actor)
    stdout.print(table(
        f"Local vs Ray on this machine ({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}); tiny CLIP, "
        f"{args.images} images of 320x240, batch {args.batch_size}; {args.videos} demo videos, uniform:8",
        ["stage", "executor", "workers", "items", "seconds", "items/s", "Ray overhead ms/item", "Ray start s"],
        [[r["stage"], r["executor"], r["workers"], r["items"], f"{r['seconds']:.2f}", f"{r['per_second']:.1f}",
          "-" if r["overhead_ms"] is None else f"{r['overhead_ms']:.1f}",
          f"{r['ray_start']:.1f}" if "ray_start" in r else "-"] for r in rows],
        legend="overhead: (Ray seconds - local seconds) / items; Ray start-up is not in the stage's seconds",
    ))


if __name__ == "__main__":
    main()
