"""Sampling 20 frames from 60-second videos, per decoder and per kind of video: sequential decode, the decoder's
raw seek, and ``sample_video`` end to end, side by side with the issue-17 target.

The videos are synthetic (made once in a temporary folder; nothing is downloaded): 320x240 at 30 fps, 1,800
frames, a moving gradient with noise so the encoder has work to do, and each frame's number stamped into its
pixels so every method's frames are checked against the frame it was asked for. The 20 frames are the Mementos
robotics rule for a 1,800-frame video (``floor(k * 1800 / 20)``: 0, 90, ..., 1710). Two kinds of video:

* ``mp4v``: MPEG-4 part 2 from OpenCV's writer, a key frame every 12 frames (seeking pays);
* ``h264``: H.264 from the ``ffmpeg`` program (libx264, Debian's), a key frame every 300 frames and B-frames,
  like camera footage (a seek decodes from a key frame up to 10 s back, so seeking gains little).

For each decoder installed (torchcodec, decord, OpenCV) three ways to get the 20 frames:

* **sequential**: decode every frame up to the last wanted one and keep the wanted ones (OpenCV ``grab()``s the
  frames it skips, without colour conversion; torchcodec and decord have no such call and convert every frame);
* **raw seek**: ``read_frames(backend=...)``, the decoder's own seeking, nothing else;
* **end to end**: ``sample_video(backend=...)`` with a cold cache, the path users take: content hash, frame
  count, decode, PNG cache write (``frames.json`` last, folder renamed into place).

Part 1 times them in one process (median of ``--repeat`` runs per distinct video: a single-process build's
latency); part 2 is throughput over ``--videos`` videos (copies of ``--distinct`` ones) in ``--processes``
worker processes, the figure the target is judged on: ``sample_video`` >= 0.8x its decoder's raw seek. Part 2
runs ``--rounds`` times, every way of every decoder in turn each round, and keeps each one's best round: on a
machine shared with other busy processes a burst of their load otherwise decides a ratio.
Every method's frames are checked by their stamps; each decoder's pixels are compared with OpenCV's sequential
decode (equal only where FFmpeg builds convert YUV alike), and the PNGs ``sample_video`` wrote are compared with
the decoder's own frames (always equal: PNG is lossless).

    python benchmarks/bench_frames.py [--codec mp4v h264] [--videos 12] [--rounds 3] [--processes 2]

On a machine shared with other busy processes the figures are noisy: compare ratios within one run. decord
hands frames between two threads and suffers most (see ``sources/video_backends.py``). The load average is
printed with the figures. ``run()`` returns the numbers as a dict.
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
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from builders.cli import stdout, table  # noqa: E402
from sources.video import Robotics, sample_video  # noqa: E402
from sources.video_backends import (  # noqa: E402
    have_decord, have_opencv, have_torchcodec, read_frames, read_sequential, write_video,
)

WIDTH, HEIGHT, FPS = 320, 240, 30
N_SAMPLES = 20
SEEK_TARGET = 5.0
"""The first target of this benchmark: seeking >= 5x faster than sequential decode (throughput)."""
TARGET_END_TO_END = 0.8
"""sample_video (probe, hash, decode, PNG cache write) against its backend's bare read_frames (issue #17)."""
SUFFIX = {"mp4v": ".mp4", "MJPG": ".avi", "FFV1": ".avi", "h264": ".mp4"}
KEY_INTERVAL = {"mp4v": 12, "MJPG": 1, "FFV1": 1}
"""Key frame interval of OpenCV's writers per codec (H.264: :data:`H264_GOP`)."""
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

BACKENDS = ("torchcodec", "decord", "opencv")
WAYS = ("sequential", "raw seek", "end to end")
CHUNK = 60
"""Frames per batch in torchcodec's and decord's sequential decode (memory stays at 60 frames, not 1,711)."""


def installed_backends() -> list[str]:
    have = {"torchcodec": have_torchcodec(), "decord": have_decord(), "opencv": have_opencv()}
    return [b for b in BACKENDS if have[b]]


def raw_seek(backend: str, path: str, wanted: list[int]) -> list[np.ndarray]:
    return read_frames(path, wanted, backend=backend)


def sequential(backend: str, path: str, wanted: list[int]) -> list[np.ndarray]:
    """Every frame up to the last wanted one, decoded in order; the wanted ones kept."""
    keep, last = set(wanted), max(wanted)
    frames: dict[int, np.ndarray] = {}
    if backend == "opencv":
        frames = read_sequential(path, wanted)
    elif backend == "torchcodec":
        from torchcodec.decoders import VideoDecoder

        decoder = VideoDecoder(path, seek_mode="exact", num_ffmpeg_threads=1, dimension_order="NHWC")
        for start in range(0, last + 1, CHUNK):
            batch = decoder.get_frames_in_range(start, min(start + CHUNK, last + 1)).data.numpy()
            frames.update({start + k: batch[k].copy() for k in range(len(batch)) if start + k in keep})
    else:
        import decord

        reader = decord.VideoReader(path, ctx=decord.cpu(0), num_threads=1)
        for start in range(0, last + 1, CHUNK):
            batch = reader.get_batch(list(range(start, min(start + CHUNK, last + 1)))).asnumpy()
            frames.update({start + k: batch[k].copy() for k in range(len(batch)) if start + k in keep})
    return [frames[i] for i in wanted]


def end_to_end(backend: str, path: str, wanted: list[int], cache: str) -> list[str]:
    """``sample_video`` into an empty cache: the PNG paths it wrote."""
    sampled = sample_video(path, Robotics(), cache, backend=backend, on_error="fail")
    if list(sampled.indices) != wanted or sampled.cached:
        raise AssertionError(f"sample_video({backend}) sampled {sampled.indices} (cached={sampled.cached})")
    return list(sampled.frames)


def _png(path: str) -> np.ndarray:
    from PIL import Image

    with Image.open(path) as image:
        return np.asarray(image.convert("RGB"))


def _timed(args: tuple[str, str, str, list[int], str, bool]) -> float:
    """Seconds for one video by one way; with ``check`` the frames' stamps must be the frames asked for (read
    back from the PNGs for end to end), checked after the clock stops."""
    way, backend, path, wanted, cache, check = args
    start = time.perf_counter()
    if way == "end to end":
        got: list[Any] = end_to_end(backend, path, wanted, cache)
    else:
        got = (raw_seek if way == "raw seek" else sequential)(backend, path, wanted)
    seconds = time.perf_counter() - start
    if check:
        stamps = [stamp(_png(f) if isinstance(f, str) else f) for f in got]
        if stamps != wanted:
            raise AssertionError(f"{way} ({backend}) returned frames {stamps} for {wanted} in {path}")
    return seconds


def _warm_up() -> None:
    """Import the decoders in a worker before the clock starts (``import decord`` alone takes ~0.1 s)."""
    import cv2  # noqa: F401

    if have_decord():
        import decord  # noqa: F401
    if have_torchcodec():
        import torchcodec.decoders  # noqa: F401


# --- the run --------------------------------------------------------------------------------------------


def check_pixels(backend: str, video: Path, wanted: list[int], reference: list[np.ndarray], lossless: bool,
                 cache: Path) -> bool:
    """True when ``backend``'s frames equal OpenCV's sequential decode (required on lossless codecs); the PNGs
    ``sample_video`` wrote must equal the decoder's frames whatever the codec."""
    got = raw_seek(backend, str(video), wanted)
    same = all(np.array_equal(a, b) for a, b in zip(got, reference, strict=True))
    if not same and lossless:
        raise AssertionError(f"{backend} decodes other pixels than sequential decode on a lossless video")
    written = [_png(f) for f in end_to_end(backend, str(video), wanted, str(cache))]
    if not all(np.array_equal(a, b) for a, b in zip(written, got, strict=True)):
        raise AssertionError(f"sample_video({backend}) wrote other pixels than {backend} decodes")
    return same


def run_kind(codec: str, seconds: int, n_videos: int, processes: int, distinct: int, repeat: int, rounds: int,
             root: Path) -> dict[str, Any]:
    """Every way of every installed backend on one kind of video."""
    n_frames = seconds * FPS
    wanted = Robotics().indices(n_frames, FPS)
    assert len(wanted) == N_SAMPLES
    backends = installed_backends()
    folder = root / codec
    folder.mkdir(parents=True)
    t0 = time.perf_counter()
    originals = [make_video(folder / f"v{k}{SUFFIX[codec]}", n_frames, codec, seed=k) for k in range(distinct)]
    make_seconds = time.perf_counter() - t0
    videos = [Path(shutil.copy(originals[i % distinct], folder / f"copy{i:03d}{SUFFIX[codec]}"))
              for i in range(n_videos)]
    reference = sequential("opencv", str(originals[0]), wanted)
    same_pixels = {b: check_pixels(b, originals[0], wanted, reference, codec in ("FFV1",), folder / f"check-{b}")
                   for b in backends}

    def cache(tag: str) -> str:  # one fresh cache per video: copies share a content hash and would hit
        return str(folder / f"cache-{tag}")

    def unseen(paths: list[Path], tag: str) -> list[Path]:
        """Fresh copies (new path, new inode) for end to end, made before the clock starts: a video this
        process has hashed before would be a memo hit (sources.hashing), not a cold sample."""
        return [Path(shutil.copy(p, folder / f"{tag}-{i}{SUFFIX[codec]}")) for i, p in enumerate(paths)]

    def inputs(way: str, paths: list[Path], tag: str) -> list[Path]:
        return unseen(paths, tag) if way == "end to end" else paths

    # part 1, round-robin over ways and videos, so a burst of load from another process hits every way alike
    single: dict[tuple[str, str], list[float]] = {(b, w): [] for b in backends for w in WAYS}
    for r in range(repeat):
        for k, original in enumerate(originals):
            for b, w in single:
                [p] = inputs(w, [original], f"e2e-1-{b}-{r}-{k}")
                single[(b, w)].append(_timed((w, b, str(p), wanted, cache(f"1-{b}-{r}-{k}"), True)))
                if p != original:
                    p.unlink()
    throughput: dict[tuple[str, str], float] = {(b, w): 0.0 for b in backends for w in WAYS}
    with ProcessPoolExecutor(processes, initializer=_warm_up) as pool:
        list(pool.map(_timed, [("raw seek", backends[0], str(originals[0]), wanted, "", True)] * processes))
        for r in range(rounds):
            for b, w in throughput:
                batch = inputs(w, videos, f"e2e-2-{b}-{r}")
                jobs = [(w, b, str(p), wanted, cache(f"2-{b}-{r}-{i}"), False) for i, p in enumerate(batch)]
                start = time.perf_counter()
                list(pool.map(_timed, jobs))
                throughput[(b, w)] = max(throughput[(b, w)], n_videos / (time.perf_counter() - start))
                for p in set(batch) - set(videos):
                    p.unlink()
    return {"codec": codec, "frames": n_frames, "wanted": wanted, "make_seconds": make_seconds,
            "key_interval": H264_GOP if codec == "h264" else KEY_INTERVAL.get(codec, 0),
            "single_ms": {k: statistics.median(v) * 1000 for k, v in single.items()},
            "throughput_vps": throughput, "same_pixels": same_pixels, "backends": backends}


def run(codecs: tuple[str, ...] = ("mp4v", "h264"), seconds: int = 60, n_videos: int = 12, processes: int = 2,
        distinct: int = 2, repeat: int = 3, rounds: int = 3, workdir: str | None = None) -> dict[str, Any]:
    load_before = os.getloadavg()
    root = Path(workdir or tempfile.mkdtemp(prefix="bench-frames-"))
    try:
        kinds = [run_kind(c, seconds, n_videos, processes, distinct, repeat, rounds, root) for c in codecs]
    finally:
        if workdir is None:
            shutil.rmtree(root, ignore_errors=True)
    return {"seconds": seconds, "size": f"{WIDTH}x{HEIGHT}@{FPS}", "kinds": kinds, "processes": processes,
            "n_videos": n_videos, "runs": repeat * distinct, "rounds": rounds, "load_before": load_before,
            "load_after": os.getloadavg()}


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "-"


def report(result: dict[str, Any]) -> None:
    """The two tables (one process; throughput) and the verdicts, at most 80 columns wide."""
    kinds = result["kinds"]
    wanted = kinds[0]["wanted"] if kinds else []
    rule = ", ".join(map(str, wanted[:2])) + f", ..., {wanted[-1]}" if wanted else ""
    stdout.print(f"{len(wanted)} frames (robotics rule: {rule}) from {result['seconds']}-s "
                 f"{result['size']} videos; load average before/after {result['load_before'][0]:.2f} / "
                 f"{result['load_after'][0]:.2f} on {os.cpu_count()} CPUs")
    for kind in kinds:
        stdout.print(f"{kind['codec']}: key frame every {kind['key_interval']} frames; pixels equal to OpenCV "
                     f"sequential decode: " + ", ".join(f"{b} {'yes' if same else 'no'}"
                                                        for b, same in kind["same_pixels"].items()))
    legend = ("seq.: sequential decode; raw: the decoder's raw seek (read_frames); e2e: sample_video end to end "
              "(cold cache: hash, count, decode, PNG write); raw/seq., e2e/raw: ratios")
    rows = [[f"{k['codec']} {b}", f"{k['single_ms'][(b, 'sequential')]:.0f}", f"{k['single_ms'][(b, 'raw seek')]:.0f}",
             f"{k['single_ms'][(b, 'end to end')]:.0f}",
             _ratio(k["single_ms"][(b, "sequential")], k["single_ms"][(b, "raw seek")]),
             _ratio(k["single_ms"][(b, "raw seek")], k["single_ms"][(b, "end to end")])]
            for k in kinds for b in k["backends"]]
    stdout.print(table(f"One process, ms a video (median of {result['runs']})",
                       ["video, decoder", "seq.", "raw", "e2e", "raw/seq.", "e2e/raw"], rows, legend=legend))
    rows = []
    for k in kinds:
        for b in k["backends"]:
            seq, raw, e2e = (k["throughput_vps"][(b, w)] for w in WAYS)
            rows.append([f"{k['codec']} {b}", f"{seq:.2f}", f"{raw:.2f}", f"{e2e:.2f}", _ratio(raw, seq),
                         _ratio(e2e, raw), "met" if e2e / raw >= TARGET_END_TO_END else "NOT met"])
    stdout.print(table(f"Throughput, videos/s ({result['n_videos']} videos, {result['processes']} processes, "
                       f"best of {result['rounds']} rounds)",
                       ["video, decoder", "seq.", "raw", "e2e", "raw/seq.", "e2e/raw",
                        f">= {TARGET_END_TO_END:g}x"], rows,
                       legend=f"target: sample_video end to end >= {TARGET_END_TO_END:g}x its decoder's raw seek "
                              f"throughput (issue #17); raw/seq. was first asked to reach {SEEK_TARGET:g}x"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--codec", nargs="+", choices=sorted(SUFFIX), default=["mp4v", "h264"], metavar="CODEC",
                        help="kinds of video, one or more of " + ", ".join(sorted(SUFFIX)) + " (default mp4v h264; "
                             "h264 needs the ffmpeg program with libx264)")
    counts = {  # option: (default, least, what it sets)
        "seconds": (60, 4, "video length in seconds, 30 fps (at least 4, so that the robotics rule takes 20 "
                           "frames)"),
        "videos": (12, 1, "videos in the throughput run"),
        "rounds": (3, 1, "throughput rounds, the best kept"),
        "processes": (2, 1, "worker processes in the throughput run"),
        "distinct": (2, 1, "distinct videos made per kind, the rest are copies"),
        "repeat": (3, 1, "timed runs per distinct video in part 1"),
    }
    for name, (default, _, what) in counts.items():
        parser.add_argument(f"--{name}", type=int, default=default, metavar="N", help=f"{what} (default {default})")
    args = parser.parse_args(argv)
    for name, (_, least, _) in counts.items():
        if getattr(args, name) < least:
            parser.error(f"--{name} must be at least {least}, got {getattr(args, name)}")
    report(run(tuple(args.codec), args.seconds, args.videos, args.processes, args.distinct, args.repeat,
               args.rounds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
