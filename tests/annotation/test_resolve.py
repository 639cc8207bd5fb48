"""Resolution rules, Fleiss' kappa and agreement, on hand-made exports (no server)."""

from __future__ import annotations

import pytest

from annotation.config import ITEM_ID_FIELD
from annotation.resolve import (
    ItemDecision,
    Vote,
    decide,
    fleiss_kappa,
    normalise_answer,
    parse_annotation,
    resolve,
    reviewed_items,
    reviewer_stats,
    select_votes,
)
from builders.items import make_item
from tests.annotation.lshelpers import result

MCQ = make_item(benchmark="mioh", task="counting", question_type="selective", pressure="easy",
                images=["images/a.png", "images/b.png"], question="How many cats?",
                options=["1", "2", "3", "None of the above"], answer="B", provenance={"template": "t1"})
YN = make_item(benchmark="reefknot", task="relation", question_type="yes_no", pressure="easy",
               images=["/data/vg/1.jpg"], question="Is the cup on the table?", options=[], answer="yes")
VQA = make_item(benchmark="reefknot", task="relation", question_type="vqa", pressure="easy",
                images=["/data/vg/2.jpg"], question="What is the cup on?", options=[], answer="The cup is on the table")
USERS = {1: "a@x", 2: "b@x", 3: "c@x", 4: "d@x"}


def ann(aid, user, res, cancelled=False):
    return {"id": aid, "completed_by": user, "result": res, "was_cancelled": cancelled,
            "created_at": f"2026-01-01T00:00:{aid:02d}Z", "updated_at": f"2026-01-01T00:00:{aid:02d}Z"}


def task(tid, item, *anns):
    return {"id": tid, "data": {ITEM_ID_FIELD: item.id}, "annotations": list(anns)}


def V(aid, who, verdict, answer=None):
    return Vote(aid, who, verdict, answer)


# ---------------------------------------------------------------- Fleiss' kappa
def test_fleiss_kappa_wikipedia_example():
    # Fleiss (1971) via Wikipedia: 10 subjects, 14 raters, 5 categories; kappa = 0.210
    table = [
        [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
    ]
    cats = "12345"
    rows = [dict(zip(cats, r)) for r in table]
    assert fleiss_kappa(rows, cats) == pytest.approx(0.20993, abs=1e-4)


def test_fleiss_kappa_small_hand_values():
    # two items, three raters: (3,0,0) and (0,0,3): P_bar = 1, p = (.5, 0, .5), P_e = .5 -> kappa 1
    rows = [{"accept": 3}, {"reject": 3}]
    assert fleiss_kappa(rows) == pytest.approx(1.0)
    # (2,1,0) and (1,2,0): P_i = 1/3 each; p = (.5,.5,0), P_e = .5 -> (1/3 - 1/2)/(1/2) = -1/3
    rows = [{"accept": 2, "fix": 1}, {"accept": 1, "fix": 2}]
    assert fleiss_kappa(rows) == pytest.approx(-1 / 3)
    assert fleiss_kappa([{"accept": 3}, {"accept": 3}]) is None  # all in one category: undefined
    assert fleiss_kappa([]) is None
    with pytest.raises(ValueError):
        fleiss_kappa([{"accept": 3}, {"accept": 2}])


# ---------------------------------------------------------------- decisions
@pytest.mark.parametrize(
    "votes, expected",
    [
        ([V(1, "a", "accept"), V(2, "b", "accept"), V(3, "c", "reject")], ("keep", "B")),
        ([V(1, "a", "reject"), V(2, "b", "fix", "C"), V(3, "c", "reject")], ("drop", None)),
        ([V(1, "a", "fix", "C"), V(2, "b", "fix", "C"), V(3, "c", "accept")], ("fix", "C")),
        ([V(1, "a", "fix", "C"), V(2, "b", "fix", "A"), V(3, "c", "accept")], ("adjudicate", None)),
        ([V(1, "a", "fix", "C"), V(2, "b", "fix", None), V(3, "c", "accept")], ("adjudicate", None)),
        ([V(1, "a", "accept"), V(2, "b", "fix", "C"), V(3, "c", "reject")], ("adjudicate", None)),
        ([V(1, "a", "accept"), V(2, "b", "accept")], ("pending", None)),
        ([], ("pending", None)),
    ],
)
def test_decide(votes, expected):
    assert decide(MCQ, votes) == expected


def test_decide_open_answers_compare_loosely_and_keep_the_first_wording():
    votes = [V(1, "a", "fix", "The cup is on the  shelf."), V(2, "b", "fix", "the cup is on the shelf"),
             V(3, "c", "reject")]
    assert decide(VQA, votes) == ("fix", "The cup is on the  shelf.")
    assert normalise_answer(" A  b. ") == "a b"


def test_decide_other_overlaps():
    five = [V(1, "a", "accept"), V(2, "b", "accept"), V(3, "c", "reject"), V(4, "d", "reject"), V(5, "e", "accept")]
    assert decide(MCQ, five, overlap=5) == ("keep", "B")
    assert decide(MCQ, five[:4], overlap=5) == ("pending", None)


# ---------------------------------------------------------------- annotation validation
def test_parse_valid_fix_mcq_maps_label_to_letter():
    vote, probs = parse_annotation(MCQ, ann(7, 1, result(MCQ, "fix", "C", ("wording",), "three, not two")), "a@x", "w")
    assert probs == []
    assert vote == Vote(7, "a@x", "fix", "C", ("wording",), "three, not two", "2026-01-01T00:00:07Z")


@pytest.mark.parametrize(
    "res, fragment",
    [
        (result(MCQ, "maybe"), "invalid verdict 'maybe'"),
        (result(MCQ, "fix", raw_option="E. 5"), "invalid correct option 'E. 5'"),
        (result(MCQ, "accept", issues=("blurry",)), "invalid issue tag"),
        ([], "no verdict"),
        (result(MCQ, "accept") + result(MCQ, "reject"), "2 verdicts"),
    ],
)
def test_parse_invalid_annotations_are_not_votes(res, fragment):
    vote, probs = parse_annotation(MCQ, ann(3, 2, res), "b@x", "item X (task 9)")
    assert vote is None
    assert len(probs) == 1 and fragment in probs[0] and probs[0].startswith("item X (task 9): annotation 3 by b@x")


def test_parse_fix_without_a_different_answer_is_a_fix_vote_without_answer():
    vote, probs = parse_annotation(MCQ, ann(3, 2, result(MCQ, "fix", "B")), "b@x", "w")  # B is the proposed one
    assert vote.verdict == "fix" and vote.answer is None and "without a correct answer" in probs[0]
    vote, probs = parse_annotation(YN, ann(4, 2, result(YN, "fix")), "b@x", "w")
    assert vote.verdict == "fix" and vote.answer is None and probs


def test_parse_yes_no_and_open_answers():
    vote, _ = parse_annotation(YN, ann(1, 1, result(YN, "fix", "no")), "a@x", "w")
    assert vote.answer == "no"
    vote, _ = parse_annotation(VQA, ann(1, 1, result(VQA, "fix", "  The cup is on a chair ")), "a@x", "w")
    assert vote.answer == "The cup is on a chair"
    vote, _ = parse_annotation(VQA, ann(1, 1, result(VQA, "accept", "ignored text")), "a@x", "w")
    assert vote.answer is None  # a correction only counts with the verdict fix


def test_skipped_annotations_are_neither_votes_nor_problems():
    assert parse_annotation(MCQ, ann(1, 1, [], cancelled=True), "a@x", "w") == (None, [])


def test_select_votes_duplicates_and_extras():
    votes = [V(1, "a", "accept"), V(2, "b", "reject"), V(3, "a", "reject"), V(4, "c", "accept"), V(5, "d", "fix")]
    kept, probs = select_votes(votes, 3, "item X")
    # a's latest (3) replaces 1; then the first three by id: 2 (b), 3 (a), 4 (c); 5 (d) is beyond
    assert [v.annotation_id for v in kept] == [2, 3, 4]
    assert len(probs) == 2
    assert "a annotated 2 times (annotations 1, 3); only the latest (3) counts" in probs[0]
    assert "annotation 5 by d is beyond the 3 wanted" in probs[1]


# ---------------------------------------------------------------- whole export
def test_resolve_export_by_hand():
    tasks = [
        task(10, MCQ, ann(1, 1, result(MCQ, "fix", "C")), ann(2, 2, result(MCQ, "fix", "C")),
             ann(3, 3, result(MCQ, "accept", comment="looks fine"))),
        task(11, YN, ann(4, 1, result(YN, "accept")), ann(5, 2, result(YN, "accept")),
             ann(6, 3, result(YN, "accept")), ann(7, 4, result(YN, "reject"))),
        task(12, VQA, ann(8, 1, result(VQA, "reject", issues=("trivial",)))),
        {"id": 13, "data": {"text": "foreign"}, "annotations": []},
        {"id": 14, "data": {ITEM_ID_FIELD: "0000000000000000"}, "annotations": []},
    ]
    out = resolve([MCQ, YN, VQA], tasks, USERS)
    assert out["counts"] == {"total": 3, "keep": 1, "fix": 1, "drop": 0, "adjudicate": 0, "pending": 1}
    mcq = out["items"][MCQ.id]
    assert mcq["status"] == "fix" and mcq["answer"] == "C" and mcq["answer_label"] == "C. 3"
    assert mcq["votes"] == {"accept": 1, "fix": 2, "reject": 0}
    assert mcq["comments"] == ["looks fine"]
    assert out["items"][YN.id]["votes"] == {"accept": 3, "fix": 0, "reject": 0}
    assert out["items"][VQA.id]["status"] == "pending"
    assert out["items"][VQA.id]["issues"] == ["trivial"]
    # rows (1,2,0) and (3,0,0): p = (4/6, 2/6, 0), P_e = 20/36; P = (1/3 + 1)/2 = 2/3 -> (24/36-20/36)/(16/36) = 1/4
    assert out["fleiss_kappa"] == pytest.approx(0.25)
    assert out["reviewers"]["a@x"]["agreement_with_majority"] == 1.0
    assert out["reviewers"]["c@x"]["agreement_with_majority"] == 0.5
    assert out["reviewers"]["a@x"]["annotations"] == 3
    assert "d@x" not in out["reviewers"]  # the fourth annotation is not counted
    problems = out["problems"]
    assert any("task 13: no mirage_id" in p for p in problems)
    assert any("task 14: item 0000000000000000 is not in this build" in p for p in problems)
    assert any("annotation 7 by d@x is beyond the 3 wanted" in p for p in problems)


def test_resolve_pools_an_item_pushed_twice_and_reports_unpushed_items():
    tasks = [task(1, MCQ, ann(1, 1, result(MCQ, "accept"))), task(2, MCQ, ann(2, 2, result(MCQ, "accept")))]
    out = resolve([MCQ, YN], tasks, USERS)
    assert out["items"][MCQ.id]["votes"]["accept"] == 2
    assert any("is in 2 tasks (1, 2)" in p for p in out["problems"])
    assert any("1 item(s) of the build are not in the project" in p for p in out["problems"])


def test_reviewed_items_replace_fixed_answers_and_record_provenance():
    tasks = [task(10, MCQ, ann(1, 1, result(MCQ, "fix", "C")), ann(2, 2, result(MCQ, "fix", "C")),
                  ann(3, 3, result(MCQ, "reject")))]
    review = resolve([MCQ, YN], tasks, USERS)
    (fixed,) = reviewed_items([MCQ, YN], review)
    assert fixed.answer == "C" and fixed.id == MCQ.id
    assert fixed.provenance == {
        "template": "t1",
        "review": {"status": "fix", "votes": {"accept": 0, "fix": 2, "reject": 1}, "original_answer": "B",
                   "annotators": 3},
    }


def test_adjudications_settle_only_items_without_a_majority():
    tie = [task(10, MCQ, ann(1, 1, result(MCQ, "accept")), ann(2, 2, result(MCQ, "fix", "C")),
                ann(3, 3, result(MCQ, "reject")))]
    keep = [task(11, YN, ann(4, 1, result(YN, "accept")), ann(5, 2, result(YN, "accept")),
                 ann(6, 3, result(YN, "reject")))]
    adj = {MCQ.id: {"status": "fix", "answer": "D", "note": "checked with the team"},
           YN.id: {"status": "drop"}, "ffffffffffffffff": {"status": "keep"}}
    out = resolve([MCQ, YN], tie + keep, USERS, adjudications=adj)
    assert out["items"][MCQ.id]["status"] == "fix" and out["items"][MCQ.id]["answer"] == "D"
    assert out["items"][MCQ.id]["adjudicated"] == {"status": "fix", "answer": "D", "note": "checked with the team"}
    assert out["items"][YN.id]["status"] == "keep"  # a majority is never overridden
    assert out["counts"]["fix"] == 1 and out["counts"]["adjudicate"] == 0
    assert any(YN.id in p and "not adjudicate" in p for p in out["problems"])
    assert any("ffffffffffffffff is not in this build" in p for p in out["problems"])
    # the adjudicated item does not count towards agreement with a majority it did not have
    assert out["reviewers"]["a@x"]["decided_items"] == 1
    (fixed, kept) = sorted(reviewed_items([MCQ, YN], out), key=lambda i: i.id != MCQ.id)
    assert fixed.answer == "D" and fixed.provenance["review"]["adjudicated"] is True
    bad = resolve([MCQ], tie, USERS, adjudications={MCQ.id: {"status": "fix", "answer": "Z"}})
    assert bad["items"][MCQ.id]["status"] == "adjudicate" and "is not one of" in bad["problems"][-1]


# ---------------------------------------------------------------- issue 15 part 5
def test_a_fix_moves_the_provenance_of_the_original_answer_aside():
    from dataclasses import replace

    item = replace(MCQ, provenance={"template": "t", "answer_slots": 4, "answer_state": "first",
                                    "images": [{"id": "x", "label": "pos", "difficulty": "hard_positive"}]})
    review = {"items": {item.id: {"status": "fix", "votes": {"accept": 0, "fix": 3, "reject": 0}, "answer": "C",
                                  "annotations": []}}}
    (fixed,) = reviewed_items([item], review)
    assert fixed.answer == "C"
    assert "answer_state" not in fixed.provenance and "images" not in fixed.provenance
    assert fixed.provenance["review"]["superseded"] == {
        "answer_state": "first", "images": [{"id": "x", "label": "pos", "difficulty": "hard_positive"}]}
    assert fixed.provenance["template"] == "t" and fixed.provenance["answer_slots"] == 4  # structure stays
    review["items"][item.id]["status"] = "keep"
    (kept,) = reviewed_items([item], review)
    assert kept.provenance["answer_state"] == "first" and "superseded" not in kept.provenance["review"]


def test_agreement_is_stored_unrounded():
    # 19 items; reviewer d dissents once: 18/19 = 0.947368..., which a 4-digit rounding would turn into 0.9474
    from dataclasses import replace

    items = [replace(MCQ, id=f"{i:016x}") for i in range(19)]
    decisions = [
        ItemDecision(it.id, "keep", [V(1, "a", "accept"), V(2, "b", "accept"),
                                     V(3, "d", "reject" if i == 0 else "accept")], it.answer)
        for i, it in enumerate(items)
    ]
    stats = reviewer_stats({it.id: it for it in items}, decisions)
    assert stats["d"]["agreement_with_majority"] == 18 / 19
    assert stats["d"]["agreed_items"] == 18 and stats["d"]["decided_items"] == 19


def test_rooms_count_one_vote_each():
    votes = [Vote(1, "a", "accept", room=1), Vote(2, "b", "reject", room=1), Vote(1, "c", "accept", room=2),
             Vote(7, "d", "accept", room=3)]
    kept, problems = select_votes(votes, 3, "item x", room_cap=1)
    assert [(v.room, v.reviewer) for v in kept] == [(1, "a"), (2, "c"), (3, "d")]
    assert problems == ["item x: annotation 2 by b is beyond the 1 wanted in room 1; ignored"]


def test_raw_agreement_and_gwet_ac1_by_hand():
    """Nine unanimous accepts and one 2-1 split: kappa is negative (the kappa paradox), AC1 is not."""
    from annotation.resolve import agreement_figures, gwet_ac1, raw_agreement

    rows = [{"accept": 3}] * 9 + [{"accept": 2, "reject": 1}]
    # p_a = (9 + 1/3) / 10 = 28/30; pi = (29/30, 0, 1/30); p_e(AC1) = 2 * 29/900 / 2 = 29/900
    assert raw_agreement(rows) == pytest.approx(28 / 30)
    assert gwet_ac1(rows) == pytest.approx((840 - 29) / (900 - 29))
    # kappa: P_e = (841 + 1) / 900 -> (840 - 842) / (900 - 842)
    assert agreement_figures(rows)["fleiss_kappa"] == pytest.approx(-2 / 58, abs=1e-6)
    assert gwet_ac1([{"accept": 3}, {"reject": 3}]) == pytest.approx(1.0)
    assert raw_agreement([]) is None and gwet_ac1([{"accept": 1}]) is None


def test_an_author_vote_on_their_own_item_is_refused():
    from dataclasses import replace

    authored = replace(VQA, provenance={"author": "A@X"})  # e-mails compare case-insensitively
    anns = [ann(1, 1, result(authored, "accept")), ann(2, 2, result(authored, "reject")),
            ann(3, 3, result(authored, "reject")), ann(4, 4, result(authored, "accept"))]
    out = resolve([authored], [task(1, authored, *anns)], USERS)
    entry = out["items"][authored.id]
    assert [a["reviewer"] for a in entry["annotations"]] == ["b@x", "c@x", "d@x"]  # a@x's vote is not one of them
    assert entry["status"] == "drop" and out["refused_own_work"] == {"a@x": 1}
    assert any("annotation 1 by a@x, who wrote this item's text" in p for p in out["problems"])
    # without a recorded author the same votes count: the first three decide
    plain = resolve([VQA], [task(1, VQA, *[ann(a["id"], a["completed_by"], result(VQA, v)) for a, v in
                                           zip(anns, ("accept", "reject", "reject", "accept"))])], USERS)
    assert plain["refused_own_work"] == {} and plain["items"][VQA.id]["votes"] == {"accept": 1, "fix": 0, "reject": 2}


# ---------------------------------------------------------------- issue 42: skips and an author's own item
def _room(tid, room, item, *anns):
    t = task(tid, item, *anns)
    t["mirage_room"] = room
    return t


def test_a_skip_that_stays_a_skip_is_an_unsure_seat_and_the_item_reaches_a_verdict():
    # three rooms, one reviewer each; room 3's reviewer skipped and never came back
    agree = [_room(1, 1, MCQ, ann(1, 1, result(MCQ, "accept"))), _room(1, 2, MCQ, ann(1, 2, result(MCQ, "accept"))),
             _room(1, 3, MCQ, ann(1, 3, [], cancelled=True))]
    split = [_room(2, 1, YN, ann(2, 1, result(YN, "accept"))), _room(2, 2, YN, ann(2, 2, result(YN, "reject"))),
             _room(2, 3, YN, ann(2, 3, [], cancelled=True))]
    out = resolve([MCQ, YN], agree + split, USERS, rooms=3)
    assert out["items"][MCQ.id]["status"] == "keep"  # 2 of 3 accept: the third vote could not change it
    assert out["items"][YN.id]["status"] == "adjudicate"  # 1-1 and an unsure: the maintainer decides
    assert out["items"][MCQ.id]["empty_seats"] == [
        {"room": 3, "reviewer": "c@x", "annotation": 1, "reason": "skipped (unsure)"}]
    text = "\n".join(out["problems"])
    assert f"item {MCQ.id}: seat left empty (c@x in room 3: skipped (unsure)); decided by 2 vote(s) of 3" in text
    assert f"item {YN.id}: seat left empty" in text and "settle it in adjudications.json" in text
    assert out["fleiss_kappa"] is None and out["raw_agreement"] is None  # no item has three ratings
    # the adjudication of such an item is accepted
    settled = resolve([YN], split, USERS, rooms=3, adjudications={YN.id: {"status": "drop"}})
    assert settled["items"][YN.id]["status"] == "drop" and settled["items"][YN.id]["adjudicated"]


def test_a_skip_the_reviewer_came_back_to_is_no_seat():
    tasks = [_room(1, 1, MCQ, ann(1, 1, result(MCQ, "accept"))), _room(1, 2, MCQ, ann(1, 2, result(MCQ, "reject"))),
             _room(1, 3, MCQ, ann(1, 3, [], cancelled=True), ann(2, 3, result(MCQ, "reject")))]
    out = resolve([MCQ], tasks, USERS, rooms=3)
    entry = out["items"][MCQ.id]
    assert entry["status"] == "drop" and "empty_seats" not in entry
    assert out["problems"] == []
    # a skip in a room whose seat a vote already fills takes nothing (room cap), the item stays pending
    busy = [_room(1, 1, MCQ, ann(1, 1, result(MCQ, "accept")), ann(2, 4, [], cancelled=True))]
    assert resolve([MCQ], busy, USERS, rooms=3)["items"][MCQ.id]["status"] == "pending"


def test_an_author_s_own_item_completes_review_with_the_other_rooms():
    from dataclasses import replace

    authored = replace(MCQ, provenance={"author": "a@x"})
    tasks = [_room(1, 1, authored, ann(1, 1, result(authored, "accept"))),
             _room(1, 2, authored, ann(1, 2, result(authored, "fix", "C"))),
             _room(1, 3, authored, ann(1, 3, result(authored, "fix", "C")))]
    out = resolve([authored], tasks, USERS, rooms=3)
    entry = out["items"][authored.id]
    assert entry["status"] == "fix" and entry["answer"] == "C"
    assert entry["empty_seats"] == [{"room": 1, "reviewer": "a@x", "annotation": 1, "reason": "own work (refused)"}]
    assert out["refused_own_work"] == {"a@x": 1}
    # the others disagree: adjudication (no longer refused as "pending")
    tasks[2]["annotations"] = [ann(1, 3, result(authored, "reject"))]
    out = resolve([authored], tasks, USERS, rooms=3, adjudications={authored.id: {"status": "keep"}})
    assert out["items"][authored.id]["status"] == "keep" and out["items"][authored.id]["adjudicated"]
    assert not any("not adjudicate" in p for p in out["problems"])
