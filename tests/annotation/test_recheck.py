"""Re-review of suspected label errors without a server: what push shows, what pull records, how the rounds
apply on top of the first review (the live rooms are in test_health_loop.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotation.builddir import load_build
from annotation.config import task_data
from annotation.errors import AnnotationError
from annotation.recheck import models_label, read_health, recheck_build
from builders.review import RECHECK_FILE, apply_rechecks
from tests.data_cards.conftest import make_build


def _health(path: Path, entries: dict[str, dict]) -> Path:
    path.write_text(json.dumps({"suspected_label_errors": list(entries), "items": entries}))
    return path


def _entry(answer: str, count: int = 4, models: int = 5) -> dict:
    return {"likely_answer": answer, "likely_answer_count": count, "models": models, "p_label_error": 0.9}


def test_rechecks_apply_on_top_of_the_first_review():
    first = {"a": {"status": "keep", "answer": "A"}, "b": {"status": "fix", "answer": "no"},
             "c": {"status": "keep", "answer": "yes"}, "d": {"status": "keep", "answer": "B"}}
    rounds = {"rounds": {
        "r1": {"project": "r1", "pulled_at": "2026-01-01T00:00:00Z", "items": {
            "a": {"status": "fix", "answer": "C", "before": "A"}, "b": {"status": "keep", "before": "no"},
            "c": {"status": "drop", "before": "yes"}, "d": {"status": "adjudicate", "before": "B"}}},
        "r2": {"project": "r2", "pulled_at": "2026-02-01T00:00:00Z", "items": {
            "a": {"status": "fix", "answer": "D", "before": "C"}}}}}
    merged = apply_rechecks(first, rounds)
    assert merged["a"]["status"] == "fix" and merged["a"]["answer"] == "D"  # the later round wins
    assert merged["b"] == {**first["b"], "recheck": merged["b"]["recheck"]}  # confirmed: the first fix stands
    assert merged["c"]["status"] == "drop"
    assert merged["d"]["status"] == "keep" and merged["d"]["recheck"]["status"] == "adjudicate"
    assert first["a"] == {"status": "keep", "answer": "A"}  # the input is not changed


def test_a_recheck_back_to_the_builders_answer_restores_the_item():
    """Issue 51: the first review fixed B -> C, the re-review put B back; the item was left ``fix`` and its builder
    labels filed as superseded. Now it is ``keep``, and its provenance stays where it was."""
    from annotation.resolve import reviewed_items
    from builders.items import make_item

    item = make_item(benchmark="t", task="x", question_type="q", pressure="easy", images=["i.png"], question="q?",
                     options=("a", "b", "c"), answer="B", provenance={"answer_state": "built", "answer_slots": 3})
    first = {item.id: {"status": "fix", "answer": "C", "votes": {"accept": 0, "fix": 3, "reject": 0}}}
    rounds = {"rounds": {"r1": {"project": "r1", "pulled_at": "2026-01-01T00:00:00Z", "items": {
        item.id: {"status": "fix", "answer": "B", "before": "C"}}}}}
    merged = apply_rechecks(first, rounds, {item.id: "B"})
    assert merged[item.id]["status"] == "keep" and "answer" not in merged[item.id]
    (released,) = reviewed_items([item], {"items": merged})
    assert released.answer == "B" and released.provenance["answer_state"] == "built"
    assert released.provenance["review"]["status"] == "keep" and "superseded" not in released.provenance["review"]
    assert apply_rechecks(first, rounds)[item.id]["status"] == "fix"  # without the builder's answers: as before


def test_read_health_refuses_what_is_not_a_health_report(tmp_path):
    bad = tmp_path / "h.json"
    bad.write_text('{"items": {}}')
    with pytest.raises(AnnotationError, match=r"h\.json: not a health\.json"):
        read_health(bad)
    with pytest.raises(AnnotationError, match="suspect 'x' has no item entry"):
        read_health(_health(tmp_path / "h2.json", {"x": {"models": 5}}))
    suspects, digest = read_health(_health(tmp_path / "h3.json", {"x": _entry("B")}))
    assert suspects == {"x": {"answer": "B", "count": 4, "models": 5, "p_label_error": 0.9}} and len(digest) == 64


def test_the_suspects_go_back_with_the_reviewed_answer_and_the_models_answer(tmp_path):
    path = make_build(tmp_path, n_items=8)
    build = load_build(path)
    review = json.loads((path / "review.json").read_text())
    fixed = next(iid for iid, e in review["items"].items() if e["status"] == "fix")
    kept = next(iid for iid, e in review["items"].items()
                if e["status"] == "keep" and any(it.id == iid and it.options for it in build.items))
    suspects = {fixed: {"answer": "yes", "count": 5, "models": 5}, kept: {"answer": "B", "count": 3, "models": 5}}
    sub = recheck_build(build, suspects, "recheck 1")
    shown = {it.id: it for it in sub.items}
    assert set(shown) == {fixed, kept}
    assert shown[fixed].answer == "no"  # the first review's fix, not the build's original answer
    data = task_data(shown[kept], path, tmp_path, models_answer=models_label(shown[kept], suspects[kept]))
    assert data["models_answer"] == "B. 3 (3 of 5 models)" and "Most models answered:</b> B. 3" in data["item_html"]
    assert data["proposed_answer"].startswith("A.")
    # a round of this very project does not change what it shows; another project's round does
    (path / RECHECK_FILE).write_text(json.dumps({"rounds": {
        "recheck 1": {"project": "recheck 1", "pulled_at": "x", "items": {fixed: {"status": "fix", "answer": "yes"}}},
    }}))
    assert {it.id: it.answer for it in recheck_build(build, suspects, "recheck 1").items}[fixed] == "no"
    assert {it.id: it.answer for it in recheck_build(build, suspects, "recheck 2").items}[fixed] == "yes"
    with pytest.raises(AnnotationError, match="suspect 0000000000000000 of the health report is not in the build"):
        recheck_build(build, {"0000000000000000": suspects[kept]}, "recheck 1")
    (path / "review.json").unlink()
    with pytest.raises(AnnotationError, match="a re-review starts from a reviewed build"):
        recheck_build(build, suspects, "recheck 1")
