"""What the subcommands that talk to Label Studio share: the server options, the project, the files root, and one
client per room."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from annotation.errors import AnnotationError
from commandline.options import option

DEFAULT_URL = "http://127.0.0.1:8080"
TOKEN_ENVS = ("LABEL_STUDIO_API_KEY", "LABEL_STUDIO_TOKEN")
DEFAULT_DATA_DIR = Path(".cache/label-studio")
"""``serve``'s data dir, and where ``restart-room`` finds the serve to ask."""


def env_token() -> str | None:
    """The maintainer's token from the first of :data:`TOKEN_ENVS` that is set."""
    for name in TOKEN_ENVS:
        if os.environ.get(name):
            return os.environ[name]
    return None


@dataclass(kw_only=True)
class ProjectOption:
    """The Label Studio project a subcommand works on."""

    project: str = option(metavar="NAME", help="Label Studio project title")


@dataclass(kw_only=True)
class FilesRootOption:
    """The folder Label Studio serves local files from; ``serve`` and the commands that put links under it word
    its help their own way (``OPTION_HELP``)."""

    OPTION_HELP: ClassVar[dict[str, str]] = {
        "files_root_is": "the server's LOCAL_FILES_DOCUMENT_ROOT, printed by `serve`; links to the images go under "
                         "it (default $LOCAL_FILES_DOCUMENT_ROOT, else .cache/label-studio/files)"}

    files_root: Path | None = option(None, metavar="DIR", help="{files_root_is}")


@dataclass(kw_only=True)
class ServerOptions(ProjectOption):
    """Where the rooms are and how to ask them (push, pull, author)."""

    OPTION_HELP: ClassVar[dict[str, str]] = {"default_url": DEFAULT_URL}

    url: str = option(default_factory=lambda: os.environ.get("LABEL_STUDIO_URL", DEFAULT_URL), metavar="URL",
                      help="Label Studio URL; several, comma-separated, for one server per reviewer slot (`serve "
                           "--rooms`) (default $LABEL_STUDIO_URL or {default_url})")
    token: str | None = option(None, metavar="TOKEN",
                               help="API token of the maintainer's account: the legacy token printed by `serve`, or "
                                    "a personal access token; one per URL, comma-separated (default "
                                    "$LABEL_STUDIO_API_KEY, then $LABEL_STUDIO_TOKEN)")
    timeout: float = option(60.0, metavar="X", help="seconds to wait for each request (default {default:g})")
    overlap: int = option(3, metavar="N", help="reviewers per item; a majority is overlap//2+1 (default {default})")

    def check_overlap(self) -> None:
        if self.overlap < 1:
            raise AnnotationError("--overlap must be at least 1")


def clients(options: ServerOptions) -> list[Any]:
    """One client per room: ``--url`` and ``--token`` hold one entry each, or as many comma-separated."""
    from annotation.client import LabelStudioClient

    token = options.token or env_token()
    if not token:
        raise AnnotationError(
            "no API token: pass --token or set LABEL_STUDIO_API_KEY (`mirage review serve` prints it)"
        )
    if options.timeout <= 0:
        raise AnnotationError("--timeout must be positive")
    urls = [u.strip() for u in options.url.split(",") if u.strip()]
    tokens = [t.strip() for t in token.split(",") if t.strip()]
    if len(tokens) != len(urls):
        raise AnnotationError(f"{len(urls)} Label Studio URL(s) but {len(tokens)} token(s): give one token per URL")
    made = []
    for url, tok in zip(urls, tokens):
        client = LabelStudioClient(url, tok, timeout=options.timeout)
        client.whoami()  # fail early, with one clear line, on a wrong token or a server that is not there
        made.append(client)
    return made
