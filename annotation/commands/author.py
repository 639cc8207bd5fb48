"""``author push|pull``: people write what a builder cannot derive (Mementos descriptions, MM-SAP questions,
predictive pattern entries), in a Label Studio project of room 1."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Literal

from annotation.commands import server
from annotation.commands.server import FilesRootOption, ServerOptions
from annotation.errors import AnnotationError
from commandline.options import option

DESCRIPTION = ("push: every robot episode (--robot) or comic (--comics) without a description becomes a task "
               "showing its frames (as the Mementos builder samples them) with a text box; pull: each submitted "
               "description is validated and written where the reader looks for it (<folder>/description.txt, "
               "<video>.txt), never over an existing file. Then build Mementos and review the build as usual.")

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")


@dataclass(kw_only=True)
class AuthorOptions(ServerOptions, FilesRootOption):
    action: Literal["push", "pull"] = option(metavar="ACTION", positional=True, help="push or pull")
    kind: Literal["descriptions", "questions", "patterns"] = option(
        "descriptions", help="descriptions of robot episodes / comics (Mementos); MM-SAP questions about images (the "
        "JSONL builders.mmsap --authored reads); or predictive pattern entries for folders of 3-5 images (the JSONL "
        "builders.predictive --authored reads) (default {default})")
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
    from annotation.author import pull_descriptions, push_descriptions, sequences_to_describe

    clients = server.clients(options)
    client = clients[0]
    if options.min_words < 1:
        raise AnnotationError("--min-words must be at least 1")
    if options.action == "push":
        _say_where_authors_work(options.project, client.url, len(clients))
    if options.kind == "questions":
        return _author_questions(options, client)
    if options.kind == "patterns":
        return _author_patterns(options, client)
    if options.action == "push":
        if not (options.robot or options.comics):
            raise AnnotationError("author push needs --robot DIR and/or --comics DIR")
        seqs = sequences_to_describe(options.robot, options.comics, options.cache_dir)
        imported, there = push_descriptions(client, seqs, options.project, options.files_root_or_default(),
                                            min_words=options.min_words)
        print(f"{len(seqs)} sequence(s) without a description: {imported} imported, {there} already in "
              f"{options.project!r}")
        return 0
    from annotation.author import description_targets

    if not (options.robot or options.comics):
        raise AnnotationError("author pull needs the --robot DIR and/or --comics DIR given to author push (the "
                              "descriptions are written beside the sequences)")
    report = pull_descriptions(client, options.project, targets=description_targets(options.robot, options.comics),
                               min_words=options.min_words, log=lambda line: print(f"  {line}", file=sys.stderr))
    print(f"{len(report['written'])} description(s) written, {len(report['unchanged'])} unchanged, "
          f"{len(report['problems'])} problem(s)")
    for path in report["written"]:
        print(f"  {path}")
    return 0


def _say_where_authors_work(project: str, url: str, rooms: int) -> None:
    """Which room an authoring project lives in, and what that means when the build comes back for review."""
    where = f"room 1 of {rooms} ({url})" if rooms > 1 else url
    print(f"authoring project {project!r} is in {where}: authors sign up there", file=sys.stderr)
    if rooms > 1:
        print("  when the build comes back for review, an author's vote on their own item is not counted: the other "
              "rooms decide it, or it waits for your adjudication (pull says which)", file=sys.stderr)


def _author_questions(options: AuthorOptions, client: Any) -> int:
    from annotation.author import pull_questions, push_question_images

    if options.action == "push":
        if options.images is None or not options.images.is_dir():
            raise AnnotationError("author push --kind questions needs --images DIR (a folder of images)")
        images = sorted(p for p in options.images.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        n = push_question_images(client, images, options.project, options.files_root_or_default())
        print(f"{n} image(s) imported into {options.project!r} ({len(images) - n} already there)")
        return 0
    return _author_pull_entries(options, client, pull_questions, "question(s)")


def _author_patterns(options: AuthorOptions, client: Any) -> int:
    from annotation.author import pull_patterns, push_patterns

    if options.action == "push":
        if options.images is None or not options.images.is_dir():
            raise AnnotationError("author push --kind patterns needs --images DIR (a folder of sequence folders)")
        n = push_patterns(client, options.images, options.project, options.files_root_or_default())
        print(f"{n} sequence(s) imported into {options.project!r}")
        return 0
    return _author_pull_entries(options, client, pull_patterns, "entr(y/ies)")


def _author_pull_entries(options: AuthorOptions, client: Any, pull_entries: Callable[..., dict], noun: str) -> int:
    """`author pull` for the kinds that write one JSONL file (questions, patterns): the same --out check,
    problems on stderr and one summary line, whichever puller `pull_entries` writes the entries."""
    if options.out is None:
        raise AnnotationError(f"author pull --kind {options.kind} needs --out FILE.jsonl")
    extra = {"images": options.images} if options.kind == "patterns" and options.images is not None else {}
    report = pull_entries(client, options.project, options.out, **extra)
    for line in report["problems"]:
        print(f"  {line}", file=sys.stderr)
    print(f"{len(report['written'])} {noun} written to {options.out}, {len(report['problems'])} left out")
    return 0
