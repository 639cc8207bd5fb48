"""Sampling 20 frames from 60-second videos: decord, OpenCV seek and OpenCV sequential decode, side by side.

The videos are synthetic (made once in a temporary folder; nothing is downloaded): 320x240 at 30 fps, 1,800
frames, a moving gradient with noise so the encoder has work to do, and each frame's number stamped into its
pixels so every method's frames are checked against the frame it was asked for. The 20 frames are the Mementos
robotics rule for a 1,800-frame video (``floor(k * 1800 / 20)``: 0, 90, ..., 1710).

Methods (all through ``sources.video_backends``):

* ``decord``: ``VideoReader.get_batch`` (skipped when decord is not installed);
* ``opencv-seek``: ``read_frames(backend="opencv")``: ``CAP_PROP_POS_FRAMES`` seeks for gaps above ``SEEK_GAP``;
* ``opencv-sequential``: decode every frame up to the last wanted one and keep the wanted ones (the baseline:
  ``grab()`` for the frames it skips, so no colour conversion is wasted on them);
* ``opencv-read-all``: the naive loop, ``read()`` of every frame (decode and colour conversion), for reference.

Part 1 times each method on a few videos in one process (median of ``--repeat`` runs per video) and prints the
speed-up over sequential decode; part 2 is throughput over ``--videos`` videos (copies of a few distinct ones) with
``--processes`` worker processes, plus the end-to-end ``sample_video`` (probe + hash + decode + PNG cache write,
cold cache) with the default backend. The target is >= 5x faster than sequential decode.

    python benchmarks/bench_frames.py [--seconds 60] [--videos 50] [--processes 2] [--codec mp4v|MJPG|FFV1]

On a machine shared with other busy processes, run it as ``nice -n -10 python benchmarks/bench_frames.py``: decord
hands frames between two threads and its timings otherwise swing between ~35 and ~170 ms with the neighbours'
load (see ``sources/video_backends.py``). The load average is printed with the figures.

``run()`` returns the numbers as a dict.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from sources.video import Robotics, sample_video  # noqa: E402
from sources.video_backends import (  # noqa: E402
    have_decord, have_torchcodec, read_frames, read_sequential, write_video,
)

WIDTH, HEIGHT, FPS = 320, 240, 30
N_SAMPLES = 20
TARGET_SPEEDUP = 5.0
TARGET_END_TO_END = 0.8
"""sample_video (probe, hash, decode, PNG cache write) against its backend's bare read_frames (issue #17)."""
SUFFIX = {"mp4v": ".mp4", "MJPG": ".avi", "FFV1": ".avi", "h264": ".mp4"}
H264_GOP = 300
"""Key frame interval of the H.264 videos: 10 s at 30 fps, like camera footage (OpenCV's writers use 12)."""
STAMP_BITS, STAMP_BLOCK = 12, 16


def synthetic_frames(n_frames: int, seed: int) -> Any:
    """Frames of a moving colour gradient with noise; frame ``i`` carries ``i`` in a row of 16-px blocks."""
    rng = np.random.default_rng(seed)
    ys, xs = np.mgrid[0:HEIGHT, 0:WIDTH].astype(np.float32)
    noise = rng.integers(0, 24, (HEIGHT, WIDTH, 3), dtype=np.uint8)
    for i in range(n_frames):
        phase = i * 0.05
        frame = np.empty((HEIGHT, WIDTH, 3), dtype=np.uint8)
        frame[..., 0] = (127 + 100 * np.sin(xs / 40 + phase)).astype(np.uint8)
        frame[..., 1] = (127 + 100 * np.cos(ys / 30 - phase)).astype(np.uint8)
        frame[..., 2] = ((xs + ys + i * 3) % 256).astype(np.uint8)
        frame += np.roll(noise, i, axis=1)
        frame[:STAMP_BLOCK] = 0
        for bit in range(STAMP_BITS):
            if i >> bit & 1:
                frame[:STAMP_BLOCK, bit * STAMP_BLOCK:(bit + 1) * STAMP_BLOCK] = 255
        yield frame


def stamp(frame: np.ndarray) -> int:
    """The frame number :func:`synthetic_frames` stamped (block centres thresholded)."""
    band = frame[4:STAMP_BLOCK - 4, :STAMP_BITS * STAMP_BLOCK]
    centres = band.reshape(STAMP_BLOCK - 8, STAMP_BITS, STAMP_BLOCK, 3)[:, :, 4:-4]
    bits = centres.mean(axis=(0, 2, 3)) > 128
    return int(sum(1 << b for b in range(STAMP_BITS) if bits[b]))


def make_video(path: Path, n_frames: int, codec: str, seed: int) -> Path:
    if codec == "h264":
        return make_h264(path, n_frames, seed)
    write_video(path, synthetic_frames(n_frames, seed), FPS, codec)
    return path


def make_h264(path: Path, n_frames: int, seed: int) -> Path:
    """H.264 (libx264 through the ``ffmpeg`` program, e.g. Debian's) with a key frame every :data:`H264_GOP`
    frames and B-frames, as cameras and phones write. OpenCV's wheels carry no H.264 encoder ('avc1'/'H264'
    fourccs fail to open a writer), hence the program."""
    import subprocess

    ffmpeg = shutil.which("ffmpeg")
    if ffmpeg is None:
        raise SystemExit("--codec h264 needs the ffmpeg program with libx264 (apt-get install ffmpeg)")
    cmd = [ffmpeg, "-loglevel", "error", "-y", "-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{WIDTH}x{HEIGHT}",
           "-r", str(FPS), "-i", "-", "-c:v", "libx264", "-preset", "veryfast", "-crf", "18", "-g", str(H264_GOP),
           "-keyint_min", str(H264_GOP), "-sc_threshold", "0", "-bf", "2", "-pix_fmt", "yuv420p", str(path)]
    with subprocess.Popen(cmd, stdin=subprocess.PIPE) as proc:
        assert proc.stdin is not None
        for frame in synthetic_frames(n_frames, seed):
            proc.stdin.write(frame.tobytes())
        proc.stdin.close()
        if proc.wait() != 0:
            raise SystemExit(f"ffmpeg failed to write {path}")
    return path


# --- methods --------------------------------------------------------------------------------------------


def by_decord(path: str, wanted: list[int]) -> list[np.ndarray]:
    return read_frames(path, wanted, backend="decord")


def by_torchcodec(path: str, wanted: list[int]) -> list[np.ndarray]:
    return read_frames(path, wanted, backend="torchcodec")


def by_opencv_seek(path: str, wanted: list[int]) -> list[np.ndarray]:
    return read_frames(path, wanted, backend="opencv")


def by_sequential(path: str, wanted: list[int]) -> list[np.ndarray]:
    frames = read_sequential(path, wanted)
    return [frames[i] for i in wanted]


def by_read_all(path: str, wanted: list[int]) -> list[np.ndarray]:
    """The naive loop: ``cap.read()`` (decode + BGR conversion) of every frame up to the last wanted one."""
    import cv2

    cap = cv2.VideoCapture(path)
    keep, frames = set(wanted), {}
    for index in range(max(wanted) + 1):
        ok, frame = cap.read()
        if not ok:
            raise AssertionError(f"{path}: frame {index} does not decode")
        if index in keep:
            frames[index] = cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)
    cap.release()
    return [frames[i] for i in wanted]


METHODS: dict[str, Callable[[str, list[int]], list[np.ndarray]]] = {
    "torchcodec": by_torchcodec, "decord": by_decord, "opencv-seek": by_opencv_seek, "opencv-sequential": by_sequential,
    "opencv-read-all": by_read_all,
}
BASELINE = "opencv-sequential"
"""Sequential decode that grabs (decodes without colour conversion) the frames it does not keep: the stricter
baseline. ``opencv-read-all`` is the naive loop the issue describes (``read()`` of every frame)."""


def _timed(method: str, path: str, wanted: list[int]) -> tuple[float, list[int]]:
    start = time.perf_counter()
    frames = METHODS[method](path, wanted)
    return time.perf_counter() - start, [stamp(f) for f in frames]


def _one_video(args: tuple[str, str, list[int]]) -> float:
    method, path, wanted = args
    seconds, stamps = _timed(method, path, wanted)
    if stamps != wanted:
        raise AssertionError(f"{method} returned frames {stamps} for {wanted} in {path}")
    return seconds


def _warm_up() -> None:
    """Import the decoders in a worker before the clock starts (``import decord`` alone takes ~0.1 s)."""
    import cv2  # noqa: F401

    if have_decord():
        import decord  # noqa: F401
    if have_torchcodec():
        import torchcodec.decoders  # noqa: F401


def _end_to_end(args: tuple[str, str, str]) -> float:
    path, cache, backend = args
    start = time.perf_counter()
    sample_video(path, Robotics(), cache, backend=backend, on_error="fail")
    return time.perf_counter() - start


# --- the run --------------------------------------------------------------------------------------------


def run(seconds: int = 60, n_videos: int = 50, processes: int = 2, codec: str = "mp4v", distinct: int = 3,
        repeat: int = 5, workdir: str | None = None) -> dict[str, Any]:
    load_before = os.getloadavg()
    n_frames = seconds * FPS
    wanted = Robotics().indices(n_frames, FPS)
    assert len(wanted) == N_SAMPLES
    installed = {"decord": have_decord(), "torchcodec": have_torchcodec()}
    methods = [m for m in METHODS if installed.get(m, True)]
    root = Path(workdir or tempfile.mkdtemp(prefix="bench-frames-"))
    try:
        t0 = time.perf_counter()
        originals = [make_video(root / f"v{k}{SUFFIX[codec]}", n_frames, codec, seed=k) for k in range(distinct)]
        make_seconds = time.perf_counter() - t0
        videos = [shutil.copy(originals[i % distinct], root / f"copy{i:03d}{SUFFIX[codec]}") for i in range(n_videos)]

        # the frames asked for (stamps, checked on every run); pixels compared with sequential decode: decoders
        # built on other FFmpeg builds may convert YUV to RGB a little differently on lossy codecs
        reference = by_sequential(str(originals[0]), wanted)
        same_pixels = {}
        for m in methods:
            got = METHODS[m](str(originals[0]), wanted)
            same_pixels[m] = all(np.array_equal(a, b) for a, b in zip(got, reference))
            if not same_pixels[m] and codec in ("FFV1",):
                raise AssertionError(f"{m} decodes different pixels from sequential decode on a lossless video")

        # round-robin over methods and videos, so a burst of load from another process hits every method alike
        times: dict[str, list[float]] = {m: [] for m in methods}
        for _ in range(repeat):
            for p in originals:
                for m in methods:
                    times[m].append(_one_video((m, str(p), wanted)))
        single = {m: statistics.median(t) for m, t in times.items()}
        fastest = {m: min(t) for m, t in times.items()}

        throughput: dict[str, float] = {}
        with ProcessPoolExecutor(processes, initializer=_warm_up) as pool:
            list(pool.map(_one_video, [(methods[0], str(originals[0]), wanted)] * processes))  # start the workers
            for m in methods:
                start = time.perf_counter()
                list(pool.map(_one_video, [(m, str(p), wanted) for p in videos]))
                throughput[m] = n_videos / (time.perf_counter() - start)
            for backend in [m for m in ("torchcodec", "decord", "opencv") if installed.get(m, True)]:
                start = time.perf_counter()  # one cache per video: copies share a content hash and would hit
                list(pool.map(_end_to_end, [(str(p), str(root / f"cache-{backend}{i}"), backend)
                                            for i, p in enumerate(videos)]))
                throughput[f"sample_video ({backend})"] = n_videos / (time.perf_counter() - start)
    finally:
        if workdir is None:
            shutil.rmtree(root, ignore_errors=True)
    return {"seconds": seconds, "frames": n_frames, "codec": codec, "size": f"{WIDTH}x{HEIGHT}@{FPS}",
            "wanted": wanted, "make_seconds": make_seconds, "single_s": single, "fastest_s": fastest,
            "throughput_vps": throughput, "processes": processes, "n_videos": n_videos, "runs": repeat * distinct,
            "load_before": load_before, "load_after": os.getloadavg(), "same_pixels": same_pixels}


def report(result: dict[str, Any]) -> str:
    base = result["single_s"][BASELINE]
    lines = [f"{N_SAMPLES} frames from {result['seconds']}-second videos ({result['frames']} frames, "
             f"{result['size']} fps, {result['codec']}, key frame every "
             f"{H264_GOP if result['codec'] == 'h264' else 12}); indices "
             f"{result['wanted'][:3]}...{result['wanted'][-1]}",
             f"load average before/after (other processes): {result['load_before'][0]:.2f} / "
             f"{result['load_after'][0]:.2f} on {os.cpu_count()} CPUs",
             "", f"one process, {result['runs']} runs each (median, fastest)",
             f"{'method':<28}{'ms/video':>10}{'vs sequential':>15}{'fastest ms':>12}{'vs seq.':>9}"]
    for m, s in result["single_s"].items():
        best = result["fastest_s"][m]
        lines.append(f"{m:<28}{s * 1000:>10.1f}{base / s:>14.1f}x{best * 1000:>12.1f}"
                     f"{result['fastest_s'][BASELINE] / best:>8.1f}x"
                     + ("" if result["same_pixels"].get(m, True) else "  (other pixels)"))
    lines += ["", f"throughput over {result['n_videos']} videos, {result['processes']} processes",
              f"{'method':<28}{'videos/s':>10}{'vs sequential':>15}"]
    seq = result["throughput_vps"][BASELINE]
    for m, v in result["throughput_vps"].items():
        lines.append(f"{m:<28}{v:>10.2f}{v / seq:>14.1f}x")
    lines.append("")
    for m in ("torchcodec", "decord", "opencv-seek"):
        if m in result["throughput_vps"]:
            ratio = result["throughput_vps"][m] / seq
            verdict = "met" if ratio >= TARGET_SPEEDUP else "NOT met"
            lines.append(f"target >= {TARGET_SPEEDUP:g}x faster than {BASELINE} (throughput), {m}: {verdict} "
                         f"({ratio:.1f}x)")
    seek = {"torchcodec": "torchcodec", "decord": "decord", "opencv": "opencv-seek"}
    for backend, raw in seek.items():
        e2e = result["throughput_vps"].get(f"sample_video ({backend})")
        if e2e is not None and raw in result["throughput_vps"]:
            ratio = e2e / result["throughput_vps"][raw]
            lines.append(f"target sample_video >= {TARGET_END_TO_END:g}x its backend's raw seek, {backend}: "
                         f"{'met' if ratio >= TARGET_END_TO_END else 'NOT met'} ({ratio:.2f}x)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=60, help="video length in seconds (30 fps)")
    parser.add_argument("--videos", type=int, default=50, help="videos in the throughput run")
    parser.add_argument("--processes", type=int, default=2, help="worker processes in the throughput run")
    parser.add_argument("--codec", choices=sorted(SUFFIX), default="mp4v", help="codec of the synthetic videos")
    parser.add_argument("--distinct", type=int, default=3, help="distinct videos made (the rest are copies)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per video in part 1 (median)")
    args = parser.parse_args(argv)
    result = run(args.seconds, args.videos, args.processes, args.codec, args.distinct, args.repeat)
    print(report(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
