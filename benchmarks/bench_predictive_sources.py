"""Frame extraction for predictive reasoning's real sources: the policies of ``sources.keyframes`` /
``sources.video`` through ``sample_video`` (probe + content hash + decode of the wanted frames + PNG cache write,
cold cache; then the warm rerun; and the decode of the wanted frames alone) against decoding every frame of the video (OpenCV ``read()`` loop keeping the
wanted ones), time per video side by side.

* CLEVRER-like: 128 frames at 25 fps (5.12 s), 480x320; the last frame of each second (5 frames).
* ActivityNet-like: ``--anet-seconds`` (default 150, the issue's 2-3 minutes) at 30 fps, 320x240, four caption
  segments; 8 CLIP candidate frames per context segment (3 context segments: 24 frames).

Videos are synthetic (``bench_frames.synthetic_frames``: a moving gradient with noise, mp4v), each distinct so no
cache hit flatters a cold run. The issue's scale is 300 + 300 videos (``--clevrer 300 --activitynet 300``);
the default is a reduced count so the script runs in a few minutes on a shared 2-core machine.

    python benchmarks/bench_predictive_sources.py [--clevrer 20] [--activitynet 3] [--anet-seconds 150]

Measured (shared 2-core machine, load average ~10, ``--clevrer 300 --activitynet 10``), per video:

==============  ======  =========  =========  ===========  ==========
source          frames  ours cold  ours warm  decode kept  decode all
==============  ======  =========  =========  ===========  ==========
CLEVRER-like       128     147 ms     1.1 ms        41 ms       69 ms
ActivityNet        4500    1.04 s     1.2 ms       794 ms      2.12 s
==============  ======  =========  =========  ===========  ==========

Decoding only the kept frames beats decoding every frame (1.7x on 128 frames, 2.7x on 4,500); a cold
``sample_video`` on a 128-frame clip costs more than decoding it all because the probe (verified frame count),
content hash and PNG cache writes dominate; every rerun reads the cache (about 1 ms per video). 300 + 300 videos
cold: about 44 s + 311 s in one process.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_frames

from sources.keyframes import TimeSpans
from sources.video import LastFramePerSecond, Policy, probe, sample_video
from sources.video_backends import read_frames, write_video

CLEVRER_FRAMES, CLEVRER_FPS = 128, 25.0
ANET_FPS = 30.0
ANET_SEGMENTS = 4
CANDIDATES = 8


def decode_all(path: Path, wanted: list[int]) -> int:
    """The naive way: read every frame in order, keep the wanted ones."""
    import cv2

    cap = cv2.VideoCapture(str(path))
    keep, i = 0, 0
    wanted_set = set(wanted)
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        if i in wanted_set:
            keep += 1
            cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)
        i += 1
    cap.release()
    return keep


def make_videos(folder: Path, n: int, frames: int, fps: float, seed: int, size: tuple[int, int]) -> list[Path]:
    bench_frames.WIDTH, bench_frames.HEIGHT = size
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for k in range(n):
        path = folder / f"v{seed}_{k}.mp4"
        write_video(path, bench_frames.synthetic_frames(frames, seed * 1000 + k), fps, "mp4v")
        out.append(path)
    return out


def anet_policy(seconds: float) -> TimeSpans:
    """Three context segments covering the first three quarters of the video (the fourth is held out)."""
    quarter = seconds / ANET_SEGMENTS
    return TimeSpans(tuple((k * quarter, (k + 1) * quarter) for k in range(ANET_SEGMENTS - 1)), CANDIDATES)


def time_source(videos: list[Path], policy: Policy, cache: Path) -> dict[str, Any]:
    cold, warm, naive, decode, wanted_n = [], [], [], [], 0
    for path in videos:
        info = probe(path)
        wanted = policy.indices(info.frame_count, info.fps)
        wanted_n = len(wanted)
        t = time.perf_counter()
        sample_video(path, policy, cache, on_error="fail")
        cold.append(time.perf_counter() - t)
        t = time.perf_counter()
        sample_video(path, policy, cache, on_error="fail")
        warm.append(time.perf_counter() - t)
        t = time.perf_counter()
        read_frames(path, wanted)
        decode.append(time.perf_counter() - t)
        t = time.perf_counter()
        decode_all(path, wanted)
        naive.append(time.perf_counter() - t)
    return {"videos": len(videos), "frames": info.frame_count, "wanted": wanted_n,
            "cold": statistics.mean(cold), "decode": statistics.mean(decode), "warm": statistics.mean(warm), "naive": statistics.mean(naive)}


def run(n_clevrer: int, n_anet: int, anet_seconds: float) -> dict[str, dict[str, Any]]:
    with tempfile.TemporaryDirectory(prefix="bench-predictive-") as tmp:
        root = Path(tmp)
        clevrer = make_videos(root / "clevrer", n_clevrer, CLEVRER_FRAMES, CLEVRER_FPS, 1, (480, 320))
        anet = make_videos(root / "anet", n_anet, int(anet_seconds * ANET_FPS), ANET_FPS, 2, (320, 240))
        return {"clevrer": time_source(clevrer, LastFramePerSecond(), root / "cache"),
                "activitynet": time_source(anet, anet_policy(anet_seconds), root / "cache")}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clevrer", type=int, default=20, metavar="N", help="CLEVRER-like videos (default 20; issue: 300)")
    ap.add_argument("--activitynet", type=int, default=3, metavar="N",
                    help="ActivityNet-like videos (default 3; issue: 300)")
    ap.add_argument("--anet-seconds", type=float, default=150.0, metavar="S",
                    help="length of an ActivityNet-like video (default 150)")
    args = ap.parse_args()
    results = run(args.clevrer, args.activitynet, args.anet_seconds)
    print("per video; 'ours cold' = probe + hash + decode + PNG cache write, 'decode kept' = the decode alone")
    print(f"{'source':<11} {'videos':>6} {'frames':>6} {'kept':>4} {'ours cold':>10} {'ours warm':>9} "
          f"{'decode kept':>11} {'decode all':>10}")
    for name, r in results.items():
        print(f"{name:<11} {r['videos']:>6} {r['frames']:>6} {r['wanted']:>4} {r['cold'] * 1000:>8.1f}ms "
              f"{r['warm'] * 1000:>7.1f}ms {r['decode'] * 1000:>9.1f}ms {r['naive'] * 1000:>8.1f}ms")
    total = {k: r["cold"] * 300 for k, r in results.items()}
    print("extrapolated to the issue's 300 + 300 videos (cold, one process): "
          + ", ".join(f"{k} {v:.0f} s" for k, v in total.items()))


if __name__ == "__main__":
    main()
