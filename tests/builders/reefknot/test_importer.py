"""The official release's JSON lines become Mirage items (options split out of MCQ prompts, answers as letters),
its faults are counted, the imported build scores, and a bad line is one error line with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builders.reefknot.importer import main, split_options
from tests.builders.reefknot.vg_fixture import make_vg

RELEASE = [
    {
        "image_id": "1",
        "query_prompt": "Is the man riding horse in this photo?",
        "label": "yes",
        "type": "Yes/No",
        "relation_type": "cognitive",
    },
    {
        "image_id": "1",
        "query_prompt": "Is the man riding horse in this photo?",
        "label": "no",
        "type": "Yes/No",
        "relation_type": "cognitive",
    },
    {
        "image_id": "2",
        "query_prompt": "Is the cup on table in this photo?",
        "label": "Yes",
        "type": "Yes/No",
        "relation_type": "perception",
    },
    {
        "image_id": "2",
        "query_prompt": "What is the relation with cup and table in this photo? A. on B. beside "
        "C. below D. on left of, please choose.",
        "label": "A",
        "type": "Multichoice",
        "relation_type": "perception",
    },
    {
        "image_id": "5",
        "query_prompt": "What is the relation with cat and table in this photo? A. under B. on "
        "C. eating D. near, please choose.",
        "label": "on",
        "type": "Multichoice",
        "relation_type": "perception",
    },
    {
        "image_id": "3",
        "query_prompt": "What is the relation with man and dog in this photo? Please answer in the "
        "following format: man is <relation> dog.",
        "label": "man is watching dog",
        "type": "VQA",
        "relation_type": "cognitive",
    },
]


def _write(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_split_options():
    assert split_options("What is it? A. on B. beside C. below D. on left of, please choose.") == (
        "What is it?",
        ("on", "beside", "below", "on left of"),
    )
    assert split_options("Is the cup on table?") is None


def test_import_counts_faults_and_scores(tmp_path, capsys):
    vg = make_vg(tmp_path / "vg")
    release = _write(tmp_path / "reefknot.jsonl", RELEASE)
    assert main([str(release), "--images", str(vg["images"]), "--out", str(tmp_path / "b")]) == 0
    build = tmp_path / "b" / "official-release"
    items = [json.loads(line) for line in (build / "items.jsonl").read_text().splitlines()]
    assert len(items) == 6 and len({it["id"] for it in items}) == 6
    mcq = sorted((it for it in items if it["question_type"] == "mcq"), key=lambda it: it["provenance"]["line"])
    assert [it["answer"] for it in mcq] == ["A", "B"] and mcq[0]["options"] == ["on", "beside", "below", "on left of"]
    assert {it["task"] for it in items} == {"perception", "cognition"}
    assert all((build / it["images"][0]).is_file() for it in items)  # relative to the build folder
    quality = json.loads((build / "build.json").read_text())["stats"]["quality"]
    assert quality["two_answers"] == 1 and quality["duplicate_questions"] == 1

    from scoring.__main__ import main as score

    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"id": it["id"], "output": it["answer"]}) + "\n" for it in items))
    assert (
        score(
            [
                "reefknot",
                "--release",
                str(build),
                "--predictions",
                str(preds),
                "--vqa-judge",
                "exact",
                "--out",
                str(tmp_path / "s"),
                "--no-plots",
            ]
        )
        == 0
    )
    res = json.loads((tmp_path / "s" / "results.json").read_text())
    assert res["table3"]["total"]["mcq"]["halr"] == 0.0 and res["table3"]["total"]["vqa"]["halr"] == 0.0


@pytest.mark.parametrize(
    "change, words",
    [
        ({"type": "Essay"}, "'type'"),
        ({"relation_type": "spatial"}, "'relation_type'"),
        ({"image_id": "abc"}, "digits"),
        ({"label": "maybe"}, "yes or no"),
    ],
)
def test_bad_release_line_is_one_line_exit_2(change, words, tmp_path, capsys):
    vg = make_vg(tmp_path / "vg")
    release = _write(tmp_path / "reefknot.jsonl", [RELEASE[0], {**RELEASE[2], **change}])
    assert main([str(release), "--images", str(vg["images"]), "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "line 2" in err[0] and words in err[0]
    assert not (tmp_path / "b").exists() or not any((tmp_path / "b").iterdir())


def test_images_not_at_hand_are_counted_not_a_stop(tmp_path, capsys):
    """Issue 38: the importer needed every one of the 11,084 Visual Genome images the release names. Now images
    not found are counted; their items name the bare file, with the ids they would have had."""
    vg = make_vg(tmp_path / "vg")
    release = _write(tmp_path / "reefknot.jsonl", [*RELEASE, {**RELEASE[2], "image_id": "999"}])
    assert main([str(release), "--images", str(vg["images"]), "--out", str(tmp_path / "b")]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "1 of 5 images not found under" in err and "first: 999.jpg); its 1 question names the bare" in err
    assert "run on all 7 questions" in err
    build = tmp_path / "b" / "official-release"
    record = json.loads((build / "build.json").read_text())
    assert record["stats"]["images"] == {"images_dir": str(vg["images"]), "found": 4, "missing": 1,
                                         "missing_image_ids": ["999"]}
    items = [json.loads(line) for line in (build / "items.jsonl").read_text().splitlines()]
    assert len(items) == 7
    assert [it["images"] for it in items if it["provenance"]["image_id"] == "999"] == [["999.jpg"]]
    # with no images at all, the same ids
    assert main([str(release), "--out", str(tmp_path / "b"), "--name", "text-only"]) == 0
    assert "no images folder given" in " ".join(capsys.readouterr().err.split())
    text_only = [json.loads(line) for line in (tmp_path / "b" / "text-only" / "items.jsonl").read_text().splitlines()]
    assert [it["id"] for it in text_only] == [it["id"] for it in items]
    assert json.loads((tmp_path / "b" / "text-only" / "build.json").read_text())["stats"]["images"]["found"] == 0
