"""``pull``: export every room's annotations, resolve each item, write review.json and reviewed.jsonl, and say
what the maintainer has left to do (adjudications, votes the ledgers do not vouch for)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from annotation.commands import server
from annotation.commands.server import ServerOptions
from builders.cli import table
from commandline.options import option

DESCRIPTION = ("Export every annotation of the project (kept under BUILD_DIR/reviews/), validate it (extra "
               "annotations, invalid choices, reviewers annotating twice), resolve each item by majority (keep, fix, "
               "drop, or adjudicate; pending while fewer than OVERLAP reviewers have voted) and write "
               "BUILD_DIR/review.json and BUILD_DIR/reviewed.jsonl. Pulling an unchanged project again gives "
               "identical files.")


@dataclass(kw_only=True)
class PullOptions(ServerOptions):
    build_dir: Path = option(metavar="BUILD_DIR", positional=True, help="the build directory that was pushed")
    show_problems: int = option(20, metavar="N", help="print at most N problems (default {default})")
    recheck: Path | None = option(None, metavar="FILE",
                                  help="the health.json given to push --recheck: resolve the re-review project, "
                                       "record it in BUILD_DIR/recheck.json and rewrite reviewed.jsonl with it "
                                       "(default none: a first review)")
    accept_unverified: bool = option(False, help="count the votes the rooms' vote ledgers do not vouch for (listed "
                                                 "as tampered; by default they are left out and pull exits 1), for "
                                                 "example after the maintainer edited a vote by hand")


def cmd_pull(options: PullOptions) -> int:
    from rich.console import Console

    from annotation.builddir import load_build
    from annotation.pull import pull

    options.check_overlap()
    build = load_build(options.build_dir)
    clients = server.clients(options)
    where = ", ".join(c.url for c in clients)
    if options.recheck is not None:
        return _pull_recheck(options, build, clients, where)
    with Console(stderr=True).status(f"exporting {options.project!r} from {where} ..."):
        res = pull(clients, build, options.project, overlap=options.overlap,
                   accept_unverified=options.accept_unverified)
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
    console.print(table(f"pull {options.project!r} -> {res.review_path}", ["", ""], rows, show_header=False,
                        numeric=False))
    if review["reviewers"]:
        console.print(table("reviewers", ["reviewer", "annotations", "agreement with majority"], [
            [name, st["annotations"], "n/a" if (a := st["agreement_with_majority"]) is None else f"{a:.1%}"]
            for name, st in review["reviewers"].items()
        ]))
    for line in own_work_lines(review):
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
        for line in problems[: options.show_problems]:
            print(f"  {line}", file=sys.stderr)
        if len(problems) > options.show_problems:
            print(f"  ... and {len(problems) - options.show_problems} more in {res.review_path}", file=sys.stderr)
    return _quarantine_status(options, res.quarantined)


def _quarantine_status(options: PullOptions, quarantined: list[str]) -> int:
    """One line per vote the rooms' ledgers do not vouch for; 1 unless the maintainer accepted them."""
    for line in quarantined:
        print(line, file=sys.stderr)
    if not quarantined:
        return 0
    if options.accept_unverified:
        print(f"{len(quarantined)} unverified vote(s) counted (--accept-unverified)", file=sys.stderr)
        return 0
    print(f"{len(quarantined)} vote(s) quarantined: left out of the review (pass --accept-unverified to count "
          "them)", file=sys.stderr)
    return 1


def _pull_recheck(options: PullOptions, build: Any, clients: list, where: str) -> int:
    """``pull --recheck``: the re-review's decisions, one row per item whose answer changed or that was dropped."""
    from rich.console import Console

    from annotation.pull import pull_recheck

    with Console(stderr=True).status(f"exporting {options.project!r} from {where} ..."):
        res = pull_recheck(clients, build, options.project, options.recheck, overlap=options.overlap,
                           accept_unverified=options.accept_unverified)
    rnd = res.review
    counts = rnd["counts"]
    console = Console()
    rows = [[status, counts[status]] for status in ("keep", "fix", "drop", "adjudicate", "pending")]
    rows.append(["reviewed items", f"{res.reviewed_path}"])
    console.print(table(f"re-review {options.project!r} -> {res.review_path}", ["", ""], rows, show_header=False,
                        numeric=False))
    changed = [[iid, e["status"], e["before_label"], e["answer_label"] or "-", e["models"]["label"]]
               for iid, e in sorted(rnd["items"].items()) if e["status"] in ("fix", "drop")]
    if changed:
        console.print(table("changed by the re-review", ["item", "decision", "before", "after", "models"],
                            changed, numeric=False))
    for line in rnd["problems"][: options.show_problems]:
        print(f"  {line}", file=sys.stderr)
    return _quarantine_status(options, res.quarantined)


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


def own_work_lines(review: dict) -> list[str]:
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
