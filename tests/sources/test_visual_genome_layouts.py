"""Visual Genome as released: objects.json merged ids, objects in no relationship, endpoints missing from it,
boxes clipped on request, and the streamed reader against a plain json.load of the same file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sources.visual_genome import ReadStats, iter_visual_genome, normalise_predicate, read_visual_genome
from tests.builders.reefknot.vg_fixture import make_vg


def test_objects_file_merged_ids_and_missing_endpoints(tmp_path: Path) -> None:
    vg = make_vg(tmp_path, "1.4")
    objects = json.loads(vg["objects"].read_text())
    first = objects[0]["objects"][0]  # image 1's man
    first["merged_object_ids"] = [987654]
    vg["objects"].write_text(json.dumps(objects))
    rels = json.loads(vg["relationships"].read_text())
    rels[0]["relationships"][0]["subject"]["object_id"] = 987654  # a relationship names the merged id
    vg["relationships"].write_text(json.dumps(rels))
    stats = ReadStats()
    images = list(iter_visual_genome(vg["relationships"], vg["images"], vg["image_data"], vg["objects"], stats=stats))
    one = images[0]
    assert one.relations[0].subject == str(first["object_id"])
    assert [i.category for i in one.instances].count("man") == 1
    twelve = next(im for im in images if im.id == "12")
    assert [i.category for i in twelve.instances].count("dog") == 2  # the second dog is in objects.json only
    assert stats.endpoints_missing_from_objects == 1 and stats.objects_only_instances == 1
    assert stats.relationships == sum(len(e["relationships"]) for e in rels)


def test_boxes_outside_the_image_are_clipped_on_request(tmp_path: Path) -> None:
    vg = make_vg(tmp_path, "1.2")
    rels = json.loads(vg["relationships"].read_text())
    rels[0]["relationships"][0]["subject"].update(x=380, w=60)  # 40 px beyond the 400 px wide image
    vg["relationships"].write_text(json.dumps(rels))
    stats = ReadStats()
    images = list(iter_visual_genome(vg["relationships"], vg["images"], vg["image_data"], clip_boxes=True, stats=stats))
    box = images[0].instance(images[0].relations[0].subject).bbox
    assert box == (380.0, 40.0, 20.0, 200.0) and stats.boxes_clipped == 1


def test_streamed_reader_matches_a_whole_file_load(tmp_path: Path) -> None:
    vg = make_vg(tmp_path, "1.0")
    records = read_visual_genome(vg["relationships"], vg["images"], vg["image_data"])
    raw = json.loads(vg["relationships"].read_text())
    assert [im.id for im in records.images] == [str(e["id"]) for e in sorted(raw, key=lambda e: e["id"])]
    for image, entry in zip(records.images, sorted(raw, key=lambda e: e["id"])):
        assert [r.predicate for r in image.relations] == [
            " ".join(r["predicate"].lower().split()) for r in entry["relationships"]
        ]


def test_v1_0_objects_under_new_ids_are_merged_by_name_and_box(tmp_path: Path) -> None:
    """v1.0 writes an object again, under a new id, in every relationship: one name and one box is one instance;
    the same name with another box stays another instance."""
    vg = make_vg(tmp_path, "1.0")
    rels = json.loads(vg["relationships"].read_text())
    rels[0]["relationships"][2]["object"]["x"] += 5  # image 1's third relationship: a horse somewhere else
    vg["relationships"].write_text(json.dumps(rels))
    stats = ReadStats()
    images = list(iter_visual_genome(vg["relationships"], vg["images"], vg["image_data"], stats=stats))
    one = images[0]  # man riding horse, man left of horse, dog near (another) horse
    assert sorted(i.category for i in one.instances) == ["dog", "horse", "horse", "man"]
    first, second, third = one.relations
    assert first.subject == second.subject and first.object == second.object != third.object
    assert first.subject == str(rels[0]["relationships"][0]["subject"]["id"])  # the first id is kept
    repeats = sum(2 * len(e["relationships"]) - len({(o["name"].lower(), o["x"]) for r in e["relationships"]
                                                     for o in (r["subject"], r["object"])}) for e in rels)
    assert stats.objects_merged_by_box == repeats > 0


def test_v1_0_predicates_are_bare_relations_and_files_are_found_by_id(tmp_path: Path) -> None:
    """Issue 53: the real v1.0 file writes "is ON the", "is is left of the the", "are riding" and names some images
    img_<id>.jpg in their URL while the archives hold <id>.jpg: the relations read bare, every file is found."""
    vg = make_vg(tmp_path, "1.0", raw=True)
    images = list(iter_visual_genome(vg["relationships"], vg["images"], vg["image_data"]))
    raw = json.loads(vg["relationships"].read_text())
    assert len(images) == len(raw) and all(Path(im.file).name == f"{im.id}.jpg" for im in images)
    bare = {" ".join(p.lower().split()) for entry in json.loads(make_vg(tmp_path / "plain", "1.0")[
        "relationships"].read_text()) for p in (r["predicate"] for r in entry["relationships"])}
    assert {r.predicate for im in images for r in im.relations} == bare
    assert any("img_" in e["url"] for e in json.loads(vg["image_data"].read_text()))


@pytest.mark.parametrize("raw, bare", [("is on the", "on"), ("Are  In", "in"), ("is is in the the", "in"),
                                       ("is on top of the", "on top of"), ("is", "is"), ("the", "the"),
                                       ("riding", "riding"), ("that that", "that")])
def test_normalise_predicate(raw: str, bare: str) -> None:
    assert normalise_predicate(raw) == bare
