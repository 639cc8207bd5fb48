"""Keep Python's cyclic garbage collector out of the way while a paper-scale source is read.

A COCO-train-sized file becomes millions of small objects (dicts, lists, records) that live for the whole build.
CPython's collector runs a full pass over every tracked object each time enough new ones have been made, so
reading such a file spends about half its time in collections that find nothing: parsed JSON and frozen records
hold no reference cycles, and reference counting frees them alone. :func:`long_lived` pauses the collector while
such objects are made and then moves them to the permanent generation (:func:`gc.freeze`), so later collections
(question generation makes many short-lived objects) no longer walk them either. What it saved on the
paper-scale benchmark is in docs/scale.md ("Speed on one machine").
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def long_lived() -> Iterator[None]:
    """Pause the cyclic collector inside the block; freeze what exists at its end (even on an error, so a caller
    that reports the error and goes on is not left without a collector)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was_enabled:
            gc.enable()
