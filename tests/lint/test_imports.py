"""The importers on fixtures in the published layouts, and the lint command's input and error handling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builders.imports.cli import main as import_main
from builders.items import read_items
from lint.cli import main as lint_main
from sources.mementos_csv import read_mementos_csv
from sources.pope import read_pope
from tests.conftest import have, require

POPE_TEMPLATE = "Is there a {} in the image?"


def write_pope_v1(path: Path, template: str = POPE_TEMPLATE) -> list[dict]:
    """POPE's generator layout: three yes and three no per image (one JSON object per line)."""
    rows = []
    for img in range(2):
        for k, (obj, label) in enumerate([("dog", "yes"), ("cup", "yes"), ("apple", "yes"),
                                          ("cat", "no"), ("oven", "no"), ("car", "no")]):
            rows.append({"question_id": len(rows) + 1, "image": f"COCO_val2014_{img:012d}.jpg",
                         "text": template.format(obj), "label": label})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return rows


def test_pope_v1_and_v2_layouts(tmp_path):
    rows = write_pope_v1(tmp_path / "coco_pope_adversarial.json")
    questions = read_pope(tmp_path / "coco_pope_adversarial.json")
    assert [q.label for q in questions] == [r["label"] for r in rows]
    assert questions[0].setting == "adversarial" and questions[0].target_object == "dog"
    v2 = [{"query": "Is there a dog in the image?", "image_name": "a.jpg", "target_object": "dog", "label": "Yes"},
          {"query": "Is there a cat in the image?", "image_name": "a.jpg", "target_object": "cat", "label": "NO"}]
    (tmp_path / "pope_v2_random.jsonl").write_text("\n".join(map(json.dumps, v2)), encoding="utf-8")
    q2 = read_pope(tmp_path / "pope_v2_random.jsonl")
    assert [(q.image, q.label, q.target_object, q.setting) for q in q2] == [("a.jpg", "yes", "dog", "random"),
                                                                           ("a.jpg", "no", "cat", "random")]


def test_pope_as_a_json_array(tmp_path):
    rows = [{"question_id": 1, "image": "a.jpg", "text": "Is there a dog in the image?", "label": "yes"}]
    (tmp_path / "pope.json").write_text(json.dumps(rows, indent=1))
    assert [(q.question_id, q.label, q.setting) for q in read_pope(tmp_path / "pope.json")] == [("1", "yes", "unknown")]


def test_pope_import_writes_a_linted_build(tmp_path, capsys):
    write_pope_v1(tmp_path / "coco_pope_popular.json")
    assert import_main([ "pope", str(tmp_path / "coco_pope_popular.json"), "--out", str(tmp_path / "b"),
                        "--name", "p"]) == 0
    items = read_items(tmp_path / "b" / "p" / "items.jsonl")
    assert len(items) == 12 and {it.benchmark for it in items} == {"pope"}
    build = json.loads((tmp_path / "b" / "p" / "build.json").read_text())
    assert build["lint_promises"] == {"yes_no_pairs": ["setting"]}
    assert build["lint"]["checks"]["contradictions"]["flagged"] == 0  # 3 yes + 3 no per image


def test_pope_imange_fixture_is_caught(tmp_path, capsys):
    """The published bug's effect: ``template.replace("a", "an")`` wrote "an" and "imange"."""
    require(have("spellchecker"), "pyspellchecker (the word list)", "pip install -e .[lint]")
    write_pope_v1(tmp_path / "coco_pope_random.json", POPE_TEMPLATE.replace("a", "an"))
    assert lint_main([str(tmp_path / "coco_pope_random.json"), "--format", "pope", "--out", str(tmp_path / "o"),
                      "--fail-on-findings"]) == 1
    section = json.loads((tmp_path / "o" / "lint.json").read_text())
    assert section["checks"]["wording"]["summary"]["unknown_words"] == {"imange": 12}
    assert section["checks"]["wording"]["flagged"] == 12
    rows = [json.loads(line) for line in (tmp_path / "o" / "issues.jsonl").read_text().splitlines()]
    assert len(rows) == 12 and all(r["is_wording_issue"] and r["wording_score"] < 1 for r in rows)
    assert "imange" in capsys.readouterr().out


def test_pope_unpaired_labels_break_the_promise(tmp_path):
    rows = write_pope_v1(tmp_path / "coco_pope_random.json")
    rows[0]["label"] = "no"
    (tmp_path / "coco_pope_random.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert lint_main([str(tmp_path / "coco_pope_random.json"), "--format", "pope", "--out", str(tmp_path / "o"),
                      "--checks", "contradictions"]) == 0
    section = json.loads((tmp_path / "o" / "lint.json").read_text())
    assert section["checks"]["contradictions"]["summary"]["unpaired_groups"] == 1
    assert section["checks"]["contradictions"]["flagged"] == 6


SCHEMES = {
    "robo_description.csv": b"image_name,description\r\nr1.png,The arm lifts a block.\r\n",
    "dl_description.csv": b"Name,GT\nd1.png,A man opens a door.\n",
    "cmc_description.csv": b"id,ground_truth,domain\r\nc1.png,\"A cat chases a mouse,\r\nthen sleeps.\",comics\n",
    "extra_description.csv": b"x1.png,A dog runs.\r\nx2.png,A dog sits.\n",
}


@pytest.mark.parametrize("name", sorted(SCHEMES))
def test_mementos_csv_column_schemes(tmp_path, name):
    (tmp_path / name).write_bytes(SCHEMES[name])
    table = read_mementos_csv(tmp_path / name)
    assert table.rows and all(r.sequence.endswith(".png") and r.description for r in table.rows)
    assert table.decode_errors == []
    if name.startswith("cmc"):
        assert table.rows[0].description == "A cat chases a mouse,\nthen sleeps." and table.rows[0].domain == "comics"
    if name.startswith("robo"):
        assert table.rows[0].domain == "robotics"
    if name.startswith("extra"):
        assert table.scheme == "no header (2 columns)" and len(table.rows) == 2


def test_mementos_csv_invalid_byte_is_reported_with_offset(tmp_path, capsys):
    data = b"image_name,description\nd1.png,A man walks.\r\nd2.png,The caf\xe9 opens.\n"
    (tmp_path / "dl_description.csv").write_bytes(data)
    table = read_mementos_csv(tmp_path / "dl_description.csv")
    offset = data.index(b"\xe9")
    assert table.decode_errors == [f"{tmp_path / 'dl_description.csv'}: byte offset {offset} (line 3): invalid "
                                   "UTF-8 byte 0xe9, replaced by U+FFFD"]
    assert import_main(["mementos-csv", str(tmp_path / "dl_description.csv"), "--out", str(tmp_path / "b"),
                        "--name", "m"]) == 0
    assert f"byte offset {offset}" in capsys.readouterr().err.replace("\n", "")
    build = json.loads((tmp_path / "b" / "m" / "build.json").read_text())
    assert build["lint"]["checks"]["wording"]["flagged"] == 1
    assert "U+FFFD" in json.dumps(build["lint"]["checks"]["wording"]["examples"])


@pytest.mark.parametrize("content, fmt, expect", [
    (b'{"question_id": 1, "image": "a.jpg", "text": "Is there a dog?", "label": "maybe"}\n', "pope", "line 1"),
    (b'{"question_id": 1, "image": "a.jpg"\n', "pope", "line 1"),
    (b'{"question_id": 1, "text": "Is there a dog?", "label": "yes"}\n', "pope", "image"),
    (b"foo,bar,baz\n1,2,3\n", "mementos-csv", "header"),
])
def test_malformed_published_files_are_one_line_and_exit_2(tmp_path, capsys, content, fmt, expect):
    path = tmp_path / ("bad_pope.json" if fmt == "pope" else "bad.csv")
    path.write_bytes(content)
    assert import_main([fmt, str(path), "--out", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(path) in err and expect in err
    assert not (tmp_path / "b").exists() or not any((tmp_path / "b").iterdir())


def test_lint_command_errors_are_one_line(tmp_path, capsys):
    assert lint_main([str(tmp_path / "missing")]) == 2
    assert lint_main([str(tmp_path), "--checks", "nonsense"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 2 and "nonsense" in lines[1]


def test_reefknot_release_through_the_lint(tmp_path):
    """The Reefknot importer wired in: the release's two-answer keys and ungrammatical labels are found."""
    from tests.builders.reefknot.test_importer import RELEASE
    from tests.builders.reefknot.vg_fixture import make_vg

    vg = make_vg(tmp_path / "vg")
    rows = RELEASE[:3] + [  # the Reefknot tests' release: image 1 asked twice with two answers, image 2 once
        {"image_id": "3", "query_prompt": "What is the relation with snow and ground in this photo?", "label":
         "snow is covers ground.", "type": "VQA", "relation_type": "perception"},
    ]
    release = tmp_path / "reefknot.jsonl"
    release.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert lint_main([str(release), "--format", "reefknot", "--images", str(vg["images"]), "--out",
                      str(tmp_path / "o")]) == 0
    checks = json.loads((tmp_path / "o" / "lint.json").read_text())["checks"]
    assert checks["contradictions"]["summary"]["conflicting_groups"] == 1
    assert checks["contradictions"]["summary"]["unpaired_groups"] == 1  # image 2: one yes, no no
    assert "agreement: 'is covers' in the answer" in json.dumps(checks["wording"]["examples"])
    assert lint_main([str(release), "--format", "reefknot"]) == 2  # no --images: one line, exit 2
