"""Frame sampling: the papers' rules for turning a video into an image sequence, with a content-keyed cache.

A **policy** says which frames of an ``n``-frame video to keep (and which videos to leave out altogether):

====================  ===========================================================================================
``daily_life``        Mementos daily-life (NExT-QA): only videos of 400..2,500 frames (inclusive); frame 0, then one
                      every 100 frames: ``0, 100, 200, ...`` (4 frames for 400, 25 for 2,500).
``robotics``          Mementos robotics (Open X-Embodiment): ``n > 100``: one every ``n/20`` frames, i.e. exactly 20
                      frames ``floor(k * n / 20)`` for ``k = 0..19`` (integer arithmetic, so ``n = 101`` gives 20
                      frames, like ``n = 100`` with the other rule, never 21); ``20 <= n <= 100``: one every 5 frames
                      ``0, 5, 10, ...`` (``ceil(n / 5)`` frames); ``n < 20``: left out.
``uniform:N``         ``N`` evenly spaced frames including the first and the last: ``round(k * (n - 1) / (N - 1))``
                      (halves round up); videos with fewer than ``N`` frames are left out (no repeated frames).
``last_per_second``   The last frame of each *full* second: ``ceil(s * fps) - 1`` for ``s = 1..floor(n / fps)``;
                      needs the frame rate (frame folders have none). Predictive reasoning uses it.
====================  ===========================================================================================

A left-out video raises :class:`VideoSkipped` with the reason; builders record it in their skipped list.

**Sampling** (:func:`sample_video`) asks the policy for indices for the video's verified frame count, decodes them
(torchcodec, decord or OpenCV: ``--backend``, ``auto`` the first installed; identical pixels on the codecs tested,
not on every codec: on 10-bit H.264 only torchcodec matches FFmpeg's own decode, see
:mod:`sources.video_backends`) and writes PNGs under
``<cache_dir>/frames/<sha256 of the video's content>/<decoder>/<policy name>/`` (``uniform:16`` is spelt
``uniform-16`` there: colons are not portable in file names). The decoder that really decoded is part of the key
(``frames`` for a frame folder), so ``--backend decord`` after an OpenCV build decodes again rather than reuse
OpenCV's frames, and the ``backend`` a sample reports is always the one that made its pixels. The folder is written
under a
temporary name and renamed when complete, so an interrupted run never leaves a half folder that looks finished,
and a rerun - or another copy of the same video under another name - reads no video at all: the content hash is
memoised by (path, size, modification time) and the probe result is stored beside the frames, so even a video a
policy leaves out is not opened twice. A cold sample opens the video once: the frames for the count the
container claims are decoded together with the last frame, which verifies that count with the same decoder
(:func:`read_frames_counted`); only when the count proves wrong is it counted (:func:`probe`) and the frames
read again. Frame folders (a directory of images in natural order: robot episodes,
comic panels) are accepted wherever a video file is.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol, Union, runtime_checkable

import numpy as np

from .atomic import atomic_directory
from .errors import ConfigError, MirageError, SourceError
from .hashing import file_sha256
from .png import encode_png
from .records import VideoRecord
from .video_backends import (
    BACKENDS, FOLDER_BACKEND, IMAGE_SUFFIXES, VIDEO_SUFFIXES, VideoInfo, frame_images, have_decord, have_opencv,
    is_video_file, natural_key, probe, probe_header, read_frames, read_frames_counted, resolve_backend,
)

__all__ = [
    "BACKENDS", "IMAGE_SUFFIXES", "VIDEO_SUFFIXES", "DailyLife", "LastFramePerSecond", "Policy", "Robotics",
    "SampledVideo", "Uniform", "VideoInfo", "VideoSkipped", "content_sha256", "description_beside", "encode_png",
    "frame_images",
    "have_decord",
    "have_opencv", "is_video_file", "natural_key", "policy_by_name", "policy_names", "probe", "read_frames",
    "resolve_backend", "sample_video",
]

OnError = Literal["skip", "fail"]
FRAMES_DIR = "frames"
META_FILE = "frames.json"
"""Written last inside a sampled-frames folder: its presence marks the folder complete."""
PROBE_FILE = "probe.json"
HASHES_DIR = "hashes"
DESCRIPTION_FILE = "description.txt"


class VideoSkipped(MirageError):
    """A video a policy leaves out (length outside its range) or, with ``on_error="skip"``, one that cannot be
    read (missing, empty, corrupt). ``str()`` is one line: ``"<file>: <reason>"`` (or the reason alone)."""

    def __init__(self, reason: str, file: str | Path = "") -> None:
        self.reason = reason
        self.file = str(file)
        super().__init__(f"{self.file}: {reason}" if self.file else reason)


# --- policies -------------------------------------------------------------------------------------------


@runtime_checkable
class Policy(Protocol):
    """Which frames to keep: ``indices(frame_count, fps)`` in increasing order, or :class:`VideoSkipped`."""

    name: str

    def indices(self, frame_count: int, fps: float | None) -> list[int]: ...


def _require_frames(frame_count: int) -> int:
    if isinstance(frame_count, bool) or not isinstance(frame_count, (int, np.integer)) or frame_count < 1:
        raise VideoSkipped(f"video has no frames (frame count {frame_count!r})")
    return int(frame_count)


@dataclass(frozen=True)
class DailyLife:
    """Mementos daily-life rule (NExT-QA videos): 400..2,500 frames, frame 0 then every 100th."""

    name: str = field(default="daily_life", init=False)
    MIN_FRAMES: ClassVar[int] = 400
    MAX_FRAMES: ClassVar[int] = 2500
    STEP: ClassVar[int] = 100

    def indices(self, frame_count: int, fps: float | None = None) -> list[int]:
        n = _require_frames(frame_count)
        if not self.MIN_FRAMES <= n <= self.MAX_FRAMES:
            raise VideoSkipped(f"{n} frames is outside the daily-life range {self.MIN_FRAMES}..{self.MAX_FRAMES}")
        return list(range(0, n, self.STEP))


@dataclass(frozen=True)
class Robotics:
    """Mementos robotics rule: 20 frames ``floor(k*n/20)`` above 100 frames, every 5th from 20 to 100, else out."""

    name: str = field(default="robotics", init=False)
    MIN_FRAMES: ClassVar[int] = 20
    SHORT_MAX: ClassVar[int] = 100
    SHORT_STEP: ClassVar[int] = 5
    LONG_SAMPLES: ClassVar[int] = 20

    def indices(self, frame_count: int, fps: float | None = None) -> list[int]:
        n = _require_frames(frame_count)
        if n < self.MIN_FRAMES:
            raise VideoSkipped(f"{n} frames is below the robotics minimum of {self.MIN_FRAMES}")
        if n <= self.SHORT_MAX:
            return list(range(0, n, self.SHORT_STEP))
        return [k * n // self.LONG_SAMPLES for k in range(self.LONG_SAMPLES)]


@dataclass(frozen=True)
class Uniform:
    """``n`` evenly spaced frames, first and last included (``n = 1``: the first frame)."""

    n: int
    name: str = field(init=False)

    def __post_init__(self) -> None:
        if isinstance(self.n, bool) or not isinstance(self.n, (int, np.integer)) or self.n < 1:
            raise ConfigError(f"uniform frame count must be a positive integer, got {self.n!r}")
        object.__setattr__(self, "name", f"uniform:{int(self.n)}")

    def indices(self, frame_count: int, fps: float | None = None) -> list[int]:
        total = _require_frames(frame_count)
        n = int(self.n)
        if total < n:
            raise VideoSkipped(f"{total} frames is fewer than the {n} uniform samples asked for")
        if n == 1:
            return [0]
        # round(k * (total - 1) / (n - 1)) with halves rounded up, in integers (no float drift on long videos)
        return [(2 * k * (total - 1) + (n - 1)) // (2 * (n - 1)) for k in range(n)]


@dataclass(frozen=True)
class LastFramePerSecond:
    """The last frame of every full second: ``ceil(s * fps) - 1`` for ``s = 1..floor(n / fps)``."""

    name: str = field(default="last_per_second", init=False)

    def indices(self, frame_count: int, fps: float | None) -> list[int]:
        n = _require_frames(frame_count)
        if fps is None or not math.isfinite(fps) or fps <= 0:
            raise VideoSkipped("the frame rate is unknown, so seconds cannot be told apart")
        seconds = int(math.floor(n / fps + 1e-9))
        if seconds < 1:
            raise VideoSkipped(f"{n} frames at {fps:g} fps is shorter than one second")
        # the small epsilon keeps 29.97 * 100 = 2996.9999... from rounding the wrong way
        return [min(n - 1, math.ceil(s * fps - 1e-9) - 1) for s in range(1, seconds + 1)]


_NAMED: dict[str, Policy] = {"daily_life": DailyLife(), "robotics": Robotics(), "last_per_second": LastFramePerSecond()}


def policy_names() -> tuple[str, ...]:
    """The names :func:`policy_by_name` accepts (``uniform:N`` for any positive ``N``)."""
    return ("daily_life", "robotics", "uniform:N", "last_per_second")


def policy_by_name(name: str) -> Policy:
    """The policy called ``name``; a :class:`ConfigError` listing the valid names otherwise."""
    text = str(name).strip()
    if text in _NAMED:
        return _NAMED[text]
    match = re.fullmatch(r"uniform:(\d+)", text)
    if match and int(match.group(1)) >= 1:
        return Uniform(int(match.group(1)))
    raise ConfigError(f"unknown frame-sampling policy {name!r}; valid: {', '.join(policy_names())} (N >= 1)")


# --- sampling -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SampledVideo:
    """The frames a policy kept, as PNG files in the cache."""

    video_id: str
    frames: tuple[str, ...]
    """PNG paths, one per index, in order."""
    indices: tuple[int, ...]
    frame_count: int
    fps: float | None
    backend: str
    """Decoder that produced the frames: ``"torchcodec"``, ``"decord"``, ``"opencv"`` or ``"frames"`` (a frame
    folder); part of the cache key, so a cache hit comes from the decoder asked for."""
    policy: str = ""
    sha256: str = ""
    """Content hash of the video (of a frame folder: of its file names and bytes): the cache key."""
    width: int = 0
    height: int = 0
    cached: bool = False
    """True when the frames came from the cache (no video was read)."""


VideoLike = Union[VideoRecord, str, Path]


def sample_video(
    video: VideoLike,
    policy: Policy | str,
    cache_dir: str | Path | None,
    backend: str = "auto",
    on_error: OnError = "skip",
) -> SampledVideo:
    """Sample ``video`` (a :class:`VideoRecord`, a video file or a frame folder) with ``policy``.

    Returns the cached frames, decoding only on a cache miss. Raises :class:`VideoSkipped` when the policy leaves
    the video out (always: that is selection, not an error) and, with ``on_error="skip"``, when the video cannot
    be read; with ``on_error="fail"`` an unreadable video raises :class:`SourceError`. ``cache_dir=None`` means
    ``$MIRAGE_CACHE_DIR`` or ``~/.cache/mirage``. The frame rate a record gives is used when the
    file has none (frame folders), for ``last_per_second``.
    """
    if on_error not in ("skip", "fail"):
        raise ConfigError(f"on_error must be 'skip' or 'fail', got {on_error!r}")
    chosen = policy_by_name(policy) if isinstance(policy, str) else policy
    if backend not in BACKENDS:
        raise ConfigError(f"unknown video backend {backend!r}; valid: {', '.join(BACKENDS)}")
    video_id, path = _identify(video)
    known_fps = video.fps if isinstance(video, VideoRecord) else None
    root = _cache_root(cache_dir)
    try:
        return _sample(video_id, path, chosen, root, backend, known_fps)
    except SourceError as e:
        if on_error == "fail":
            raise
        raise VideoSkipped(e.problem if not e.record else f"{e.record}: {e.problem}", e.file) from e
    except VideoSkipped as e:
        if e.file:
            raise
        raise VideoSkipped(e.reason, path) from e


def _identify(video: VideoLike) -> tuple[str, Path]:
    if isinstance(video, VideoRecord):
        return video.id, Path(video.file)
    path = Path(video)
    return (path.name if path.is_dir() else path.stem), path


def _cache_root(cache_dir: str | Path | None) -> Path:
    if cache_dir is None:
        from .demo import default_cache_dir

        return default_cache_dir() / FRAMES_DIR
    return Path(cache_dir).expanduser() / FRAMES_DIR


def _sample(video_id: str, path: Path, policy: Policy, root: Path, backend: str,
            known_fps: float | None) -> SampledVideo:
    if not path.exists():
        raise SourceError(path, "", "video file not found")
    try:
        digest = content_sha256(path, root / HASHES_DIR)
    except OSError as e:  # permissions, a file vanishing mid-read, an unreadable disk
        raise SourceError(path, "", f"cannot read video: {e.strerror or e}") from e
    home = root / digest
    decoder = FOLDER_BACKEND if path.is_dir() else resolve_backend(backend)
    target = home / decoder / _safe_name(policy.name)
    hit = _read_meta(target)
    if hit is not None:
        return _sampled(video_id, target, hit, policy.name, digest, cached=True)
    info = _stored_probe(home)
    counted = None if info is not None or decoder == FOLDER_BACKEND else \
        _read_counted(path, policy, decoder, known_fps)
    if counted is not None:  # the usual cold path: one decoder opened, the count verified on the way
        probed, indices, frames = counted
        _store_probe(home, probed)
        info = _with_rate(probed, known_fps)
    else:
        info = _with_rate(info or _cached_probe(path, home), known_fps)
        indices = policy.indices(info.frame_count, info.fps)
        frames = read_frames(path, indices, decoder if decoder != FOLDER_BACKEND else "auto")
    meta = {"indices": indices, "frame_count": info.frame_count, "fps": info.fps, "width": info.width,
            "height": info.height, "backend": decoder, "files": [f"{i:06d}.png" for i in indices]}
    _write_atomically(target, frames, meta)
    return _sampled(video_id, target, meta, policy.name, digest, cached=False)


def _sampled(video_id: str, folder: Path, meta: dict[str, Any], policy: str, digest: str,
             cached: bool) -> SampledVideo:
    return SampledVideo(
        video_id=video_id, frames=tuple(str(folder / name) for name in meta["files"]),
        indices=tuple(meta["indices"]), frame_count=meta["frame_count"], fps=meta["fps"], backend=meta["backend"],
        policy=policy, sha256=digest, width=meta["width"], height=meta["height"], cached=cached,
    )


def _safe_name(policy_name: str) -> str:
    """A policy name as a folder name (``uniform:16`` -> ``uniform-16``: colons are not portable)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "-", policy_name)


def _read_meta(folder: Path) -> dict[str, Any] | None:
    """The metadata of a complete frames folder, or ``None`` (absent or damaged: it is then re-sampled)."""
    try:
        meta = json.loads((folder / META_FILE).read_text())
        if all((folder / name).is_file() for name in meta["files"]):
            return meta
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


def _write_atomically(target: Path, frames: list[np.ndarray], meta: dict[str, Any]) -> None:
    """Write the PNGs and ``frames.json`` into a temporary sibling folder, then rename it to ``target``."""
    with atomic_directory(target, lambda t: _read_meta(t) is not None) as tmp:
        # numpy, the deflate libraries and file writes release the GIL: on an idle machine frames are encoded
        # and written on every core at once
        def write(name: str, frame: np.ndarray) -> None:
            (tmp / name).write_bytes(encode_png(frame))

        with ThreadPoolExecutor(max(1, min(len(frames), os.cpu_count() or 1))) as pool:
            list(pool.map(write, meta["files"], frames))
        (tmp / META_FILE).write_text(json.dumps(meta, sort_keys=True))


def _read_counted(path: Path, policy: Policy, decoder: str, known_fps: float | None
                  ) -> tuple[VideoInfo, list[int], list[np.ndarray]] | None:
    """Probe and decode in one pass: the policy's frames for the frame count the container claims, read by
    :func:`read_frames_counted`, which also verifies that count with the same decoder. ``None`` (then the caller
    probes and reads separately, as before) when the container gives no count, the count proves wrong, or the
    policy leaves the video out at the claimed count (only a verified count may skip a video)."""
    header = probe_header(path)
    if header is None:
        return None
    info = _with_rate(header, known_fps)
    try:
        indices = policy.indices(info.frame_count, info.fps)
    except VideoSkipped:
        return None
    frames = read_frames_counted(path, indices, header.frame_count, decoder)
    return None if frames is None else (header, indices, frames)


def _with_rate(info: VideoInfo, known_fps: float | None) -> VideoInfo:
    """A frame folder has no rate of its own; the record's rate is used when the file gives none."""
    return info._replace(fps=float(known_fps)) if info.fps is None and known_fps else info


def _stored_probe(home: Path) -> VideoInfo | None:
    """The probe result stored beside the frames of this content, or ``None``."""
    try:
        return VideoInfo(*json.loads((home / PROBE_FILE).read_text()))
    except (OSError, ValueError, TypeError):
        return None


def _store_probe(home: Path, info: VideoInfo) -> None:
    home.mkdir(parents=True, exist_ok=True)
    _write_text_atomically(home / PROBE_FILE, json.dumps(list(info)))


def _cached_probe(path: Path, home: Path) -> VideoInfo:
    """:func:`probe`, remembered beside the frames (keyed by content) so a rerun opens no video."""
    info = _stored_probe(home)
    if info is None:
        info = probe(path)
        _store_probe(home, info)
    return info


def _write_text_atomically(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


# --- content hash ---------------------------------------------------------------------------------------


def content_sha256(path: str | Path, memo_dir: str | Path | None = None) -> str:
    """Hex SHA-256 of a video file's bytes (:func:`sources.hashing.file_sha256`), or of a frame folder (of its
    image names and their hashes, in order).

    With ``memo_dir`` the result is remembered under a key of the absolute path, size and modification time
    (nanoseconds) of the file - of every image for a folder - so hashing a large unchanged video again costs a
    ``stat``, not a read. Any change to the file changes the key.
    """
    p = Path(path)
    files = frame_images(p) if p.is_dir() else [p]
    memo: Path | None = None
    if memo_dir is not None:
        stamp = hashlib.sha256(str(p.resolve()).encode())
        for f in files:
            st = f.stat()
            stamp.update(f"\0{f.name}\0{st.st_size}\0{st.st_mtime_ns}".encode())
        memo = Path(memo_dir) / stamp.hexdigest()
        try:
            value = memo.read_text().strip()
            if re.fullmatch(r"[0-9a-f]{64}", value):
                return value
        except OSError:
            pass
    if p.is_dir():
        digest = hashlib.sha256()
        for f in files:
            digest.update(f"{f.name}\0{file_sha256(f)}\n".encode())
        value = digest.hexdigest()
    else:
        value = file_sha256(p)
    if memo is not None:
        memo.parent.mkdir(parents=True, exist_ok=True)
        _write_text_atomically(memo, value)
    return value


# --- reference text beside a video -----------------------------------------------------------------------


def description_path(video: str | Path) -> Path:
    """Where the description of ``video`` is read from: ``<folder>/description.txt`` for a frame folder (or comic),
    ``<name>.txt`` beside a video file."""
    p = Path(video)
    return p / DESCRIPTION_FILE if p.is_dir() else p.with_suffix(".txt")


def description_beside(video: str | Path) -> str | None:
    """The human description stored with a video, if any: ``<folder>/description.txt`` for a frame folder,
    ``<name>.txt`` beside a video file. Robot and comic readers put it in ``meta["description"]`` so a builder
    has a reference answer for sources that ship none (Mementos' own descriptions were written by people)."""
    text_file = description_path(video)
    if not text_file.is_file():
        return None
    try:
        text = text_file.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as e:
        raise SourceError(text_file, "", f"cannot read description: {e}") from e
    return text or None
