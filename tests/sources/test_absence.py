"""What sources know about absence: PACO's federated lists and unknown_* flags, SVG/VG coco ids, and absences an
exhaustive COCO file verifies (sources/absence.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sources.absence import coco_category_of, read_coco_presence, verify_absence
from sources.coco import read_coco
from sources.errors import SourceError
from sources.paco import read_paco
from sources.svg import read_svg
from sources.visual_genome import read_visual_genome
from tests.fixtures import real_formats as rf

FIELDS = ("verified_absent", "not_exhaustive", "attributes_verified_absent", "attributes_not_exhaustive")


def test_paco_federated_lists_and_unknown_flags(tmp_path: Path) -> None:
    fx = rf.make_paco(tmp_path)
    records = read_paco(fx.annotations, fx.images_dir)
    assert records.exhaustive is False
    for image in records.images:
        truth = fx.truth["images"][image.id]
        for name in FIELDS:  # 999 (LVIS id outside PACO) and mug:handle (a part) are skipped
            assert sorted(getattr(image, name)) == truth[name], (image.id, name)
        assert [tuple(sorted(i.unknown_attribute_types)) for i in image.instances] == [
            o["unknown_types"] for o in truth["objects"]
        ]
    assert records.images[2].verified_absent == {"chair"}  # image 3 lists chair and 999


def test_exhaustive_sources_say_so(tmp_path: Path) -> None:
    fx = rf.make_coco(tmp_path / "coco")
    assert read_coco(fx.annotations, fx.images_dir).exhaustive is True
    svg = rf.make_svg(tmp_path / "svg")
    assert read_svg(svg.annotations, svg.images_dir).exhaustive is False
    vg = rf.make_visual_genome(tmp_path / "vg")
    assert read_visual_genome(vg.annotations, vg.images_dir, vg.image_data).exhaustive is False


def test_paco_bad_unknown_flag_is_one_clear_error(tmp_path: Path) -> None:
    fx = rf.make_paco(tmp_path)
    rf.rewrite_json(fx.annotations, lambda d: d["annotations"][0].update(unknown_material=2))
    with pytest.raises(SourceError, match="unknown_material.*0 or 1"):
        read_paco(fx.annotations, fx.images_dir)


def test_paco_bad_federated_list_is_one_clear_error(tmp_path: Path) -> None:
    fx = rf.make_paco(tmp_path)
    rf.rewrite_json(fx.annotations, lambda d: d["images"][0].update(neg_category_ids="mug"))
    with pytest.raises(SourceError, match="neg_category_ids.*array"):
        read_paco(fx.annotations, fx.images_dir)


def test_paco_joint_attribute_ids_of_evaluation_files(tmp_path: Path) -> None:
    """Evaluation-ready files list joint (object, attribute) ids in the _attrs lists."""
    fx = rf.make_paco(tmp_path)

    def mutate(d):
        d["joint_obj_attribute_categories"] = [{"obj": 4, "attr": 0, "obj-attr": 7001}, {"obj": 1, "attr": 23, "obj-attr": 7002}]
        d["images"][0].update(neg_category_ids_attrs=[7002], not_exhaustive_category_ids_attrs=[7001])
    rf.rewrite_json(fx.annotations, mutate)
    image = read_paco(fx.annotations, fx.images_dir).images[0]
    assert image.attributes_not_exhaustive == {"dog"}  # the joint id's object, cautiously
    assert image.attributes_verified_absent == frozenset()  # a missing pair is not a missing category


def test_svg_and_vg_keep_coco_ids(tmp_path: Path) -> None:
    for style in ("hf", "flat"):
        fx = rf.make_svg(tmp_path / style, style=style)
        ids = {im.id: im.coco_id for im in read_svg(fx.annotations, fx.images_dir).images}
        assert ids["1005.png"] == "5005" and ids["1006.png"] == "5006" and ids["1001.png"] is None
    vg = rf.make_visual_genome(tmp_path / "vg")
    rf.rewrite_json(vg.image_data, lambda d: d[0].update(coco_id=397133))
    images = read_visual_genome(vg.annotations, vg.images_dir, vg.image_data).images
    assert [im.coco_id for im in images] == ["397133", None, None, None, None]


@pytest.mark.parametrize("name, expected", [
    ("cup", "cup"), ("Cups", "cup"), ("dining_table", "dining table"), ("buses", "bus"), ("man", "person"),
    ("people", "person"), ("sofa", "couch"), ("table", None), ("ball", None), ("glass", None), ("bike", None),
])
def test_name_mapping_rule(name: str, expected: str | None) -> None:
    coco = frozenset({"cup", "dining table", "bus", "person", "couch", "sports ball", "wine glass", "bicycle"})
    assert coco_category_of(name, coco) == expected


def test_verify_absence_by_file_name_and_coco_id(tmp_path: Path) -> None:
    svg = rf.make_svg(tmp_path / "svg")
    coco = rf.make_coco_for_svg(tmp_path / "coco")
    records, report = verify_absence(read_svg(svg.annotations, svg.images_dir), coco.annotations)
    assert report["images_matched"] == 6 and report["names_mapped"] == 5
    by_id = {im.id: im for im in records.images}
    # 1004 (person, chair; by file name) and 1006 (ball, chair, person; by coco_id) verify cup, dog, cat absent
    assert by_id["1004.png"].verified_absent == {"cat", "cup", "dog"}
    assert by_id["1006.png"].verified_absent == {"cat", "cup", "dog"}
    # never a name COCO cannot rule out (table is narrower than dining table), never an uncovered image
    assert all("table" not in im.verified_absent and "ball" not in im.verified_absent for im in records.images)
    assert all(not by_id[f"{i}.png"].verified_absent for i in range(1007, 1011))
    presence = read_coco_presence(coco.annotations)
    assert presence.by_file["1004.png"] == {"person", "chair"}


def test_verify_absence_rejects_a_broken_file(tmp_path: Path) -> None:
    svg = rf.make_svg(tmp_path / "svg")
    coco = rf.make_coco_for_svg(tmp_path / "coco")
    rf.rewrite_json(coco.annotations, lambda d: d["annotations"][0].update(category_id=999))
    with pytest.raises(SourceError, match="annotations\\[0\\].*unknown category id 999"):
        verify_absence(read_svg(svg.annotations, svg.images_dir), coco.annotations)


def test_presence_skips_polygons_and_equals_a_plain_json_reading(tmp_path: Path) -> None:
    """Polygons are cut out of the text before parsing (sources.jsonio.load_json_without_polygons); RLE masks,
    odd spacing and numbers in exponent form must not confuse the cut, and the presence must be what a plain
    ``json.load`` of the file gives."""
    import json

    from sources.jsonio import load_json_without_polygons

    doc = {
        "images": [{"id": 1, "file_name": "a.jpg", "width": 9, "height": 9},
                   {"id": 2, "file_name": "b.jpg", "width": 9, "height": 9}],
        "categories": [{"id": 1, "name": "cup"}, {"id": 2, "name": "dog"}, {"id": 3, "name": "segmentation"}],
        "annotations": [
            {"id": 1, "image_id": 1, "category_id": 1, "segmentation": [[1, 1.5e0, 2, -0.0, 3, 3E+0]], "bbox": [1, 1, 2, 2]},
            {"id": 2, "image_id": 2, "category_id": 2, "segmentation": {"size": [9, 9], "counts": "03[0"}},
            {"id": 3, "image_id": 2, "category_id": 3, "segmentation": []},
        ],
    }
    text = json.dumps(doc, indent=1).replace('"segmentation": [\n', '"segmentation" :\n  [\n')
    path = tmp_path / "instances.json"
    path.write_text(text)
    shortened = load_json_without_polygons(path)
    plain = json.loads(text)
    for ann in plain["annotations"]:
        if isinstance(ann["segmentation"], list):
            ann["segmentation"] = None
    assert shortened == plain
    presence = read_coco_presence(path)
    assert presence.by_id == {"1": frozenset({"cup"}), "2": frozenset({"dog", "segmentation"})}


def test_presence_of_a_malformed_file_reports_where_the_file_breaks(tmp_path: Path) -> None:
    path = tmp_path / "instances.json"
    path.write_text('{"images": [], "categories": [],\n "annotations": [{"segmentation": [[1, 2,\n 3]]}\n ,,]}')
    with pytest.raises(SourceError, match="line 4"):
        read_coco_presence(path)


def test_the_presence_of_a_coco_file_names_what_each_image_shows(tmp_path: Path) -> None:
    """By file name (of two images with one name, the later in the file) and by id, as a scene graph's image
    matches a COCO one."""
    coco = rf.make_coco_source_for_svg(tmp_path / "coco")
    read = read_coco_presence(coco.annotations)
    assert read.by_file["1001.png"] == {"cup", "dog", "dining table"}  # image 1001, the later of the two in the file
    assert read.by_id["9000"] == {"person"} and read.by_id["x7"] == {"cat"}
    assert read.by_file["000000006001.jpg"] == {"chair"} and read.by_file["000000006002.jpg"] == frozenset()
