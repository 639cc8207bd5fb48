"""Predictive items from ActivityNet Captions, Charades, CLEVRER and RoboSet fixtures in their real layouts:
references re-derived from the raw files by the independent checker (which catches planted errors), images
are the frames the provenance names (grey levels), skips explained, builds reproducible, malformed inputs end
in one line, exit status 2 and no build."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from builders import predictive
from tests.builders.predictive import source_checker as checker
from tests.builders.predictive.source_fixtures import (
    frame_level,
    make_activitynet,
    make_charades,
    make_clevrer,
    make_roboset,
    roboset_offset,
)
from tests.conftest import have, require

require(have("cv2"), "OpenCV", "bash .ci/install-video.sh")


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("predictive-sources")
    return {"root": root, "activitynet": make_activitynet(root / "anet"), "charades": make_charades(root / "charades"),
            "clevrer": make_clevrer(root / "clevrer"), "roboset": make_roboset(root / "robo")}


def source_args(data: dict[str, Any]) -> list[str]:
    return ["--activitynet", str(data["activitynet"]["json"]), "--charades", str(data["charades"]["csv"]),
            "--charades-classes", str(data["charades"]["classes"]),
            "--clevrer-annotations", str(data["clevrer"]["annotations"]), "--roboset", str(data["roboset"]["root"]),
            "--videos", str(data["root"])]


def run(root: Path, *args: str) -> int:
    return predictive.main(["--out", str(root / "out"), "--cache-dir", str(root / "cache"), "--no-progress",
                            "--patterns", "0", "--no-clip", *args])


@pytest.fixture(scope="module")
def build(data: dict[str, Any], spacy_model_module: None) -> Path:
    assert run(data["root"], *source_args(data)) == 0
    return data["root"] / "out" / "data-seed0"


@pytest.fixture(scope="module")
def spacy_model_module() -> None:
    from filters.text import NlpUnavailable, load_nlp

    try:
        load_nlp()
    except NlpUnavailable:
        require(False, "spaCy with an English model", "bash .ci/install-nlp.sh")


def items_of(build: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (build / "items.jsonl").read_text().splitlines()]


def problems(build: Path, data: dict[str, Any]) -> list[str]:
    return (checker.check_activitynet(build, data["activitynet"]["json"])
            + checker.check_charades(build, data["charades"]["csv"], data["charades"]["classes"])
            + checker.check_clevrer(build, data["clevrer"]["annotations"])
            + checker.check_roboset(build, data["roboset"]["root"] / "combinations.json"))


def test_each_source_builds_its_items_and_the_checker_agrees(build: Path, data: dict[str, Any]) -> None:
    items = items_of(build)
    by_source = {s: {i["provenance"]["video_id"] for i in items if i["provenance"]["source"] == s}
                 for s in ("activitynet", "charades", "clevrer", "roboset")}
    for source, ids in by_source.items():
        assert ids == set(data[source]["items"]), source
    assert problems(build, data) == []
    charades = {i["provenance"]["video_id"]: i for i in items if i["provenance"]["source"] == "charades"}
    for vid, (code, cut) in data["charades"]["items"].items():
        assert (charades[vid]["provenance"]["action"], charades[vid]["provenance"]["cut_seconds"]) == (code, cut)
    assert charades["AB001"]["answer"] == "A person puts a box on the shelf."
    assert charades["AB001"]["provenance"]["context_captions"] == ["A person opens the door and walks in"]
    assert charades["AB006"]["answer"] == "A person drinks from a cup."  # not the sitting and eating before the cut
    assert charades["AB006"]["provenance"]["context_captions"] == ["A person sits on a chair eating a sandwich"]
    clevrer = {i["provenance"]["video_id"]: i["answer"] for i in items if i["provenance"]["source"] == "clevrer"}
    assert clevrer["video_10000"] == ("The red rubber cube collides with the green rubber cylinder. "
                                      "The blue metal sphere continues unscathed.")
    assert clevrer["video_10002"].startswith("No collision happens.")
    questions = {i["provenance"]["source"]: i["question"] for i in items}
    assert "five chronologically arranged images" in questions["clevrer"]
    assert "1.[].2.[]" in questions["charades"]


def test_images_are_the_frames_the_provenance_names(build: Path) -> None:
    for item in items_of(build):
        p = item["provenance"]
        levels = [int(np.asarray(Image.open(build / rel).convert("L")).mean().round()) for rel in item["images"]]
        if p["source"] == "roboset":
            per = p["keyframes_per_subtask"]
            variant = int(p["variant"][1:])
            expected = [frame_level(i + roboset_offset(k // per, variant)) for k, i in enumerate(p["frame_indices"])]
        else:
            expected = [frame_level(i) for i in p["frame_indices"]]
        assert levels == expected, item["id"]


def test_skips_are_counted_with_their_step_and_reason(build: Path, data: dict[str, Any]) -> None:
    record = json.loads((build / "build.json").read_text())
    skipped = {s["video"]: s["reason"] for s in record["skipped"]}
    for source in ("activitynet", "charades", "clevrer", "roboset"):
        for vid, why in data[source]["skipped"].items():
            assert why in skipped[vid], (vid, skipped[vid])
        assert record["stats"]["sources"][source]["skipped"] == len(data[source]["skipped"])
    assert record["stats"]["clip"]["ran"] is False and "middle" in record["stats"]["clip"]["frame_choice"]
    assert {i["provenance"]["frame_choice"] for i in items_of(build) if i["provenance"]["source"] == "activitynet"} \
        == {"middle"}


def _plant(build: Path, tmp_path: Path, source: str, change: Callable[[dict[str, Any]], None]) -> Path:
    copy = tmp_path / source
    shutil.copytree(build, copy)
    lines = (copy / "items.jsonl").read_text().splitlines()
    for n, line in enumerate(lines):
        item = json.loads(line)
        if item["provenance"]["source"] == source:
            change(item)
            lines[n] = json.dumps(item)
            break
    (copy / "items.jsonl").write_text("\n".join(lines) + "\n")
    return copy


@pytest.mark.parametrize("source, change, says", [
    ("activitynet", lambda i: i.update(answer=i["provenance"]["context_captions"][-1]), "the last segment says"),
    ("activitynet", lambda i: i["provenance"]["frame_indices"].reverse(), "outside segment"),
    ("activitynet", lambda i: i["provenance"]["frame_indices"].reverse(), "not in time order"),
    ("activitynet", lambda i: i["provenance"].update(frame_count=8), "the video lasts"),
    ("activitynet", lambda i: i["images"].__setitem__(1, i["images"][0]), "the same picture"),
    ("charades", lambda i: i["provenance"].update(cut_seconds=i["provenance"]["cut_seconds"] + 1), "latest start"),
    ("charades", lambda i: i.update(answer="A person opens the door."), "last clause"),
    ("charades", lambda i: i.update(answer="A person opens the door and then " + i["answer"][0].lower() + i["answer"][1:]),
     "last clause"),
    ("clevrer", lambda i: i.update(answer=i["answer"].replace("red", "purple", 1)), "unscathed"),
    ("roboset", lambda i: i.update(answer="The robotic arm will wipe."), "the last subtask is"),
])
def test_checker_catches_planted_errors(build: Path, data: dict[str, Any], tmp_path: Path, source: str,
                                        change: Callable[[dict[str, Any]], None], says: str) -> None:
    planted = _plant(build, tmp_path, source, change)
    assert any(says in p for p in problems(planted, data))


def test_same_inputs_same_bytes(build: Path, data: dict[str, Any]) -> None:
    assert run(data["root"], *source_args(data), "--name", "again") == 0
    assert (data["root"] / "out" / "again" / "items.jsonl").read_bytes() == (build / "items.jsonl").read_bytes()


def test_sizes_and_max_videos(build: Path, data: dict[str, Any]) -> None:
    assert run(data["root"], *source_args(data), "--name", "small", "--clevrer-items", "1",
               "--clevrer-no-collision-share", "1", "--max-videos", "3", "--roboset-items", "1") == 0
    items = items_of(data["root"] / "out" / "small")
    clevrer = [i for i in items if i["provenance"]["source"] == "clevrer"]
    assert len(clevrer) == 1 and clevrer[0]["provenance"]["no_collision"]
    assert len([i for i in items if i["provenance"]["source"] == "roboset"]) == 1
    record = json.loads((data["root"] / "out" / "small" / "build.json").read_text())
    assert all(s["read"] <= 3 for s in record["stats"]["sources"].values())


# ------------------------------------------------------------------------------------------- malformed inputs


def _json_edit(path: Path, mutate: Callable[[Any], None]) -> None:
    data = json.loads(path.read_text())
    mutate(data)
    path.write_text(json.dumps(data))


MALFORMED = {
    "activitynet: timestamps and sentences differ": ("activitynet", lambda d: _json_edit(
        d["activitynet"]["json"], lambda x: x["v_good1"]["sentences"].pop()), "4 timestamps but 3 sentences"),
    "activitynet: negative duration": ("activitynet", lambda d: _json_edit(
        d["activitynet"]["json"], lambda x: x["v_good2"].update(duration=-1)), "'duration' must be a positive"),
    "activitynet: end before start": ("activitynet", lambda d: _json_edit(
        d["activitynet"]["json"], lambda x: x["v_good2"]["timestamps"].__setitem__(0, [5.0, 1.0])), "not a time span"),
    "charades: missing column": ("charades", lambda d: d["charades"]["csv"].write_text(
        d["charades"]["csv"].read_text().replace(",length", ",len", 1)), "missing column(s): length"),
    "charades: unknown class": ("charades", lambda d: d["charades"]["csv"].write_text(
        d["charades"]["csv"].read_text().replace("c001 6.00", "c999 6.00")), "c999 is not in the classes file"),
    "charades: action without end": ("charades", lambda d: d["charades"]["csv"].write_text(
        d["charades"]["csv"].read_text().replace("c001 6.00 9.50", "c001 6.00")), "is not 'code start end'"),
    "charades: bad classes line": ("charades", lambda d: d["charades"]["classes"].write_text("c000\n"),
                                   "expected 'c<3 digits> <action>'"),
    "clevrer: collision with an unknown object": ("clevrer", lambda d: _json_edit(
        d["clevrer"]["annotations"] / "annotation_10000.json",
        lambda x: x["collision"][0].update(object_ids=[0, 9])), "must be two different ids"),
    "clevrer: missing object_property": ("clevrer", lambda d: _json_edit(
        d["clevrer"]["annotations"] / "annotation_10001.json", lambda x: x.pop("object_property")),
        "missing required key 'object_property'"),
    "clevrer: broken json": ("clevrer", lambda d: (d["clevrer"]["annotations"] / "annotation_10002.json").write_text(
        "{"), "annotation_10002.json"),
    "roboset: unknown subtask": ("roboset", lambda d: _json_edit(
        d["roboset"]["root"] / "combinations.json", lambda x: x[0]["subtasks"].append("9_fly")), "'9_fly' not found"),
    "roboset: one subtask": ("roboset", lambda d: _json_edit(
        d["roboset"]["root"] / "combinations.json", lambda x: x[0].update(subtasks=["1_plunge_toaster"])),
        "a combination needs context and a target"),
    "roboset: unknown activity": ("roboset", lambda d: _json_edit(
        d["roboset"]["root"] / "combinations.json", lambda x: x[1].update(activity="cook")), "'cook' not found"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_inputs_end_in_one_line(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          spacy_model_module: None) -> None:
    source, breaks, says = MALFORMED[case]
    makers = {"activitynet": make_activitynet, "charades": make_charades, "clevrer": make_clevrer,
              "roboset": make_roboset}
    fixture = {source: makers[source](tmp_path / source), "root": tmp_path}
    breaks(fixture)
    args = {"activitynet": ["--activitynet", str(fixture[source].get("json"))],
            "charades": ["--charades", str(fixture[source].get("csv")),
                         "--charades-classes", str(fixture[source].get("classes"))],
            "clevrer": ["--clevrer-annotations", str(fixture[source].get("annotations"))],
            "roboset": ["--roboset", str(fixture[source].get("root"))]}[source]
    assert run(tmp_path, *args, "--videos", str(tmp_path)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and says in err, err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_options_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(tmp_path, "--activitynet", "x.json") == 2
    assert "need --videos DIR" in capsys.readouterr().err


@pytest.mark.slow
def test_activitynet_frames_chosen_by_a_tiny_open_clip_model(data: dict[str, Any], tmp_path: Path) -> None:
    """The real open_clip path (random-weight tiny model): each segment's image is its best-scoring candidate,
    inside the segment (the checker agrees), and build.json says CLIP ran."""
    require(have("open_clip", "torch"), "open_clip_torch and torch")
    from tests.support.tiny_clip import register_tiny_clip

    model = register_tiny_clip(tmp_path / "configs")
    args = ["--out", str(tmp_path / "out"), "--cache-dir", str(data["root"] / "cache"), "--no-progress",
            "--patterns", "0", "--activitynet", str(data["activitynet"]["json"]), "--videos", str(data["root"]),
            "--clip-model", model, "--clip-pretrained", "none", "--clip-workers", "0", "--clip-candidates", "4"]
    assert predictive.main(args) == 0
    build = tmp_path / "out" / "data-seed0"
    record = json.loads((build / "build.json").read_text())
    assert record["stats"]["clip"]["ran"] is True
    items = items_of(build)
    assert items and all(i["provenance"]["frame_choice"] == "clip" and None not in i["provenance"]["clip_scores"]
                         for i in items)
    assert checker.check_activitynet(build, data["activitynet"]["json"]) == []


def test_tasks_choose_the_sources(data: dict[str, Any]) -> None:
    assert run(data["root"], *source_args(data), "--name", "physics", "--tasks", "physical_interaction") == 0
    sources = {i["provenance"]["source"] for i in items_of(data["root"] / "out" / "physics")}
    assert sources == {"clevrer", "roboset"}


def test_a_build_without_items_is_one_line_and_its_reasons_are_in_a_file(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str],
                                                                      spacy_model_module: None) -> None:
    """Issue 38: a Charades CSV without its videos stopped with one 86 KB line, digits masked ("cN", "N.N"), and
    no build.json kept the reasons. Now: one short line, the reasons as written in <name>.failed.json."""
    charades = make_charades(tmp_path / "charades")
    (tmp_path / "no-videos").mkdir()
    args = ["--charades", str(charades["csv"]), "--charades-classes", str(charades["classes"])]
    assert run(tmp_path, *args, "--videos", str(tmp_path / "no-videos")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    failed = tmp_path / "out" / "data-seed0.failed.json"
    assert len(err) == 1 and len(err[0]) < 400, err
    assert err[0].startswith("error: the build produced no items: 6 of 6 videos left out; commonest reasons: ")
    assert str(failed) in err[0]
    assert "cN" not in err[0] and "N.N" not in err[0]
    assert "charades step 3: video file not found (4)" in err[0]  # the videos that pass steps 1 and 2
    record = json.loads(failed.read_text())
    by_video = {s["video"]: s["reason"] for s in record["skipped"]}
    assert set(by_video) == {f"AB00{k}" for k in range(1, 7)}
    for vid, step in charades["skipped"].items():
        assert by_video[vid].startswith(f"charades {step}:"), by_video[vid]
    assert any(" at 0." in r or "c0" in r for r in by_video.values())  # numbers and codes as written
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["data-seed0.failed.json"]  # no half-written build
    # a later build of the name that succeeds removes the stale reasons
    assert run(tmp_path, *args, "--videos", str(charades["videos"].parent)) == 0
    assert not failed.exists() and (tmp_path / "out" / "data-seed0" / "build.json").is_file()
