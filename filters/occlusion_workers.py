"""Occlusion of a large source measured in forked worker processes, chunk by chunk, ahead of the caller.

Why: the mask-overlap occlusion proxy (:func:`filters.geometry.occlusion`) is most of the geometry pass, and the
geometry pass is the largest single stage of a paper-scale build (a COCO-train-sized file: 860,000 polygons). Each
image's occlusion depends on that image alone, so forked workers measure chunks of images while the caller turns
the chunks already measured into labels. A worker sees the records through the fork (nothing is pickled on the way
in) and sends back one float and one method name per instance. The values are those the caller would have
computed itself (the same code on the same records); ``tests/filters/test_occlusion_workers.py`` compares them.

Small sources (under :data:`MIN_INSTANCES` instances), systems where forking is not affordable
(:func:`sources.forking.fork_affordable`), single-core machines and a process given a share of one core
(:func:`sources.forking.share_cores`: a source's child when the sources outnumber the cores) measure in the calling
process.
"""

from __future__ import annotations

from typing import Iterator, Sequence

from filters import mask_runs_jit
from filters.geometry import Occlusions, occlusions_of
from sources.forking import forked_imap, forking_pays, usable_cores
from sources.records import ImageRecord

MIN_INSTANCES = 50_000
"""Below this many instances starting workers costs more than it saves."""

def occlusions_ahead(
    images: Sequence[ImageRecord], chunk: int, min_instances: int = MIN_INSTANCES
) -> Iterator[Occlusions | None]:
    """Per chunk of ``chunk`` images, in order: the chunk's occlusions measured by a worker, or ``None`` where
    the caller measures them itself (a small source, no fork, one core)."""
    n_chunks = -(-len(images) // chunk)
    workers = min(usable_cores(), n_chunks)
    if not forking_pays(workers, sum(len(im.instances) for im in images), min_instances):
        yield from (None for _ in range(n_chunks))
        return
    bounds = [(s, min(s + chunk, len(images))) for s in range(0, len(images), chunk)]
    mask_runs_jit.load()  # the compiled run arithmetic loaded once, here, and inherited by every worker
    yield from forked_imap(lambda span: occlusions_of(images[span[0]:span[1]]), bounds, workers)
