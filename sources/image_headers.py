"""Image files checked against their declared sizes by several processes at once, while the caller goes on.

Why: a COCO-train-sized source names 118,000 image files, and each check reads a file's header
(:func:`sources.jsonio.check_image`). With the files in the page cache that is ~7 us an image; without, each is a
small random read, ~80 us on this project's 2-core machine (whose page cache is emptied within a minute), 9 s in
a row on the critical path of a cold build. Reads waiting on a disk do not need a core: eight processes reading
side by side measured 3.7x the throughput of one (40,000 uncached headers: 3.1 s alone, 0.85 s with eight), and
they read while the caller validates the annotations, which does need its core.

The readers are forked *before* the caller parses its file (:class:`HeaderChecks` is made first, then given the
files): forked from a process holding the parsed file, they made every page the caller went on writing a copy
(copy-on-write), which cost more than the reads saved when the files were cached. They only say *which* files
do not match; the caller checks those again itself, in file order (:func:`sources.jsonio.check_image`), so the
error a user sees is the one a check of each file in turn would raise.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from pathlib import Path
from types import TracebackType
from typing import Any, Sequence

from sources.forking import fork_affordable
from sources.jsonio import header_matches

READERS = 8
"""Processes reading headers at once (mostly waiting on the disk, so more than the cores)."""

MIN_IMAGES = 5_000
"""Fewer images than this are checked by the caller alone (handing them out costs more than it saves)."""

MIN_FILE_BYTES = 16 << 20
"""An annotation file this large is worth starting readers for before it is parsed (COCO's val2017 instances
file, 25 MB, names 5,000 images; train2017's, 450 MB, 118,000)."""

def names_many_images(annotations: str | Path) -> bool:
    """Whether an annotation file is large enough (:data:`MIN_FILE_BYTES`) to name thousands of images, so that
    readers are worth starting before it is parsed (a missing file: ``False``, its reader reports it)."""
    try:
        return os.path.getsize(annotations) >= MIN_FILE_BYTES
    except OSError:
        return False


Entry = tuple[str, int, int]
"""An image file's path and its declared width and height."""


def mismatched(entries: Sequence[Entry]) -> list[int]:
    """Indices of ``entries`` whose header is unreadable or gives another size (or none: not PNG or JPEG)."""
    return [k for k, (path, width, height) in enumerate(entries) if not header_matches(path, width, height)]


class HeaderChecks:
    """Header checks handed to :data:`READERS` forked readers, started now when ``readers`` (a large file is
    about to be parsed) and memory allows a fork; :meth:`check` gives them the files, :meth:`mismatches` waits
    for the verdicts. Without readers, or for fewer than :data:`MIN_IMAGES` files, :meth:`mismatches` checks
    them in this process. A context manager that stops the readers on the way out."""

    def __init__(self, readers: bool = True) -> None:
        self.entries: Sequence[Entry] = ()
        self._pool: Any = None
        self._pending: Any = None  # stays set once the readers are done: their verdicts are kept
        # a daemonic process (a multiprocessing worker reading a source) may not start children of its own
        if readers and fork_affordable() and not multiprocessing.current_process().daemon:
            self._pool = multiprocessing.get_context("fork").Pool(READERS, initializer=gc.disable)

    @property
    def in_readers(self) -> bool:
        """Whether the files given to :meth:`check` are being read by the forked readers."""
        return self._pending is not None

    def check(self, entries: Sequence[Entry]) -> None:
        """Start checking ``entries`` (each reader takes every :data:`READERS`-th one)."""
        self.entries = entries
        if self._pool is not None and len(entries) >= MIN_IMAGES:
            self._pending = self._pool.map_async(mismatched, [entries[k::READERS] for k in range(READERS)])
        else:
            self.close()

    def mismatches(self) -> list[int]:
        """Indices of the entries given to :meth:`check` whose header does not give their declared size."""
        if self._pending is None:
            return mismatched(self.entries)
        parts = self._pending.get()
        self.close()
        return sorted(k + READERS * j for k, part in enumerate(parts) for j in part)

    def close(self) -> None:
        """Stop the readers (on an error, those still reading)."""
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None

    def __enter__(self) -> HeaderChecks:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.close()
