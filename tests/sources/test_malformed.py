"""Bad input raises one clear SourceError naming the file, the record and the problem - never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from sources.coco import read_coco
from sources.errors import MirageError, SourceError
from sources.paco import read_paco
from sources.svg import read_svg
from sources.visual_genome import read_visual_genome
from tests.fixtures import real_formats as rf


def expect_error(call: Callable[[], Any], file: Path | str, record: str, *problem: str) -> SourceError:
    """``call()`` raises a SourceError whose one-line message names ``file``, ``record`` and ``problem``."""
    with pytest.raises(SourceError) as info:
        call()
    err = info.value
    message = str(err)
    assert isinstance(err, MirageError)
    assert "\n" not in message
    assert err.file == str(file) and message.startswith(str(file))
    assert err.record == record, message
    if record:
        assert f": {record}: " in message
    for words in problem:
        assert words in err.problem, message
    return err


# ----------------------------------------------------------------------------------------- files (all readers)


def test_missing_annotation_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    for reader in (read_coco, read_paco, read_svg, read_visual_genome):
        expect_error(lambda: reader(missing, tmp_path), missing, "", "not found")


def test_empty_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("  \n")
    for reader in (read_coco, read_paco, read_svg, read_visual_genome):
        expect_error(lambda: reader(empty, tmp_path), empty, "", "file is empty")


def test_malformed_json_names_line_and_column(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "images": [],\n  "annotations": [,]\n}')
    expect_error(lambda: read_coco(bad, tmp_path), bad, "", "malformed JSON at line 3, column 19")


def test_directory_instead_of_file(tmp_path: Path) -> None:
    expect_error(lambda: read_coco(tmp_path, tmp_path), tmp_path, "", "is a directory")


# ------------------------------------------------------------------------------------------------------- COCO


@pytest.mark.parametrize("name", sorted(rf.COCO_CORRUPTIONS))
def test_coco_corruptions(tmp_path: Path, name: str) -> None:
    fx = rf.make_coco(tmp_path)
    transform, record, problem = rf.COCO_CORRUPTIONS[name]
    rf.corrupt(fx.annotations, transform)
    expect_error(lambda: read_coco(fx.annotations, fx.images_dir), fx.annotations, record, problem)


def test_coco_missing_image_file(tmp_path: Path) -> None:
    fx = rf.make_coco(tmp_path)
    (fx.images_dir / "000000000004.png").unlink()
    err = expect_error(
        lambda: read_coco(fx.annotations, fx.images_dir), fx.annotations, "images[8] (id=4)", "image file not found"
    )
    assert str(fx.images_dir / "000000000004.png") in err.problem


def test_coco_wrong_images_dir(tmp_path: Path) -> None:
    fx = rf.make_coco(tmp_path)
    expect_error(lambda: read_coco(fx.annotations, tmp_path / "elsewhere"), fx.annotations, "images[0] (id=12)",
                 "image file not found")


def test_box_tolerance_of_one_pixel(tmp_path: Path) -> None:
    fx = rf.make_coco(tmp_path)
    rf.corrupt(fx.annotations, rf.set_field("annotations", 3, "bbox", [54.5, 0, 10.4, 48.9]))
    read_coco(fx.annotations, fx.images_dir)  # rounding slack is fine
    rf.corrupt(fx.annotations, rf.set_field("annotations", 3, "bbox", [-1.5, 0, 10, 10]))
    expect_error(lambda: read_coco(fx.annotations, fx.images_dir), fx.annotations, "annotations[3] (id=200)",
                 "outside")


# ------------------------------------------------------------------------------------------------------- PACO


def _paco_ann(data: dict, ann_id: int) -> dict:
    return next(a for a in data["annotations"] if a["id"] == ann_id)


def _paco_label(fx: rf.FixturePaths, ann_id: int) -> str:
    data = json.loads(fx.annotations.read_text())
    index = next(i for i, a in enumerate(data["annotations"]) if a["id"] == ann_id)
    return f"annotations[{index}] (id={ann_id})"


@pytest.mark.parametrize(
    ("ann_id", "change", "problem"),
    [
        (150, {"obj_ann_id": 98765}, "'obj_ann_id' 98765 names no annotation"),
        (150, {"obj_ann_id": None}, "part annotation has no 'obj_ann_id'"),
        (150, {"obj_ann_id": 200}, "'obj_ann_id' 200 is in image 2, not 1"),  # image 2's mug
        (100, {"attribute_ids": [23, 99]}, "unknown attribute id 99"),
        (100, {"attribute_ids": "red"}, "'attribute_ids' must be an array"),
    ],
)
def test_paco_bad_annotations(tmp_path: Path, ann_id: int, change: dict, problem: str) -> None:
    fx = rf.make_paco(tmp_path)
    rf.rewrite_json(fx.annotations, lambda d: _paco_ann(d, ann_id).update(change))
    expect_error(lambda: read_paco(fx.annotations, fx.images_dir), fx.annotations, _paco_label(fx, ann_id), problem)


def test_paco_part_pointing_to_a_part(tmp_path: Path) -> None:
    fx = rf.make_paco(tmp_path)
    rf.rewrite_json(fx.annotations, lambda d: _paco_ann(d, 250).update(obj_ann_id=150, image_id=1))
    expect_error(lambda: read_paco(fx.annotations, fx.images_dir), fx.annotations, _paco_label(fx, 250),
                 "names a part")


def test_paco_attribute_vocabulary_problems(tmp_path: Path) -> None:
    fx = rf.make_paco(tmp_path)
    rf.rewrite_json(fx.annotations, lambda d: d["attributes"][7].update(type="shininess"))
    expect_error(lambda: read_paco(fx.annotations, fx.images_dir), fx.annotations, "attributes[7] (id=7)",
                 "unknown attribute type 'shininess'")
    fx = rf.make_paco(tmp_path)
    rf.rewrite_json(fx.annotations, lambda d: d["attributes"].append({"id": 77, "name": "sparkly"}))
    expect_error(lambda: read_paco(fx.annotations, fx.images_dir), fx.annotations, "attributes[59] (id=77)",
                 "outside PACO's id ranges")
    fx = rf.make_paco(tmp_path)
    rf.rewrite_json(fx.annotations, lambda d: d["attributes"].append({"id": 3, "name": "navy"}))
    expect_error(lambda: read_paco(fx.annotations, fx.images_dir), fx.annotations, "attributes[59] (id=3)",
                 "duplicate attribute id 3")


# -------------------------------------------------------------------------------------------------------- SVG


def test_svg_relation_index_out_of_range(tmp_path: Path) -> None:
    fx = rf.make_svg(tmp_path)

    def mutate(rows):
        graph = json.loads(rows[1]["scene_graph"])
        graph["relations"][0][1] = 5
        rows[1]["scene_graph"] = json.dumps(graph)
    rf.rewrite_json(fx.annotations, mutate)
    expect_error(lambda: read_svg(fx.annotations, fx.images_dir), fx.annotations,
                 "[1] (image_id='1002.png').relations[0]", "object index 5 out of range (image has 2 regions)")


def test_svg_jsonl_errors_name_the_line(tmp_path: Path) -> None:
    fx = rf.make_svg(tmp_path, form="jsonl", style="flat")
    lines = fx.annotations.read_text().splitlines()
    row = json.loads(lines[2])
    row["relations"][0]["subject"] = -1
    lines[2] = json.dumps(row)
    fx.annotations.write_text("\n".join(lines) + "\n")
    expect_error(lambda: read_svg(fx.annotations, fx.images_dir), fx.annotations,
                 "line 3 (image_id='1003.png').relations[0]", "subject index -1 out of range")
    lines[2] = json.dumps(json.loads(lines[2]) | {"relations": []})
    lines[4] = lines[4][:-1]
    fx.annotations.write_text("\n".join(lines) + "\n")
    expect_error(lambda: read_svg(fx.annotations, fx.images_dir), fx.annotations, "line 5", "malformed JSON at column")


@pytest.mark.parametrize(
    ("mutate", "record", "problem"),
    [
        (lambda rows: rows[0]["regions"][1].update(bbox=[2, 2, 70, 4]), "[0] (image_id='1001.png').regions[1]",
         "outside the 64x48 image"),
        (lambda rows: rows[0]["regions"][1].pop("bbox"), "[0] (image_id='1001.png').regions[1]",
         "missing required key 'bbox'"),
        (lambda rows: rows[0].update(scene_graph='{"objects": ['), "[0] (image_id='1001.png')",
         "'scene_graph' holds malformed JSON"),
        (lambda rows: rows[0].update(scene_graph=json.dumps({"objects": ["cup"], "relations": []})),
         "[0] (image_id='1001.png')", "1 names for 3 regions"),
        (lambda rows: rows[3].update(image_id="1001.png"), "[3] (image_id='1001.png')", "duplicate image id"),
        (lambda rows: rows[0].pop("image_id"), "[0]", "missing required key 'image_id' or 'id' or 'image'"),
        (lambda rows: rows[0]["metadata"].update(width=-64), "[0] (image_id='1001.png')", "'width' must be positive"),
    ],
)
def test_svg_bad_rows(tmp_path: Path, mutate: Callable, record: str, problem: str) -> None:
    fx = rf.make_svg(tmp_path)
    rf.rewrite_json(fx.annotations, mutate)
    expect_error(lambda: read_svg(fx.annotations, fx.images_dir), fx.annotations, record, problem)


def test_svg_top_level_not_rows(tmp_path: Path) -> None:
    fx = rf.make_svg(tmp_path)
    rf.corrupt(fx.annotations, lambda rows: 7)
    expect_error(lambda: read_svg(fx.annotations, fx.images_dir), fx.annotations, "", "top level must be an array")


def test_svg_missing_image(tmp_path: Path) -> None:
    fx = rf.make_svg(tmp_path)
    (fx.images_dir / "1004.png").unlink()
    expect_error(lambda: read_svg(fx.annotations, fx.images_dir), fx.annotations, "[3] (image_id='1004.png')",
                 "image file not found")


# ---------------------------------------------------------------------------------------------- Visual Genome


def test_visual_genome_bad_relationships(tmp_path: Path) -> None:
    fx = rf.make_visual_genome(tmp_path)
    # the file lists images in reverse: [0] is image 8, [4] is image 1
    rf.rewrite_json(fx.annotations, lambda d: d[4]["relationships"][1]["object"].pop("object_id"))
    expect_error(lambda: read_visual_genome(fx.annotations, fx.images_dir, fx.image_data), fx.annotations,
                 "[4] (image_id=1).relationships[1].object", "missing required key 'object_id' or 'id'")
    fx = rf.make_visual_genome(tmp_path)
    rf.rewrite_json(fx.annotations, lambda d: d[4]["relationships"][0]["subject"].update(w=-3))
    expect_error(lambda: read_visual_genome(fx.annotations, fx.images_dir, fx.image_data), fx.annotations,
                 "[4] (image_id=1).relationships[0].subject", "non-positive size")
    fx = rf.make_visual_genome(tmp_path)
    rf.rewrite_json(fx.annotations, lambda d: d[4]["relationships"][0].pop("predicate"))
    expect_error(lambda: read_visual_genome(fx.annotations, fx.images_dir, fx.image_data), fx.annotations,
                 "[4] (image_id=1).relationships[0]", "missing required key 'predicate'")


def test_visual_genome_image_data_problems(tmp_path: Path) -> None:
    fx = rf.make_visual_genome(tmp_path)
    rf.rewrite_json(fx.image_data, lambda d: d.pop(1))
    expect_error(lambda: read_visual_genome(fx.annotations, fx.images_dir, fx.image_data), fx.annotations,
                 "[3] (image_id=2)", "not in")
    fx = rf.make_visual_genome(tmp_path)
    rf.rewrite_json(fx.image_data, lambda d: d[1].update(height=0))
    expect_error(lambda: read_visual_genome(fx.annotations, fx.images_dir, fx.image_data), fx.image_data,
                 "[1] (image_id=2)", "'height' must be positive")
    missing = tmp_path / "no_image_data.json"
    expect_error(lambda: read_visual_genome(fx.annotations, fx.images_dir, missing), missing, "",
                 "image data file not found")


def test_visual_genome_missing_image_file(tmp_path: Path) -> None:
    fx = rf.make_visual_genome(tmp_path)
    (fx.images_dir / "VG_100K_2" / "3.jpg").unlink()
    expect_error(lambda: read_visual_genome(fx.annotations, fx.images_dir), fx.annotations, "[2] (image_id=3)",
                 "image file not found")


def test_visual_genome_unreadable_image_when_size_needed(tmp_path: Path) -> None:
    fx = rf.make_visual_genome(tmp_path)
    (fx.images_dir / "2.jpg").write_bytes(b"not an image")
    expect_error(lambda: read_visual_genome(fx.annotations, fx.images_dir), fx.annotations, "[3] (image_id=2)",
                 "cannot read image size")


def test_load_json_reads_what_json_reads(tmp_path):
    """The orjson fast path falls back to json for what orjson refuses, so the values never depend on it."""
    import json

    from sources.jsonio import load_json

    for text in ('{"a": 1, "a": 2, "x": [1.5, -0.0, 1e-7]}', '[NaN, 1e400, 123456789012345678901234567890]',
                 '"\\ud800 lone surrogate"', '\ufeff{"bom": true}'):
        path = tmp_path / "f.json"
        path.write_text(text, encoding="utf-8")
        got, want = load_json(path), json.loads(path.read_bytes())
        assert repr(got) == repr(want), text


def test_json_lines_and_embedded_json_read_what_json_reads(tmp_path):
    """SVG's rows (a JSON-lines file) and their scene graphs (JSON in a string) go through the orjson fast path
    too (1.2 s of an SVG-sized file's 5.5 s read); the values stay json's, and a malformed line is still named."""
    import json

    from sources.jsonio import iter_jsonl, parse_embedded_json

    texts = ['{"a": 1, "a": 2, "x": [1.5, -0.0, 1e-7]}', '[NaN, 1e400, 123456789012345678901234567890]',
             '"\\ud800 lone surrogate"', '{"ok": "\u00e9\u2028"}']
    path = tmp_path / "rows.jsonl"
    path.write_text("\ufeff" + "\n".join(texts) + "\n", encoding="utf-8")
    got = [(n, repr(value)) for n, value in iter_jsonl(path)]
    want = [(n, repr(json.loads(line))) for n, line in enumerate(path.read_bytes().splitlines(), start=1)]
    assert got == want
    for text in texts:
        assert repr(parse_embedded_json(text, path, "[0]", "scene_graph")) == repr(json.loads(text))
    path.write_text(texts[0] + "\n" + texts[0][:-1] + "\n", encoding="utf-8")
    expect_error(lambda: list(iter_jsonl(path)), path, "line 2", "malformed JSON at column")
