"""Authoring round trip against a real Label Studio: sequences without a description are pushed, a person writes
one, pull validates it and writes the file the Mementos reader looks for, and the Mementos build then includes
the sequence it skipped before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from annotation.author import AUTHOR_ID_FIELD, SUBJECT, hook, pull, push
from annotation.client import LabelStudioClient
from builders.mementos.authoring import DESCRIPTION, description_rule, validate_description
from tests.annotation.builds import draw_png
from tests.annotation.lshelpers import REVIEWER_PASSWORD, signup

pytestmark = pytest.mark.slow
WRITER = "writer@mirage.test"
TEXT = ("A red ball rolls from the left edge to the middle of the table, hits a blue cup and the cup falls over "
        "onto its side.")


def _comics(root: Path) -> Path:
    for name, n in (("c1-rolling", 3), ("c2-described", 2)):
        for k in range(n):
            draw_png(root / name / f"panel{k + 1}.png", 10 * len(name) + k, size=(160, 120))
    (root / "c2-described" / "description.txt").write_text("A cat sleeps on a chair while the sun moves across.\n")
    return root


def test_validate_description():
    assert validate_description("") == "empty"
    assert "fewer than 8" in validate_description("a ball rolls")
    assert "paragraphs" in validate_description(TEXT + "\n\n" + TEXT)
    assert validate_description(TEXT) is None


def test_author_descriptions_round_trip_into_a_mementos_build(ls_server, files_root, tmp_path, capsys):
    comics = _comics(tmp_path / "comics")
    flow, inputs = hook("descriptions"), {"comics": comics, "cache_dir": tmp_path / "cache"}
    seqs = flow.subjects(inputs)
    assert [s.key for s in seqs] == ["comics/c1-rolling"]  # the described comic is not asked again
    assert seqs[0].titles == ("Panel 1", "Panel 2", "Panel 3")
    target = (comics / "c1-rolling" / "description.txt").resolve()

    admin = ls_server.client()
    assert push(admin, flow, inputs, "describe comics", files_root) == (1, 0)
    assert push(admin, flow, inputs, "describe comics", files_root, seqs) == (0, 1)  # idempotent
    pid = admin.find_project("describe comics")["id"]
    (task,) = [t for t in admin.iter_tasks(pid) if t["data"][AUTHOR_ID_FIELD] == "comics/c1-rolling"]

    signup(ls_server.url, ls_server.invite, WRITER)
    writer = LabelStudioClient.login(ls_server.url, WRITER, REVIEWER_PASSWORD)
    data = writer.get(f"/api/tasks/{task['id']}")["data"]
    assert str(tmp_path) not in json.dumps(data)  # no path of the maintainer's machine in what a member reads
    assert description_rule() in admin.find_project("describe comics")["label_config"]  # the rule where one writes
    url = data["images"][0]["url"]
    views = admin.get("/api/dm/views/", params={"project": pid})
    hidden = views[0]["data"]["hiddenColumns"]["explore"]
    assert {"tasks:data.guide", "tasks:data.images", "tasks:data.header"} <= set(hidden)  # no raw HTML or JSON
    assert writer.session.get(ls_server.url + url, timeout=30).status_code == 200  # the person sees the panels
    short = [{"from_name": DESCRIPTION, "to_name": SUBJECT, "type": "textarea", "value": {"text": ["a ball"]}}]
    writer.create_annotation(task["id"], short)
    report = pull(admin, flow, inputs, "describe comics", log=lambda s: None)
    assert report["written"] == [] and "fewer than 8" in report["problems"][0]
    assert not target.exists()  # nothing half-right is written

    good = [{"from_name": DESCRIPTION, "to_name": SUBJECT, "type": "textarea", "value": {"text": [TEXT]}}]
    writer.create_annotation(task["id"], good)
    report = pull(admin, flow, inputs, "describe comics", log=lambda s: None)
    assert report["written"] == [str(target)]
    assert target.read_text() == TEXT + "\n"
    assert pull(admin, flow, inputs, "describe comics", log=lambda s: None)["unchanged"] == [str(target)]

    # the builder reads exactly that file: the comic it skipped is now an item with the person's description
    from builders.mementos import main as mementos

    out = tmp_path / "builds"
    assert mementos(["--comics", str(comics), "--out", str(out), "--cache-dir", str(tmp_path / "cache")]) == 0
    capsys.readouterr()
    items = [json.loads(line) for p in out.rglob("items.jsonl") for line in p.read_text().splitlines()]
    assert TEXT in {it["answer"] for it in items}
    assert flow.subjects(inputs) == []

    # then the usual validation by three reviewers other than the author, and a release
    (build_dir,) = [p.parent for p in out.rglob("items.jsonl")]
    rows = _validate_and_release(ls_server, build_dir, "comics review", "checker", WRITER, tmp_path, capsys)
    assert TEXT in {r["answer"] for r in rows}


def _validate_and_release(ls_server, build_dir: Path, project: str, prefix: str, author: str, tmp_path: Path,
                          capsys) -> list[dict]:
    """Push the build, let its author and then three other reviewers accept the authored items, pull, release; the
    released rows (id, answer) of those items. Asserts the author's vote is refused and the three others decide."""
    from annotation.builddir import load_build
    from annotation.config import ITEM_ID_FIELD
    from annotation.pull import pull
    from annotation.push import push
    from tests.annotation.lshelpers import result, reviewers_accept

    admin = ls_server.client()
    build = load_build(build_dir)
    mine = [it for it in build.items if it.provenance.get("author")]
    assert mine and {it.provenance["author"] for it in mine} == {author}  # the sidecar reached the provenance
    res = push(admin, build, project, progress=False)
    ids = {t["data"][ITEM_ID_FIELD]: t["id"] for t in admin.iter_tasks(res.project_id)}
    own = LabelStudioClient.login(ls_server.url, author, REVIEWER_PASSWORD)
    own.create_annotation(ids[mine[0].id], result(mine[0], "accept"))  # the author votes for their own text
    reviewers_accept(ls_server, ids, mine, prefix)
    review = pull(admin, build, project, accept_unverified=True).review  # a bare server: no ledger
    assert review["refused_own_work"] == {author: 1}
    assert any(author in p and "wrote this item" in p for p in review["problems"])
    for it in mine:
        entry = review["items"][it.id]
        assert entry["status"] == "keep" and entry["votes"]["accept"] == 3
        assert author not in {a["reviewer"] for a in entry["annotations"]}

    from tests.conftest import require_release_extra

    require_release_extra()
    from data_cards.cli import main as data_cards

    releases = tmp_path / "releases"
    assert data_cards(["release", str(build_dir), "--version", "1.0.0", "--out", str(releases)]) == 0
    capsys.readouterr()
    import pyarrow.parquet as pq

    wanted = {it.id for it in mine}
    rows = [r for p in releases.rglob("*.parquet") for r in pq.read_table(p, columns=["id", "answer", "options"]).to_pylist()]
    return [r for r in rows if r["id"] in wanted]


def _tasks_and_writer(ls_server, admin, project: str, email: str) -> tuple[dict[str, int], LabelStudioClient]:
    """The project's task ids by author id, and a newly signed-up person who writes into it."""
    pid = admin.find_project(project)["id"]
    tasks = {t["data"][AUTHOR_ID_FIELD]: t["id"] for t in admin.iter_tasks(pid)}
    signup(ls_server.url, ls_server.invite, email)
    return tasks, LabelStudioClient.login(ls_server.url, email, REVIEWER_PASSWORD)


def test_author_mmsap_questions_round_trip_into_a_build(ls_server, files_root, tmp_path, capsys):
    from builders.mmsap.authoring import ANSWER, DISTRACTORS, QUESTION, SUBSET, TYPE

    images = tmp_path / "images"
    for k in (1, 2):
        draw_png(images / f"photo{k}.png", 40 + k, size=(160, 120))
    admin = ls_server.client()
    out = images / "authored.jsonl"
    flow, inputs = hook("questions"), {"images": images, "out": out}
    assert push(admin, flow, inputs, "mmsap questions", files_root) == (2, 0)
    assert push(admin, flow, inputs, "mmsap questions", files_root) == (0, 2)
    tasks, writer = _tasks_and_writer(ls_server, admin, "mmsap questions", "qwriter@mirage.test")

    def write(image, question, answer, subset, kind, wrong):
        res = [{"from_name": QUESTION, "to_name": SUBJECT, "type": "textarea", "value": {"text": [question]}},
               {"from_name": ANSWER, "to_name": SUBJECT, "type": "textarea", "value": {"text": [answer]}},
               {"from_name": SUBSET, "to_name": SUBJECT, "type": "choices", "value": {"choices": [subset]}},
               {"from_name": TYPE, "to_name": SUBJECT, "type": "choices", "value": {"choices": [kind]}},
               {"from_name": DISTRACTORS, "to_name": SUBJECT, "type": "textarea", "value": {"text": [wrong]}}]
        writer.create_annotation(tasks[image], res)

    write("photo1.png", "Which company makes the console on the table?", "Nintendo", "know", "brands_products",
          "Sony\nMicrosoft\nSega")
    write("photo2.png", "What colour is the circle?", "red", "know", "color", "")  # color is not a know type
    report = pull(admin, flow, inputs, "mmsap questions", log=lambda s: None)
    assert len(report["written"]) == 1 and len(report["problems"]) == 1
    assert "photo2.png" in report["problems"][0] and "'type' 'color' is not a know subtask" in report["problems"][0]
    (record,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert record == {"image": "photo1.png", "question": "Which company makes the console on the table?",
                      "answer": "Nintendo", "subset": "know", "type": "brands_products",
                      "distractors": ["Sony", "Microsoft", "Sega"]}

    from builders.mmsap import main as mmsap

    build_out = tmp_path / "builds"
    code = mmsap(["--authored", str(out), "--demo-images", "200", "--out", str(build_out),
                  "--cache-dir", str(tmp_path / "cache")])
    capsys.readouterr()
    assert code == 0
    items = [json.loads(line) for p in build_out.rglob("items.jsonl") for line in p.read_text().splitlines()]
    mine = [it for it in items if it["question"] == record["question"]]
    assert mine and all(it["options"][ord(it["answer"]) - 65] == "Nintendo" for it in mine)
    assert all({"Sony", "Microsoft", "Sega"} <= set(it["options"]) for it in mine)
    assert json.loads((images / "authored.jsonl.authors.json").read_text()) == {
        "authors": {"photo1.png | which company makes the console on the table?": "qwriter@mirage.test"}}

    (build_dir,) = [p.parent for p in build_out.rglob("items.jsonl")]
    rows = _validate_and_release(ls_server, build_dir, "mmsap review", "qchecker", "qwriter@mirage.test", tmp_path,
                                 capsys)
    assert len(rows) == len(mine)
    assert all(list(r["options"])[ord(r["answer"]) - 65] == "Nintendo" for r in rows)  # what the person wrote


def test_author_predictive_entries_round_trip_into_a_build(ls_server, files_root, tmp_path, capsys):
    from builders.predictive.authoring import DIMENSION, PATTERN, PRED

    seqs = tmp_path / "sequences"
    for name in ("ball-rolls", "cup-fills"):
        for k in range(4):
            draw_png(seqs / name / f"{k + 1}.png", 60 + 7 * k + len(name), size=(120, 90))
    admin = ls_server.client()
    out = seqs / "authored.jsonl"
    flow = hook("patterns")
    assert push(admin, flow, {"images": seqs}, "predictive entries", files_root) == (2, 0)
    assert push(admin, flow, {"images": seqs}, "predictive entries", files_root) == (0, 2)
    tasks, writer = _tasks_and_writer(ls_server, admin, "predictive entries", "pwriter@mirage.test")

    def text(name, value):
        return {"from_name": name, "to_name": SUBJECT, "type": "textarea", "value": {"text": [value]}}

    pattern = "A red ball moves one step to the right in each image."
    pred = "In the next image the ball will be one more step to the right."
    writer.create_annotation(tasks["ball-rolls"], [
        text(PATTERN, pattern), text(PRED, pred),
        {"from_name": DIMENSION, "to_name": SUBJECT, "type": "choices", "value": {"choices": ["spatial_movement"]}},
    ])
    writer.create_annotation(tasks["cup-fills"], [text(PATTERN, "The cup fills up.")])  # no prediction
    report = pull(admin, flow, {"out": out}, "predictive entries", log=lambda s: None)  # images: beside --out
    assert report["written"] == ["ball-rolls"] and "'pred' must be a non-empty string" in report["problems"][0]
    (entry,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert entry == {"id": "ball-rolls", "images": [f"ball-rolls/{k}.png" for k in range(1, 5)],
                     "pattern": pattern, "pred": pred, "dimension": "spatial_movement"}

    from builders.predictive import main as predictive

    build_out = tmp_path / "builds"
    code = predictive(["--authored", str(out), "--tasks", "abstract_pattern", "--patterns", "0", "--out",
                       str(build_out), "--cache-dir", str(tmp_path / "cache")])  # only the authored entries: fast
    capsys.readouterr()
    assert code == 0
    items = [json.loads(line) for p in build_out.rglob("items.jsonl") for line in p.read_text().splitlines()]
    assert pred in {it["answer"] for it in items}

    (build_dir,) = [p.parent for p in build_out.rglob("items.jsonl")]
    rows = _validate_and_release(ls_server, build_dir, "predictive review", "pchecker", "pwriter@mirage.test",
                                 tmp_path, capsys)
    assert [r["answer"] for r in rows] == [pred]
