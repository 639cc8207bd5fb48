"""``push``: create or reuse a project in every room and import the build's items it lacks (or, with
``--recheck``, only the suspected label errors of a health report)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from annotation.commands import server
from annotation.commands.server import FilesRootOption, ServerOptions
from builders.cli import table
from commandline.options import option

DESCRIPTION = ("Create or reuse the project NAME (labeling config for the build's item kinds, "
               "maximum_annotations=OVERLAP) and import, in batches, the items whose id it does not hold yet: "
               "pushing again adds only new items.")


@dataclass(kw_only=True)
class PushOptions(ServerOptions, FilesRootOption):
    build_dir: Path = option(metavar="BUILD_DIR", positional=True,
                             help="a build directory (builds/<benchmark>/<name>)")
    batch_size: int = option(250, metavar="N", help="tasks per import request (default {default})")
    progress: bool = option(True, flag="--no-progress", help="no progress bar")
    recheck: Path | None = option(None, metavar="FILE",
                                  help="a health.json of `mirage health`: push only its suspected label errors, with "
                                       "the models' answer shown beside the proposed one, to a project of their "
                                       "own; pull them with the same --recheck (default none: push the whole build)")


def cmd_push(options: PushOptions) -> int:
    from rich.console import Console

    from annotation.builddir import load_build
    from annotation.push import push
    from annotation.resolve import room_capacity

    options.check_overlap()
    build = load_build(options.build_dir)
    models = None
    if options.recheck is not None:
        from annotation.recheck import models_label, read_health, recheck_build

        suspects, _ = read_health(options.recheck)
        if not suspects:
            print(f"{options.recheck}: no suspected label errors; nothing to push")
            return 0
        build = recheck_build(build, suspects, options.project)
        models = {it.id: models_label(it, suspects[it.id]) for it in build.items}
    clients = server.clients(options)
    per_room = room_capacity(options.overlap, len(clients))
    for k, client in enumerate(clients, 1):
        res = push(
            client,
            build,
            options.project,
            files_root=options.files_root,
            batch_size=options.batch_size,
            overlap=per_room,
            progress=options.progress,
            models=models,
        )
        rows = [
            ["project", f"{res.project_url}" + (" (new)" if res.created else "")],
            ["items in build", res.total],
            ["already in project", res.already_there],
            ["imported now", res.imported],
            ["annotations per item", per_room],
        ]
        if res.storages_added:
            rows.append(["image folder connected", "\n".join(res.storages_added)])
        title = f"push {build.label} -> {options.project!r}" + (f" (room {k})" if len(clients) > 1 else "")
        if models:
            title += f": re-review of {len(models)} suspect(s)"
        Console().print(table(title, ["", ""], rows, show_header=False, numeric=False))
    return 0
