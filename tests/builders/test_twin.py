"""``python -m builders.twin``: the same cells from a derived seed, reproducibly; bad input in one line."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from builders import mioh
from builders.items import read_items
from builders.twin import main as twin_main, twin_seed


def test_twin_seeds_are_derived_and_distinct():
    assert twin_seed(0, 1) == twin_seed(0, 1)
    seeds = {twin_seed(s, k) for s in range(5) for k in range(1, 4)}
    assert len(seeds) == 15 and not seeds & set(range(5))


def test_bad_builds_are_refused_in_one_line(tmp_path, capsys):
    assert twin_main([str(tmp_path / "nowhere")]) == 2
    assert "build.json: not found" in capsys.readouterr().err
    build = tmp_path / "b"
    build.mkdir()
    (build / "build.json").write_text(json.dumps({"benchmark": "mioh", "seed": 0, "config": {"n_frobs": 3}}))
    assert twin_main([str(build)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "n_frobs unknown to this mioh builder" in err
    (build / "build.json").write_text(json.dumps({"benchmark": "pope", "seed": 0, "config": {}}))
    assert twin_main([str(build)]) == 2
    assert "'pope' has no builder here" in capsys.readouterr().err


@pytest.mark.slow
def test_a_twin_has_the_same_cells_and_other_items(tmp_path):
    out = tmp_path / "builds"
    assert mioh.main(["--n-images", "2", "--n-questions", "2", "--tasks", "existence", "--pressures", "easy",
                      "hard_negative", "--out", str(out), "--no-progress"]) == 0
    original = read_items(out / "n2-seed0" / "items.jsonl")
    assert twin_main([str(out / "n2-seed0")]) == 0
    twin_dir = out / "n2-seed0-twin1"
    twin = read_items(twin_dir / "items.jsonl")
    record = json.loads((twin_dir / "build.json").read_text())
    assert record["seed"] == twin_seed(0, 1) and record["twin_of"]["name"] == "n2-seed0"
    assert record["config"]["tasks"] == ["existence"] and record["config"]["pressures"] == ["easy", "hard_negative"]

    def cells(items):
        return Counter((it.task, it.question_type, it.pressure, len(it.images)) for it in items)

    assert cells(twin) == cells(original)
    assert not {it.id for it in twin} & {it.id for it in original}
    shared = record["twin_of"]["shared_images"]  # issue 53: the demo world draws other scenes, named by their seed
    assert shared["images"] > 0 and shared["shared"] == 0 == shared["share"]
    first = (twin_dir / "items.jsonl").read_bytes()
    assert twin_main([str(out / "n2-seed0"), "--name", "again"]) == 0
    assert (out / "again" / "items.jsonl").read_bytes() == first  # same build, same twin


def test_shared_images_counts_the_same_picture_and_the_same_name(tmp_path):
    """A twin image is the original's when its bytes or its file name (part of the item ids) are."""
    from builders.items import make_item, write_items
    from builders.twin import shared_images

    def build(name: str, pictures: dict[str, bytes]) -> object:
        folder = tmp_path / name
        (folder / "images").mkdir(parents=True)
        for file, data in pictures.items():
            (folder / "images" / file).write_bytes(data)
        write_items(folder / "items.jsonl", [
            make_item(benchmark="t", task="x", question_type="yes_no", pressure="none", images=[f"images/{file}"],
                      question=f"Is there a shape in {file}?", options=(), answer="yes") for file in pictures])
        return folder

    original = build("a", {"1.png": b"one", "2.png": b"two"})
    assert shared_images(original, build("b", {"3.png": b"three", "4.png": b"four"})) == {
        "images": 2, "shared": 0, "share": 0.0}
    planted = build("c", {"5.png": b"one", "2.png": b"other", "6.png": b"six", "7.png": b"seven"})
    assert shared_images(original, planted) == {"images": 4, "shared": 2, "share": 0.5}
