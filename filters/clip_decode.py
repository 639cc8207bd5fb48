"""Image decoding and preprocessing for the CLIP stage: the two decode paths and what feeds them.

Two paths, named in the embedding cache's identity by :func:`decode_path` because their pixels differ slightly:

* ``"pil-draft"`` (CPU): PIL in DataLoader workers (:class:`ImageFiles`), JPEGs decoded at a reduced DCT scale
  when the model's input is at most half their size (:func:`open_for_model`).
* ``"nvjpeg"`` (CUDA): threads read the files a few batches ahead and decode their JPEGs on the GPU in one
  batched ``torchvision.io.decode_jpeg`` call per batch (nvJPEG; baseline JPEGs on the A100/H100 hardware
  decoder), :func:`read_and_decode`; the main thread resizes, centre-crops and normalises them there, images of
  one size as one tensor (:func:`preprocess_read`), while the next batch decodes (:class:`DeviceBatches`).
  What nvJPEG rejects goes through the CPU transform, file by file.

Why this shape (issue #17): on a 16-core H100 machine the stage ran at 0.06x the bare forward because it was
decode-bound on the CPU. On the GPU path the CPU only reads bytes (threads, ahead of the GPU), and a batch
costs one decode call and one resize per image size rather than a few small kernels per image.
"""

from __future__ import annotations

import hashlib
import os
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Container, Iterator, Sequence

from sources.executors import usable_cores

READ_AHEAD = 3
"""Batches whose files are read while the GPU works on the current one: enough to hide a slow disk's jitter,
few enough that a large batch of large JPEGs does not sit in memory."""

RESIZE_BYTES = 1 << 30
"""Largest stack resized in one call on the device, counted at 4 bytes a value: a batch of 256 photos of 12
megapixels would otherwise need 37 GB at once."""


def default_workers() -> int:
    """Decode workers when ``--clip-workers`` is not given: one less than the usable CPUs, at least 0.

    Why not capped: the CPU path is decode-bound (issue #17: on a 16-core GPU machine 4 workers fed ViT-B-32 at
    337 images/s, 15 workers at 651), so every core that can decode should."""
    return max(0, usable_cores() - 1)


def decode_path(device: str) -> str:
    """How images are decoded and preprocessed on ``device``; part of the embedding cache's identity, because
    the paths give (slightly) different pixels: ``"nvjpeg"`` on CUDA, ``"pil-draft"`` elsewhere. Both stay
    within cosine 0.999 of plain PIL decoding (tested)."""
    return "nvjpeg" if device.startswith("cuda") else "pil-draft"


def model_input_side(preprocess_cfg: dict[str, Any]) -> int:
    """The side of the model's square input (open_clip's ``preprocess_cfg["size"]``)."""
    size = preprocess_cfg.get("size", 224)
    return int(min(size)) if isinstance(size, (tuple, list)) else int(size)


def open_for_model(path: str, side: int | None) -> Any:
    """The image at ``path`` as RGB; a JPEG at least twice ``side`` in both dimensions is decoded at a reduced
    scale (libjpeg's DCT scaling, 1/2 to 1/8, never below ``side``), which skips most of the decoding work; the
    model's resize to ``side`` follows anyway."""
    from PIL import Image

    with Image.open(path) as im:
        if side and im.format == "JPEG" and min(im.size) >= 2 * side:
            im.draft("RGB", (side, side))
        return im.convert("RGB")


class ImageFiles:
    """Decode + preprocess one image per item; runs in DataLoader workers. Errors travel back as text so the
    main process can raise a one-line :class:`~sources.errors.SourceError` instead of a worker traceback."""

    def __init__(self, paths: Sequence[str], preprocess: Callable[[Any], Any], side: int | None = None) -> None:
        self.paths = list(paths)
        self.preprocess = preprocess
        self.side = side

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, i: int) -> tuple[int, Any, str]:
        try:
            return i, self.preprocess(open_for_model(self.paths[i], self.side)), ""
        except Exception as e:  # a broken file must name itself, whatever PIL raised
            return i, None, f"cannot decode image: {type(e).__name__}: {e}"


def collate(items: list[tuple[int, Any, str]]) -> tuple[list[int], Any, list[tuple[int, str]]]:
    """DataLoader collate for :class:`ImageFiles`: ``(indices, stacked batch or None, [(index, error)])``."""
    import torch

    ok = [(i, t) for i, t, err in items if not err]
    errors = [(i, err) for i, _, err in items if err]
    batch = torch.stack([t for _, t in ok]) if ok else None
    return [i for i, _ in ok], batch, errors


Encoded = tuple[Any, str]
"""One file read for the device path: ``(uint8 tensor of its bytes, "")``, ``(None, "")`` for a file that is not
a JPEG (it takes the CPU transform), or ``(None, message)`` when it could not be read."""


def read_encoded(paths: Sequence[str], hashed: Container[int] = ()) -> tuple[list[Encoded], dict[int, str]]:
    """The bytes of each file as a uint8 tensor when it starts like a JPEG (what ``decode_jpeg`` takes), and the
    sha256 of the files whose index is in ``hashed``: the cache key of a file not seen before comes from the
    same read as its pixels, in the reader thread, instead of a pass over every file before the GPU starts."""
    import torch

    out: list[Encoded] = []
    digests: dict[int, str] = {}
    for k, p in enumerate(paths):
        try:
            with open(p, "rb") as fh:
                data = fh.read()
        except OSError as e:
            out.append((None, f"cannot read image: {type(e).__name__}: {e}"))
            continue
        if k in hashed:
            digests[k] = hashlib.sha256(data).hexdigest()
        is_jpeg = len(data) > 2 and data[0] == 0xFF and data[1] == 0xD8  # JPEG start-of-image marker
        out.append((torch.frombuffer(bytearray(data), dtype=torch.uint8) if is_jpeg else None, ""))
    return out, digests


def _decode_jpegs(raw: dict[int, Any], device: str) -> dict[int, Any]:
    """``{index: [3, h, w] uint8}`` on ``device`` for the JPEGs ``decode_jpeg`` accepts; one call for the lot,
    file by file only when a bad one fails the batch."""
    from torchvision.io import ImageReadMode, decode_jpeg

    if not raw:
        return {}
    try:
        return dict(zip(raw, decode_jpeg(list(raw.values()), mode=ImageReadMode.RGB, device=device)))
    except Exception:  # one bad file fails the batch: decode them one by one
        decoded = {}
        for k, data in raw.items():
            try:
                decoded[k] = decode_jpeg(data, mode=ImageReadMode.RGB, device=device)
            except Exception:
                pass
        return decoded


def _preprocess_on_device(decoded: dict[int, Any], device: str, preprocess_cfg: dict[str, Any]) -> dict[int, Any]:
    """open_clip's transform on decoded uint8 images: resize of the shortest side (antialiased, the model's
    interpolation), centre crop, scale to [0, 1], normalise. Images of one size are one stacked call (in slices
    of at most :data:`RESIZE_BYTES`), so a batch costs a few kernels per image size, not per image. On CUDA in
    float16 (the kernels accumulate in float32; the fp16-autocast model rounds its input to float16 anyway):
    a third of the float32 resize's time on an H100."""
    import torch
    from torchvision.transforms.v2 import InterpolationMode
    from torchvision.transforms.v2 import functional as F

    side = model_input_side(preprocess_cfg)
    interpolation = InterpolationMode(preprocess_cfg.get("interpolation", "bicubic"))
    dtype = torch.float16 if device.startswith("cuda") else torch.float32  # what autocast feeds the model anyway
    mean = torch.tensor(preprocess_cfg["mean"], device=device, dtype=dtype).view(1, 3, 1, 1)
    std = torch.tensor(preprocess_cfg["std"], device=device, dtype=dtype).view(1, 3, 1, 1)
    by_shape: dict[tuple[int, ...], list[int]] = {}
    for k, img in decoded.items():
        by_shape.setdefault(tuple(img.shape), []).append(k)
    out: dict[int, Any] = {}
    for shape, keys in by_shape.items():
        step = max(1, RESIZE_BYTES // (4 * shape[0] * shape[1] * shape[2]))
        for start in range(0, len(keys), step):
            part = keys[start:start + step]
            stack = torch.stack([decoded[k] for k in part]).to(dtype)
            img = F.resize(stack, [side], interpolation=interpolation, antialias=True)
            img = F.center_crop(img, [side, side]).clamp_(0, 255).div_(255.0)
            out.update(zip(part, img.sub_(mean).div_(std)))
    return out


Read = tuple[list[Encoded], dict[int, Any], dict[int, str]]
"""A batch as the reader threads leave it: each file read (:data:`Encoded`), the JPEGs already decoded on the
device (``{index in batch: [3, h, w] uint8}``) and the sha256 of the files asked for (``{index: hex}``)."""


def read_and_decode(paths: Sequence[str], device: str, hashed: Container[int] = ()) -> Read:
    """:func:`read_encoded`, then the JPEGs decoded on ``device`` in one batched call. Runs in the reader
    threads: ``decode_jpeg`` holds the thread until nvJPEG is done, but not the GIL, so the next batch decodes
    (on the GPU's JPEG engines) while the main thread queues this one's resize and forward pass."""
    encoded, digests = read_encoded(paths, hashed)
    raw = {k: data for k, (data, _) in enumerate(encoded) if data is not None}
    return encoded, _decode_jpegs(raw, device), digests


def preprocess_read(
    paths: Sequence[str], read: Read, device: str, preprocess_cfg: dict[str, Any], fallback: Callable[[str], Any],
) -> tuple[Any, list[tuple[int, str]]]:
    """A ``[n, 3, side, side]`` float batch of ``paths`` (as :func:`read_and_decode` left them) preprocessed
    like open_clip's transform on ``device``. A file that is not a JPEG or that ``decode_jpeg`` rejected is
    decoded by ``fallback(path)`` (the CPU transform, returning a ``[3, side, side]`` tensor). Errors come back
    as ``(index, message)`` and the batch holds only the other images, in order."""
    import torch

    encoded, decoded, _ = read
    errors = [(k, err) for k, (_, err) in enumerate(encoded) if err]
    ready = _preprocess_on_device(decoded, device, preprocess_cfg)
    failed = {k for k, _ in errors}
    out: list[Any] = []
    for k, p in enumerate(paths):
        if k in failed:
            continue
        if k in ready:
            out.append(ready[k])
            continue
        try:
            out.append(fallback(p).to(device))
        except Exception as e:
            errors.append((k, f"cannot decode image: {type(e).__name__}: {e}"))
    return (torch.stack(out) if out else None), sorted(errors)


def decode_batch_on_device(
    paths: Sequence[str], device: str, preprocess_cfg: dict[str, Any], fallback: Callable[[str], Any]
) -> tuple[Any, list[tuple[int, str]]]:
    """One batch, read, decoded and preprocessed in this thread (the Ray actors' path, whose batches arrive one
    at a time): :func:`read_and_decode`, then :func:`preprocess_read`."""
    return preprocess_read(paths, read_and_decode(paths, device), device, preprocess_cfg, fallback)


class DeviceBatches:
    """Batches of ``paths`` preprocessed on ``device``, in order, with the next :data:`READ_AHEAD` batches read
    and decoded by threads meanwhile (:func:`read_and_decode`: file reads and ``decode_jpeg`` release the GIL, so
    they overlap the GPU's work and the Python that launches it). Iterate for ``(start, batch, errors)``; use as
    a context manager so the reader threads stop even when the consumer raises. ``hashed``: indices of the files
    whose sha256 the readers compute (the fourth item of each batch, ``{index in batch: hex}``)."""

    def __init__(
        self, paths: Sequence[str], batch_size: int, device: str, preprocess_cfg: dict[str, Any],
        fallback: Callable[[str], Any], hashed: Container[int] = (),
    ) -> None:
        self.paths, self.batch_size, self.device = list(paths), batch_size, device
        self.preprocess_cfg, self.fallback, self.hashed = preprocess_cfg, fallback, hashed
        self._pool = ThreadPoolExecutor(max_workers=READ_AHEAD, thread_name_prefix="mirage-clip-read")

    def __enter__(self) -> DeviceBatches:
        return self

    def __exit__(self, *exc: object) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __iter__(self) -> Iterator[tuple[int, Any, list[tuple[int, str]], dict[int, str]]]:
        starts = deque(range(0, len(self.paths), self.batch_size))
        reading: deque[tuple[int, Future[Read]]] = deque()
        while starts or reading:
            while starts and len(reading) < READ_AHEAD:
                s = starts.popleft()
                chunk = self.paths[s:s + self.batch_size]
                local = {k - s for k in range(s, s + len(chunk)) if k in self.hashed}
                reading.append((s, self._pool.submit(read_and_decode, chunk, self.device, local)))
            start, future = reading.popleft()
            chunk = self.paths[start:start + self.batch_size]
            read = future.result()
            batch, errors = preprocess_read(chunk, read, self.device, self.preprocess_cfg, self.fallback)
            yield start, batch, errors, read[2]
