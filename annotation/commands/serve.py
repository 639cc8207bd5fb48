"""``serve`` (the rooms: Label Studio behind a front each) and ``restart-room`` (one room of a running serve)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from annotation.commands.server import DEFAULT_DATA_DIR, FilesRootOption
from annotation.errors import AnnotationError
from commandline.options import option


@dataclass(kw_only=True)
class DataDirOption:
    data_dir: Path = option(DEFAULT_DATA_DIR, metavar="DIR", help="{data_dir_is} (default {default})")


@dataclass(kw_only=True)
class ServeOptions(DataDirOption, FilesRootOption):
    OPTION_HELP: ClassVar[dict[str, str]] = {
        "data_dir_is": "where Label Studio keeps its database and uploads",
        "files_root_is": "LOCAL_FILES_DOCUMENT_ROOT, a dedicated folder: `push` puts links to the images its tasks "
                         "show under it, and nothing else there is served (default DATA_DIR/files)"}

    host: str = option("127.0.0.1", metavar="HOST", help="interface to listen on (default {default}; 0.0.0.0 for a LAN)")
    port: int = option(8080, metavar="N", help="port to listen on; must be free (default {default})")
    rooms: int = option(3, metavar="N",
                        help="servers to start, one per reviewer slot, on ports PORT..PORT+N-1 with data dirs "
                             "DATA_DIR/room-K: reviewers in different rooms cannot see each other's annotations; 1 "
                             "puts everyone in one server, where every member can open every annotation (default "
                             "{default})")
    public_url: str | None = option(None, metavar="URL",
                                    help="the URL reviewers use to reach this server, for the printed links; one per "
                                         "room, comma-separated (default http://HOST:PORT)")
    label_studio_bin: str | None = option(None, metavar="FILE",
                                          help="the label-studio executable (default ${bin_env}, then PATH, then "
                                               "{default_venv}/bin/label-studio)")


def serve_description() -> str:
    from annotation.serve import LABEL_STUDIO_VERSION

    return (f"Start Label Studio (tested with {LABEL_STUDIO_VERSION}) bound to --host, with version check, "
            "analytics and Sentry off, signup only through the invite link, and local-files serving on. The first "
            "admin comes from $LABEL_STUDIO_USERNAME (an e-mail) and $LABEL_STUDIO_PASSWORD; with them set, the "
            "invite link and the admin's API token are printed. The rooms start together; each is Label Studio on "
            "an internal port behind a front on its own port, which says why a room is down, keeps the rooms' "
            "cookies apart, lets members make only the requests reviewing needs and records each vote in the "
            "room's ledger (votes.jsonl in its data dir, which pull checks); a server that stops is reported and "
            "restarted while the other rooms go on (a room given up after 3 restarts in 10 minutes comes back "
            "alone with `restart-room`). One serve per data dir: a second one exits naming the first's pid; Label "
            "Studio servers end with serve, even on kill -9, and one left running on the data dir is stopped at "
            "the next start. Each room keeps its secret key in DATA_DIR[/room-K]/secret-key, so a restart logs "
            "nobody out. Runs until Ctrl-C.")


def serve_help_values() -> dict[str, str]:
    from annotation.serve import BIN_ENV, DEFAULT_VENV

    return {"bin_env": BIN_ENV, "default_venv": str(DEFAULT_VENV)}


def cmd_serve(options: ServeOptions) -> int:
    from annotation.serve import ServerSpec, find_label_studio_bin, serve
    from annotation.serving import check_files_root

    if not 1 <= options.port <= 65535 - max(0, options.rooms - 1):
        raise AnnotationError(f"--port {options.port}: not a port number")
    if options.rooms < 1:
        raise AnnotationError("--rooms must be at least 1")
    data_dir = options.data_dir.expanduser().resolve()
    if options.files_root is None:
        (data_dir / "files").mkdir(parents=True, exist_ok=True)
    files_root = check_files_root(options.files_root or data_dir / "files")
    spec = ServerSpec(
        bin=find_label_studio_bin(options.label_studio_bin),
        data_dir=data_dir,
        host=options.host,
        port=options.port,
        files_root=files_root,
        username=os.environ.get("LABEL_STUDIO_USERNAME") or None,
        password=os.environ.get("LABEL_STUDIO_PASSWORD") or None,
    )
    return serve(spec, public_url=options.public_url, rooms=options.rooms)


RESTART_DESCRIPTION = (
    "Ask the `serve` running on DATA_DIR to restart room K's Label Studio (a room given up after 3 restarts in 10 "
    "minutes, or one that misbehaves), wait until it serves again and print how it went. The other rooms go on. "
    "Exit status 0 when the room serves again, 1 when it did not come back.")


@dataclass(kw_only=True)
class RestartRoomOptions(DataDirOption):
    OPTION_HELP: ClassVar[dict[str, str]] = {"data_dir_is": "the --data-dir the serve was started with"}

    room: int = option(metavar="K", positional=True, help="the room's number, as serve names it (1 with --rooms 1)")


def cmd_restart_room(options: RestartRoomOptions) -> int:
    from rich.console import Console

    from annotation.guard import request_restart
    from annotation.serve import RESTARTS, START_TIMEOUT

    data_dir = options.data_dir.expanduser().resolve()
    with Console(stderr=True).status(f"restarting room {options.room} of the serve on {data_dir} ..."):
        answer = request_restart(data_dir, options.room, timeout=(RESTARTS + 1) * START_TIMEOUT + 60)
    print(answer.line)
    return 0 if answer.ok else 1
