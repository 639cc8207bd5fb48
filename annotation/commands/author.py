"""``author push|pull``: people write what a builder cannot derive (Mementos descriptions, MM-SAP questions,
predictive pattern entries: each benchmark's authoring flow, :mod:`annotation.author`), in a Label Studio project of
room 1."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from annotation.commands import server
from annotation.commands.server import FilesRootOption, ServerOptions
from annotation.errors import AnnotationError
from commandline.options import option

DESCRIPTION = ("push: what a benchmark's builder cannot derive (a description, a question, an entry) becomes a "
               "task showing its images with the form the --kind needs; pull: each submitted answer is validated by "
               "the builder's own reader and written where the builder reads it, with its author beside it. Then "
               "build and review the build as usual.")


@dataclass(kw_only=True)
class AuthorOptions(ServerOptions, FilesRootOption):
    action: Literal["push", "pull"] = option(metavar="ACTION", positional=True, help="push or pull")
    kind: str = option("descriptions", help="{kinds} (default {default})")
    """Its choices are the benchmarks' authoring flows (:func:`annotation.author.hooks`), given by the parser."""
    images: Path | None = option(None, metavar="DIR",
                                 help="questions push: the images to write questions about; patterns push and pull: "
                                      "a folder of sequence folders, 3 to 5 images each (default none; patterns "
                                      "pull: the folder of --out)")
    out: Path | None = option(None, metavar="FILE",
                              help="questions / patterns pull: the JSONL to write; put it beside the images (default "
                                   "none)")
    robot: Path | None = option(None, metavar="DIR",
                                help="robot episodes, as builders.mementos --robot; descriptions push and pull "
                                     "(default none)")
    comics: Path | None = option(None, metavar="DIR",
                                 help="comics, as builders.mementos --comics; descriptions push and pull (default "
                                      "none)")
    cache_dir: Path | None = option(None, metavar="DIR",
                                    help="where sampled frames are cached (default $MIRAGE_CACHE_DIR or "
                                         "~/.cache/mirage)")
    min_words: int = option(8, metavar="N", help="shortest description accepted, shown to the authors at push and "
                                                 "checked at pull (default {default})")

    def files_root_or_default(self) -> Path:
        from annotation.push import default_files_root

        return self.files_root or default_files_root()


def cmd_author(options: AuthorOptions) -> int:
    from annotation.author import hook, pull, push

    clients = server.clients(options)
    client = clients[0]
    if options.min_words < 1:
        raise AnnotationError("--min-words must be at least 1")
    flow = hook(options.kind)
    inputs = {"images": options.images, "out": options.out, "robot": options.robot, "comics": options.comics,
              "cache_dir": options.cache_dir, "min_words": options.min_words}
    if options.action == "push":
        _say_where_authors_work(options.project, client.url, len(clients))
        imported, there = push(client, flow, inputs, options.project, options.files_root_or_default())
        print(f"{imported + there} to write ({options.kind}): {imported} imported, {there} already in "
              f"{options.project!r}")
        return 0
    report = pull(client, flow, inputs, options.project, log=lambda line: print(f"  {line}", file=sys.stderr))
    print(f"{len(report['written'])} {flow.noun} written, {len(report['unchanged'])} unchanged, "
          f"{len(report['problems'])} left out")
    for what in report["written"]:
        print(f"  {what}")
    return 0


def _say_where_authors_work(project: str, url: str, rooms: int) -> None:
    """Which room an authoring project lives in, and what that means when the build comes back for review."""
    where = f"room 1 of {rooms} ({url})" if rooms > 1 else url
    print(f"authoring project {project!r} is in {where}: authors sign up there", file=sys.stderr)
    if rooms > 1:
        print("  when the build comes back for review, an author's vote on their own item is not counted: the other "
              "rooms decide it, or it waits for your adjudication (pull says which)", file=sys.stderr)
