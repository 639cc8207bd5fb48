"""``python -m annotation serve|restart-room|push|pull``: three-reviewer validation of a build in Label Studio.

Errors are one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Sequence

from annotation.errors import AnnotationError
from builders.cli import ArgumentParser, exit_on_error, table

DEFAULT_URL = "http://127.0.0.1:8080"
TOKEN_ENVS = ("LABEL_STUDIO_API_KEY", "LABEL_STUDIO_TOKEN")
DEFAULT_DATA_DIR = Path(".cache/label-studio")
"""``serve``'s data dir, and where ``restart-room`` finds the serve to ask."""


def _env_token() -> str | None:
    for name in TOKEN_ENVS:
        if os.environ.get(name):
            return os.environ[name]
    return None


def _add_server_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--url",
        default=os.environ.get("LABEL_STUDIO_URL", DEFAULT_URL),
        metavar="URL",
        help=f"Label Studio URL; several, comma-separated, for one server per reviewer slot (`serve --rooms`) "
        f"(default $LABEL_STUDIO_URL or {DEFAULT_URL})",
    )
    p.add_argument(
        "--token",
        default=None,
        metavar="TOKEN",
        help="API token of the maintainer's account: the legacy token printed by `serve`, or a personal access "
        "token; one per URL, comma-separated (default $LABEL_STUDIO_API_KEY, then $LABEL_STUDIO_TOKEN)",
    )
    p.add_argument("--timeout", type=float, default=60.0, metavar="X", help="seconds to wait for each request (default 60)")
    p.add_argument(
        "--overlap", type=int, default=3, metavar="N", help="reviewers per item; a majority is overlap//2+1 (default 3)"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(
        prog="python -m annotation",
        description="Validate a Mirage build with three independent reviewers in Label Studio: "
        "serve a local server, push the build, let reviewers work, pull and resolve by majority.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    from annotation.serve import BIN_ENV, DEFAULT_VENV, LABEL_STUDIO_VERSION

    s = sub.add_parser(
        "serve",
        help="start a local Label Studio for the team and print how reviewers join",
        description=f"Start Label Studio (tested with {LABEL_STUDIO_VERSION}) bound to --host, with version check, "
        "analytics and Sentry off, signup only through the invite link, and local-files serving on. The first "
        "admin comes from $LABEL_STUDIO_USERNAME (an e-mail) and $LABEL_STUDIO_PASSWORD; with them set, the "
        "invite link and the admin's API token are printed. The rooms start together; each is Label Studio on an "
        "internal port behind a front on its own port, which says why a room is down, keeps the rooms' cookies "
        "apart, lets members make only the requests reviewing needs and records each vote in the room's ledger "
        "(votes.jsonl in its data dir, which pull checks); a server that stops is reported and restarted while "
        "the other rooms go on (a room given up after 3 restarts in 10 minutes comes back alone with "
        "`restart-room`). One serve per data dir: a second one exits naming the first's pid; Label Studio "
        "servers end with serve, even on kill -9, and one left running on the data dir is stopped at the next "
        "start. Each room keeps its secret key in DATA_DIR[/room-K]/secret-key, so a restart logs nobody out. "
        "Runs until Ctrl-C.",
    )
    s.add_argument(
        "--data-dir",
        type=Path,
        default=DEFAULT_DATA_DIR,
        metavar="DIR",
        help=f"where Label Studio keeps its database and uploads (default {DEFAULT_DATA_DIR})",
    )
    s.add_argument("--host", default="127.0.0.1", metavar="HOST", help="interface to listen on (default 127.0.0.1; 0.0.0.0 for a LAN)")
    s.add_argument("--port", type=int, default=8080, metavar="N", help="port to listen on; must be free (default 8080)")
    s.add_argument(
        "--files-root",
        type=Path,
        default=None,
        metavar="DIR",
        help="LOCAL_FILES_DOCUMENT_ROOT, a dedicated folder: `push` puts links to the images its tasks show "
        "under it, and nothing else there is served (default DATA_DIR/files)",
    )
    s.add_argument(
        "--rooms",
        type=int,
        default=3,
        metavar="N",
        help="servers to start, one per reviewer slot, on ports PORT..PORT+N-1 with data dirs DATA_DIR/room-K: "
        "reviewers in different rooms cannot see each other's annotations; 1 puts everyone in one server, "
        "where every member can open every annotation (default 3)",
    )
    s.add_argument(
        "--public-url",
        default=None,
        metavar="URL",
        help="the URL reviewers use to reach this server, for the printed links; one per room, comma-separated "
        "(default http://HOST:PORT)",
    )
    s.add_argument(
        "--label-studio-bin",
        default=None,
        metavar="FILE",
        help=f"the label-studio executable (default ${BIN_ENV}, then PATH, then {DEFAULT_VENV}/bin/label-studio)",
    )

    r = sub.add_parser(
        "restart-room",
        help="restart one room of a running serve, without stopping the others",
        description="Ask the `serve` running on DATA_DIR to restart room K's Label Studio (a room given up after "
        "3 restarts in 10 minutes, or one that misbehaves), wait until it serves again and print how it went. "
        "The other rooms go on. Exit status 0 when the room serves again, 1 when it did not come back.",
    )
    r.add_argument("room", type=int, metavar="K", help="the room's number, as serve names it (1 with --rooms 1)")
    r.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR, metavar="DIR",
                   help=f"the --data-dir the serve was started with (default {DEFAULT_DATA_DIR})")

    p = sub.add_parser(
        "push",
        help="create or reuse a project and import the build's items it lacks",
        description="Create or reuse the project NAME (labeling config for the build's item kinds, "
        "maximum_annotations=OVERLAP) and import, in batches, the items whose id it does not hold yet: "
        "pushing again adds only new items.",
    )
    p.add_argument("build_dir", type=Path, metavar="BUILD_DIR", help="a build directory (builds/<benchmark>/<name>)")
    p.add_argument("--project", required=True, metavar="NAME", help="Label Studio project title")
    _add_server_options(p)
    p.add_argument(
        "--files-root",
        type=Path,
        default=None,
        metavar="DIR",
        help="the server's LOCAL_FILES_DOCUMENT_ROOT, printed by `serve`; links to the images go under it "
        "(default $LOCAL_FILES_DOCUMENT_ROOT, else .cache/label-studio/files)",
    )
    p.add_argument("--batch-size", type=int, default=250, metavar="N", help="tasks per import request (default 250)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--recheck", type=Path, default=None, metavar="FILE",
                   help="a health.json of python -m scoring health: push only its suspected label errors, with "
                   "the models' answer shown beside the proposed one, to a project of their own; pull them with "
                   "the same --recheck (default none: push the whole build)")

    from annotation.author import hooks

    flows = hooks()
    a = sub.add_parser(
        "author",
        help="people write what a builder cannot derive (" + ", ".join(sorted(flows)) + ")",
        description="push: what a benchmark's builder cannot derive (a description, a question, an entry) becomes "
        "a task showing its images with the form the --kind needs; pull: each submitted answer is validated by the "
        "builder's own reader and written where the builder reads it, with its author beside it. Then build and "
        "review the build as usual.",
    )
    a.add_argument("action", choices=("push", "pull"), metavar="ACTION", help="push or pull")
    a.add_argument("--kind", choices=sorted(flows), default="descriptions",
                   help="; ".join(f"{k}: {f.summary}" for k, f in sorted(flows.items())) + " (default descriptions)")
    a.add_argument("--images", type=Path, default=None, metavar="DIR",
                   help="questions push: the images to write questions about; patterns push and pull: a folder of "
                   "sequence folders, 3 to 5 images each (default none; patterns pull: the folder of --out)")
    a.add_argument("--out", type=Path, default=None, metavar="FILE",
                   help="questions / patterns pull: the JSONL to write; put it beside the images (default none)")
    a.add_argument("--project", required=True, metavar="NAME", help="Label Studio project title")
    a.add_argument("--robot", type=Path, default=None, metavar="DIR",
                   help="robot episodes, as builders.mementos --robot; descriptions push and pull (default none)")
    a.add_argument("--comics", type=Path, default=None, metavar="DIR",
                   help="comics, as builders.mementos --comics; descriptions push and pull (default none)")
    a.add_argument("--cache-dir", type=Path, default=None, metavar="DIR",
                   help="where sampled frames are cached (default $MIRAGE_CACHE_DIR or ~/.cache/mirage)")
    a.add_argument("--files-root", type=Path, default=None, metavar="DIR",
                   help="the server's LOCAL_FILES_DOCUMENT_ROOT (default $LOCAL_FILES_DOCUMENT_ROOT, else "
                   ".cache/label-studio/files)")
    a.add_argument("--min-words", type=int, default=8, metavar="N",
                   help="shortest description accepted, shown to the authors at push and checked at pull (default 8)")
    _add_server_options(a)

    q = sub.add_parser(
        "pull",
        help="export the annotations, resolve each item, write review.json and reviewed.jsonl",
        description="Export every annotation of the project (kept under BUILD_DIR/reviews/), validate it (extra "
        "annotations, invalid choices, reviewers annotating twice), resolve each item by majority (keep, fix, "
        "drop, or adjudicate; pending while fewer than OVERLAP reviewers have voted) and write BUILD_DIR/review.json "
        "and BUILD_DIR/reviewed.jsonl. Pulling an unchanged project again gives identical files.",
    )
    q.add_argument("build_dir", type=Path, metavar="BUILD_DIR", help="the build directory that was pushed")
    q.add_argument("--project", required=True, metavar="NAME", help="Label Studio project title")
    _add_server_options(q)
    q.add_argument("--show-problems", type=int, default=20, metavar="N", help="print at most N problems (default 20)")
    q.add_argument("--recheck", type=Path, default=None, metavar="FILE",
                   help="the health.json given to push --recheck: resolve the re-review project, record it in "
                   "BUILD_DIR/recheck.json and rewrite reviewed.jsonl with it (default none: a first review)")
    q.add_argument("--accept-unverified", action="store_true",
                   help="count the votes the rooms' vote ledgers do not vouch for (listed as tampered; by default "
                   "they are left out and pull exits 1), for example after the maintainer edited a vote by hand")
    return parser


def _clients(args: argparse.Namespace) -> list:
    """One client per room: ``--url`` and ``--token`` hold one entry each, or as many comma-separated."""
    from annotation.client import LabelStudioClient

    token = args.token or _env_token()
    if not token:
        raise AnnotationError(
            "no API token: pass --token or set LABEL_STUDIO_API_KEY (`python -m annotation serve` prints it)"
        )
    if args.timeout <= 0:
        raise AnnotationError("--timeout must be positive")
    urls = [u.strip() for u in args.url.split(",") if u.strip()]
    tokens = [t.strip() for t in token.split(",") if t.strip()]
    if len(tokens) != len(urls):
        raise AnnotationError(f"{len(urls)} Label Studio URL(s) but {len(tokens)} token(s): give one token per URL")
    clients = []
    for url, tok in zip(urls, tokens):
        client = LabelStudioClient(url, tok, timeout=args.timeout)
        client.whoami()  # fail early, with one clear line, on a wrong token or a server that is not there
        clients.append(client)
    return clients


def _check_overlap(args: argparse.Namespace) -> None:
    if args.overlap < 1:
        raise AnnotationError("--overlap must be at least 1")


def cmd_serve(args: argparse.Namespace) -> int:
    from annotation.serve import ServerSpec, find_label_studio_bin, serve

    from annotation.serving import check_files_root

    if not 1 <= args.port <= 65535 - max(0, args.rooms - 1):
        raise AnnotationError(f"--port {args.port}: not a port number")
    if args.rooms < 1:
        raise AnnotationError("--rooms must be at least 1")
    data_dir = args.data_dir.expanduser().resolve()
    if args.files_root is None:
        (data_dir / "files").mkdir(parents=True, exist_ok=True)
    files_root = check_files_root(args.files_root or data_dir / "files")
    spec = ServerSpec(
        bin=find_label_studio_bin(args.label_studio_bin),
        data_dir=data_dir,
        host=args.host,
        port=args.port,
        files_root=files_root,
        username=os.environ.get("LABEL_STUDIO_USERNAME") or None,
        password=os.environ.get("LABEL_STUDIO_PASSWORD") or None,
    )
    return serve(spec, public_url=args.public_url, rooms=args.rooms)


def cmd_restart_room(args: argparse.Namespace) -> int:
    from rich.console import Console

    from annotation.guard import request_restart
    from annotation.serve import RESTARTS, START_TIMEOUT

    data_dir = args.data_dir.expanduser().resolve()
    with Console(stderr=True).status(f"restarting room {args.room} of the serve on {data_dir} ..."):
        answer = request_restart(data_dir, args.room, timeout=(RESTARTS + 1) * START_TIMEOUT + 60)
    print(answer.line)
    return 0 if answer.ok else 1


def cmd_push(args: argparse.Namespace) -> int:
    from rich.console import Console

    from annotation.builddir import load_build
    from annotation.push import push

    _check_overlap(args)
    from annotation.resolve import room_capacity

    build = load_build(args.build_dir)
    models = None
    if args.recheck is not None:
        from annotation.recheck import models_label, read_health, recheck_build

        suspects, _ = read_health(args.recheck)
        if not suspects:
            print(f"{args.recheck}: no suspected label errors; nothing to push")
            return 0
        build = recheck_build(build, suspects, args.project)
        models = {it.id: models_label(it, suspects[it.id]) for it in build.items}
    clients = _clients(args)
    per_room = room_capacity(args.overlap, len(clients))
    for k, client in enumerate(clients, 1):
        res = push(
            client,
            build,
            args.project,
            files_root=args.files_root,
            batch_size=args.batch_size,
            overlap=per_room,
            progress=not args.no_progress,
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
        title = f"push {build.label} -> {args.project!r}" + (f" (room {k})" if len(clients) > 1 else "")
        if models:
            title += f": re-review of {len(models)} suspect(s)"
        Console().print(table(title, ["", ""], rows, show_header=False, numeric=False))
    return 0


def cmd_author(args: argparse.Namespace) -> int:
    from annotation.author import hook, pull, push
    from annotation.push import default_files_root

    clients = _clients(args)
    client = clients[0]
    if args.min_words < 1:
        raise AnnotationError("--min-words must be at least 1")
    flow = hook(args.kind)
    inputs = {"images": args.images, "out": args.out, "robot": args.robot, "comics": args.comics,
              "cache_dir": args.cache_dir, "min_words": args.min_words}
    if args.action == "push":
        _say_where_authors_work(args.project, client.url, len(clients))
        imported, there = push(client, flow, inputs, args.project, args.files_root or default_files_root())
        print(f"{imported + there} to write ({args.kind}): {imported} imported, {there} already in {args.project!r}")
        return 0
    report = pull(client, flow, inputs, args.project, log=lambda line: print(f"  {line}", file=sys.stderr))
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


def cmd_pull(args: argparse.Namespace) -> int:
    from rich.console import Console

    from annotation.builddir import load_build
    from annotation.pull import pull

    _check_overlap(args)
    build = load_build(args.build_dir)
    clients = _clients(args)
    where = ", ".join(c.url for c in clients)
    if args.recheck is not None:
        return _pull_recheck(args, build, clients, where)
    with Console(stderr=True).status(f"exporting {args.project!r} from {where} ..."):
        res = pull(clients, build, args.project, overlap=args.overlap, accept_unverified=args.accept_unverified)
    review = res.review
    counts = review["counts"]
    console = Console()
    done = counts["total"] - counts["pending"]
    kappa = review["fleiss_kappa"]
    rows = [
        ["progress", f"{done}/{counts['total']} items fully reviewed ({100 * done / max(1, counts['total']):.0f}%)"],
        *([status, counts[status]] for status in ("keep", "fix", "drop", "adjudicate", "pending")),
        ["settled by adjudication", sum(1 for e in review["items"].values() if e.get("adjudicated"))],
        ["votes refused (own work)", sum(review.get("refused_own_work", {}).values())],
        ["items with an empty seat", _empty_seats_row(review)],
        ["raw agreement (verdicts)", "n/a" if (ra := review.get("raw_agreement")) is None else f"{ra:.1%}"],
        ["Gwet's AC1 (verdicts)", "n/a" if (ac1 := review.get("gwet_ac1")) is None else f"{ac1:.3f}"],
        ["Fleiss' kappa (verdicts)", "n/a" if kappa is None else f"{kappa:.3f}"],
        ["raw export", review["raw_export"] + ("" if res.export_is_new else " (unchanged)")],
        ["reviewed items", f"{res.reviewed_path} ({counts['keep'] + counts['fix']})"],
    ]
    console.print(table(f"pull {args.project!r} -> {res.review_path}", ["", ""], rows, show_header=False, numeric=False))
    if review["reviewers"]:
        console.print(table("reviewers", ["reviewer", "annotations", "agreement with majority"], [
            [name, st["annotations"], "n/a" if (a := st["agreement_with_majority"]) is None else f"{a:.1%}"]
            for name, st in review["reviewers"].items()
        ]))
    for line in _own_work_lines(review):
        print(line, file=sys.stderr)
    if counts["adjudicate"]:
        print(
            f"{counts['adjudicate']} item(s) have no majority: settle them in {build.path / 'adjudications.json'} "
            "(see docs/annotation.md) and pull again",
            file=sys.stderr,
        )
    problems = review["problems"]
    if problems:
        print(f"{len(problems)} problem(s):", file=sys.stderr)
        for line in problems[: args.show_problems]:
            print(f"  {line}", file=sys.stderr)
        if len(problems) > args.show_problems:
            print(f"  ... and {len(problems) - args.show_problems} more in {res.review_path}", file=sys.stderr)
    return _quarantine_status(args, res.quarantined)


def _quarantine_status(args: argparse.Namespace, quarantined: list[str]) -> int:
    """One line per vote the rooms' ledgers do not vouch for; 1 unless the maintainer accepted them."""
    for line in quarantined:
        print(line, file=sys.stderr)
    if not quarantined:
        return 0
    if args.accept_unverified:
        print(f"{len(quarantined)} unverified vote(s) counted (--accept-unverified)", file=sys.stderr)
        return 0
    print(f"{len(quarantined)} vote(s) quarantined: left out of the review (pass --accept-unverified to count "
          "them)", file=sys.stderr)
    return 1


def _pull_recheck(args: argparse.Namespace, build, clients: list, where: str) -> int:
    """``pull --recheck``: the re-review's decisions, one row per item whose answer changed or that was dropped."""
    from rich.console import Console

    from annotation.pull import pull_recheck

    with Console(stderr=True).status(f"exporting {args.project!r} from {where} ..."):
        res = pull_recheck(clients, build, args.project, args.recheck, overlap=args.overlap,
                           accept_unverified=args.accept_unverified)
    rnd = res.review
    counts = rnd["counts"]
    console = Console()
    rows = [[status, counts[status]] for status in ("keep", "fix", "drop", "adjudicate", "pending")]
    rows.append(["reviewed items", f"{res.reviewed_path}"])
    console.print(table(f"re-review {args.project!r} -> {res.review_path}", ["", ""], rows, show_header=False,
                        numeric=False))
    changed = [[iid, e["status"], e["before_label"], e["answer_label"] or "-", e["models"]["label"]]
               for iid, e in sorted(rnd["items"].items()) if e["status"] in ("fix", "drop")]
    if changed:
        console.print(table("changed by the re-review", ["item", "decision", "before", "after", "models"],
                            changed, numeric=False))
    for line in rnd["problems"][: args.show_problems]:
        print(f"  {line}", file=sys.stderr)
    return _quarantine_status(args, res.quarantined)


def _seated(review: dict, reason: str | None = None) -> list[dict]:
    """The entries of ``review.json`` with an empty seat (of ``reason``, or any)."""
    return [e for e in review["items"].values()
            if any(reason is None or s["reason"] == reason for s in e.get("empty_seats") or [])]


def _empty_seats_row(review: dict) -> str:
    """``n (d decided, a to adjudicate)``: items a skip or an author's refused vote left short of votes."""
    entries = _seated(review)
    if not entries:
        return "0"
    adjudicate = sum(1 for e in entries if e["status"] == "adjudicate")
    return f"{len(entries)} ({len(entries) - adjudicate} decided by the other votes, {adjudicate} to adjudicate)"


def _own_work_lines(review: dict) -> list[str]:
    """What became of the items whose author voted on them: decided by the others, or waiting for adjudication."""
    from annotation.resolve import OWN_WORK

    entries = _seated(review, OWN_WORK)
    if not entries:
        return []
    waiting = [e for e in entries if e["status"] == "adjudicate"]
    settled = sum(1 for e in entries if e.get("adjudicated"))
    why = " (their votes are split; see adjudications.json in docs/annotation.md)" if waiting else ""
    return [f"{len(entries)} item(s) had their author's vote refused: {len(entries) - len(waiting) - settled} decided "
            f"by the other reviewers' majority, {settled} settled by your adjudication, {len(waiting)} waiting for it"
            f"{why}"]


@exit_on_error
def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m annotation``."""
    args = build_parser().parse_args(argv)
    try:
        return {"serve": cmd_serve, "restart-room": cmd_restart_room, "push": cmd_push, "pull": cmd_pull,
                "author": cmd_author}[args.command](args)
    except ModuleNotFoundError as exc:
        if exc.name in ("requests", "rich"):
            raise AnnotationError(f"{exc.name} is missing: pip install 'mirage-bench[annotation]'") from None
        raise


if __name__ == "__main__":
    sys.exit(main())
