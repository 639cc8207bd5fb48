"""pull's own-work summary explains split votes only when items wait for adjudication (issue 51: it said "(their
votes are split ...)" with 0 items waiting)."""

from annotation.commands.pull import own_work_lines as _own_work_lines
from annotation.resolve import OWN_WORK


def review(*statuses: str) -> dict:
    return {"items": {str(k): {"status": s, "empty_seats": [{"reason": OWN_WORK}]} for k, s in enumerate(statuses)}}


def test_the_split_votes_note_only_when_items_wait():
    assert _own_work_lines(review("accept", "drop")) == [
        "2 item(s) had their author's vote refused: 2 decided by the other reviewers' majority, 0 settled by your "
        "adjudication, 0 waiting for it"]
    waiting = _own_work_lines(review("accept", "adjudicate"))
    assert waiting[0].endswith("1 waiting for it (their votes are split; see adjudications.json in docs/annotation.md)")
    assert _own_work_lines(review()) == []
