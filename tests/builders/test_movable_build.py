"""A build refers to the user's images by paths relative to its folder, so the folder can move with its sources
(issue 51: MIOH from COCO wrote absolute paths into items.jsonl)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from builders import mioh
from builders.items import make_item
from builders.run import open_build
from tests.fixtures.real_formats import make_coco


def test_absolute_image_paths_are_written_relative_to_the_build(tmp_path):
    source = tmp_path / "data" / "coco" / "x.jpg"
    item = make_item(benchmark="t", task="x", question_type="q", pressure="easy", images=[str(source), "images/g.png"],
                     question="q?", options=("a", "b"), answer="A")
    with open_build(tmp_path / "builds" / "t", "b") as out:
        out.write_items([item])
    written = json.loads((tmp_path / "builds" / "t" / "b" / "items.jsonl").read_text())
    assert written["images"] == ["../../../data/coco/x.jpg", "images/g.png"]
    assert written["id"] == item.id  # ids hash the file name, which is unchanged


def test_a_mioh_build_from_coco_moves_with_its_sources(tmp_path):
    project = tmp_path / "project"
    coco = make_coco(project / "coco")
    args = ["--coco-rem", str(coco.annotations), "--coco-images", str(coco.images_dir), "--tasks", "existence",
            "--n-images", "2", "--n-questions", "1", "--out", str(project / "builds"), "--name", "b",
            "--no-progress", "--no-clip"]
    assert mioh.main(args) == 0
    moved = tmp_path / "elsewhere" / "project"
    moved.parent.mkdir()
    shutil.move(project, moved)
    lines = (moved / "builds" / "b" / "items.jsonl").read_text().splitlines()
    images = [p for line in lines for p in json.loads(line)["images"]]
    assert images and not [p for p in images if Path(p).is_absolute() or str(tmp_path) in p]
    assert all((moved / "builds" / "b" / p).resolve().is_file() for p in images)
    assert str(project) not in "".join(lines)  # no absolute path in the provenance either
