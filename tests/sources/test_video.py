"""Frame-sampling policies, the two decoders, errors and the frame cache (sources/video.py).

Every video here is made by the test: each frame carries its own number as a row of black/white blocks
(:func:`stamped_frame`), coarse enough to survive MJPG and MPEG-4 compression, so a test can tell which frame a
decoder returned.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from sources import video as video_mod
from sources import video_backends
from sources.errors import ConfigError, SourceError
from sources.records import VideoRecord
from sources.video import (
    DailyLife, LastFramePerSecond, Robotics, Uniform, VideoSkipped, policy_by_name, probe, read_frames,
    sample_video,
)
from sources.video_backends import have_decord, have_opencv, read_sequential, write_video
from tests.conftest import require

require(have_opencv(), "opencv-python-headless", "bash .ci/install-video.sh")

BITS = 12
BLOCK = 8
WIDTH, HEIGHT = BITS * BLOCK, 48


def stamped_frame(number: int, width: int = WIDTH, height: int = HEIGHT) -> np.ndarray:
    """A frame whose top band encodes ``number`` in binary (white block = 1), with a number-dependent tint."""
    frame = np.zeros((height, width, 3), dtype=np.uint8)
    frame[BLOCK:] = ((number * 37) % 200 + 20, (number * 11) % 200 + 20, 90)
    for bit in range(BITS):
        if number >> bit & 1:
            frame[:BLOCK, bit * BLOCK:(bit + 1) * BLOCK] = 255
    return frame


def frame_number(frame: np.ndarray) -> int:
    """The number :func:`stamped_frame` wrote (block centres thresholded: robust to lossy codecs)."""
    value = 0
    for bit in range(BITS):
        centre = frame[2:BLOCK - 2, bit * BLOCK + 2:(bit + 1) * BLOCK - 2]
        if centre.mean() > 128:
            value |= 1 << bit
    return value


def make_video(path: Path, n_frames: int, fps: float = 25.0, fourcc: str = "MJPG") -> Path:
    """A video of ``n_frames`` stamped frames."""
    written = write_video(path, (stamped_frame(i) for i in range(n_frames)), fps, fourcc)
    assert written == n_frames
    return path


def make_folder(path: Path, n_frames: int, pattern: str = "frame{}.png") -> Path:
    """A frame folder whose file names need natural sorting (``frame2`` before ``frame10``)."""
    from PIL import Image

    path.mkdir(parents=True)
    for i in range(n_frames):
        Image.fromarray(stamped_frame(i)).save(path / pattern.format(i))
    return path


# --- policies on exact lengths --------------------------------------------------------------------------


def test_daily_life_range_and_step():
    policy = DailyLife()
    with pytest.raises(VideoSkipped, match="399 frames is outside the daily-life range 400..2500"):
        policy.indices(399, 30.0)
    assert policy.indices(400, 30.0) == [0, 100, 200, 300]
    assert policy.indices(2500, None) == list(range(0, 2500, 100)) and len(policy.indices(2500, None)) == 25
    assert policy.indices(2401, None)[-1] == 2400
    with pytest.raises(VideoSkipped, match="2501 frames"):
        policy.indices(2501, 30.0)


def test_robotics_rules_and_rounding():
    policy = Robotics()
    with pytest.raises(VideoSkipped, match="19 frames is below the robotics minimum of 20"):
        policy.indices(19, None)
    assert policy.indices(20, None) == [0, 5, 10, 15]
    assert policy.indices(100, None) == list(range(0, 100, 5))
    # n > 100: exactly 20 frames floor(k * n / 20)
    assert policy.indices(101, None) == [k * 101 // 20 for k in range(20)]
    assert policy.indices(101, None)[-1] == 95 and len(policy.indices(101, None)) == 20
    assert policy.indices(2000, None) == list(range(0, 2000, 100))
    assert policy.indices(130, None)[:4] == [0, 6, 13, 19]


def test_uniform_and_last_frame_per_second():
    assert Uniform(5).indices(101, None) == [0, 25, 50, 75, 100]
    assert Uniform(3).indices(4, None) == [0, 2, 3]  # 1.5 rounds up
    assert Uniform(1).indices(7, None) == [0]
    assert Uniform(16).indices(16, None) == list(range(16))
    with pytest.raises(VideoSkipped, match="fewer than the 16"):
        Uniform(16).indices(15, None)
    with pytest.raises(ConfigError):
        Uniform(0)

    last = LastFramePerSecond()
    assert last.indices(100, 30.0) == [29, 59, 89]
    assert last.indices(90, 30.0) == [29, 59, 89]
    assert last.indices(100, 29.97) == [29, 59, 89]
    assert last.indices(3000, 29.97)[-1] == 2996  # frame 2997 starts second 101 exactly (float: 2996.99...)
    assert last.indices(3000, 30000 / 1001)[-1] == 2997  # 100 s = 2997.003 frames
    assert last.indices(50, 12.5) == [12, 24, 37, 49]
    with pytest.raises(VideoSkipped, match="frame rate is unknown"):
        last.indices(100, None)
    with pytest.raises(VideoSkipped, match="shorter than one second"):
        last.indices(10, 30.0)
    with pytest.raises(VideoSkipped, match="no frames"):
        last.indices(0, 30.0)


def test_policy_by_name():
    assert policy_by_name("daily_life") == DailyLife()
    assert policy_by_name("robotics") == Robotics()
    assert policy_by_name("uniform:16") == Uniform(16) and Uniform(16).name == "uniform:16"
    assert policy_by_name("last_per_second") == LastFramePerSecond()
    for bad in ("daily", "uniform:0", "uniform:x", ""):
        with pytest.raises(ConfigError, match="valid: daily_life, robotics, uniform:N, last_per_second"):
            policy_by_name(bad)


@pytest.mark.parametrize("n_frames, expected", [(19, None), (20, [0, 5, 10, 15]), (100, list(range(0, 100, 5))),
                                                (101, [k * 101 // 20 for k in range(20)])])
def test_robotics_on_real_files(tmp_path, n_frames, expected):
    path = make_video(tmp_path / f"r{n_frames}.avi", n_frames)
    if expected is None:
        with pytest.raises(VideoSkipped, match="19 frames is below"):
            sample_video(path, Robotics(), tmp_path / "cache")
        return
    sampled = sample_video(path, Robotics(), tmp_path / "cache")
    assert list(sampled.indices) == expected and sampled.frame_count == n_frames
    assert [frame_number(_png(f)) for f in sampled.frames] == expected


@pytest.mark.parametrize("n_frames", [399, 400])
def test_daily_life_on_real_files(tmp_path, n_frames):
    path = make_video(tmp_path / f"d{n_frames}.mp4", n_frames, fourcc="mp4v")
    if n_frames == 399:
        with pytest.raises(VideoSkipped, match=r"d399\.mp4: 399 frames is outside"):
            sample_video(path, "daily_life", tmp_path / "cache")
        return
    sampled = sample_video(path, "daily_life", tmp_path / "cache", backend="opencv")
    assert [frame_number(_png(f)) for f in sampled.frames] == [0, 100, 200, 300]


def _png(path: str) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(path).convert("RGB"))


# --- backends -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fourcc, suffix", [("MJPG", ".avi"), ("mp4v", ".mp4"), ("FFV1", ".avi")])
def test_opencv_seek_matches_sequential_decode(tmp_path, fourcc, suffix):
    path = make_video(tmp_path / f"v{suffix}", 260, fourcc=fourcc)
    wanted = [259, 0, 3, 40, 41, 150, 60, 3]  # unordered, repeated, near (grab) and far (seek)
    frames = read_frames(path, wanted, backend="opencv")
    reference = read_sequential(path, wanted)
    assert [frame_number(f) for f in frames] == wanted
    for index, frame in zip(wanted, frames):
        assert frame.dtype == np.uint8 and frame.shape == (HEIGHT, WIDTH, 3)
        assert np.array_equal(frame, reference[index])


class _FakeCapture:
    """A capture on a fake clock: a seek costs ``seek`` seconds, a grab or read ``frame`` seconds."""

    def __init__(self, clock: list[float], seek: float, frame: float) -> None:
        self.clock, self.seek, self.frame, self.position, self.seeks = clock, seek, frame, 0, []

    def set(self, prop: int, index: int) -> None:
        self.clock[0] += self.seek
        self.position = index
        self.seeks.append(index)

    def get(self, prop: int) -> int:
        return self.position

    def grab(self) -> bool:
        self.clock[0] += self.frame
        self.position += 1
        return True

    def read(self) -> tuple[bool, np.ndarray]:
        self.grab()
        return True, stamped_frame(self.position - 1)[..., ::-1].copy()  # BGR, like OpenCV


@pytest.mark.parametrize("seek, frame, sought", [(1.0, 0.001, [90]), (0.001, 0.01, [90, 180, 270, 360])])
def test_opencv_grabs_across_gaps_when_seeking_costs_more(monkeypatch, seek, frame, sought):
    """Long-GOP video: a seek re-decodes from a key frame far back, so after one expensive seek the next gaps
    are grabbed; short-GOP video: seeks stay cheap and every long gap is sought. The frames are the same."""
    clock = [0.0]
    monkeypatch.setattr(video_backends, "perf_counter", lambda: clock[0])
    cap = _FakeCapture(clock, seek, frame)
    wanted = [0, 90, 180, 270, 360]
    frames = video_backends._opencv_frames(cap, Path("fake.mp4"), wanted)
    assert cap.seeks == sought
    assert frames is not None and [frame_number(frames[i]) for i in wanted] == wanted


@pytest.mark.parametrize("fourcc, suffix", [("MJPG", ".avi"), ("mp4v", ".mp4"), ("FFV1", ".avi")])
def test_decord_and_opencv_return_identical_frames(tmp_path, fourcc, suffix):
    require(have_decord(), "decord", "bash .ci/install-video.sh")
    path = make_video(tmp_path / f"v{suffix}", 230, fourcc=fourcc)
    wanted = Robotics().indices(230, 25.0) + [229, 1]
    by_decord = read_frames(path, wanted, backend="decord")
    by_opencv = read_frames(path, wanted, backend="opencv")
    assert [frame_number(f) for f in by_decord] == wanted
    for a, b in zip(by_decord, by_opencv):
        assert a.shape == b.shape and np.array_equal(a, b)


@pytest.mark.parametrize("fourcc, suffix", [("FFV1", ".avi"), ("MJPG", ".avi")])
def test_torchcodec_returns_the_frames_opencv_and_decord_do(tmp_path, fourcc, suffix):
    require(video_backends.backend_problem("torchcodec") is None, "torchcodec with FFmpeg's libraries",
            "apt-get install ffmpeg && pip install -e '.[video-torchcodec]' (bash .ci/install-video.sh)")
    path = make_video(tmp_path / f"v{suffix}", 230, fourcc=fourcc)
    wanted = Robotics().indices(230, 25.0) + [229, 1]
    by_torchcodec = read_frames(path, wanted, backend="torchcodec")
    assert [frame_number(f) for f in by_torchcodec] == wanted
    # the same frames as OpenCV's; decord's equal OpenCV's in test_decord_and_opencv_return_identical_frames
    for a, b in zip(by_torchcodec, read_frames(path, wanted, backend="opencv")):
        assert a.shape == b.shape == (HEIGHT, WIDTH, 3) and np.array_equal(a, b)
    with pytest.raises(SourceError, match="past the end"):
        read_frames(path, [230], backend="torchcodec")


def test_auto_backend_prefers_torchcodec_then_decord():
    usable = [n for n in ("torchcodec", "decord", "opencv") if video_backends.backend_problem(n) is None]
    assert video_backends.resolve_backend("auto") == usable[0]


def test_probe_verifies_a_lying_frame_count(tmp_path):
    """A truncated AVI still claims its full length in the header; probe counts what really decodes."""
    path = make_video(tmp_path / "full.avi", 120, fps=20.0)
    cut = tmp_path / "cut.avi"
    data = path.read_bytes()
    # cut where a frame's chunk starts: whole frames stay, the header still claims all 120 (a cut inside a packet
    # makes decord's threaded decoder fail at random on the torn frame, which is not what this test is about)
    cut.write_bytes(data[: data.rindex(b"00dc", 0, len(data) * 2 // 3)])
    import cv2

    cap = cv2.VideoCapture(str(cut))
    claimed = int(cap.get(cv2.CAP_PROP_FRAME_COUNT))
    cap.release()
    real = video_backends._count_frames_opencv(cut)
    info = probe(cut)
    assert info.frame_count == real < 120
    assert claimed != real  # the header lies, or this test proves nothing
    assert probe(path) == (120, 20.0, WIDTH, HEIGHT)


def _video_backends() -> list[str]:
    return [n for n in ("opencv", "decord", "torchcodec") if video_backends.backend_problem(n) is None]


@pytest.mark.parametrize("backend", ["opencv", "decord", "torchcodec"])
def test_cold_sample_probes_and_decodes_in_one_pass(tmp_path, monkeypatch, backend):
    """The usual cold path opens one decoder: the count the container claims is verified while the frames are
    read, so the separate probe (a second open and a decode of the last frame) is never called."""
    require(backend in _video_backends(), f"the {backend} video backend", "bash .ci/install-video.sh")
    path = make_video(tmp_path / "clip.avi", 230, fps=25.0, fourcc="FFV1")
    expected = probe(path)

    def no_probe(*args, **kwargs):
        raise AssertionError("probed separately")

    monkeypatch.setattr(video_mod, "probe", no_probe)
    sampled = sample_video(path, Robotics(), tmp_path / "cache", backend=backend, on_error="fail")
    assert sampled.indices == tuple(Robotics().indices(230)) and sampled.backend == backend
    assert (sampled.frame_count, sampled.fps, sampled.width, sampled.height) == tuple(expected)
    assert [frame_number(_png(f)) for f in sampled.frames] == list(sampled.indices)
    stored = Path(sampled.frames[0]).parents[2] / video_mod.PROBE_FILE  # <sha256>/<decoder>/<policy>/frame
    assert tuple(json.loads(stored.read_text())) == tuple(expected)  # what probe() would have stored


@pytest.mark.parametrize("backend", ["opencv", "decord", "torchcodec"])
def test_counted_read_refuses_a_wrong_frame_count(tmp_path, backend):
    require(backend in _video_backends(), f"the {backend} video backend", "bash .ci/install-video.sh")
    path = make_video(tmp_path / "clip.avi", 60, fourcc="FFV1")
    wanted = [50, 0, 10, 10]
    frames = video_backends.read_frames_counted(path, wanted, 60, backend)
    assert frames is not None and [frame_number(f) for f in frames] == wanted
    for wrong in (59, 61, 80):  # one short (a frame follows), one and many past the end
        assert video_backends.read_frames_counted(path, wanted, wrong, backend) is None, wrong


@pytest.mark.parametrize("backend", ["opencv", "decord", "torchcodec"])
def test_a_lying_frame_count_is_counted_before_sampling(tmp_path, backend):
    """A truncated AVI claims its full length: the one-pass read refuses it and the video is probed (counted)
    and sampled again, so the policy's indices come from the frames that really decode."""
    require(backend in _video_backends(), f"the {backend} video backend", "bash .ci/install-video.sh")
    path = make_video(tmp_path / "full.avi", 120, fps=20.0)
    cut = tmp_path / "cut.avi"
    data = path.read_bytes()
    # cut where a frame's chunk starts: whole frames stay, the header still claims all 120 (a cut inside a packet
    # makes decord's threaded decoder fail at random on the torn frame, which is not what this test is about)
    cut.write_bytes(data[: data.rindex(b"00dc", 0, len(data) * 2 // 3)])
    claimed = video_backends.probe_header(cut)
    real = video_backends._count_frames_opencv(cut)
    assert claimed is not None and claimed.frame_count == 120 > real  # the header lies
    sampled = sample_video(cut, Uniform(5), tmp_path / "cache", backend=backend, on_error="fail")
    assert sampled.frame_count == real and sampled.indices == tuple(Uniform(5).indices(real))
    assert [frame_number(_png(f)) for f in sampled.frames] == list(sampled.indices)


# --- errors ---------------------------------------------------------------------------------------------


def _bad_videos(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    good = make_video(tmp_path / "good.mp4", 60, fourcc="mp4v")
    zero = tmp_path / "zero.mp4"
    zero.write_bytes(b"")
    garbage = tmp_path / "garbage.avi"
    garbage.write_bytes(np.random.default_rng(0).integers(0, 256, 4000, dtype=np.uint8).tobytes())
    truncated = tmp_path / "truncated.mp4"  # the moov atom is at the end: nothing is left to open
    truncated.write_bytes(good.read_bytes()[:3000])
    empty_dir = tmp_path / "no_frames"
    empty_dir.mkdir()
    return {
        "zero": (zero, "zero-length"),
        "garbage": (garbage, "cannot open video"),
        "truncated": (truncated, "cannot open video"),
        "missing": (tmp_path / "missing.mp4", "video file not found"),
        "empty folder": (empty_dir, "frame folder holds no images"),
    }


def test_bad_videos_are_skipped_with_the_reason_or_fail_in_one_line(tmp_path):
    for name, (path, reason) in _bad_videos(tmp_path).items():
        with pytest.raises(VideoSkipped) as skipped:
            sample_video(path, Robotics(), tmp_path / "cache", on_error="skip")
        assert reason in str(skipped.value) and str(path) in str(skipped.value), name
        assert "\n" not in str(skipped.value)
        with pytest.raises(SourceError) as failed:
            sample_video(path, Robotics(), tmp_path / "cache", on_error="fail")
        assert str(failed.value) == f"{path}: {failed.value.problem}" and reason in failed.value.problem, name


def test_unreadable_file(tmp_path, monkeypatch):
    path = make_video(tmp_path / "locked.avi", 30)

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(video_mod, "file_sha256", denied)  # chmod 000 does not stop root
    with pytest.raises(VideoSkipped, match=r"locked\.avi: cannot read video: Permission denied$"):
        sample_video(path, Robotics(), tmp_path / "cache")
    with pytest.raises(SourceError, match=r"locked\.avi: cannot read video: Permission denied$"):
        sample_video(path, Robotics(), tmp_path / "cache", on_error="fail")


@pytest.mark.parametrize("backend", ["opencv", "decord"])
def test_a_frame_past_the_end_is_one_line(tmp_path, backend):
    require(backend in _video_backends(), f"the {backend} video backend", "bash .ci/install-video.sh")
    path = make_video(tmp_path / "v.avi", 30)
    with pytest.raises(SourceError, match=r"v\.avi: frame 30: .*(past the end|only 30 frames)"):
        read_frames(path, [2, 30], backend=backend)


def test_bad_options(tmp_path):
    path = make_video(tmp_path / "v.avi", 30)
    with pytest.raises(SourceError, match="not a non-negative integer"):
        read_frames(path, [-1])
    with pytest.raises(ConfigError, match="on_error"):
        sample_video(path, Robotics(), tmp_path, on_error="ignore")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="unknown video backend"):
        sample_video(path, Robotics(), tmp_path, backend="gstreamer")


# --- cache ----------------------------------------------------------------------------------------------


def test_rerun_reads_no_video(tmp_path, monkeypatch):
    path = make_video(tmp_path / "clip.avi", 101)
    short = make_video(tmp_path / "short.avi", 19)
    cache = tmp_path / "cache"
    first = sample_video(path, "robotics", cache)
    assert not first.cached
    with pytest.raises(VideoSkipped):
        sample_video(short, "robotics", cache)

    def no_decoding(*args, **kwargs):
        raise AssertionError("the video was read again")

    for module in (video_mod, video_backends):
        for name in ("read_frames", "read_frames_counted", "probe", "probe_header"):
            monkeypatch.setattr(module, name, no_decoding)
    for opener in ("_open_cv", "_open_decord", "_open_torchcodec"):
        monkeypatch.setattr(video_backends, opener, no_decoding)
    real_hash = video_mod.file_sha256
    monkeypatch.setattr(video_mod, "file_sha256", no_decoding)  # not even hashed again: the memo knows it
    again = sample_video(VideoRecord(id="clip-1", source="test", file=str(path)), "robotics", cache)
    assert again.cached and again.frames == first.frames and again.indices == first.indices
    assert again.video_id == "clip-1" and again.backend == first.backend
    with pytest.raises(VideoSkipped, match="19 frames"):  # the probe is remembered too
        sample_video(short, "robotics", cache)
    monkeypatch.setattr(video_mod, "file_sha256", real_hash)
    copy = shutil.copy(path, tmp_path / "renamed.avi")  # same content under another name: same frames
    assert sample_video(copy, "robotics", cache).frames == first.frames
    frames_dir = Path(first.frames[0]).parent
    assert (frames_dir.parent.parent.name, frames_dir.parent.name, frames_dir.name) == (
        first.sha256, first.backend, "robotics")
    assert not [p for p in frames_dir.parent.parent.parent.rglob("*.partial")]


@pytest.mark.parametrize("first_backend, second_backend", [("opencv", "decord"), ("decord", "opencv")])
def test_the_cache_is_kept_per_decoder(tmp_path, first_backend, second_backend):
    """Issue 38: ``--backend decord`` after an OpenCV build reused OpenCV's frames and reported "opencv". Each
    decoder has its own entry, the sample reports the decoder that made its pixels, and the frames are those of
    a clean run of that decoder."""
    require(have_decord(), "decord", "bash .ci/install-video.sh")
    path = make_video(tmp_path / "clip.mp4", 60, fourcc="mp4v")
    cache = tmp_path / "cache"
    first = sample_video(path, Uniform(5), cache, backend=first_backend)
    second = sample_video(path, Uniform(5), cache, backend=second_backend)
    assert (first.backend, second.backend) == (first_backend, second_backend)
    assert not second.cached and set(first.frames).isdisjoint(second.frames)
    clean = sample_video(path, Uniform(5), tmp_path / "clean-cache", backend=second_backend)
    assert [Path(f).read_bytes() for f in clean.frames] == [Path(f).read_bytes() for f in second.frames]
    again = sample_video(path, Uniform(5), cache, backend=first_backend)
    assert again.cached and again.frames == first.frames and again.backend == first_backend


def test_changed_video_and_damaged_cache_are_resampled(tmp_path):
    path = make_video(tmp_path / "clip.avi", 40)
    cache = tmp_path / "cache"
    first = sample_video(path, Uniform(4), cache)
    os.remove(first.frames[1])
    again = sample_video(path, Uniform(4), cache)
    assert not again.cached and Path(again.frames[1]).exists()
    make_video(path, 45)
    os.utime(path, ns=(1, 1))
    changed = sample_video(path, Uniform(4), cache)
    assert changed.sha256 != first.sha256 and changed.frame_count == 45


def test_frame_folders_are_videos(tmp_path):
    folder = make_folder(tmp_path / "episode", 12)
    assert probe(folder) == (12, None, WIDTH, HEIGHT)
    sampled = sample_video(folder, Uniform(4), tmp_path / "cache")
    assert sampled.backend == "frames" and sampled.indices == (0, 4, 7, 11) and sampled.video_id == "episode"
    assert [frame_number(_png(f)) for f in sampled.frames] == [0, 4, 7, 11]
    with pytest.raises(VideoSkipped, match="frame rate is unknown"):
        sample_video(folder, LastFramePerSecond(), tmp_path / "cache")
