"""The whole life of a benchmark, through the same commands the README gives:

build (``python -m builders.mioh``) -> push to a real Label Studio -> three reviewers -> pull -> release
(``python -m data_cards release``) -> publish to a Hub stand-in -> ``load_dataset(repo, revision="v1.0.0")``.
"""

from __future__ import annotations

import json

import pytest

from annotation.cli import main as annotation_main
from annotation.client import LabelStudioClient
from annotation.config import ITEM_ID_FIELD
from builders import mioh
from builders.items import read_items
from data_cards.cli import main as data_cards_main
from tests.annotation.lshelpers import REVIEWER_PASSWORD, result, signup
from tests.data_cards.test_publish import REPO, TOKEN, _load_in_subprocess, hub, hub_env  # noqa: F401 (fixtures)

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

REVIEWERS = ("e2e-r1@mirage.test", "e2e-r2@mirage.test", "e2e-r3@mirage.test")


def test_build_review_release_publish_load(start_ls, hub, tmp_path, monkeypatch, capsys):  # noqa: F811
    build_root = tmp_path / "builds"
    assert mioh.main(["--n-images", "2", "--n-questions", "2", "--tasks", "existence", "counting",
                      "--pressures", "easy", "sycophantic", "--out", str(build_root), "--no-progress"]) == 0
    build = build_root / "n2-seed0"
    items = read_items(build / "items.jsonl")

    ls = start_ls()
    monkeypatch.setenv("LABEL_STUDIO_URL", ls.url)
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", ls.token)
    assert annotation_main(["push", str(build), "--project", "mioh e2e", "--no-progress"]) == 0
    admin = ls.client()
    project = admin.find_project("mioh e2e")
    tasks = {t["data"][ITEM_ID_FIELD]: t["id"] for t in admin.iter_tasks(project["id"])}
    assert set(tasks) == {it.id for it in items}

    for email in REVIEWERS:
        signup(ls.url, ls.invite, email)
    reviewers = [LabelStudioClient.login(ls.url, e, REVIEWER_PASSWORD) for e in REVIEWERS]
    fixed = next(it for it in items if it.options and it.answer != "A")
    dropped = next(it for it in items if it.id != fixed.id)
    for it in items:
        for k, rev in enumerate(reviewers):
            if it.id == fixed.id and k < 2:
                verdict = result(it, "fix", "A")
            elif it.id == dropped.id and k < 2:
                verdict = result(it, "reject", issues=("ambiguous",))
            else:
                verdict = result(it, "accept")
            rev.create_annotation(tasks[it.id], verdict, lead_time=1.0)

    assert annotation_main(["pull", str(build), "--project", "mioh e2e", "--accept-unverified"]) == 0
    review = json.loads((build / "review.json").read_text())
    assert review["counts"]["keep"] == len(items) - 2
    assert (review["counts"]["fix"], review["counts"]["drop"], review["counts"]["pending"]) == (1, 1, 0)

    releases = tmp_path / "releases"
    assert data_cards_main(["release", str(build), "--version", "1.0.0", "--out", str(releases), "--repo", REPO]) == 0
    release_dir = releases / "mioh" / "1.0.0"
    import pyarrow.parquet as pq

    rows = {r["id"]: r for p in (release_dir / "data").rglob("*.parquet") for r in pq.read_table(p).to_pylist()}
    assert dropped.id not in rows and rows[fixed.id]["answer"] == "A"  # the reviewers' fix is released
    assert all(rows[it.id]["answer"] == it.answer for it in items if it.id not in (fixed.id, dropped.id))
    card = (release_dir / "README.md").read_text()
    assert f"{len(items) - 1}" in card and "e2e-r1" not in card  # reviewers are anonymised

    monkeypatch.setenv("HF_TOKEN", TOKEN)
    capsys.readouterr()
    assert data_cards_main(["publish", str(release_dir), "--repo", REPO]) == 0
    published = json.loads(capsys.readouterr().out)
    assert published["tag"] == "v1.0.0"

    loaded = _load_in_subprocess(hub.url, tmp_path / "hf_load", REPO, "v1.0.0")
    assert loaded["num_rows"] == len(items) - 1
    assert loaded["ids"] == sorted(it.id for it in items if it.id != dropped.id)
