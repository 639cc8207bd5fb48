"""From a Label Studio export to decisions: validation, majority of three, Fleiss' kappa, reviewer agreement.

Pure functions over plain data (the export's task dicts, the build's items): no server, no files.

Rules (``overlap`` reviewers per item, 3 by default; a majority is ``overlap // 2 + 1`` votes, so 2 of 3):

- An annotation is a *vote* when it was submitted (not skipped), has exactly one verdict among accept/fix/reject,
  and every choice it holds is one the item offers. Any invalid choice value voids the annotation (it is listed
  in ``problems``; the reviewer should correct it in Label Studio). A ``fix`` without a correct answer different
  from the proposed one is still a ``fix`` vote, but it cannot join a fix majority.
- One reviewer, one vote: a reviewer who annotated an item twice counts once, with their latest annotation.
- An author does not review their own work: an annotation by the person an item's ``provenance.author`` names
  (what ``annotation author pull`` recorded, e-mails compared case-insensitively) is not a vote; it is listed in
  ``problems`` and counted per reviewer in ``refused_own_work``.
- At most ``overlap`` votes per item, the earliest ones (Label Studio accepts a fourth annotation through the API or
  a second tab); later ones are listed in ``problems`` and ignored. With several rooms (one Label Studio server
  per reviewer slot, merged by ``pull``), at most ``room_cap`` votes per room count, the earliest of that room.
- A seat no vote can fill any more is *empty*: a reviewer whose last word on the item is a skip (it counts as
  "unsure"), or an author's refused vote (Label Studio counted it, so the room offers the task to nobody else).
  Empty seats fill the places votes leave, within each room's cap, and are listed in ``problems``.
- An item with fewer than ``overlap`` votes and empty seats together is ``pending``: review is still going on.
- Otherwise: ``keep`` when a majority (of ``overlap``, not of the votes cast) accepts, ``drop`` when a majority
  rejects, ``fix`` when a majority chose ``fix`` *and the same* correct answer (compared case- and
  space-insensitively for open answers), else ``adjudicate``. With an empty seat, a majority is only reached when
  the missing vote could not have changed it; otherwise the item waits for the maintainer's adjudication.
- An item in ``adjudicate`` can be settled by the maintainer in ``adjudications.json`` beside the build:
  ``{item_id: {"status": "keep"|"fix"|"drop", "answer": ... (for fix), "note": ...}}``. Only items without a
  majority take an adjudication; it never overrides three reviewers' majority.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Sequence

from annotation.config import (
    COMMENT,
    CORRECT_OPTION,
    CORRECT_TEXT,
    ISSUE_TAGS,
    ITEM_ID_FIELD,
    VERDICT,
    VERDICTS,
    ISSUES,
    VQA,
    annotation_errors,
    answer_label,
    correction_choices,
    item_kind,
)
from builders.items import Item
from builders.review import agreement_figures, fleiss_kappa, gwet_ac1, raw_agreement  # noqa: F401 - re-exported

ROOM_FIELD = "mirage_room"
"""Set by ``pull`` on each exported task: the room (Label Studio server, 1-based) it came from."""

STATUSES = ("keep", "fix", "drop", "adjudicate", "pending")
STATUS_OF_VERDICT = {"accept": "keep", "fix": "fix", "reject": "drop"}
VERDICT_OF_STATUS = {v: k for k, v in STATUS_OF_VERDICT.items()}


@dataclass(frozen=True)
class Vote:
    """One reviewer's valid annotation of one item."""

    annotation_id: int
    reviewer: str
    verdict: str
    answer: str | None = None  # the corrected answer of a fix (option letter, yes/no, or text), else None
    issues: tuple[str, ...] = ()
    comment: str = ""
    updated_at: str = ""
    room: int = 1  # the Label Studio server (reviewer slot) the annotation was made in

    @property
    def order(self) -> tuple[int, int]:
        """Creation order within a room, rooms in turn (annotation ids are only unique within one server)."""
        return (self.room, self.annotation_id)


@dataclass(frozen=True)
class EmptySeat:
    """A place on an item's panel that no vote fills and none can fill any more: the reviewer skipped the item
    (their last word on it: "unsure"), or the annotation was refused because the reviewer wrote the item."""

    annotation_id: int
    reviewer: str
    room: int
    reason: str  # SKIPPED or OWN_WORK

    @property
    def order(self) -> tuple[int, int]:
        return (self.room, self.annotation_id)


SKIPPED = "skipped (unsure)"
OWN_WORK = "own work (refused)"


@dataclass
class ItemDecision:
    item_id: str
    status: str
    votes: list[Vote]
    answer: str | None
    task_ids: list[dict[str, int]] = field(default_factory=list)  # {"room", "task"}
    adjudicated: dict[str, Any] | None = None

    empty: list["EmptySeat"] = field(default_factory=list)

    def vote_counts(self) -> dict[str, int]:
        c = Counter(v.verdict for v in self.votes)
        return {v: c.get(v, 0) for v in VERDICTS}


def reviewer_name(completed_by: Any, users: Mapping[int, str]) -> str:
    """The e-mail of an annotation's author (the export gives a user id, or a dict with one)."""
    if isinstance(completed_by, Mapping):
        if completed_by.get("email"):
            return str(completed_by["email"])
        completed_by = completed_by.get("id")
    try:
        uid = int(completed_by)
    except (TypeError, ValueError):
        return f"user {completed_by}"
    return users.get(uid, f"user {uid}")


def normalise_answer(text: str) -> str:
    """Comparison key of an open answer: case, surrounding space, inner runs of space and a final period ignored."""
    return re.sub(r"\s+", " ", text).strip().rstrip(".").strip().casefold()


def _results_by_control(result: Iterable[Mapping[str, Any]]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = defaultdict(list)
    for r in result or ():
        name = r.get("from_name")
        value = r.get("value") or {}
        if "choices" in value:
            out[name].extend(value.get("choices") or [])
        elif "text" in value:
            texts = value.get("text") or []
            out[name].extend(texts if isinstance(texts, list) else [texts])
        else:
            out[name].append(value)
    return out


def parse_annotation(
    item: Item, annotation: Mapping[str, Any], reviewer: str, where: str, room: int = 1, interface: Any = None
) -> tuple[Vote | None, list[str]]:
    """A :class:`Vote` from one exported annotation, or ``None`` with the reason(s) in the problem list.

    Skipped annotations give ``(None, [])``: skipping is allowed and is no problem.
    """
    if annotation.get("was_cancelled"):
        return None, []
    aid = int(annotation.get("id", 0))
    who = f"{where}: annotation {aid} by {reviewer}"
    controls = _results_by_control(annotation.get("result") or [])
    problems: list[str] = []

    verdicts = controls.get(VERDICT, [])
    if not verdicts:
        return None, [f"{who}: no verdict; annotation ignored"]
    if len(verdicts) > 1:
        return None, [f"{who}: {len(verdicts)} verdicts {verdicts}; annotation ignored"]
    verdict = verdicts[0]
    if verdict not in VERDICTS:
        return None, [f"{who}: invalid verdict {verdict!r} (expected accept, fix or reject); annotation ignored"]

    issues = controls.get(ISSUES, [])
    bad_tags = [t for t in issues if t not in ISSUE_TAGS]
    if bad_tags:
        return None, [f"{who}: invalid issue tag(s) {bad_tags}; annotation ignored"]

    offered = correction_choices(item)
    picked = controls.get(CORRECT_OPTION, [])
    bad = [p for p in picked if p not in offered]
    if bad:
        shown = ", ".join(repr(o) for o in offered) or "none"
        return None, [f"{who}: invalid correct option {bad[0]!r} (the item offers {shown}); annotation ignored"]
    if len(picked) > 1:
        return None, [f"{who}: {len(picked)} correct options {picked}; annotation ignored"]

    if interface is not None:
        sdk_errors = annotation_errors(interface, annotation.get("result") or [])
        if sdk_errors:
            return None, [f"{who}: does not fit the labeling config ({_clip(sdk_errors[0])}); annotation ignored"]

    answer: str | None = None
    if verdict == "fix":
        if item_kind(item) == VQA:
            texts = [str(t).strip() for t in controls.get(CORRECT_TEXT, []) if str(t).strip()]
            answer = texts[-1] if texts else None
            if answer is not None and normalise_answer(answer) == normalise_answer(item.answer):
                answer = None
        elif picked:
            answer = offered[picked[0]]
            if answer == item.answer:
                answer = None
        if answer is None:
            problems.append(f"{who}: verdict fix without a correct answer different from the proposed one")

    comments = [str(t).strip() for t in controls.get(COMMENT, []) if str(t).strip()]
    vote = Vote(
        annotation_id=aid,
        reviewer=reviewer,
        verdict=verdict,
        answer=answer,
        issues=tuple(sorted(set(issues))),
        comment="\n".join(comments),
        updated_at=str(annotation.get("updated_at") or annotation.get("created_at") or ""),
        room=room,
    )
    return vote, problems


def _clip(text: str, limit: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def select_votes(
    votes: Sequence[Vote], overlap: int, where: str, room_cap: int | None = None
) -> tuple[list[Vote], list[str]]:
    """One vote per reviewer (their latest), at most ``room_cap`` per room, then the first ``overlap`` in order."""
    problems: list[str] = []
    by_reviewer: dict[str, list[Vote]] = defaultdict(list)
    for v in sorted(votes, key=lambda v: v.order):
        by_reviewer[v.reviewer].append(v)
    kept: list[Vote] = []
    for reviewer, vs in sorted(by_reviewer.items()):
        if len(vs) > 1:
            ids = ", ".join(_ann_ref(v) for v in vs)
            problems.append(
                f"{where}: {reviewer} annotated {len(vs)} times (annotations {ids}); only the latest "
                f"({_ann_ref(vs[-1])}) counts"
            )
        kept.append(vs[-1])
    kept.sort(key=lambda v: v.order)
    if room_cap is not None:
        per_room: Counter[int] = Counter()
        capped: list[Vote] = []
        for v in kept:
            per_room[v.room] += 1
            if per_room[v.room] > room_cap:
                problems.append(
                    f"{where}: annotation {_ann_ref(v)} by {v.reviewer} is beyond the {room_cap} wanted in room "
                    f"{v.room}; ignored"
                )
            else:
                capped.append(v)
        kept = capped
    if len(kept) > overlap:
        for extra in kept[overlap:]:
            problems.append(
                f"{where}: annotation {_ann_ref(extra)} by {extra.reviewer} is beyond the {overlap} wanted "
                f"(vote {kept.index(extra) + 1} of {len(kept)}); ignored"
            )
        kept = kept[:overlap]
    return kept, problems


def fill_empty_seats(
    votes: Sequence[Vote], seats: Sequence[EmptySeat], voters: set[str], overlap: int, room_cap: int | None
) -> list[EmptySeat]:
    """The empty seats that take the places ``votes`` leave: one per reviewer who has no valid vote on the item
    (``voters``: everyone who has), earliest first, within each room's cap and up to ``overlap`` in all."""
    used: Counter[int] = Counter(v.room for v in votes)
    out: list[EmptySeat] = []
    seen: set[str] = set()
    for seat in sorted(seats, key=lambda s: s.order, reverse=True):  # a reviewer's latest word counts
        if seat.reviewer in voters or seat.reviewer in seen:
            continue
        seen.add(seat.reviewer)
        out.append(seat)
    kept: list[EmptySeat] = []
    for seat in sorted(out, key=lambda s: s.order):
        if len(votes) + len(kept) >= overlap or (room_cap is not None and used[seat.room] >= room_cap):
            continue
        used[seat.room] += 1
        kept.append(seat)
    return kept


def room_capacity(overlap: int, rooms: int) -> int:
    """Votes one room contributes per item: ``ceil(overlap / rooms)`` (1 with three rooms and overlap 3)."""
    return -(-overlap // max(1, rooms))


def _ann_ref(v: Vote) -> str:
    """An annotation as problems name it: its id, with the room when there are several."""
    return str(v.annotation_id) if v.room == 1 else f"{v.annotation_id} (room {v.room})"


def decide(item: Item, votes: Sequence[Vote], overlap: int = 3, empty: int = 0) -> tuple[str, str | None]:
    """``(status, final answer)`` for an item from its selected votes and its ``empty`` seats (see
    :class:`EmptySeat`). A majority is ``overlap // 2 + 1`` votes whatever the seats left empty, so it is only
    reached when the missing votes could not have changed the outcome."""
    if len(votes) + empty < overlap:
        return "pending", None
    need = overlap // 2 + 1
    counts = Counter(v.verdict for v in votes)
    if counts["accept"] >= need:
        return "keep", item.answer
    if counts["reject"] >= need:
        return "drop", None
    fixes: dict[str, list[Vote]] = defaultdict(list)
    for v in votes:
        if v.verdict == "fix" and v.answer is not None:
            key = normalise_answer(v.answer) if item_kind(item) == VQA else v.answer
            fixes[key].append(v)
    for group in fixes.values():
        if len(group) >= need:
            return "fix", min(group, key=lambda v: v.annotation_id).answer
    return "adjudicate", None


def agrees(vote: Vote, decision: ItemDecision, kind: str) -> bool:
    """Whether a vote matches the majority decision (for a fix: the verdict and the same answer)."""
    want = VERDICT_OF_STATUS[decision.status]
    if vote.verdict != want:
        return False
    if want != "fix":
        return True
    if vote.answer is None or decision.answer is None:
        return False
    if kind == VQA:
        return normalise_answer(vote.answer) == normalise_answer(decision.answer)
    return vote.answer == decision.answer


def reviewer_stats(items: Mapping[str, Item], decisions: Iterable[ItemDecision]) -> dict[str, dict[str, Any]]:
    """Per reviewer: counted annotations, and agreement with the majority over items that have one."""
    counted: Counter[str] = Counter()
    decided: Counter[str] = Counter()
    agreed: Counter[str] = Counter()
    for d in decisions:
        for v in d.votes:
            counted[v.reviewer] += 1
            if d.status in STATUS_OF_VERDICT.values() and d.adjudicated is None:
                decided[v.reviewer] += 1
                agreed[v.reviewer] += agrees(v, d, item_kind(items[d.item_id]))
    return {
        r: {
            "annotations": counted[r],
            "decided_items": decided[r],
            # unrounded: a reader rounds once, when it shows the figure (98.947% must not become 99.0%)
            "agreement_with_majority": agreed[r] / decided[r] if decided[r] else None,
            "agreed_items": agreed[r],
        }
        for r in sorted(counted)
    }


def apply_adjudication(item: Item, decision: ItemDecision, adj: Any, where: str) -> list[str]:
    """Settle an ``adjudicate`` item from the maintainer's entry; returns problems (entry ignored if any)."""
    if decision.status != "adjudicate":
        return [f"{where}: status {decision.status!r}, not adjudicate; its adjudication is ignored"]
    if not isinstance(adj, Mapping) or adj.get("status") not in ("keep", "fix", "drop"):
        return [f"{where}: adjudication needs a status keep, fix or drop; ignored"]
    status = adj["status"]
    answer: str | None = {"keep": item.answer, "drop": None}.get(status)
    if status == "fix":
        answer = adj.get("answer")
        offered = set(correction_choices(item).values())
        if not isinstance(answer, str) or not answer.strip():
            return [f"{where}: adjudication fix without an answer; ignored"]
        if offered and answer not in offered:
            return [f"{where}: adjudication answer {answer!r} is not one of {sorted(offered)}; ignored"]
        if answer == item.answer:
            return [f"{where}: adjudication fix to the proposed answer {answer!r}; use keep; ignored"]
    decision.status = status
    decision.answer = answer
    decision.adjudicated = {"status": status, "answer": answer, "note": str(adj.get("note", ""))}
    return []


def resolve(
    items: Sequence[Item],
    tasks: Sequence[Mapping[str, Any]],
    users: Mapping[int, str],
    overlap: int = 3,
    adjudications: Mapping[str, Any] | None = None,
    rooms: int = 1,
    label_config: str | None = None,
) -> dict[str, Any]:
    """The decision part of ``review.json`` (counts, kappa, reviewers, problems, items) from an export.

    A task may carry ``ROOM_FIELD`` (set by ``pull`` when it merges several rooms); tasks without it are room 1.
    With ``rooms`` > 1 each room counts at most ``room_capacity(overlap, rooms)`` votes per item.
    """
    room_cap = room_capacity(overlap, rooms) if rooms > 1 else None
    interface = None
    if label_config:  # every annotation is also checked against the project's config by the SDK
        from annotation.config import config_interface

        interface = config_interface(label_config)
    adjudications = adjudications or {}
    by_id = {it.id: it for it in items}
    problems: list[str] = []
    raw_votes: dict[str, list[Vote]] = defaultdict(list)
    task_ids: dict[str, list[dict[str, int]]] = defaultdict(list)
    skipped: Counter[str] = Counter()
    own_work: Counter[str] = Counter()  # votes refused because the reviewer wrote the item (provenance.author)
    seats: dict[str, list[EmptySeat]] = defaultdict(list)

    for task in sorted(tasks, key=lambda t: (int(t.get(ROOM_FIELD, 1)), int(t.get("id", 0)))):
        tid = int(task.get("id", 0))
        room = int(task.get(ROOM_FIELD, 1))
        iid = (task.get("data") or {}).get(ITEM_ID_FIELD)
        if not iid:
            problems.append(f"{_task_ref(room, tid)}: no {ITEM_ID_FIELD} in its data (not pushed by Mirage); ignored")
            continue
        item = by_id.get(iid)
        if item is None:
            problems.append(f"{_task_ref(room, tid)}: item {iid} is not in this build; ignored")
            continue
        task_ids[iid].append({"room": room, "task": tid})
        where = f"item {iid} ({_task_ref(room, tid)})"
        author = str(item.provenance.get("author") or "").strip().lower()
        for ann in sorted(task.get("annotations") or [], key=lambda a: int(a.get("id", 0))):
            reviewer = reviewer_name(ann.get("completed_by"), users)
            aid = int(ann.get("id", 0))
            if ann.get("was_cancelled"):
                skipped[reviewer] += 1
                seats[iid].append(EmptySeat(aid, reviewer, room, SKIPPED))
            elif author and reviewer.strip().lower() == author:
                own_work[reviewer] += 1
                seats[iid].append(EmptySeat(aid, reviewer, room, OWN_WORK))
                problems.append(f"{where}: annotation {aid} by {reviewer}, who wrote this item's text; "
                                "not counted (an author does not review their own work)")
                continue
            vote, probs = parse_annotation(item, ann, reviewer, where, room, interface)
            problems.extend(probs)
            if vote is not None:
                raw_votes[iid].append(vote)

    decisions: list[ItemDecision] = []
    for it in sorted(items, key=lambda i: i.id):
        where = f"item {it.id}"
        rooms_seen = Counter(t["room"] for t in task_ids.get(it.id, []))
        if any(n > 1 for n in rooms_seen.values()):
            ids = ", ".join(str(t["task"]) + ("" if t["room"] == 1 else f" of room {t['room']}") for t in task_ids[it.id])
            problems.append(f"{where} is in {len(task_ids[it.id])} tasks ({ids}); their annotations are pooled")
        votes, probs = select_votes(raw_votes.get(it.id, []), overlap, where, room_cap)
        problems.extend(probs)
        voters = {v.reviewer for v in raw_votes.get(it.id, [])}
        empty = fill_empty_seats(votes, seats.get(it.id, []), voters, overlap, room_cap)
        status, answer = decide(it, votes, overlap, len(empty))
        decision = ItemDecision(it.id, status, votes, answer, task_ids.get(it.id, []), empty=empty)
        if it.id in adjudications:
            problems.extend(apply_adjudication(it, decision, adjudications[it.id], f"adjudications.json: item {it.id}"))
        if empty and decision.status != "pending":  # a pending item may still get its votes: nothing to act on
            problems.append(_empty_seat_problem(where, decision, overlap))
        decisions.append(decision)

    for iid in sorted(set(adjudications) - set(by_id)):
        problems.append(f"adjudications.json: item {iid} is not in this build; ignored")
    for room in range(1, rooms + 1):
        missing = [it.id for it in items if all(t["room"] != room for t in task_ids.get(it.id, []))]
        if missing:
            where = "the project" if rooms == 1 else f"room {room}'s project"
            problems.append(f"{len(missing)} item(s) of the build are not in {where} (first: {missing[0]}); push them")

    counts = Counter(d.status for d in decisions)
    # kappa needs the same number of ratings per item: items with an empty seat stay out of every figure
    kappa_rows = [d.vote_counts() for d in decisions if d.status != "pending" and not d.empty]
    figures = agreement_figures(kappa_rows)
    reviewers = reviewer_stats(by_id, decisions)
    for r, n in skipped.items():
        reviewers.setdefault(
            r, {"annotations": 0, "decided_items": 0, "agreed_items": 0, "agreement_with_majority": None}
        )
        reviewers[r]["skipped"] = n
    for stats in reviewers.values():
        stats.setdefault("skipped", 0)

    out_items: dict[str, Any] = {}
    for d in decisions:
        it = by_id[d.item_id]
        out_items[d.item_id] = {
            "status": d.status,
            "votes": d.vote_counts(),
            "answer": d.answer,
            "answer_label": answer_label(it, d.answer) if d.answer is not None else None,
            "issues": sorted({t for v in d.votes for t in v.issues}),
            "comments": [v.comment for v in d.votes if v.comment],
            "annotations": [
                {
                    "id": v.annotation_id,
                    "room": v.room,
                    "reviewer": v.reviewer,
                    "verdict": v.verdict,
                    "answer": v.answer,
                    "issues": list(v.issues),
                    "comment": v.comment,
                }
                for v in d.votes
            ],
            "task_ids": d.task_ids,
        }
        if d.empty:
            out_items[d.item_id]["empty_seats"] = [
                {"room": e.room, "reviewer": e.reviewer, "annotation": e.annotation_id, "reason": e.reason}
                for e in d.empty
            ]
        if d.adjudicated is not None:
            out_items[d.item_id]["adjudicated"] = d.adjudicated
    return {
        "overlap": overlap,
        "counts": {"total": len(items), **{s: counts.get(s, 0) for s in STATUSES}},
        **figures,
        "reviewers": reviewers,
        "refused_own_work": dict(sorted(own_work.items())),
        "problems": problems,
        "items": out_items,
    }


def _empty_seat_problem(where: str, decision: ItemDecision, overlap: int) -> str:
    """One line: who left which seat empty, and what that means for the item."""
    seats = "; ".join(
        f"{e.reviewer}" + (f" in room {e.room}" if e.room != 1 else "") + f": {e.reason}" for e in decision.empty
    )
    n = len(decision.votes)
    if decision.adjudicated is not None:
        outcome = f"{n} vote(s) of {overlap}, settled by adjudication ({decision.status})"
    elif decision.status == "adjudicate":
        outcome = f"{n} vote(s) of {overlap} and no majority: settle it in adjudications.json"
    else:
        outcome = f"decided by {n} vote(s) of {overlap} ({decision.status}: the empty seat could not change it)"
    return f"{where}: seat left empty ({seats}); {outcome}"


def _task_ref(room: int, task_id: int) -> str:
    return f"task {task_id}" if room == 1 else f"task {task_id} of room {room}"


SUPERSEDED_BY_FIX = ("answer_state", "images", "option_labels", "count", "challenging_images", "answer_from")
"""Provenance keys that describe the *original* answer (MIOH's answer state, its per-image and per-option labels
and difficulty, the count behind a counting answer, ...). A fix proves them wrong or at least unverified, so they
move to ``provenance.review.superseded`` instead of staying beside the corrected answer; structural keys
(``answer_slots``, the template, the probe, the sources) stay."""


def reviewed_items(items: Sequence[Item], review: Mapping[str, Any]) -> list[Item]:
    """The items to release: ``keep`` and ``fix`` ones, the answer replaced for ``fix``, provenance recording it.

    For a fix, the provenance keys of :data:`SUPERSEDED_BY_FIX` move to ``provenance.review.superseded``: the
    builder derived them for the answer the reviewers overruled, and no code can re-derive them from a verdict.
    """
    out = []
    for it in sorted(items, key=lambda i: i.id):
        entry = review["items"].get(it.id)
        if not entry or entry["status"] not in ("keep", "fix"):
            continue
        provenance = dict(it.provenance)
        provenance["review"] = {
            "status": entry["status"],
            "votes": dict(entry["votes"]),
            "original_answer": it.answer,
            "annotators": len(entry.get("annotations", [])) or sum(entry["votes"].values()),
        }
        if entry.get("adjudicated"):
            provenance["review"]["adjudicated"] = True
        if entry["status"] == "fix":
            stale = {k: provenance.pop(k) for k in SUPERSEDED_BY_FIX if k in provenance}
            if stale:
                provenance["review"]["superseded"] = stale
        # The id stays the original one even for fixes: the item is the same question, now correctly answered.
        answer = entry["answer"] if entry["status"] == "fix" else it.answer
        out.append(replace(it, answer=answer, provenance=provenance))
    return out
