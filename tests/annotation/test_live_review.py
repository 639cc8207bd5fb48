"""The whole loop against a real Label Studio: push, re-push, three reviewers via the invite link, pull, resolve."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotation.builddir import load_build
from annotation.client import LabelStudioClient
from annotation.config import ITEM_ID_FIELD, MCQ, VQA, YES_NO, item_kind
from annotation.pull import pull
from annotation.push import push
from builders.items import read_items
from tests.annotation.builds import add_items
from tests.annotation.lshelpers import REVIEWER_PASSWORD, result, signup

pytestmark = pytest.mark.slow

R1, R2, R3 = "r1@mirage.test", "r2@mirage.test", "r3@mirage.test"


def _task_ids(client: LabelStudioClient, project_id: int) -> dict[str, int]:
    out: dict[str, int] = {}
    for t in client.iter_tasks(project_id):
        iid = t["data"][ITEM_ID_FIELD]
        assert iid not in out, f"duplicate task for item {iid}"
        out[iid] = t["id"]
    return out


@pytest.fixture(scope="module")
def scenario(start_ls, tmp_path_factory):
    """Push 30 mixed items, re-push, add 5, three reviewers annotate; returns what the tests check."""
    from tests.annotation.builds import make_build

    ls = start_ls()
    root = tmp_path_factory.mktemp("review")
    build_path = make_build(root, 30, external=root / "source-images")
    admin = ls.client()

    first = push(admin, load_build(build_path), "demo review", progress=False)
    second = push(admin, load_build(build_path), "demo review", progress=False)
    add_items(build_path, 5, start=30)
    third = push(admin, load_build(build_path), "demo review", progress=False)

    for email in (R1, R2, R3):
        signup(ls.url, ls.invite, email)
    rev = {e: LabelStudioClient.login(ls.url, e, REVIEWER_PASSWORD) for e in (R1, R2, R3)}

    items = read_items(build_path / "items.jsonl")
    tasks = _task_ids(admin, first.project_id)
    by_kind: dict[str, list] = {MCQ: [], YES_NO: [], VQA: []}
    for it in items:
        if it.provenance["index"] >= 30:
            continue
        by_kind[item_kind(it)].append(it)
    # MCQ items with 11 options (answer C) so that fixes to B and D exist
    mcq = [it for it in by_kind[MCQ] if len(it.options) == 11] + [it for it in by_kind[MCQ] if len(it.options) != 11]
    yn, vqa = by_kind[YES_NO], by_kind[VQA]
    A, B, D, G, H, I, K, L, M = mcq[0], mcq[1], mcq[2], mcq[3], mcq[4], mcq[5], mcq[6], mcq[7], mcq[8]
    C, F, J, N = yn[0], yn[1], yn[2], yn[3]
    E = vqa[0]
    other_yn = {"yes": "no", "no": "yes"}

    def ann(who: str, item, *args, **kw):
        client = rev[who] if who != "admin" else admin
        return client.create_annotation(tasks[item.id], result(item, *args, **kw), lead_time=1.0)

    plan = {
        # item: what each reviewer says
        "A": [(R1, A, "accept"), (R2, A, "accept"), (R3, A, "accept")],
        "B": [(R1, B, "accept"), (R2, B, "reject"), (R3, B, "accept")],
        "C": [(R1, C, "reject"), (R2, C, "reject"), (R3, C, "accept")],
        "D": [(R1, D, "fix", "B"), (R2, D, "fix", "B"), (R3, D, "accept")],
        "E": [(R1, E, "fix", "A red ball"), (R2, E, "fix", "a  red ball."), (R3, E, "reject")],
        "F": [(R1, F, "accept"), (R2, F, "fix", other_yn[F.answer]), (R3, F, "reject")],  # a tie
        "G": [(R1, G, "fix", "B"), (R2, G, "fix", "D"), (R3, G, "accept")],  # fixes disagree
        "H": [(R1, H, "reject", None, ("ambiguous",), "two circles overlap"), (R2, H, "reject"), (R3, H, "reject")],
        "I": [(R1, I, "accept"), (R2, I, "reject"), (R3, I, "accept"), (R1, I, "reject")],  # R1 twice
        "J": [(R1, J, "accept"), (R2, J, "accept"), (R3, J, "reject"), ("admin", J, "reject")],  # a fourth
        "K": [(R1, K, "accept"), (R2, K, "fix", None, (), "", "Z. not an option"), (R3, K, "accept")],
        "L": [(R1, L, "maybe"), (R2, L, "accept")],  # an invalid verdict
        "M": [(R1, M, "accept")],  # review still going on
    }
    annotation_ids: dict[str, list[int]] = {}
    for key, steps in plan.items():
        for who, item, *rest in steps:
            args = list(rest)
            kw = {}
            if len(args) > 2:
                kw["issues"] = args[2]
            if len(args) > 3:
                kw["comment"] = args[3]
            if len(args) > 4:
                kw["raw_option"] = args[4]
            args = args[:2]
            if len(args) == 2 and args[1] is None:
                args = args[:1]
            annotation_ids.setdefault(key, []).append(ann(who, item, *args, **kw)["id"])
    # a skip is no vote
    rev[R3].create_annotation(tasks[N.id], [], was_cancelled=True)

    res = pull(admin, load_build(build_path), "demo review", accept_unverified=True)  # a bare server: no ledger
    named = dict(A=A, B=B, C=C, D=D, E=E, F=F, G=G, H=H, I=I, J=J, K=K, L=L, M=M, N=N)
    return dict(
        ls=ls, build=build_path, pushes=(first, second, third), tasks=tasks, items=items, named=named,
        annotation_ids=annotation_ids, pull=res, admin=admin,
    )


def test_push_is_idempotent_and_adds_only_new_items(scenario):
    first, second, third = scenario["pushes"]
    assert (first.created, first.imported, first.already_there) == (True, 30, 0)
    assert (second.created, second.imported, second.already_there) == (False, 0, 30)
    assert (third.imported, third.already_there) == (5, 30)
    assert not second.config_updated and not third.config_updated  # same kinds: the config is left alone
    assert (first.refreshed, second.refreshed, third.refreshed) == (0, 0, 0)  # tasks shown as pushed stay as they are
    assert first.storages_added and not second.storages_added  # build dir + source-image folder, once
    tasks = scenario["tasks"]  # _task_ids asserted one task per item
    assert set(tasks) == {it.id for it in scenario["items"]}
    assert len(tasks) == 35
    project = scenario["admin"].find_project("demo review")
    assert project["maximum_annotations"] == 3


def test_counts_and_statuses(scenario):
    review = scenario["pull"].review
    n = scenario["named"]
    assert review["counts"] == {"total": 35, "keep": 3, "fix": 2, "drop": 3, "adjudicate": 2, "pending": 25}
    status = {k: review["items"][it.id]["status"] for k, it in n.items()}
    assert status == {
        "A": "keep", "B": "keep", "C": "drop", "D": "fix", "E": "fix", "F": "adjudicate", "G": "adjudicate",
        "H": "drop", "I": "drop", "J": "keep", "K": "pending", "L": "pending", "M": "pending", "N": "pending",
    }
    votes = {k: review["items"][it.id]["votes"] for k, it in n.items()}
    assert votes["I"] == {"accept": 1, "fix": 0, "reject": 2}  # R1's latest (reject) counts, once
    assert votes["J"] == {"accept": 2, "fix": 0, "reject": 1}  # the fourth annotation is ignored
    assert votes["K"] == {"accept": 2, "fix": 0, "reject": 0}  # the invalid one is not a vote
    assert votes["N"] == {"accept": 0, "fix": 0, "reject": 0}  # skipped
    assert review["items"][n["D"].id]["answer"] == "B"
    assert review["items"][n["E"].id]["answer"] == "A red ball"
    assert review["items"][n["A"].id]["answer"] == n["A"].answer
    assert review["items"][n["C"].id]["answer"] is None
    assert review["items"][n["H"].id]["issues"] == ["ambiguous"]
    assert review["items"][n["H"].id]["comments"] == ["two circles overlap"]


def test_kappa_and_reviewer_agreement_match_hand_computation(scenario):
    review = scenario["pull"].review
    # decided rows (accept, fix, reject): A 300, B 201, C 102, D 120, E 021, F 111, G 120, H 003, I 102, J 201
    # p = (12, 7, 11)/30, P_e = 314/900; P_i: 1 for A and H, 0 for F, 1/3 for the 7 others -> P_bar = 13/30
    # kappa = (390 - 314) / (900 - 314) = 76/586
    assert review["fleiss_kappa"] == pytest.approx(76 / 586, abs=1e-6)
    reviewers = review["reviewers"]
    assert set(reviewers) == {R1, R2, R3}
    # majority items: A B C D E H I J. R2 dissents on B; R3 agrees only on A, B, H
    assert reviewers[R1]["agreement_with_majority"] == 1.0
    assert reviewers[R2]["agreement_with_majority"] == 0.875
    assert reviewers[R3]["agreement_with_majority"] == 0.375
    assert reviewers[R1]["annotations"] == 12  # A..J, K, M (L is invalid; I counts once)
    assert reviewers[R2]["annotations"] == 11  # A..J, L (K is invalid)
    assert reviewers[R3]["annotations"] == 11  # A..J, K
    assert reviewers[R3]["skipped"] == 1


def test_problems_are_reported(scenario):
    review = scenario["pull"].review
    n = scenario["named"]
    problems = review["problems"]
    text = "\n".join(problems)
    assert all("\n" not in p for p in problems)
    assert any(n["I"].id in p and R1 in p and "2 times" in p for p in problems), text
    assert any(n["J"].id in p and "admin@mirage.test" in p and "beyond the 3" in p for p in problems), text
    assert any(n["K"].id in p and "invalid correct option 'Z. not an option'" in p for p in problems), text
    assert any(n["L"].id in p and "invalid verdict 'maybe'" in p for p in problems), text
    assert len(problems) == 4, text


def test_reviewed_jsonl(scenario):
    build = scenario["build"]
    n = scenario["named"]
    reviewed = read_items(build / "reviewed.jsonl")
    review = scenario["pull"].review
    expected = sorted(i for i, e in review["items"].items() if e["status"] in ("keep", "fix"))
    assert [it.id for it in reviewed] == expected
    lines = (build / "reviewed.jsonl").read_text(encoding="utf-8").splitlines()
    assert lines == [it.to_json() for it in reviewed]  # canonical JSON
    by_id = {it.id: it for it in reviewed}
    d = by_id[n["D"].id]
    assert d.answer == "B" and d.provenance["review"] == {
        "status": "fix", "votes": {"accept": 1, "fix": 2, "reject": 0}, "original_answer": "C", "annotators": 3,
    }
    assert d.provenance["source"] == "test"  # the builder's provenance is kept
    a = by_id[n["A"].id]
    assert a.answer == n["A"].answer and a.provenance["review"]["status"] == "keep"


def test_review_json_format_and_pull_twice_is_identical(scenario):
    build = scenario["build"]
    res = scenario["pull"]
    review_bytes = (build / "review.json").read_bytes()
    reviewed_bytes = (build / "reviewed.jsonl").read_bytes()
    review = json.loads(review_bytes)
    for key in ("project", "label_studio_url", "pulled_at", "raw_export", "counts", "fleiss_kappa", "reviewers",
                "problems", "items"):
        assert key in review
    assert review["project"] == "demo review"
    assert review["label_studio_url"] == scenario["ls"].url
    assert review["pulled_at"].endswith("Z")
    raw = build / review["raw_export"]
    assert raw.parent == build / "reviews" and raw.name.startswith("export-")
    assert len(json.loads(raw.read_bytes())) == 35
    items_mode = (build / "items.jsonl").stat().st_mode & 0o777
    for f in (build / "review.json", build / "reviewed.jsonl", raw):
        assert f.stat().st_mode & 0o777 == items_mode, f  # not the 0600 of a temporary file
    exports_before = sorted((build / "reviews").iterdir())

    again = pull(scenario["admin"], load_build(build), "demo review", accept_unverified=True)
    assert (build / "review.json").read_bytes() == review_bytes
    assert (build / "reviewed.jsonl").read_bytes() == reviewed_bytes
    assert again.export_path == res.export_path and not again.export_is_new
    assert sorted((build / "reviews").iterdir()) == exports_before


def test_cli_pull_reports_progress(scenario, capsys, monkeypatch):
    from annotation.cli import main

    ls = scenario["ls"]
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", ls.token)
    monkeypatch.setenv("COLUMNS", "200")
    code = main(["pull", str(scenario["build"]), "--project", "demo review", "--url", ls.url,
                 "--accept-unverified"])
    out, err = capsys.readouterr()
    assert code == 0
    assert "10/35 items fully reviewed" in out
    assert "votes refused (own work)" in out  # 0 here: no item of the demo build records an author
    assert "4 problem(s)" in err


def test_cli_push_and_wrong_token(scenario, capsys):
    from annotation.cli import main

    ls = scenario["ls"]
    code = main(["push", str(scenario["build"]), "--project", "demo review", "--url", ls.url, "--token", ls.token,
                 "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0 and "35" in out
    code = main(["push", str(scenario["build"]), "--project", "demo review", "--url", ls.url, "--token", "0" * 40])
    out, err = capsys.readouterr()
    assert code == 2
    assert err.count("\n") == 1 and "rejected" in err and "HTTP 401" in err


def test_adjudications_settle_the_queue(scenario):
    build, n = scenario["build"], scenario["named"]
    (build / "adjudications.json").write_text(json.dumps({
        n["F"].id: {"status": "drop", "note": "yes/no is unclear here"},
        n["G"].id: {"status": "fix", "answer": "B"},
    }))
    try:
        out = pull(scenario["admin"], load_build(build), "demo review", accept_unverified=True)
    finally:
        (build / "adjudications.json").unlink()
    counts = out.review["counts"]
    assert counts == {"total": 35, "keep": 3, "fix": 3, "drop": 4, "adjudicate": 0, "pending": 25}
    assert out.review["fleiss_kappa"] == pytest.approx(76 / 586, abs=1e-6)  # votes unchanged
    g = {it.id: it for it in read_items(build / "reviewed.jsonl")}[n["G"].id]
    assert g.answer == "B" and g.provenance["review"]["adjudicated"] is True
    assert out.review["reviewers"][R1]["agreement_with_majority"] == 1.0  # adjudicated items are not majorities


def test_personal_access_token_works_too(scenario):
    from tests.annotation.conftest import ADMIN_EMAIL, ADMIN_PASSWORD

    ls = scenario["ls"]
    session = LabelStudioClient.login(ls.url, ADMIN_EMAIL, ADMIN_PASSWORD)
    pat = session.post("/api/token/", {})["token"]
    client = LabelStudioClient(ls.url, pat)
    assert client.session.headers["Authorization"].startswith("Bearer ")
    assert client.whoami()["email"] == ADMIN_EMAIL
    assert client.find_project("demo review")["id"] == scenario["pushes"][0].project_id
    with pytest.raises(Exception) as e:
        LabelStudioClient(ls.url, pat[:-4] + "AAAA")
    assert "rejected the personal access token" in str(e.value)
