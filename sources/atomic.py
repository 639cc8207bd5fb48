"""Directories and files that appear whole or not at all: how every cache of Mirage's sources is written.

Demo scenes, demo videos and sampled frames are rendered into a temporary sibling folder and renamed when
complete, so an interrupted run never leaves a folder that looks finished, and a rerun resumes by recomputing
only what is missing.
"""

from __future__ import annotations

import os
import re
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


def unfinished(path: Path) -> bool:
    """Whether ``path`` is the private folder of a build or release being written (or left by a killed one):
    ``<name>.partial`` or ``<name>.partial.<random>``."""
    return re.fullmatch(r".+\.partial(\.[A-Za-z0-9_]+)?", Path(path).name) is not None


_RENAME_EXCHANGE = 2
"""``renameat2`` flag: swap two paths in one step (Linux 3.15+, ext4, xfs, btrfs, tmpfs, overlayfs)."""
_AT_FDCWD = -100


def exchange(a: Path, b: Path) -> bool:
    """Swap the folders ``a`` and ``b`` in one atomic step (Linux ``renameat2(RENAME_EXCHANGE)``).

    Why: replacing a finished folder by two renames leaves, between them, neither folder at its name; a process
    killed there (``kill -9``, power) leaves no build at all. Returns False where the system cannot swap (not
    Linux, an old libc or a file system without the flag), for the caller's two-rename fallback."""
    import ctypes
    import errno

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(a), None, str(b))


class FolderBusy(Exception):
    """Another process holds the lock of a folder (:func:`folder_lock`); ``pid`` is its process id, if known."""

    def __init__(self, path: Path, pid: str) -> None:
        super().__init__(f"{path}: locked by process {pid or '?'}")
        self.path = path
        self.pid = pid


_held: dict[Path, int] = {}
"""Locks this process holds, so that a lock taken around a whole build is not refused to its own writer."""


@contextmanager
def folder_lock(target: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``target`` (a folder that may not exist yet) for the ``with`` block.

    The lock is ``flock`` on the hidden file ``.<name>.lock`` beside it, which holds the holder's pid and is removed
    on release, with the folders it had to create if they are left empty; the kernel drops the lock of a killed
    process, so a stale file never blocks. Taking it again in the same process is a no-op. :class:`FolderBusy` when another process holds it (never waits)."""
    import fcntl

    target = Path(os.path.abspath(target))
    if target in _held:
        yield
        return
    made = [d for d in (target.parent, *target.parent.parents) if not d.exists()]  # removed again if left empty
    target.parent.mkdir(parents=True, exist_ok=True)
    lock = target.with_name(f".{target.name}.lock")
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = os.read(fd, 32).decode("ascii", "replace").strip()
            os.close(fd)
            raise FolderBusy(target, pid) from None
        try:  # the holder before us may have removed the file after we opened it: lock the file that is there
            if os.stat(lock).st_ino == os.fstat(fd).st_ino:
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode("ascii"))
    _held[target] = fd
    try:
        yield
    finally:
        del _held[target]
        try:
            os.unlink(lock)
        finally:
            os.close(fd)
        for folder in made:  # a build that wrote nothing leaves no folder behind either
            try:
                folder.rmdir()
            except OSError:
                break
