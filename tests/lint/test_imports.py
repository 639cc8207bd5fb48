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
    require(have("spellchecker") and have("wordfreq"), "the word lists", "pip install -e .[lint]")
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



def test_reefknot_release_lints_without_its_images(tmp_path, capsys):
    """Issue 38: ``lint --format reefknot`` needed every Visual Genome image the release names; the checks read
    only the text, so missing images are a count and the findings are those of a run with every image."""
    from tests.builders.reefknot.test_importer import RELEASE
    from tests.builders.reefknot.vg_fixture import make_vg

    vg = make_vg(tmp_path / "vg")
    (vg["images"] / "VG_100K_2" / "2.jpg").unlink()  # a partial image set
    release = tmp_path / "reefknot.jsonl"
    release.write_text("".join(json.dumps(r) + "\n" for r in RELEASE))
    complete = make_vg(tmp_path / "vg-complete")
    runs = {"partial": ["--images", str(vg["images"])], "none": [], "all": ["--images", str(complete["images"])]}
    sections = {}
    for name, extra in runs.items():
        assert lint_main([str(release), "--format", "reefknot", *extra, "--out", str(tmp_path / name)]) == 0
        sections[name] = json.loads((tmp_path / name / "lint.json").read_text())["checks"]
    err = " ".join(capsys.readouterr().err.split())
    assert "1 of 4 images not found under" in err and "first: 2.jpg" in err and "no images folder given" in err
    assert sections["partial"] == sections["none"] == sections["all"]
    assert sections["all"]["contradictions"]["summary"]["conflicting_groups"] == 1


def write_popev2(folder: Path, pairs: int, images: bool = False) -> Path:
    """POPEv2's ``annotations.json`` (a JSON array): each question asked of a COCO image
    (``/normal_images/<id>.jpg``) and of its edited copy (``/images/<id>.jpg``, the same file name); every third
    pair had the object added rather than removed. With ``images``, small JPEGs that differ between the two."""
    from PIL import Image

    rows = []
    for k in range(pairs):
        image_id = 139 + k
        added = k % 3 == 2
        obj = ("dog", "cup", "chair")[k % 3]
        for folder_name, label in (("normal_images", "No" if added else "Yes"), ("images", "Yes" if added else "No")):
            rows.append({"image_id": image_id, "query": f"Is there a {obj} in the image?", "target_object": obj,
                         "image_name": f"/{folder_name}/{image_id:012d}.jpg", "label": label})
            if images:
                target = folder / folder_name / f"{image_id:012d}.jpg"
                target.parent.mkdir(parents=True, exist_ok=True)
                shade = (k % 200, 40 if folder_name == "images" else 220, 90)
                Image.new("RGB", (8, 6), shade).save(target, quality=95)
    path = folder / "annotations.json"
    path.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return path


def test_popev2_pairs_get_one_id_per_question_and_are_not_contradictions(tmp_path, capsys):
    """Issue 38: an edited image shares its file name with its original, and ids hash file names: 1,000 items had
    500 ids and the lint flagged all 1,000 as contradicting duplicates."""
    source = write_popev2(tmp_path, 500, images=True)
    questions = read_pope(source)
    assert [(q.image, q.setting, q.image_id) for q in questions[:2]] == [
        ("normal_images/000000000139.jpg", "normal", "139"), ("images/000000000139.jpg", "counterfactual", "139")]
    assert import_main(["pope", str(source), "--images", str(tmp_path), "--out", str(tmp_path / "b"),
                        "--name", "v2"]) == 0
    build = tmp_path / "b" / "v2"
    items = read_items(build / "items.jsonl")
    assert len(items) == 1000 and len({it.id for it in items}) == 1000
    assert {it.pressure for it in items} == {"normal", "counterfactual"}
    record = json.loads((build / "build.json").read_text())
    checks = record["lint"]["checks"]
    assert checks["contradictions"]["flagged"] == 0 and checks["duplicates"]["flagged"] == 0
    assert record["lint_promises"] == {} and record["stats"]["imported"]["images_copied"] == 1000
    # each item shows its own image: the copy in the build holds the bytes of the file the annotation names
    for it in items[:20]:
        assert it.images[0] == "images/" + it.provenance["image_file"].replace("/", "-")
        assert (build / it.images[0]).read_bytes() == (tmp_path / it.provenance["image_file"]).read_bytes()
    normal = next(it for it in items if it.provenance["image_file"] == "normal_images/000000000139.jpg")
    edited = next(it for it in items if it.provenance["image_file"] == "images/000000000139.jpg")
    assert (normal.answer, edited.answer) == ("yes", "no") and normal.question == edited.question


def write_popev2_parquet(annotations: Path, images: Path, target: Path) -> Path:
    """POPEv2's Hugging Face release (``test.parquet``) made from its ``annotations.json`` and images as the
    authors' ``prepare_popev2_hf_parquet.py`` pairs them: one row per image id, both images embedded."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows: dict[int, dict] = {}
    for r in json.loads(annotations.read_text()):
        name = r["image_name"].lstrip("/")
        side = "counterfactual" if name.startswith("images/") else "normal"
        row = rows.setdefault(r["image_id"], {"example_id": f"popev2-{r['image_id']:012d}", "image_id": r["image_id"],
                                               "target_object": r["target_object"], "question": r["query"]})
        row[f"{side}_image"] = {"bytes": (images / name).read_bytes(), "path": name}
        row[f"{side}_label"] = r["label"]
    image = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    schema = pa.schema([("example_id", pa.string()), ("image_id", pa.int64()), ("target_object", pa.string()),
                        ("question", pa.string()), ("counterfactual_image", image),
                        ("counterfactual_label", pa.string()), ("normal_image", image),
                        ("normal_label", pa.string())])
    pq.write_table(pa.Table.from_pylist([rows[k] for k in sorted(rows)], schema=schema), target)
    return target


def test_popev2_parquet_release_imports_with_its_embedded_images(tmp_path):
    """The Hugging Face release of POPEv2: each row's two images embedded. The build holds them under the names
    and ids the annotations.json import gives."""
    require(have("pyarrow"), "pyarrow", "pip install -e '.[release]'")
    source = write_popev2(tmp_path, 40, images=True)
    parquet = write_popev2_parquet(source, tmp_path, tmp_path / "test.parquet")
    assert import_main(["pope", str(parquet), "--out", str(tmp_path / "b"), "--name", "hf"]) == 0
    assert import_main(["pope", str(source), "--images", str(tmp_path), "--out", str(tmp_path / "b"),
                        "--name", "json"]) == 0
    hf, js = (read_items(tmp_path / "b" / n / "items.jsonl") for n in ("hf", "json"))
    assert len(hf) == 80 and [it.id for it in hf] == [it.id for it in js]
    assert [(it.answer, it.pressure, it.images) for it in hf] == [(it.answer, it.pressure, it.images) for it in js]
    for it in hf:
        assert ((tmp_path / "b" / "hf" / it.images[0]).read_bytes()
                == (tmp_path / it.provenance["image_file"]).read_bytes())
    record = json.loads((tmp_path / "b" / "hf" / "build.json").read_text())
    assert record["lint"]["checks"]["contradictions"]["flagged"] == 0
    assert lint_main([str(parquet), "--format", "pope", "--checks", "contradictions,duplicates"]) == 0


def test_a_broken_popev2_parquet_is_one_line(tmp_path, capsys):
    require(have("pyarrow"), "pyarrow", "pip install -e '.[release]'")
    import pyarrow as pa
    import pyarrow.parquet as pq

    (tmp_path / "garbage.parquet").write_bytes(b"PAR1 not really")
    pq.write_table(pa.table({"example_id": ["popev2-1"], "image_id": [1], "question": ["Is there a dog?"],
                             "normal_label": ["Yes"], "counterfactual_label": ["No"]}), tmp_path / "no-images.parquet")
    for name, says in (("garbage.parquet", "not a readable parquet file"),
                       ("no-images.parquet", "row 1 (normal): no embedded normal_image")):
        capsys.readouterr()
        assert import_main(["pope", str(tmp_path / name), "--out", str(tmp_path / "b")]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and str(tmp_path / name) in err and says in err, err


def test_popev2_lints_clean_from_its_own_file(tmp_path):
    source = write_popev2(tmp_path, 30)
    assert lint_main([str(source), "--format", "pope", "--out", str(tmp_path / "o"),
                      "--checks", "contradictions,duplicates"]) == 0
    section = json.loads((tmp_path / "o" / "lint.json").read_text())
    assert section["checks"]["contradictions"]["flagged"] == 0 and section["checks"]["duplicates"]["flagged"] == 0


def test_pope_v1_images_keep_their_names(tmp_path):
    """Only images whose file names clash are renamed: POPE v1's ids are those of every earlier import."""
    write_pope_v1(tmp_path / "coco_pope_random.json")
    assert import_main(["pope", str(tmp_path / "coco_pope_random.json"), "--images", str(tmp_path / "val2014"),
                        "--out", str(tmp_path / "b"), "--name", "p"]) == 0
    items = read_items(tmp_path / "b" / "p" / "items.jsonl")
    build = tmp_path / "b" / "p"  # the user's images, named relative to the build folder
    assert {(build / it.images[0]).resolve() for it in items} == {
        (tmp_path / "val2014" / f"COCO_val2014_{k:012d}.jpg").resolve() for k in range(2)}
    assert not (tmp_path / "b" / "p" / "images").exists()
