"""``mirage review serve|restart-room|push|pull|author`` (``python -m annotation``): three-reviewer validation of
a build in Label Studio. Each subcommand's options and handler live in :mod:`annotation.commands`; this module
puts them under one parser.

Errors are one line on stderr and exit status 2.
"""

from __future__ import annotations

import sys
from typing import Sequence

from annotation.commands.author import DESCRIPTION as AUTHOR_DESCRIPTION, AuthorOptions, cmd_author
from annotation.commands.pull import DESCRIPTION as PULL_DESCRIPTION, PullOptions, cmd_pull
from annotation.commands.push import DESCRIPTION as PUSH_DESCRIPTION, PushOptions, cmd_push
from annotation.commands.serve import (RESTART_DESCRIPTION, RestartRoomOptions, ServeOptions, cmd_restart_room,
                                       cmd_serve, serve_description, serve_help_values)
from annotation.errors import AnnotationError
from builders.cli import exit_on_error
from commandline.options import add_command, run_command
from commandline.parsing import ArgumentParser, prog


def build_parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog=prog("python -m annotation"),
        description="Validate a Mirage build with three independent reviewers in Label Studio: "
        "serve a local server, push the build, let reviewers work, pull and resolve by majority.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    add_command(sub, "serve", ServeOptions, cmd_serve, description=serve_description(),
                help="start a local Label Studio for the team and print how reviewers join",
                help_values=serve_help_values())
    add_command(sub, "restart-room", RestartRoomOptions, cmd_restart_room, description=RESTART_DESCRIPTION,
                help="restart one room of a running serve, without stopping the others")
    add_command(sub, "push", PushOptions, cmd_push, description=PUSH_DESCRIPTION,
                help="create or reuse a project and import the build's items it lacks")
    from annotation.author import hooks

    flows = hooks()
    add_command(sub, "author", AuthorOptions, cmd_author, description=AUTHOR_DESCRIPTION,
                help="people write what a builder cannot derive (" + ", ".join(sorted(flows)) + ")",
                choices={"kind": sorted(flows)},
                help_values={"kinds": "; ".join(f"{k}: {f.summary}" for k, f in sorted(flows.items()))})
    add_command(sub, "pull", PullOptions, cmd_pull, description=PULL_DESCRIPTION,
                help="export the annotations, resolve each item, write review.json and reviewed.jsonl")
    return parser


@exit_on_error
def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m annotation`` and ``mirage review``."""
    try:
        return run_command(build_parser(), argv)
    except ModuleNotFoundError as exc:
        if exc.name in ("requests", "rich"):
            raise AnnotationError(f"{exc.name} is missing: pip install 'mirage-bench[annotation]'") from None
        raise
