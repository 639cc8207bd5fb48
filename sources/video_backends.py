"""Decoders behind :mod:`sources.video`: torchcodec, decord, OpenCV and folders of frame images.

* **torchcodec** (``VideoDecoder(seek_mode="exact").get_frames_at``): the PyTorch team's FFmpeg binding, exact
  frame seeking, maintained (decord's last release is from 2021); chosen first by ``auto`` where it loads (it
  needs the torch it was built for and FFmpeg's shared libraries). Frames equal decord's and OpenCV's on
  lossless videos (tested).

Three ways to get frame ``i`` of a "video", all returning RGB ``uint8`` arrays of shape ``(h, w, 3)``:

* **decord** (``decord.VideoReader.get_batch``): seeks through the container index and decodes only from the
  key frame before each wanted frame; the default where it is installed. ``benchmarks/bench_frames.py``, 20
  frames of a 60-second 320x240 MPEG-4 video: decord 38 ms, OpenCV seek 67 ms, sequential decode 252 ms at best;
  but decord hands every frame over between its decoder thread and the caller and needs both on a core of their
  own: pinned to one core it takes 150 ms, on cores busy with other processes it is erratic (34 or 170 ms), and
  two decord processes on two cores reach only ~3x sequential throughput where OpenCV seek reaches ~4x. Give
  each decord process two cores (or run it at higher priority). It is an optional extra: imported only when used.
* **OpenCV** (``cv2.VideoCapture``): seeks with ``CAP_PROP_POS_FRAMES`` when the next wanted frame is more than
  :data:`SEEK_GAP` frames ahead and grabs forward otherwise (a grab decodes without the colour conversion, so it
  is cheaper than a seek that re-decodes a whole group of pictures). After every seek the position OpenCV
  reports is checked; a file where seeking is not frame-accurate (variable frame rate, broken index) is read
  again sequentially, which is slow but right. This is the working default without decord. OpenCV's own seek
  backs off 16 frames before the target and decodes forward from the key frame before that, so one seek costs
  about 16 + half a group of pictures of decoding: with MPEG-4's 12-frame groups that caps it near 4x faster than
  sequential decode for frames 90 apart (decord decodes from the key frame itself). With key frames seconds
  apart (camera H.264) a seek costs more than grabbing across the gap; once the seeks made prove dearer than
  the gap's frames would be to decode, the gap is grabbed (see :func:`_opencv_frames`).
* **frame folders**: a directory of images (robot episodes, comic panels) in natural order (``frame2`` before
  ``frame10``), read with Pillow.

The decoders all go through FFmpeg and return identical pixels for the same file and indices on MJPG, MPEG-4
part 2 "mp4v" and FFV1 (``tests/sources/test_video.py``), but not on every codec: on 10-bit H.264 only
torchcodec returns FFmpeg's own decode; decord (0.13 on average), OpenCV 5 (1.19) and OpenCV 4.12 (1.6, with its
bottom 3 rows black) differ from it (issue 38's measurement). That is one more reason ``auto`` takes torchcodec
first where it loads, and why the frame cache and the items' provenance are keyed by the decoder actually used
(:mod:`sources.video`): frames of two decoders are never mixed up.

Everything a user can get wrong (a missing, empty, corrupt or truncated file; a frame past the end) raises a
:class:`~sources.errors.SourceError` whose one line names the file and the problem.
"""

from __future__ import annotations

import re
import statistics
import tempfile
from functools import lru_cache
from pathlib import Path
from time import perf_counter
from typing import Any, NamedTuple, Sequence

import numpy as np

from .errors import ConfigError, SourceError

VIDEO_SUFFIXES: tuple[str, ...] = (".mp4", ".avi", ".mkv", ".mov", ".webm", ".m4v", ".mpg", ".mpeg")
"""File name endings read as video files."""
IMAGE_SUFFIXES: tuple[str, ...] = (".png", ".jpg", ".jpeg", ".bmp", ".webp", ".tif", ".tiff")
"""File name endings read as frames of a frame folder."""
BACKENDS: tuple[str, ...] = ("auto", "torchcodec", "decord", "opencv")
FOLDER_BACKEND = "frames"
"""What :func:`resolve_backend` reports for a frame folder (neither decoder is involved)."""
SEEK_GAP = 16
"""OpenCV grabs forward instead of seeking when the next wanted frame is at most this many frames ahead: a seek
decodes again from the previous key frame (MPEG-4 groups are typically 12-250 frames), a grab decodes one."""
INSTALL_HINT = "pip install opencv-python-headless (or: pip install 'mirage-bench[video]')"


class VideoInfo(NamedTuple):
    """What :func:`probe` learns about a video; a plain tuple ``(frame_count, fps, width, height)``."""

    frame_count: int
    fps: float | None
    """Frames per second; ``None`` for frame folders and files that do not say."""
    width: int
    height: int


# --- names and folders ----------------------------------------------------------------------------------


def natural_key(name: str) -> tuple[Any, ...]:
    """Sort key that orders digit runs by value: ``panel2`` before ``panel10``, ``a-9`` before ``a-10``."""
    parts = re.split(r"(\d+)", name.lower())
    return tuple((0, int(p), p) if p.isdigit() else (1, 0, p) for p in parts if p != "")


def frame_images(folder: str | Path) -> list[Path]:
    """The image files directly inside ``folder``, in natural order (hidden files ignored)."""
    root = Path(folder)
    files = [p for p in root.iterdir()
             if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES and not p.name.startswith(".")]
    return sorted(files, key=lambda p: natural_key(p.name))


def is_video_file(path: str | Path) -> bool:
    """True for a file whose name ends in one of :data:`VIDEO_SUFFIXES`."""
    p = Path(path)
    return p.is_file() and p.suffix.lower() in VIDEO_SUFFIXES and not p.name.startswith(".")


def video_files_by_stem(videos_dir: str | Path) -> dict[str, Path]:
    """File name without suffix -> path, for every video file anywhere below ``videos_dir`` (walked in sorted
    order, so which of two same-named files wins does not depend on the file system); an annotation names its
    video by id, and a downloader may nest the files in sub-folders (ActivityNet Captions, Charades)."""
    videos = Path(videos_dir)
    if not videos.is_dir():
        raise SourceError(videos, "", "videos folder not found")
    return {p.stem: p for p in sorted(videos.rglob("*")) if p.suffix.lower() in VIDEO_SUFFIXES and p.is_file()}


# --- availability ---------------------------------------------------------------------------------------


@lru_cache(maxsize=None)
def have_decord() -> bool:
    """True when ``import decord`` works (it has Linux/Windows x86-64 wheels only)."""
    try:
        import decord  # noqa: F401
    except Exception:  # ImportError, or a broken native library
        return False
    return True


@lru_cache(maxsize=None)
def have_torchcodec() -> bool:
    """True when torchcodec's decoder imports (the package and a torch it was built for). FFmpeg's shared
    libraries (4 to 8; on Debian ``apt-get install ffmpeg``) load only when a video is opened: whether it really
    decodes is :func:`backend_problem`'s question."""
    try:
        from torchcodec.decoders import VideoDecoder  # noqa: F401
    except Exception:  # ImportError, or a RuntimeError when no FFmpeg library / an ABI mismatch
        return False
    return True


@lru_cache(maxsize=None)
def have_opencv() -> bool:
    """True when ``import cv2`` works."""
    try:
        import cv2  # noqa: F401
    except Exception:
        return False
    return True


DECODERS: tuple[str, ...] = ("torchcodec", "decord", "opencv")
"""The decoders, in the order ``auto`` tries them."""


def resolve_backend(backend: str) -> str:
    """``"torchcodec"``, ``"decord"`` or ``"opencv"`` for a backend name; ``"auto"`` picks the first that really
    decodes (:func:`backend_problem`), in that order: torchcodec (maintained by the PyTorch team, exact
    seeking), decord (last release 2021), OpenCV.

    A :class:`ConfigError` names the valid choices for an unknown name, and says in one line why a named
    backend cannot decode (not installed, or its libraries do not load).
    """
    if backend not in BACKENDS:
        raise ConfigError(f"unknown video backend {backend!r}; valid: {', '.join(BACKENDS)}")
    if backend == "auto":
        for name in DECODERS:
            if backend_problem(name) is None:
                return name
        raise ConfigError(f"no video decoder is installed: {INSTALL_HINT}")
    problem = backend_problem(backend)
    if problem is not None:
        raise ConfigError(problem)
    return backend


@lru_cache(maxsize=None)
def backend_problem(name: str) -> str | None:
    """``None`` when decoder ``name`` decodes a small video made for the purpose, else why not (one line).

    Checked once per process. Importing is not enough: torchcodec imports without FFmpeg's shared libraries and
    loads them only when it opens a video, so ``auto`` chose it and then called every video corrupt (issue 51).
    The probe video is written with OpenCV, or with torchcodec's own encoder where OpenCV is missing; with
    neither, a decoder that imports is taken on trust."""
    installed = {"torchcodec": have_torchcodec, "decord": have_decord, "opencv": have_opencv}[name]
    if not installed():
        return {
            "torchcodec": "video backend 'torchcodec' is not installed: pip install 'mirage-bench[video-torchcodec]' "
                          "(it needs the torch it was built for, and FFmpeg: apt-get install ffmpeg)",
            "decord": "video backend 'decord' is not installed: pip install decord (x86-64 only)",
            "opencv": f"video backend 'opencv' is not installed: {INSTALL_HINT}",
        }[name]
    with tempfile.TemporaryDirectory(prefix="mirage-probe-video-") as folder:
        video = _probe_video(Path(folder))
        if video is None:
            return None
        try:
            frame = _READERS[name](video, [1])[1]
        except ConfigError as exc:
            return str(exc)
        except Exception as exc:  # noqa: BLE001  (a decoder that fails on a known-good video is unusable)
            return f"video backend {name!r} cannot decode a test video: {_first_line(exc)}"
    if frame.shape != (32, 32, 3) or not 180 <= float(frame.mean()) <= 220:
        return f"video backend {name!r} decodes a 32x32 grey test video wrongly ({frame.shape})"
    return None


def _probe_video(folder: Path) -> Path | None:
    """A two-frame 32x32 MJPG video in ``folder`` (black, then grey 200; decord fails on 16x16 ones), or ``None``
    if nothing here can write one."""
    frames = np.zeros((2, 32, 32, 3), np.uint8)
    frames[1] = 200
    if have_opencv():
        path = folder / "probe.avi"
        if write_video(path, frames, fps=10.0) == 2:
            return path
    if have_torchcodec():
        try:
            import torch
            from torchcodec.encoders import VideoEncoder

            path = folder / "probe.mp4"
            VideoEncoder(torch.from_numpy(frames).permute(0, 3, 1, 2).contiguous(), frame_rate=10).to_file(str(path))
            return path
        except Exception:  # noqa: BLE001  (FFmpeg missing: then nothing decodes either; see backend_problem)
            return None
    return None


def ffmpeg_problem(exc: BaseException) -> str | None:
    """The one line for torchcodec failing to load FFmpeg's shared libraries (``exc`` is what it raised on
    opening a video), naming the first library the loader could not open; ``None`` for any other error."""
    text = str(exc)
    if "libtorchcodec" not in text:
        return None
    missing = re.search(r"(lib(?:av|sw|postproc)[a-z]*)\.so", text)
    library = missing.group(1) if missing else "libavutil"
    return (f"torchcodec cannot load FFmpeg's libraries ({library}): apt-get install ffmpeg, or --backend decord")


# --- probing --------------------------------------------------------------------------------------------


def probe(path: str | Path) -> VideoInfo:
    """``(frame_count, fps, width, height)`` of a video file or a frame folder.

    The frame count is verified, not trusted: OpenCV's ``CAP_PROP_FRAME_COUNT`` comes from the container header
    (or duration x fps) and is wrong for truncated files and some containers. The count ``n`` is accepted when
    frame ``n - 1`` decodes and nothing follows it; otherwise the frames are counted by grabbing them all.
    Uses OpenCV where installed (decord's ``len`` is taken from the index and is not re-checked), else decord.
    """
    p = _existing(path)
    if p.is_dir():
        return _probe_folder(p)
    if have_opencv():
        return _probe_opencv(p)
    if have_decord():
        return _probe_decord(p)
    raise ConfigError(f"no video decoder is installed: {INSTALL_HINT}")


def _existing(path: str | Path) -> Path:
    p = Path(path)
    if not p.exists():
        raise SourceError(p, "", "video file not found")
    if p.is_file() and p.stat().st_size == 0:
        raise SourceError(p, "", "video file is empty (zero-length)")
    return p


def _probe_folder(folder: Path) -> VideoInfo:
    files = frame_images(folder)
    if not files:
        raise SourceError(folder, "", f"frame folder holds no images ({', '.join(IMAGE_SUFFIXES)})")
    height, width = _read_image(files[0]).shape[:2]
    return VideoInfo(len(files), None, width, height)


def _open_cv(path: Path) -> Any:
    import cv2

    cap = cv2.VideoCapture(str(path))
    if not cap.isOpened():
        cap.release()
        raise SourceError(path, "", "cannot open video (corrupt, truncated or not a video file)")
    return cap


def _probe_opencv(path: Path) -> VideoInfo:
    cap = _open_cv(path)
    try:
        claimed = _header_opencv(cap)
        count = claimed.frame_count if claimed.frame_count > 0 and _last_frame_is(cap, claimed.frame_count - 1) \
            else None
    finally:
        cap.release()
    if count is None:
        count = _count_frames_opencv(path)
    if count == 0:
        raise SourceError(path, "", "video has no decodable frames (zero-length or corrupt)")
    return claimed._replace(frame_count=count)


def probe_header(path: str | Path) -> VideoInfo | None:
    """What the container says, nothing decoded: ``(claimed frame count, fps, width, height)`` as OpenCV reads
    them, the values :func:`probe` returns once the count is verified; ``None`` without OpenCV, for a frame
    folder or when the container gives no count. A file that cannot be opened is a :class:`SourceError`."""
    p = _existing(path)
    if p.is_dir() or not have_opencv():
        return None
    cap = _open_cv(p)
    try:
        header = _header_opencv(cap)
    finally:
        cap.release()
    return header if header.frame_count > 0 else None


def _header_opencv(cap: Any) -> VideoInfo:
    import cv2

    claimed = int(cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
    fps = float(cap.get(cv2.CAP_PROP_FPS) or 0.0)
    width, height = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)), int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
    return VideoInfo(max(claimed, 0), fps if fps > 0 else None, width, height)


def _last_frame_is(cap: Any, index: int) -> bool:
    """True when frame ``index`` decodes and no frame follows it."""
    import cv2

    cap.set(cv2.CAP_PROP_POS_FRAMES, index)
    ok, _ = cap.read()
    return bool(ok) and int(cap.get(cv2.CAP_PROP_POS_FRAMES)) == index + 1 and not cap.grab()


def _count_frames_opencv(path: Path) -> int:
    cap = _open_cv(path)
    try:
        count = 0
        while cap.grab():
            count += 1
        return count
    finally:
        cap.release()


def _probe_decord(path: Path) -> VideoInfo:
    reader = _open_decord(path)
    count = len(reader)
    if count == 0:
        raise SourceError(path, "", "video has no decodable frames (zero-length or corrupt)")
    height, width = reader[0].shape[:2]
    fps = float(reader.get_avg_fps() or 0.0)
    return VideoInfo(count, fps if fps > 0 else None, int(width), int(height))


def _open_decord(path: Path) -> Any:
    """A decord reader with one decoding thread: sparse sampling seeks before almost every frame, which flushes
    FFmpeg's frame threads (no gain, measured), and builders parallelise over videos with processes instead."""
    import decord

    try:
        return decord.VideoReader(str(path), ctx=decord.cpu(0), num_threads=1)
    except Exception as e:  # decord raises DECORDError / RuntimeError with a long FFmpeg message
        raise SourceError(path, "", "cannot open video (corrupt, truncated or not a video file)") from e


# --- reading --------------------------------------------------------------------------------------------


def read_frames(path: str | Path, indices: Sequence[int], backend: str = "auto") -> list[np.ndarray]:
    """Frames ``indices`` (any order, repeats allowed) of a video file or frame folder, as RGB ``uint8``
    ``(h, w, 3)`` arrays in the order asked.

    ``backend`` is ``"auto"`` (torchcodec, else decord, else OpenCV: the first installed), ``"torchcodec"``,
    ``"decord"`` or ``"opencv"``; it is ignored
    for frame folders. A frame that cannot be decoded (past the end, a truncated file) is a
    :class:`SourceError`; nothing is returned partially.
    """
    p = _existing(path)
    wanted = _check_indices(p, indices)
    if not wanted:
        return []
    if p.is_dir():
        return _read_folder(p, wanted, list(indices))
    name = resolve_backend(backend)
    try:
        frames = _READERS[name](p, wanted)
    except SourceError as exc:
        raise _unreadable_by(name, p, wanted, exc) from None
    return [frames[i] for i in indices]


def _unreadable_by(name: str, path: Path, wanted: list[int], exc: SourceError) -> SourceError:
    """What to say when decoder ``name`` refuses frames ``wanted`` of ``path``: "corrupt" only when every other
    usable decoder refuses them too; otherwise which one reads them (a codec or container one FFmpeg build
    lacks). The other decoder is asked for the same frames, not just the first: a torn frame near the end of a
    truncated file fails every decoder, while frame 0 still decodes. A frame past the end is the caller's
    error, said as it is."""
    if not exc.problem.startswith(_REFUSED):
        return exc
    for other in DECODERS:
        if other == name or backend_problem(other) is not None:
            continue
        try:
            _READERS[other](path, wanted)
        except (SourceError, ConfigError):
            continue
        return SourceError(path, "", f"the {name} decoder cannot read it, {other} can: --backend {other}")
    return exc


def read_frames_counted(path: str | Path, indices: Sequence[int], frame_count: int,
                        backend: str = "auto") -> list[np.ndarray] | None:
    """:func:`read_frames` of a video file that also verifies, in the same pass, that it has exactly
    ``frame_count`` frames (the count :func:`probe_header` read from the container); ``None`` when it has not,
    or when anything fails: the caller then probes (:func:`probe`) and reads again, the slow, always-right way.

    The check is :func:`probe`'s own - frame ``frame_count - 1`` decodes and no frame follows it - made with the
    decoder that reads the frames, so the video is opened once and the last frame is decoded on the way (for
    H.264 with key frames 10 s apart, :func:`probe`'s separate seek to the end decoded up to a whole group of
    pictures again: 150 ms of a 950-ms sample, issue #17). "No frame follows" is the decoder's own count:
    torchcodec's exact-mode scan of every packet, decord's frame index, OpenCV's failing ``grab()``.
    """
    p = _existing(path)
    wanted = _check_indices(p, indices)
    if frame_count < 1 or p.is_dir() or (wanted and wanted[-1] >= frame_count):
        return None
    with_last = sorted(set(wanted) | {frame_count - 1})
    counted = {"torchcodec": _counted_torchcodec, "decord": _counted_decord, "opencv": _counted_opencv}
    try:
        frames = counted[resolve_backend(backend)](p, with_last, frame_count)
    except SourceError:
        return None
    return None if frames is None else [frames[int(i)] for i in indices]


def _check_indices(path: Path, indices: Sequence[int]) -> list[int]:
    """The distinct indices in increasing order; a :class:`SourceError` for a negative or non-integer one."""
    for i in indices:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or i < 0:
            raise SourceError(path, "", f"frame index {i!r} is not a non-negative integer")
    return sorted({int(i) for i in indices})


def _read_folder(folder: Path, wanted: list[int], indices: list[int]) -> list[np.ndarray]:
    files = frame_images(folder)
    if wanted[-1] >= len(files):
        raise SourceError(folder, f"frame {wanted[-1]}", f"past the end: the folder holds {len(files)} images")
    frames = {i: _read_image(files[i]) for i in wanted}
    return [frames[int(i)] for i in indices]


def _read_image(path: Path) -> np.ndarray:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as image:
            return np.asarray(image.convert("RGB"), dtype=np.uint8).copy()
    except (OSError, UnidentifiedImageError) as e:
        raise SourceError(path, "", f"cannot read image: {e}") from e


def _read_decord(path: Path, wanted: list[int]) -> dict[int, np.ndarray]:
    reader = _open_decord(path)
    if wanted[-1] >= len(reader):
        raise SourceError(path, f"frame {wanted[-1]}", f"past the end: the video has {len(reader)} frames")
    return _decord_frames(reader, path, wanted)


def _counted_decord(path: Path, wanted: list[int], frame_count: int) -> dict[int, np.ndarray] | None:
    reader = _open_decord(path)
    return _decord_frames(reader, path, wanted) if len(reader) == frame_count else None


def _decord_frames(reader: Any, path: Path, wanted: list[int]) -> dict[int, np.ndarray]:
    try:
        batch = reader.get_batch(wanted)
    except Exception as e:
        raise SourceError(path, "", f"cannot decode frames (corrupt or truncated video): {_first_line(e)}") from e
    array = batch.asnumpy() if hasattr(batch, "asnumpy") else np.asarray(batch)  # a global bridge may be set
    return {i: np.ascontiguousarray(array[k]) for k, i in enumerate(wanted)}


def _open_torchcodec(path: Path) -> Any:
    """torchcodec's ``VideoDecoder`` on one thread, frames as ``(h, w, 3)``.

    ``seek_mode="exact"`` scans the file once for an exact frame index (what the policies' indices mean);
    one FFmpeg thread, because builders parallelise over videos with processes (as for decord)."""
    from torchcodec.decoders import VideoDecoder

    try:
        return VideoDecoder(str(path), seek_mode="exact", num_ffmpeg_threads=1, dimension_order="NHWC")
    except Exception as e:
        problem = ffmpeg_problem(e)
        if problem:  # not the file's fault: no video opens
            raise ConfigError(problem) from None
        raise SourceError(path, "", "cannot open video (corrupt, truncated or not a video file)") from e


def _read_torchcodec(path: Path, wanted: list[int]) -> dict[int, np.ndarray]:
    """torchcodec's ``VideoDecoder.get_frames_at`` (exact seeking, one batch), as RGB ``(h, w, 3)``."""
    decoder = _open_torchcodec(path)
    count = decoder.metadata.num_frames
    if count is not None and wanted[-1] >= count:
        raise SourceError(path, f"frame {wanted[-1]}", f"past the end: the video has {count} frames")
    return _torchcodec_frames(decoder, path, wanted)


def _counted_torchcodec(path: Path, wanted: list[int], frame_count: int) -> dict[int, np.ndarray] | None:
    decoder = _open_torchcodec(path)
    return _torchcodec_frames(decoder, path, wanted) if decoder.metadata.num_frames == frame_count else None


def _torchcodec_frames(decoder: Any, path: Path, wanted: list[int]) -> dict[int, np.ndarray]:
    try:
        batch = decoder.get_frames_at(wanted).data.numpy()
    except Exception as e:
        raise SourceError(path, "", f"cannot decode frames (corrupt or truncated video): {_first_line(e)}") from e
    return {i: np.ascontiguousarray(batch[k]) for k, i in enumerate(wanted)}


def _read_opencv(path: Path, wanted: list[int]) -> dict[int, np.ndarray]:
    """Seek-or-grab reading (see the module docstring); sequential re-read when a seek proves inaccurate."""
    cap = _open_cv(path)
    try:
        frames = _opencv_frames(cap, path, wanted)
    finally:
        cap.release()
    return read_sequential(path, wanted) if frames is None else frames


_REFUSED = ("cannot open video", "cannot decode frames")
"""How a decoder's refusal of a whole file starts (the "corrupt" lines of :func:`_open_cv` and the others)."""
_READERS = {"torchcodec": _read_torchcodec, "decord": _read_decord, "opencv": _read_opencv}


def _counted_opencv(path: Path, wanted: list[int], frame_count: int) -> dict[int, np.ndarray] | None:
    cap = _open_cv(path)
    try:
        frames = _opencv_frames(cap, path, wanted)
        return frames if frames is not None and not cap.grab() else None  # wanted[-1] is frame_count - 1
    finally:
        cap.release()


def _opencv_frames(cap: Any, path: Path, wanted: list[int]) -> dict[int, np.ndarray] | None:
    """The wanted frames from an open capture; ``None`` when a seek lands on another frame than asked (seeking
    is not frame-accurate).

    A gap of at most :data:`SEEK_GAP` frames is grabbed across. A longer one is sought, unless the seeks made
    so far cost more than decoding the gap would (gap x the cheapest ``read()`` seen): a seek decodes again
    from the key frame before its target, so with key frames seconds apart (camera H.264) grabbing forward 90
    frames is half the cost of seeking (issue #17: 20 frames of a 60-s H.264 video with a key frame every 300,
    1,400 ms seeking every gap against ~800 ms sequential). Both give the same frames (grabbing is the
    reference); the timings only choose which is faster."""
    import cv2

    frames: dict[int, np.ndarray] = {}
    position = 0  # the index of the frame the next read() returns
    seek_seconds: list[float] = []
    frame_seconds = float("inf")  # the cheapest read() so far: one frame decoded and converted
    for index in wanted:
        gap = index - position
        clock = perf_counter()
        if gap > SEEK_GAP and (not seek_seconds or gap * frame_seconds > statistics.fmean(seek_seconds)):
            cap.set(cv2.CAP_PROP_POS_FRAMES, index)
            if int(cap.get(cv2.CAP_PROP_POS_FRAMES)) != index:
                return None
            seek_seconds.append(perf_counter() - clock)
            position = index
        while position < index:
            if not cap.grab():
                raise _past_end(path, index, position)
            position += 1
        clock = perf_counter()
        ok, frame = cap.read()
        if not ok:
            raise _past_end(path, index, position)
        frames[index] = cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)
        frame_seconds = min(frame_seconds, perf_counter() - clock)
        position += 1
    return frames


def read_sequential(path: str | Path, wanted: Sequence[int]) -> dict[int, np.ndarray]:
    """Decode every frame from the start and keep the wanted ones (OpenCV): the slow, always-right reference,
    and the fallback when seeking is not frame-accurate."""
    import cv2

    p = Path(path)
    keep = set(int(i) for i in wanted)
    last = max(keep) if keep else -1
    cap = _open_cv(p)
    try:
        frames: dict[int, np.ndarray] = {}
        for index in range(last + 1):
            if index in keep:
                ok, frame = cap.read()
                if ok:
                    frames[index] = cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)
            else:
                ok = cap.grab()
            if not ok:
                raise _past_end(p, last, index)
        return frames
    finally:
        cap.release()


def _past_end(path: Path, index: int, decoded: int) -> SourceError:
    return SourceError(path, f"frame {index}",
                       f"cannot decode it (only {decoded} frames could be read: past the end, truncated or corrupt)")


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0][:200] if text else type(e).__name__


# --- writing --------------------------------------------------------------------------------------------


def write_video(path: str | Path, frames: Any, fps: float, fourcc: str = "MJPG") -> int:
    """Write RGB ``uint8`` frames (an iterable of equal-sized ``(h, w, 3)`` arrays) as a video with OpenCV.

    Used by the demo videos, the tests and the benchmark, which all make their own videos instead of shipping
    any. ``fourcc`` is the codec: ``"FFV1"`` (lossless, in ``.avi``/``.mkv``), ``"MJPG"`` (``.avi``) or ``"mp4v"``
    (``.mp4``; OpenCV's FFmpeg writer puts a key frame every 12 frames and ignores
    ``VIDEOWRITER_PROP_KEY_INTERVAL`` for it). Returns the number of frames written; a :class:`ConfigError` when
    OpenCV cannot encode it.
    """
    if not have_opencv():
        raise ConfigError(f"writing videos needs OpenCV: {INSTALL_HINT}")
    import cv2

    writer = None
    count = 0
    try:
        for frame in frames:
            if writer is None:
                height, width = frame.shape[:2]
                writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*fourcc), float(fps), (width, height))
                if not writer.isOpened():
                    raise ConfigError(f"OpenCV cannot write {fourcc!r} video to {path}")
            writer.write(cv2.cvtColor(np.ascontiguousarray(frame, dtype=np.uint8), cv2.COLOR_RGB2BGR))
            count += 1
    finally:
        if writer is not None:
            writer.release()
    return count
