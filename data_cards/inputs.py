"""Reading what a release is made of: the build dir, its review, and the items to publish.

Nothing here writes. Reviewer e-mail addresses are read (review.json is keyed by them) but never leave this module
except as anonymised ids (``reviewer-1`` ...): see :func:`anonymise_reviewers` and :class:`Scrubber`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from builders.items import Item, read_items
from builders.review import ISSUE_TAGS, RECHECK_FILE, agreement_figures, apply_rechecks
from sources.atomic import unfinished, write_atomic
from sources.errors import MirageError
from sources.hashing import file_sha256
from sources.jsonio import decode_problem

REVIEWED_STATUSES = ("keep", "fix")
EMAIL_RE = re.compile(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}")
# An absolute local path (POSIX or ~): replaced by ".../<file name>" so a release never shows the releaser's
# directories. Not inside URLs ("https://host/x": the slashes follow ':' or '/').
ABS_PATH_RE = re.compile(r"(?<![\w.:/~-])(?:~/|/)(?:[^\s/\"'<>|]+/)*([^\s/\"'<>|]+)")


@dataclass
class ReleaseInputs:
    """Everything a release is made of, read and checked."""

    build_dir: Path
    build: dict[str, Any]
    items: list[Item]
    status: dict[str, str]
    """item id -> ``keep`` | ``fix`` | ``unreviewed``."""
    review: dict[str, Any] | None
    """The public review summary (anonymised), or None when the build was never reviewed."""
    include_unreviewed: bool
    excluded: dict[str, int] = field(default_factory=dict)
    """Counts of build items left out, by reason (``drop``, ``pending``, ``adjudicate``, ``unreviewed``)."""
    input_files: dict[str, str] = field(default_factory=dict)
    """sha256 of the build files the release was made from (build.json, items.jsonl, review files)."""
    scrubber: "Scrubber | None" = None
    rechecked: list[dict[str, Any]] = field(default_factory=list)
    """The re-reviews of suspected label errors (``recheck.json``), one entry per item, public fields only:
    :func:`recheck_summary`."""


def _read_json(path: Path) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        raise MirageError(f"{path}: file not found") from None
    except json.JSONDecodeError as exc:
        raise MirageError(f"{path}: {decode_problem(exc)}") from None
    if not isinstance(data, dict):
        raise MirageError(f"{path}: expected a JSON object at the top level")
    return data


def _read_items(path: Path) -> list[Item]:
    try:
        return read_items(path)
    except FileNotFoundError:
        raise MirageError(f"{path}: file not found") from None
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise MirageError(f"{path}: not a valid items file ({type(exc).__name__}: {exc})") from None


def anonymise_reviewers(reviewers: Mapping[str, Any], known: Mapping[str, str] | None = None) -> dict[str, str]:
    """Map each reviewer key (an e-mail) to ``reviewer-N``.

    A reviewer in ``known`` (the pseudonyms of earlier releases, :data:`PSEUDONYMS_FILE`) keeps theirs, so
    reviewer-3 of 1.0.0 is reviewer-3 of 1.0.1. New reviewers take the next numbers, ordered by number of
    annotations (most first), ties broken by a hash of the key, so the order reveals nothing about the addresses.
    """
    known = dict(known or {})

    def order(key: str) -> tuple[int, str]:
        info = reviewers.get(key) or {}
        n = info.get("annotations", 0) if isinstance(info, Mapping) else 0
        return (-int(n or 0), hashlib.sha256(key.encode("utf-8")).hexdigest())

    used = [int(v.split("-")[1]) for v in known.values() if re.fullmatch(r"reviewer-\d+", str(v))]
    mapping = {key: known[key] for key in reviewers if key in known}
    fresh = sorted((k for k in reviewers if k not in known), key=order)
    start = max(used, default=0) + 1
    mapping.update({key: f"reviewer-{i}" for i, key in enumerate(fresh, start=start)})
    return mapping


PSEUDONYMS_FILE = "reviewer-pseudonyms.json"
"""Beside the versions of a release (``releases/<name>/``, never inside a published version dir): e-mail ->
pseudonym of every reviewer of every version so far, written ``0600`` since it holds the addresses."""


def read_pseudonyms(name_dir: Path) -> dict[str, str]:
    path = Path(name_dir) / PSEUDONYMS_FILE
    if not path.exists():
        return {}
    data = _read_json(path)
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise MirageError(f"{path}: expected an object {{e-mail: reviewer-N}}")
    return data


def write_pseudonyms(name_dir: Path, known: Mapping[str, str], current: Mapping[str, str]) -> None:
    """Add this version's pseudonyms to the file (atomically, readable by the maintainer only)."""
    merged = {**known, **current}
    path = Path(name_dir) / PSEUDONYMS_FILE
    # write_atomic writes through a mkstemp file, created 0600, and renames it: the file stays the maintainer's only
    write_atomic(path, (json.dumps(merged, indent=2, sort_keys=True) + "\n").encode("utf-8"))


class Scrubber:
    """Replaces known reviewer keys, any other e-mail address and absolute local paths in strings and JSON values."""

    def __init__(self, mapping: Mapping[str, str]) -> None:
        self.mapping = dict(mapping)
        # Longest first so that an address containing another is replaced whole.
        self._known = sorted(self.mapping, key=len, reverse=True)

    def text(self, value: str) -> str:
        for key in self._known:
            if key in value:
                value = value.replace(key, self.mapping[key])
        value = EMAIL_RE.sub("[redacted e-mail]", value)
        return ABS_PATH_RE.sub(lambda m: f".../{m.group(1)}", value)

    def value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {self.text(str(k)): self.value(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.value(v) for v in value]
        return value


def public_review_summary(review: Mapping[str, Any], scrubber: Scrubber) -> dict[str, Any]:
    """What of review.json may be published: counts, agreement, anonymised reviewers, problems (scrubbed)."""
    reviewers = review.get("reviewers") or {}
    anon = []
    for key, rid in sorted(scrubber.mapping.items(), key=lambda kv: int(kv[1].split("-")[1])):
        info = reviewers.get(key) or {}
        anon.append(
            {
                "id": rid,
                "annotations": int(info.get("annotations", 0) or 0),
                "agreement_with_majority": info.get("agreement_with_majority"),
                "agreed_items": info.get("agreed_items"),
                "decided_items": info.get("decided_items"),
                "skipped": int(info.get("skipped", 0) or 0),
            }
        )
    counts = {k: int(v) for k, v in (review.get("counts") or {}).items() if isinstance(v, (int, float))}
    entries = [e for e in (review.get("items") or {}).values() if isinstance(e, Mapping)]
    # items with an empty seat (a skip, an author's refused vote) have fewer ratings: kept out, as pull keeps them
    rows = [e["votes"] for e in entries
            if e.get("status") != "pending" and isinstance(e.get("votes"), Mapping) and not e.get("empty_seats")]
    figures = agreement_figures(rows)
    issues = Counter(t for e in entries for t in (e.get("issues") or []) if t in ISSUE_TAGS)
    outcome = {"keep": "kept or fixed", "fix": "kept or fixed", "drop": "dropped"}
    by_outcome: dict[str, Counter[str]] = {t: Counter() for t in issues}
    for e in entries:
        for t in set(e.get("issues") or []) & set(issues):
            by_outcome[t][outcome.get(str(e.get("status")), "undecided")] += 1
    return {
        "project": scrubber.value(review.get("project")),
        "overlap": review.get("overlap"),
        "pulled_at": review.get("pulled_at"),
        "counts": counts,
        # recomputed from the per-item votes, so an older review.json gets them too (kappa as pulled)
        "fleiss_kappa": review.get("fleiss_kappa", figures["fleiss_kappa"]),
        "raw_agreement": figures["raw_agreement"],
        "gwet_ac1": figures["gwet_ac1"],
        "rated_items": len(rows),
        "adjudicated": sum(1 for e in entries if e.get("adjudicated")),
        "issue_tags": {t: issues[t] for t in ISSUE_TAGS if issues[t]},
        # the same counts by what the review decided: dropped items are tagged most and are not in the release
        "issue_tags_by_outcome": {t: dict(sorted(by_outcome[t].items())) for t in ISSUE_TAGS if issues[t]},
        "reviewers": anon,
        "problems": [scrubber.text(str(p)) for p in (review.get("problems") or [])],
        # votes the rooms' vote ledgers did not vouch for (annotation/ledger.py): left out, or counted on the
        # maintainer's word (pull --accept-unverified)
        "votes_quarantined": len(review.get("quarantined") or []),
        "votes_accepted_unverified": len(review.get("accepted_unverified") or []),
    }


def load_inputs(
    build_dir: str | Path, *, include_unreviewed: bool = False, known_pseudonyms: Mapping[str, str] | None = None
) -> ReleaseInputs:
    """Read and check a build dir and its review; choose the items to release.

    By default only reviewed items (``reviewed.jsonl``: kept, or fixed by the reviewers) are released and a build
    without a review is refused. With ``include_unreviewed`` the items not yet reviewed (no review at all, or pending,
    or waiting for adjudication) are added from ``items.jsonl``; items the reviewers dropped stay out either way.
    """
    build_dir = Path(build_dir)
    if not build_dir.is_dir():
        raise MirageError(f"{build_dir}: not a build directory")
    if unfinished(build_dir):
        raise MirageError(f"{build_dir}: an unfinished build (.partial); rerun the builder")
    build = _read_json(build_dir / "build.json")
    for key in ("benchmark", "name"):
        if not isinstance(build.get(key), str) or not build[key]:
            raise MirageError(f"{build_dir / 'build.json'}: missing or empty {key!r}")
    input_files = {"build.json": file_sha256(build_dir / "build.json")}
    all_items = _read_items(build_dir / "items.jsonl")
    input_files["items.jsonl"] = file_sha256(build_dir / "items.jsonl")

    review_path, reviewed_path = build_dir / "review.json", build_dir / "reviewed.jsonl"
    review_raw: dict[str, Any] | None = None
    if review_path.exists():
        review_raw = _read_json(review_path)
        input_files["review.json"] = file_sha256(review_path)
        if not reviewed_path.exists():
            raise MirageError(
                f"{reviewed_path}: missing although review.json exists; rerun `python -m annotation pull`"
            )
        input_files["reviewed.jsonl"] = file_sha256(reviewed_path)
    elif not include_unreviewed:
        raise MirageError(
            f"{build_dir}: no review (review.json); run `python -m annotation pull` first, "
            "or pass --include-unreviewed to release unreviewed items (the card will say so)"
        )

    scrubber = Scrubber(anonymise_reviewers((review_raw or {}).get("reviewers") or {}, known_pseudonyms))
    status: dict[str, str] = {}
    items: list[Item] = []
    excluded: dict[str, int] = {}
    recheck: dict[str, Any] = {}
    if review_raw is not None and (build_dir / RECHECK_FILE).exists():
        recheck = _read_json(build_dir / RECHECK_FILE)
        input_files[RECHECK_FILE] = file_sha256(build_dir / RECHECK_FILE)
    # the re-reviews' decisions on top of the first review's, as `annotation pull` wrote reviewed.jsonl
    review_items: Mapping[str, Any] = apply_rechecks((review_raw or {}).get("items") or {}, recheck,
                                                     {it.id: it.answer for it in all_items})
    if review_raw is not None:
        for it in _read_items(reviewed_path):
            st = (review_items.get(it.id) or {}).get("status", "keep")
            if st not in REVIEWED_STATUSES:
                raise MirageError(
                    f"{reviewed_path}: item {it.id} is in reviewed.jsonl but review.json marks it {st!r}; "
                    "rerun `python -m annotation pull`"
                )
            status[it.id] = st
            items.append(it)
    for it in all_items:
        if it.id in status:
            continue
        st = (review_items.get(it.id) or {}).get("status") or "unreviewed"
        if st in REVIEWED_STATUSES:
            raise MirageError(
                f"{review_path}: item {it.id} is marked {st!r} but missing from reviewed.jsonl; "
                "rerun `python -m annotation pull`"
            )
        if include_unreviewed and st != "drop":
            status[it.id] = "unreviewed"
            items.append(it)
        else:
            excluded[st] = excluded.get(st, 0) + 1
    if not items:
        raise MirageError(f"{build_dir}: no items to release (nothing was kept by the review)")
    ids = [it.id for it in items]
    if len(set(ids)) != len(ids):
        raise MirageError(f"{build_dir}: duplicate item ids in the items to release")
    items.sort(key=lambda it: it.id)
    summary = public_review_summary(review_raw, scrubber) if review_raw is not None else None
    rechecked = recheck_summary(review_items)
    if summary is not None and rechecked:
        summary["rechecked"] = rechecked
    return ReleaseInputs(
        build_dir=build_dir,
        build=build,
        items=items,
        status=status,
        review=summary,
        include_unreviewed=include_unreviewed,
        excluded=excluded,
        input_files=input_files,
        scrubber=scrubber,
        rechecked=rechecked,
    )


def recheck_summary(review_items: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per re-reviewed item (sorted by id): the re-review's decision and votes, the answer before and after, and
    the models' answer that sent it back; no reviewer names (the votes are counts)."""
    out = []
    for iid, entry in sorted(review_items.items()):
        note = entry.get("recheck") if isinstance(entry, Mapping) else None
        if not isinstance(note, Mapping):
            continue
        models = note.get("models") if isinstance(note.get("models"), Mapping) else {}
        out.append({"id": iid, "decision": note.get("status"), "votes": note.get("votes") or {},
                    "before": note.get("before"), "after": _after(note, entry), "released": entry.get("status") in REVIEWED_STATUSES,
                    "models_answer": models.get("answer"), "models_count": models.get("count"),
                    "models": models.get("models"), "p_label_error": models.get("p_label_error")})
    return out


def _after(note: Mapping[str, Any], entry: Mapping[str, Any]) -> str | None:
    """The answer a re-reviewed item carries now: the fix, nothing when dropped, else the answer it was shown."""
    return {"fix": entry.get("answer"), "drop": None}.get(str(note.get("status")), note.get("before"))
