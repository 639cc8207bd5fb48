"""The release after a re-review of suspected label errors: the fixes are released, the dropped item is gone, and
the changelog and the card say which items changed and why (the models' answer, the reviewers' votes)."""

from __future__ import annotations

import json

from annotation.builddir import load_build
from annotation.pull import write_reviewed
from builders.review import RECHECK_FILE
from data_cards.export import read_columns
from data_cards.release import release
from tests.data_cards.conftest import make_build


def test_next_version_records_what_the_re_review_changed(tmp_path):
    path = make_build(tmp_path, n_items=12)
    out = tmp_path / "releases"
    first = release(path, "1.0.0", out=out)
    review = json.loads((path / "review.json").read_text())
    kept = sorted(iid for iid, e in review["items"].items() if e["status"] == "keep")
    yes_no = next(iid for iid in kept if review["items"][iid]["answer"] == "yes")
    dropped, confirmed = [iid for iid in kept if iid != yes_no][:2]
    models = {"answer": "no", "count": 4, "models": 5, "p_label_error": 0.97}
    rnd = {"project": "recheck 1", "pulled_at": "2026-03-01T00:00:00Z", "items": {
        yes_no: {"status": "fix", "answer": "no", "answer_label": "no", "before": "yes",
                 "votes": {"accept": 0, "fix": 3, "reject": 0}, "models": models},
        dropped: {"status": "drop", "answer": None, "before": review["items"][dropped]["answer"],
                  "votes": {"accept": 1, "fix": 0, "reject": 2}, "models": models},
        confirmed: {"status": "keep", "answer": None, "before": review["items"][confirmed]["answer"],
                    "votes": {"accept": 3, "fix": 0, "reject": 0}, "models": models}}}
    (path / RECHECK_FILE).write_text(json.dumps({"rounds": {"recheck 1": rnd}}))
    write_reviewed(load_build(path), review)

    second = release(path, "1.1.0", out=out)
    answers = dict(zip(*read_columns(second.path, ["id", "answer"]).values()))
    before = dict(zip(*read_columns(first.path, ["id", "answer"]).values()))
    assert answers[yes_no] == "no" and before[yes_no] == "yes"
    assert dropped in before and dropped not in answers
    assert answers[confirmed] == before[confirmed]
    log = (second.path / "CHANGELOG.md").read_text()
    assert "1 answer(s) changed" in log and "1 removed" in log
    assert "Re-review of 3 item(s) whose answer several models disputed" in log
    assert "1 fixed, 1 dropped, 1 confirmed" in log
    assert f"`{yes_no}`: answer yes -> no, fixed by 3 of 3 reviewers; 4 of 5 models answered no." in log
    assert f"`{dropped}`: dropped by 2 of 3 reviewers" in log
    assert "## v1.0.0" in log  # the earlier entry follows
    card = (second.path / "README.md").read_text()
    assert f"`{yes_no}`: answer yes -> no" in card and "models agreed on another answer" in card
    manifest = json.loads((second.path / "manifest.json").read_text())
    assert [e["id"] for e in manifest["review"]["rechecked"]] == sorted([yes_no, dropped, confirmed])
    assert "@example.org" not in json.dumps(manifest["review"]["rechecked"])  # votes are counts, no names
