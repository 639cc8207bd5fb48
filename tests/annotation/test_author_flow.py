"""The one authoring flow without a server: every benchmark's hook makes a valid form, its subjects and its files;
the flow writes them and keeps a description that exists. (The round trips through Label Studio are in
test_author.py.)"""

from __future__ import annotations

import json

import pytest

from annotation.author import form_config, hook, hooks, write_outputs
from builders.authoring import Answer
from sources.errors import ConfigError
from tests.annotation.builds import draw_png


def test_every_declared_flow_has_a_valid_form():
    from tests.conftest import require_annotation_extra

    require_annotation_extra()
    from annotation.config import config_interface

    assert {"descriptions", "questions", "patterns"} <= set(hooks())
    for kind, flow in hooks().items():
        config = form_config(flow.form({}))
        config_interface(config)  # the SDK's LabelInterface accepts it
        for field in flow.form({}).fields:
            assert f'name="{field.name}"' in config, kind


def test_a_missing_input_is_named():
    with pytest.raises(ConfigError, match="author questions needs --images DIR"):
        hook("questions").subjects({})
    with pytest.raises(ConfigError, match="author descriptions needs --robot DIR and/or --comics DIR"):
        hook("descriptions").subjects({})


def test_pattern_entries_are_validated_by_the_builders_reader(tmp_path):
    for name, n in (("ball", 4), ("two", 2)):
        for k in range(n):
            draw_png(tmp_path / name / f"{k + 1}.png", 10 + k, size=(40, 30))
    flow = hook("patterns")
    (subject,) = flow.subjects({"images": tmp_path})  # a folder of 2 images is no sequence
    assert subject.key == "ball" and subject.titles == ("Image 1", "Image 2", "Image 3", "Image 4")
    good = Answer("ball", 1, subject.data, {"pattern": ["It  moves right."], "pred": ["It moves on."]}, "a@x")
    bad = Answer("ball2", 2, subject.data, {"pattern": ["It grows."]}, "b@x")
    out = tmp_path / "authored.jsonl"
    (output,), problems = flow.outputs([good, bad], {"out": out})
    assert problems == ["ball2 (task 2, by b@x): 'pred' must be a non-empty string; left out"]
    assert json.loads(output.body) == {"id": "ball", "images": [f"ball/{k}.png" for k in range(1, 5)],
                                       "pattern": "It moves right.", "pred": "It moves on."}
    assert write_outputs([output])["written"] == ["ball"]
    assert json.loads((tmp_path / "authored.jsonl.authors.json").read_text()) == {"authors": {"ball": "a@x"}}


def test_a_description_that_exists_is_never_replaced(tmp_path):
    comic = tmp_path / "comics" / "c1"
    for k in range(2):
        draw_png(comic / f"panel{k + 1}.png", k, size=(40, 30))
    flow, inputs = hook("descriptions"), {"comics": tmp_path / "comics"}
    text = "A red ball rolls across the table and knocks a blue cup over onto its side."
    answer = Answer("comics/c1", 1, {}, {"description": [text]}, "a@x")
    outputs, problems = flow.outputs([answer], inputs)
    assert problems == [] and write_outputs(outputs)["written"] == [str((comic / "description.txt").resolve())]
    assert write_outputs(outputs)["unchanged"] == [str((comic / "description.txt").resolve())]
    other, _ = flow.outputs([Answer("comics/c1", 2, {}, {"description": [text + " Then it stops."]}, "b@x")], inputs)
    assert "exists with another text" in write_outputs(other)["problems"][0]
    assert (comic / "description.txt").read_text() == text + "\n"
    assert flow.subjects(inputs) == []  # described: nothing left to write
