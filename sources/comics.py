"""Wordless comics (Mementos' comics domain) as folders of panel images.

Each sub-folder of ``root`` is one comic; its images are the panels in natural reading order (``panel2`` before
``panel10``; name the files so that this order is the reading order). Unlike video frames, the panels were chosen
by an artist, so every one of them is kept: a builder samples comics with ``Uniform(n)`` for ``n`` = the panel
count, or takes ``meta["panels"]`` as they are. An optional ``description.txt`` in the folder (a person's
description of the story) lands in ``meta["description"]``.
"""

from __future__ import annotations

from pathlib import Path

from .errors import SourceError
from .records import VideoRecord
from .video import description_beside, frame_images, natural_key

SOURCE = "comics"
MIN_PANELS = 2
"""A sequence needs at least two panels to show anything happening."""


def read_comics(root: str | Path) -> list[VideoRecord]:
    """One record per comic folder, sorted naturally by folder name; ``file`` is the folder (a frame folder for
    :func:`sources.video.sample_video`), ``frame_count`` the number of panels, ``meta["panels"]`` their paths in
    reading order. Folders with no image are ignored; a comic with a single panel is a :class:`SourceError`."""
    base = Path(root)
    if not base.is_dir():
        raise SourceError(base, "", "comics folder not found")
    records = []
    folders = sorted((p for p in base.iterdir() if p.is_dir() and not p.name.startswith(".")),
                     key=lambda p: natural_key(p.name))
    for folder in folders:
        panels = frame_images(folder)
        if not panels:
            continue
        if len(panels) < MIN_PANELS:
            raise SourceError(folder, "", f"a comic needs at least {MIN_PANELS} panels, found {len(panels)}")
        meta: dict[str, object] = {"panels": [str(p) for p in panels]}
        description = description_beside(folder)
        if description is not None:
            meta["description"] = description
        records.append(VideoRecord(id=folder.name, source=SOURCE, file=str(folder), frame_count=len(panels),
                                   meta=meta))
    if not records:
        raise SourceError(base, "", "no comics found (sub-folders of panel images)")
    return records
