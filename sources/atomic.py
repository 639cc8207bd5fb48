"""Directories and files that appear whole or not at all: how every cache of Mirage's sources is written.

Demo scenes, demo videos and sampled frames are rendered into a temporary sibling folder and renamed when
complete, so an interrupted run never leaves a folder that looks finished, and a rerun resumes by recomputing
only what is missing.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, Sequence


@contextmanager
def atomic_directory(target: Path, is_complete: Callable[[Path], bool]) -> Iterator[Path]:
    """Yield a temporary sibling of ``target`` to fill; on success it is renamed to ``target``.

    When ``target`` already exists and ``is_complete(target)`` (another process finished the same content first)
    it is kept; otherwise it is a damaged leftover and is replaced. On any error nothing is renamed, and the
    temporary folder never survives.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent))
    try:
        yield tmp
        try:
            os.rename(tmp, target)
        except OSError:
            if not is_complete(target):
                shutil.rmtree(target, ignore_errors=True)
                os.rename(tmp, target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def write_atomic(path: Path, data: bytes | memoryview | Sequence[bytes | memoryview]) -> Path:
    """Write ``data`` (bytes, or a sequence of parts written one after another) to ``path`` through a temporary
    file in the same folder, so readers never see half a file (and an interrupted write leaves the previous
    file, or none)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            for part in [data] if isinstance(data, (bytes, bytearray, memoryview)) else data:
                fh.write(part)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path
