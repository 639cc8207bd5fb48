"""Image files of the real-format readers: their paths, whether they are there, and the size their headers give.

An image is opened for its header only. PNG and JPEG, the formats of the photo sources, are parsed here with a
few positioned reads (:func:`header_size`); anything else, or anything unexpected in them, goes to PIL, which reads
the header of every format it knows. Why by hand: a COCO-train-sized source checks 118,000 headers, and the
maintained readers cost a multiple of these reads per header - ``imagesize`` (a pure-Python file object and its
format dispatch) about twice, ``PIL.Image.open`` (plugin lookup, object set-up) several times;
``benchmarks/bench_image_headers.py`` measures the three on the same files.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from sources.errors import SourceError


def image_path(images_dir: str | Path, name: str) -> str:
    """``images_dir/name`` as joined, neither resolved nor absolutised, so builds stay reproducible."""
    return str(Path(images_dir) / name)


def image_paths(images_dir: str | Path) -> Callable[[str], str]:
    """:func:`image_path` in ``images_dir`` for many names: a plain file name is appended to the folder's path,
    which is what :class:`pathlib.Path` gives it, without building a path object per image (a COCO-train-sized
    file names 118,000); any other name (``a/b.jpg``, ``.``, ...) goes through :func:`image_path`."""
    folder = str(Path(images_dir))
    prefix = "" if folder == "." else folder if folder.endswith("/") else folder + "/"  # "/" and "//" end in one

    def join(name: str) -> str:
        if "/" in name or name in ("", ".", ".."):
            return image_path(images_dir, name)
        return prefix + name

    return join


def check_image_file(path: str, file: str | Path, record: str) -> str:
    """``path`` when an image file exists there (a cheap ``stat``; the image is not opened)."""
    if not os.path.isfile(path):
        raise SourceError(file, record, f"image file not found: {path}")
    return path


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_JPEG_FRAME_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}  # SOF0..SOF15 (not DHT, JPG, DAC)


def header_size(path: str) -> tuple[int, int] | None:
    """``(width, height)`` from a PNG's IHDR or a JPEG's frame header, read with a few small reads; ``None``
    for anything else or anything unexpected (the caller asks PIL then)."""
    # non-blocking: a FIFO or device where an image should be reads empty here instead of waiting for a writer;
    # positioned reads on the bare descriptor: a file object's set-up cost as much as the reads
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        head = os.pread(fd, 26, 0)
        if head[:8] == _PNG_SIGNATURE and head[12:16] == b"IHDR":
            return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
        if head[:2] != b"\xff\xd8":
            return None
        offset = 2
        for _ in range(256):  # markers before the frame header: APPn, DQT, DHT, COM, ...
            marker = os.pread(fd, 9, offset)  # a marker, its length, and a frame header's first five bytes
            if len(marker) < 4 or marker[0] != 0xFF:
                return None
            kind, length = marker[1], int.from_bytes(marker[2:4], "big")
            if kind in _JPEG_FRAME_MARKERS:
                if len(marker) < 9:
                    return None
                return int.from_bytes(marker[7:9], "big"), int.from_bytes(marker[5:7], "big")
            if length < 2 or kind == 0xD9:
                return None
            offset += 2 + length
    finally:
        os.close(fd)
    return None


def image_size_from_file(path: str, file: str | Path, record: str) -> tuple[int, int]:
    """``(width, height)`` read from the image header only (PNG and JPEG parsed here, other formats by PIL)."""
    from PIL import Image, UnidentifiedImageError

    try:
        size = header_size(path)
    except OSError:
        size = None
    if size is not None and size[0] > 0 and size[1] > 0:
        return size

    try:
        with Image.open(path) as im:
            return im.size
    except (OSError, UnidentifiedImageError) as e:
        raise SourceError(file, record, f"cannot read image size from {path}: {e}") from None


def header_matches(path: str, width: int, height: int) -> bool:
    """Whether the file at ``path`` opens and its PNG or JPEG header gives ``width`` x ``height`` (``False`` for
    anything else: a missing file, another size, another format, which :func:`check_image` then checks in turn)."""
    try:
        return header_size(path) == (width, height)
    except OSError:
        return False


def check_image(path: str, width: int, height: int, file: str | Path, record: str) -> str:
    """:func:`check_image_file` and :func:`check_declared_size` of ``path``, with one open and no ``stat`` where
    both pass (its header read: a file that is there and of the declared size); anything else is checked by
    them in turn, so the error is theirs."""
    if header_matches(path, width, height):
        return path
    check_image_file(path, file, record)
    check_declared_size(path, width, height, file, record)
    return path


def check_declared_size(path: str, width: int, height: int, file: str | Path, record: str) -> None:
    """The image file's own size (from its header: PIL reads it lazily, no pixel is decoded) must be the
    ``width`` x ``height`` the annotations declare: boxes, masks and relative areas are measured against it,
    so a wrong declaration (a resized copy of the image, another split's file) would mislabel every object."""
    actual = image_size_from_file(path, file, record)
    if actual != (width, height):
        raise SourceError(file, record, f"image file {path} is {actual[0]}x{actual[1]} pixels, but the "
                                        f"annotations declare {width}x{height}")
