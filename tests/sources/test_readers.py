"""The real-format readers on well-formed fixtures: every record matches the fixture's independent ground truth."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from pycocotools import mask as mask_utils

from sources.coco import read_coco
from sources.paco import read_paco
from sources.records import RecordSet
from sources.svg import read_svg
from sources.visual_genome import read_visual_genome
from tests.fixtures import real_formats as rf


def _decoded_area(rle) -> int:
    m = mask_utils.decode({"size": list(rle["size"]), "counts": rle["counts"].encode("ascii")})
    return int(m.sum())


def assert_matches_truth(records: RecordSet, fx: rf.FixturePaths) -> None:
    """Every image, instance and relation of ``records`` is what ``fx.truth`` says, in order."""
    truth = fx.truth
    assert records.source == truth["source"]
    assert list(records.categories) == truth["categories"]
    assert dict(records.attribute_types) == truth["attribute_types"]
    assert [im.id for im in records.images] == rf.image_ids(truth)
    for im in records.images:
        t = truth["images"][im.id]
        assert im.source == truth["source"]
        assert im.file == str(fx.images_dir / t["file_name"])
        assert (im.width, im.height) == (t["width"], t["height"])
        got = [
            {"id": i.id, "category": i.category, "bbox": i.bbox, "area": i.area, "iscrowd": i.iscrowd,
             "attributes": i.attributes}
            for i in im.instances
        ]
        want = [{k: o[k] for k in ("id", "category", "bbox", "area", "iscrowd", "attributes")} for o in t["objects"]]
        assert got == want, im.id
        for inst, o in zip(im.instances, t["objects"]):
            if o["mask"] is None:
                assert inst.rle is None
            else:
                assert isinstance(inst.rle["counts"], str) and list(inst.rle["size"]) == [im.height, im.width]
                assert _decoded_area(inst.rle) == o["area"], inst.id
        assert [(r.subject, r.predicate, r.object) for r in im.relations] == t["relations"]


# --------------------------------------------------------------------------------------------------------- COCO


@pytest.fixture()
def coco(tmp_path: Path) -> rf.FixturePaths:
    return rf.make_coco(tmp_path)


def test_coco_matches_truth(coco: rf.FixturePaths) -> None:
    records = read_coco(coco.annotations, coco.images_dir)
    assert_matches_truth(records, coco)
    assert records.path == str(coco.annotations)
    assert records.license == "CC BY 4.0"


def test_coco_counts_categories_and_crowd(coco: rf.FixturePaths) -> None:
    records = read_coco(coco.annotations, coco.images_dir, source="coco")
    assert records.source == "coco" and all(im.source == "coco" for im in records.images)
    assert "giraffe" in records.categories
    assert all("giraffe" not in im.categories for im in records.images)
    got = {im.id: dict(Counter(i.category for i in im.instances if not i.iscrowd)) for im in records.images}
    assert got == rf.counts(coco.truth)
    crowd = [(im.id, i.category) for im in records.images for i in im.instances if i.iscrowd]
    assert crowd == [("5", "person")]
    sizes = sorted(len(im.instances) for im in records.images)
    assert sizes[0] == 0 and any(n <= 5 for n in sizes) and sizes[-1] > 5


def test_coco_mask_kinds_all_become_compressed_rle(coco: rf.FixturePaths) -> None:
    kinds = Counter(o["mask"] for img in coco.truth["images"].values() for o in img["objects"])
    assert kinds["polygon"] and kinds["rle"] and kinds["compressed_rle"]
    records = read_coco(coco.annotations, coco.images_dir)
    inst = records.images[2].instance("300")  # two polygons side by side: merged into one mask
    x, y, w, h = (int(v) for v in inst.bbox)
    mask = mask_utils.decode({"size": inst.rle["size"], "counts": inst.rle["counts"].encode()})
    assert mask[y : y + h, x : x + w].all() and mask.sum() == w * h


def test_coco_area_falls_back_to_mask(coco: rf.FixturePaths) -> None:
    records = read_coco(coco.annotations, coco.images_dir)
    inst = records.images[1].instance("201")  # written without "area"
    assert inst.area == _decoded_area(inst.rle) == coco.truth["images"]["2"]["objects"][1]["area"]


def test_coco_file_paths_are_joined_not_resolved(coco: rf.FixturePaths, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(coco.annotations.parent)
    records = read_coco(coco.annotations.name, "images")
    assert records.images[0].file == str(Path("images") / "000000000001.png")


def test_coco_default_license_without_licenses_section(coco: rf.FixturePaths) -> None:
    rf.rewrite_json(coco.annotations, lambda d: d.pop("licenses"))
    assert read_coco(coco.annotations, coco.images_dir).license == "CC BY 4.0 (annotations); Flickr terms (images)"


# --------------------------------------------------------------------------------------------------------- PACO


@pytest.fixture()
def paco(tmp_path: Path) -> rf.FixturePaths:
    return rf.make_paco(tmp_path)


def test_paco_matches_truth(paco: rf.FixturePaths) -> None:
    assert_matches_truth(read_paco(paco.annotations, paco.images_dir), paco)


def test_paco_parts_are_not_instances(paco: rf.FixturePaths) -> None:
    records = read_paco(paco.annotations, paco.images_dir)
    assert all(":" not in i.category for im in records.images for i in im.instances)
    assert all(":" not in c for c in records.categories)


def test_paco_attribute_types(paco: rf.FixturePaths) -> None:
    types = read_paco(paco.annotations, paco.images_dir).attribute_types
    assert len(types) == 59
    assert (types["red"], types["striped"], types["wood"], types["transparent"]) == (
        "colour", "pattern", "material", "transparency",
    )
    assert types["black"] == "colour"  # written with type "color"
    assert Counter(types.values()) == {"colour": 30, "pattern": 11, "material": 14, "transparency": 4}


def test_paco_attribute_pairs_repeat_across_images(paco: rf.FixturePaths) -> None:
    records = read_paco(paco.annotations, paco.images_dir)
    pairs: dict[tuple[str, str], set[str]] = {}
    for im in records.images:
        for i in im.instances:
            for a in i.attributes:
                pairs.setdefault((a, i.category), set()).add(im.id)
    assert {k: sorted(v) for k, v in pairs.items()} == rf.attribute_pairs(paco.truth)
    assert len(pairs[("red", "mug")]) >= 4 and len(pairs[("wood", "chair")]) >= 4


def test_paco_types_from_attr_type_table_and_explicit_type(paco: rf.FixturePaths) -> None:
    def mutate(d):
        for entry in d["attributes"]:
            entry.pop("type", None)
        d["attributes"][0]["type"] = "material"  # an explicit type wins over the table and the id range
        d["attr_type_to_attr_idxs"] = {"color": list(range(1, 30)), "pattern_marking": list(range(30, 41)),
                                       "material": list(range(41, 55)), "transparency": list(range(55, 59))}
    rf.rewrite_json(paco.annotations, mutate)
    types = read_paco(paco.annotations, paco.images_dir).attribute_types
    assert types["black"] == "material" and types["striped"] == "pattern" and types["opaque"] == "transparency"


# ---------------------------------------------------------------------------------------------------------- SVG


@pytest.mark.parametrize("form", ["json", "jsonl"])
@pytest.mark.parametrize("style", ["hf", "flat"])
def test_svg_matches_truth(tmp_path: Path, form: str, style: str) -> None:
    fx = rf.make_svg(tmp_path, form, style)
    assert_matches_truth(read_svg(fx.annotations, fx.images_dir), fx)


def test_svg_forms_give_equal_records(tmp_path: Path) -> None:
    sets = [
        read_svg(fx.annotations, fx.images_dir)
        for fx in (rf.make_svg(tmp_path, form, style) for form in ("json", "jsonl") for style in ("hf", "flat"))
    ]
    for other in sets[1:]:
        assert other.images == sets[0].images and other.categories == sets[0].categories


def test_svg_relations_resolve_to_instances(tmp_path: Path) -> None:
    fx = rf.make_svg(tmp_path)
    records = read_svg(fx.annotations, fx.images_dir)
    triples = {
        im.id: [(im.instance(r.subject).category, r.predicate, im.instance(r.object).category) for r in im.relations]
        for im in records.images
    }
    assert triples == rf.relation_triples(fx.truth)
    with_pair = [iid for iid, ts in triples.items() if ("cup", "left of", "dog") in ts]
    assert len(with_pair) >= 4
    preds = {r.predicate for im in records.images for r in im.relations}
    assert preds == {"left of", "right of", "above", "below", "next to", "in front of", "behind", "on"}
    # spatial predicates agree with the boxes
    for im in records.images:
        for r in im.relations:
            s, o = im.instance(r.subject).bbox, im.instance(r.object).bbox
            if r.predicate == "left of":
                assert s[0] + s[2] <= o[0]
            if r.predicate == "above":
                assert s[1] + s[3] <= o[1]


def test_svg_single_object_file_and_directory(tmp_path: Path) -> None:
    import json

    fx = rf.make_svg(tmp_path / "all")
    rows = json.loads(fx.annotations.read_text())
    per_image = tmp_path / "per_image"
    per_image.mkdir()
    for row in rows:
        (per_image / f"{row['image_id']}.json").write_text(json.dumps(row))
    one = read_svg(per_image / "1003.png.json", fx.images_dir)
    assert [im.id for im in one.images] == ["1003.png"]
    folder = read_svg(per_image, fx.images_dir)
    assert folder.images == read_svg(fx.annotations, fx.images_dir).images


def test_svg_size_read_from_image_when_absent(tmp_path: Path) -> None:
    fx = rf.make_svg(tmp_path, style="flat")

    def mutate(rows):
        for row in rows:
            del row["width"], row["height"]
    rf.rewrite_json(fx.annotations, mutate)
    records = read_svg(fx.annotations, fx.images_dir)
    assert {(im.width, im.height) for im in records.images} == {(rf.WIDTH, rf.HEIGHT)}


# ----------------------------------------------------------------------------------------------- Visual Genome


@pytest.fixture()
def vg(tmp_path: Path) -> rf.FixturePaths:
    return rf.make_visual_genome(tmp_path)


def test_visual_genome_matches_truth(vg: rf.FixturePaths) -> None:
    assert_matches_truth(read_visual_genome(vg.annotations, vg.images_dir, vg.image_data), vg)


def test_visual_genome_without_image_data_reads_sizes_from_files(vg: rf.FixturePaths) -> None:
    with_data = read_visual_genome(vg.annotations, vg.images_dir, vg.image_data)
    without = read_visual_genome(vg.annotations, vg.images_dir)
    assert without == with_data


def test_visual_genome_dedups_objects(vg: rf.FixturePaths) -> None:
    records = read_visual_genome(vg.annotations, vg.images_dir, vg.image_data)
    for im in records.images:
        ids = [i.id for i in im.instances]
        assert len(ids) == len(set(ids))
        for r in im.relations:
            im.instance(r.subject), im.instance(r.object)
    five = next(im for im in records.images if im.id == "5")
    assert [i.category for i in five.instances] == ["cat", "table", "cup"]


def test_readers_accept_str_paths(coco: rf.FixturePaths) -> None:
    a = read_coco(str(coco.annotations), str(coco.images_dir))
    b = read_coco(coco.annotations, coco.images_dir)
    assert a == b


@pytest.mark.parametrize("owner", [-1, None, "absent"])
def test_paco_objects_without_owner_are_objects(paco: rf.FixturePaths, owner) -> None:
    def mutate(d):
        for a in d["annotations"]:
            if a["id"] == a.get("obj_ann_id"):
                if owner == "absent":
                    del a["obj_ann_id"]
                else:
                    a["obj_ann_id"] = owner
    rf.rewrite_json(paco.annotations, mutate)
    assert_matches_truth(read_paco(paco.annotations, paco.images_dir), paco)
