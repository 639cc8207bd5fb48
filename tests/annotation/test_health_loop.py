"""Issue 44's "done when", end to end through the commands the README gives, with simulated models:

demo MIOH build with three planted label errors -> first review in three real Label Studio rooms (the reviewers
miss them) -> release 1.0.0 -> five simulated models answer it -> ``python -m scoring health`` -> ``annotation
push --recheck health.json`` (the rooms see the models' answer beside the gold) -> the reviewers fix the planted
errors -> ``annotation pull --recheck`` -> release 1.1.0, whose changelog names the fixes -> ``python -m
builders.twin`` -> the twin released beside it -> ``python -m scoring twin`` tells the memorising model apart.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from tests.conftest import require_annotation_extra, require_release_extra

require_annotation_extra()

from annotation.cli import main as annotation_main  # noqa: E402
from annotation.client import LabelStudioClient  # noqa: E402
from annotation.config import ITEM_ID_FIELD  # noqa: E402
from builders import mioh  # noqa: E402
from builders.items import OPTION_LETTERS, read_items, write_items  # noqa: E402
from builders.twin import main as twin_main  # noqa: E402
from data_cards.cli import main as data_cards_main  # noqa: E402
from scoring.__main__ import main as score_main  # noqa: E402
from tests.annotation.lshelpers import REVIEWER_PASSWORD, result, signup  # noqa: E402
from tests.scoring.simulated_models import SimModel, write_model  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

PLANTED = 3
SEED = 44
LOOP_MODELS = (SimModel("strong", 0.97), SimModel("good", 0.95), SimModel("fair", 0.95), SimModel("plain", 0.9),
               SimModel("modest", 0.9))
"""Five models strong enough that, over this build's 36 items, the planted errors are found whatever the items'
random answers: this test is about the loop. How well the rule finds errors with weak models and shared wrong
beliefs is measured over 5 x 1,000 items in ``tests/scoring/test_health.py`` (with the weaker ``FIVE``, a wrong
answer four models happened to share flagged a right gold here, and a planted error was missed)."""


def _plant(build) -> dict[str, str]:
    """Give three multiple-choice items a wrong gold (the builder's mistake the loop should catch); ``{id: true
    answer}``. The ids stay: an id hashes what a model sees, not the answer."""
    items = read_items(build / "items.jsonl")
    truths = {}
    out = []
    for it in items:
        if len(truths) < PLANTED and len(it.options) >= 3 and it.question_type == "comprehensive":
            truths[it.id] = it.answer
            wrong = OPTION_LETTERS[(OPTION_LETTERS.index(it.answer) + 1) % len(it.options)]
            it = replace(it, answer=wrong)
        out.append(it)
    write_items(build / "items.jsonl", out)
    assert len(truths) == PLANTED
    return truths


def _rooms(start_ls, monkeypatch, emails):
    """Three rooms (one Label Studio each), the CLI pointed at all three, one reviewer signed up in each."""
    servers = [start_ls() for _ in range(3)]
    monkeypatch.setenv("LABEL_STUDIO_URL", ",".join(s.url for s in servers))
    monkeypatch.setenv("LABEL_STUDIO_API_KEY", ",".join(s.token for s in servers))
    reviewers = []
    for server, email in zip(servers, emails):
        signup(server.url, server.invite, email)
        reviewers.append(LabelStudioClient.login(server.url, email, REVIEWER_PASSWORD))
    return servers, reviewers


def _tasks(server, project: str) -> dict[str, dict]:
    admin = server.client()
    pid = admin.find_project(project)["id"]
    return {t["data"][ITEM_ID_FIELD]: t for t in admin.iter_tasks(pid)}


def test_health_recheck_release_and_twin(start_ls, tmp_path, monkeypatch, capsys):
    require_release_extra()
    builds = tmp_path / "builds"
    assert mioh.main(["--n-images", "2", "--n-questions", "3", "--tasks", "existence", "counting",
                      "--pressures", "easy", "sycophantic", "--out", str(builds), "--no-progress"]) == 0
    build = builds / "n2-seed0"
    truths = _plant(build)
    items = {it.id: it for it in read_items(build / "items.jsonl")}

    # first review: every reviewer accepts every item (the planted errors pass unnoticed)
    servers, reviewers = _rooms(start_ls, monkeypatch, ("h-r1@mirage.test", "h-r2@mirage.test", "h-r3@mirage.test"))
    assert annotation_main(["push", str(build), "--project", "health", "--no-progress"]) == 0
    for server, reviewer in zip(servers, reviewers):
        for iid, task in _tasks(server, "health").items():
            reviewer.create_annotation(task["id"], result(items[iid], "accept"), lead_time=1.0)
    assert annotation_main(["pull", str(build), "--project", "health", "--accept-unverified"]) == 0
    releases = tmp_path / "releases"
    assert data_cards_main(["release", str(build), "--version", "1.0.0", "--out", str(releases)]) == 0
    release_1 = releases / "mioh" / "1.0.0"

    # five simulated models answer the release; the health report finds the planted errors
    preds = tmp_path / "predictions"
    files = [str(write_model(preds / f"{m.name}.jsonl", m, list(items.values()), truths, {}, SEED)) for m in LOOP_MODELS]
    capsys.readouterr()
    assert score_main(["health", str(release_1), "--predictions", *files, "--out", str(tmp_path / "health")]) == 0
    printed = capsys.readouterr().out
    health = json.loads((tmp_path / "health" / "health.json").read_text())
    suspects = health["suspected_label_errors"]
    assert set(truths) <= set(suspects), printed
    assert len(suspects) <= PLANTED + 1
    assert "Suspected label errors" in printed

    # the suspects go back to the rooms with the models' answer beside the gold
    assert annotation_main(["push", str(build), "--project", "health recheck", "--recheck",
                            str(tmp_path / "health" / "health.json"), "--no-progress"]) == 0
    for server, reviewer in zip(servers, reviewers):
        tasks = _tasks(server, "health recheck")
        assert set(tasks) == set(suspects)
        for iid, task in tasks.items():
            data = task["data"]
            entry = health["items"][iid]
            assert data["proposed_answer"].startswith(f"{items[iid].answer}.")
            assert data["models_answer"].startswith(f"{entry['likely_answer']}.")
            assert "Most models answered" in data["item_html"]
            verdict = result(items[iid], "fix", truths[iid]) if iid in truths else result(items[iid], "accept")
            reviewer.create_annotation(task["id"], verdict, lead_time=1.0)
    assert annotation_main(["pull", str(build), "--project", "health recheck", "--accept-unverified", "--recheck",
                            str(tmp_path / "health" / "health.json")]) == 0
    recheck = json.loads((build / "recheck.json").read_text())["rounds"]["health recheck"]
    assert recheck["counts"]["fix"] == PLANTED and recheck["counts"]["keep"] == len(suspects) - PLANTED
    reviewed = {it.id: it.answer for it in read_items(build / "reviewed.jsonl")}
    assert all(reviewed[iid] == truth for iid, truth in truths.items())

    # the next version carries the fixes and says why
    assert data_cards_main(["release", str(build), "--version", "1.1.0", "--out", str(releases)]) == 0
    release_2 = releases / "mioh" / "1.1.0"
    log = (release_2 / "CHANGELOG.md").read_text()
    assert f"{PLANTED} answer(s) changed" in log
    for iid, truth in truths.items():
        assert f"`{iid}`: answer {items[iid].answer} -> {truth}, fixed by 3 of 3 reviewers" in log
    assert "models answered" in (release_2 / "README.md").read_text()

    # a twin, released beside it; a model that memorised the release is told apart
    assert twin_main([str(build)]) == 0
    twin = builds / "n2-seed0-twin1"
    twin_items = read_items(twin / "items.jsonl")
    assert not {it.id for it in twin_items} & set(items)
    assert data_cards_main(["release", str(twin), "--version", "1.0.0", "--name", "mioh-twin",
                            "--include-unreviewed", "--out", str(releases)]) == 0
    twin_release = releases / "mioh-twin" / "1.0.0"
    assert json.loads((twin_release / "manifest.json").read_text())["build"]["twin_of"]["name"] == "n2-seed0"
    released = read_items(build / "reviewed.jsonl")
    honest, memoriser = SimModel("honest", 0.6), SimModel("memoriser", 0.6, memorised=frozenset(reviewed))
    ours = [str(write_model(preds / f"{m.name}.jsonl", m, released, {}, {}, SEED)) for m in (honest, memoriser)]
    theirs = [str(write_model(preds / f"{m.name}-twin.jsonl", m, twin_items, {}, {}, SEED))
              for m in (honest, memoriser)]
    capsys.readouterr()
    assert score_main(["twin", str(release_2), str(twin_release), "--predictions", *ours, "--twin-predictions",
                       *theirs, "--out", str(tmp_path / "twin")]) == 0
    printed = capsys.readouterr().out
    print(printed)
    rows = {line.split()[1]: line for line in printed.splitlines() if line.startswith("│")}
    assert rows["memoriser"].rstrip(" │").endswith("yes") and rows["honest"].rstrip(" │").endswith("no")
