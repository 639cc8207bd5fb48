"""The images reviewers may fetch: links to exactly the images the tasks show, in a dedicated folder.

Label Studio's local-files storage serves *every* file under a connected folder to *every* member of the
organisation (the community edition has one organisation and no per-project membership). Connecting the build
dir would therefore serve ``review.json`` (all votes, comments and e-mail addresses), ``reviews/`` and
``adjudications.json`` to any reviewer who types their path. So nothing of the build is connected: ``push`` links
the images its tasks show into ``<files root>/images/<build key>/`` and connects only that folder. ``serve`` sets
``LOCAL_FILES_DOCUMENT_ROOT`` to a dedicated files root (``<data dir>/files`` by default, never ``/``), so even a
local-files storage a reviewer connects by hand can reach nothing but these links.

Links are hard links where the files root and the image share a file system (no copy, no extra space), symbolic
links otherwise (Label Studio checks the requested path, which lies under the files root, then opens the file).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Iterable

from annotation.errors import AnnotationError

SERVING_DIR = "images"
"""The folder under the files root that holds every build's serving folder. Every member reads the image URLs
(``/data/local-files/?d=images/<key>/<key>/<name>``): the names in them are neutral, no build name, no path."""


def _key(text: str, n: int) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:n]


def serving_folder(build_dir: Path, files_root: Path) -> Path:
    """The folder connected as the project's storage: ``<files root>/images/<hash of the build's path>``."""
    build_dir = Path(build_dir).resolve()
    return Path(files_root).resolve() / SERVING_DIR / _key(str(build_dir), 12)


def served_path(source: Path, folder: Path) -> Path:
    """Where the link to ``source`` lies: ``<folder>/<hash of its folder>/<its name>`` (names stay readable)."""
    source = Path(source).resolve()
    return folder / _key(str(source.parent), 10) / source.name


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def link_image(source: Path, target: Path) -> None:
    """Make ``target`` a link to ``source`` (hard, else symbolic); an existing right link is left alone."""
    if _same_file(source, target):
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        tmp.unlink(missing_ok=True)
        try:
            os.link(source, tmp)
        except OSError:
            os.symlink(source, tmp)
        os.replace(tmp, target)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise AnnotationError(f"cannot link {source} into the serving folder {target.parent}: {exc}") from None


def check_files_root(files_root: Path) -> Path:
    """The files root, resolved; it must be a dedicated existing folder (never ``/``)."""
    root = Path(files_root).expanduser().resolve()
    if root == Path(root.anchor):
        raise AnnotationError(
            f"files root {root} is the file system root: serve images from a dedicated folder "
            "(pass --files-root, the LOCAL_FILES_DOCUMENT_ROOT printed by `python -m annotation serve`)"
        )
    if not root.is_dir():
        raise AnnotationError(
            f"files root {root}: no such directory (pass --files-root, the LOCAL_FILES_DOCUMENT_ROOT printed by "
            "`python -m annotation serve`)"
        )
    return root


def link_images(sources: Iterable[Path], folder: Path) -> dict[Path, Path]:
    """Link every image into ``folder``; ``{source: link}``. Two sources with one link path are an error."""
    links: dict[Path, Path] = {}
    taken: dict[Path, Path] = {}
    for src in sources:
        src = Path(src).resolve()
        if src in links:
            continue
        target = served_path(src, folder)
        if target in taken and taken[target] != src:  # pragma: no cover - a 40-bit hash collision
            raise AnnotationError(f"{src} and {taken[target]} map to the same served file {target}")
        link_image(src, target)
        links[src] = taken[target] = target
    return links
