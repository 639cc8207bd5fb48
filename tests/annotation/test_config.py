"""Item kinds, task data and the labeling config (no server)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from annotation.config import (
    CORRECT_OPTION,
    CORRECT_TEXT,
    ITEM_ID_FIELD,
    MCQ,
    VQA,
    YES_NO,
    correction_choices,
    item_kind,
    labeling_config,
    task_data,
)
from builders.items import make_item


def item(**kw):
    base = dict(benchmark="mioh", task="existence", question_type="comprehensive", pressure="easy",
                images=["images/a.png"], question="Q?", options=[], answer="yes")
    base.update(kw)
    return make_item(**base)


def test_item_kinds():
    assert item_kind(item(options=["cat", "dog", "None of the above"], answer="C")) == MCQ
    assert item_kind(item(options=[], answer="no")) == YES_NO
    assert item_kind(item(options=["yes", "no"], answer="no")) == YES_NO
    assert item_kind(item(options=[], answer="The man is riding the horse")) == VQA
    assert item_kind(item(question_type="vqa", options=[], answer="yes")) == VQA
    # the kind is the answer format the model is asked in (builders.semantics.format): lettered yes/no options
    # with a letter answer are multiple choice, a yes answer beside unrelated options is yes/no
    assert item_kind(item(options=["yes", "no"], answer="A")) == MCQ
    assert item_kind(item(options=["cat", "dog"], answer="yes")) == YES_NO


def test_correction_choices():
    opts = [str(i) for i in range(10)] + ["None of the above"]
    choices = correction_choices(item(options=opts, answer="K"))
    assert list(choices)[0] == "A. 0" and choices["K. None of the above"] == "K" and len(choices) == 11
    assert correction_choices(item(answer="yes")) == {"yes": "yes", "no": "no"}
    assert correction_choices(item(question_type="vqa", answer="text")) == {}


def test_task_data_images_are_local_file_urls_relative_to_the_files_root(tmp_path: Path):
    build = tmp_path / "builds" / "demo" / "x y"
    it = item(images=["images/a b.png", "/data/coco/val2017/0001.jpg"], question="<b>Is</b> it?",
              context="I think & so", options=["a", "b"], answer="A")
    data = task_data(it, build, Path("/"))
    assert data[ITEM_ID_FIELD] == it.id
    assert [{k: v for k, v in im.items() if k != "link"} for im in data["images"]] == [
        {"url": "/data/local-files/?d=" + str(build / "images" / "a%20b.png").lstrip("/").replace(" ", "%20"),
         "title": "Image 1"},
        {"url": "/data/local-files/?d=data/coco/val2017/0001.jpg", "title": "Image 2"},
    ]
    assert 'href="/data/local-files/?d=data/coco/val2017/0001.jpg"' in data["images"][1]["link"]
    assert "Image 2 at native size" in data["images"][1]["link"]  # (no size: the file does not exist here)

    assert "&lt;b&gt;Is&lt;/b&gt; it?" in data["item_html"] and "I think &amp; so" in data["item_html"]
    assert "A. a" in data["item_html"] and data["proposed_answer"] == "A. a"
    assert data["choices"] == [{"value": "A. a"}, {"value": "B. b"}]


def test_labeling_config_is_xml_with_the_controls_each_kind_needs():
    for kinds, has_option, has_text in [({MCQ}, True, False), ({VQA}, False, True), ({YES_NO, VQA}, True, True)]:
        cfg = labeling_config(kinds)
        root = ET.fromstring(cfg)
        names = {el.get("name") for el in root.iter() if el.get("name")}
        assert {"verdict", "issues", "comment", "item", "image_{{idx}}"} <= names
        assert (CORRECT_OPTION in names) == has_option and (CORRECT_TEXT in names) == has_text
        verdict = next(el for el in root.iter("Choices") if el.get("name") == "verdict")
        assert [c.get("value") for c in verdict] == ["accept", "fix", "reject"]
        assert ">" not in root.find("Style").text  # Label Studio escapes it


def test_the_sdk_validates_the_config_and_checks_annotations():
    """label_studio_sdk's LabelInterface accepts every config Mirage builds and flags what does not fit it."""
    import pytest

    from tests.conftest import have, require

    require(have("label_studio_sdk"), "label-studio-sdk (the annotation extra)", "bash .ci/install-annotation.sh")
    from annotation.config import MCQ, VQA, YES_NO, annotation_errors, config_interface, labeling_config
    from annotation.errors import AnnotationError
    from annotation.resolve import parse_annotation
    from builders.items import make_item
    from tests.annotation.lshelpers import result

    for kinds in ({MCQ}, {YES_NO}, {VQA}, {MCQ, YES_NO, VQA}):
        config_interface(labeling_config(kinds))
    with pytest.raises(AnnotationError, match="does not validate"):
        config_interface(labeling_config({MCQ}).replace('toName="item"', 'toName="nowhere"', 1))
    interface = config_interface(labeling_config({MCQ, YES_NO, VQA}))
    it = make_item(benchmark="b", task="t", question_type="selective", pressure="easy", images=["a.png"],
                   question="q", options=["x", "y"], answer="A")
    assert annotation_errors(interface, result(it, "fix", "B", issues=("wording",), comment="c")) == []
    stray = result(it, "accept") + [{"from_name": "mood", "to_name": "item", "type": "choices",
                                     "value": {"choices": ["happy"]}}]
    assert annotation_errors(interface, stray)
    vote, problems = parse_annotation(it, {"id": 7, "result": stray}, "r@x", "item i", interface=interface)
    assert vote is None and "does not fit the labeling config" in problems[0] and "\n" not in problems[0]
    assert parse_annotation(it, {"id": 7, "result": stray}, "r@x", "item i")[0] is not None  # without the SDK check


def test_sequence_frames_are_titled_with_their_time():
    from annotation.config import image_titles

    it = item(images=["f0.png", "f8.png"], provenance={"frame_indices": [0, 8], "fps": 16.0})
    assert image_titles(it) == ["Frame 1 (t = 0.00 s)", "Frame 2 (t = 0.50 s)"]
    it = item(images=["f0.png", "f8.png"], provenance={"frame_indices": [0, 8]})
    assert image_titles(it) == ["Frame 1 (frame 0)", "Frame 2 (frame 8)"]
    # a comic's panels, as the Mementos builder records them, are panels in review as in authoring
    comic = item(images=["p1.png", "p2.png"], provenance={"frame_indices": [0, 1], "fps": None, "policy": "panels"})
    assert image_titles(comic) == ["Panel 1", "Panel 2"]


def test_the_screen_keeps_question_and_verdict_apart_from_the_long_parts():
    """Question, options and proposed answer (kept in view with the verdict) and the builder's record (below it)
    travel in two fields; the comment box has no "Add" button and no submission counter."""
    it = item(images=["a.png"], options=[str(k) for k in range(10)], answer="C",
              provenance={"probe": "cat", "images": [{"label": "pos", "difficulty": "hard_positive"}]})
    data = task_data(it, Path("/b"), Path("/"))
    assert "Proposed answer" in data["item_html"] and "builder recorded" not in data["item_html"]
    assert "builder recorded" in data["record_html"] and "Question" not in data["record_html"]
    assert "mirage-many" in data["item_html"]  # ten options: in two columns
    config = labeling_config({"mcq", "vqa"})
    assert config.index('value="$item_html"') < config.index('name="verdict"') < config.index('value="$record_html"')
    assert "maxSubmissions" not in config and config.count('showSubmitButton="false"') == 2


def test_the_reviewer_sees_each_options_label_per_image():
    """Where the distractors are probes, which image makes which option hard is shown, option by option."""
    cells = [{"label": "absent", "difficulty": "hard_negative"}, {"label": "present", "difficulty": "easy"}]
    labels = [{"option": "A", "probe": "cat", "images": cells},
              {"option": "B", "probe": "dog", "images": [{"label": "undecidable", "difficulty": None}] * 2}]
    it = item(images=["images/a.png", "images/b.png"], options=["cat", "dog", "None of the above"], answer="C",
              provenance={"probe": "cat", "option_labels": labels})
    html_text = task_data(it, Path("/b"), Path("/"))["record_html"]
    table = html_text[html_text.index('<table class="mirage-record mirage-option-labels">'):html_text.index("</table>")]
    rows = table.split("<tr>")[1:]
    assert "<th>Image 1</th><th>Image 2</th>" in rows[0]
    assert rows[1] == '<th>A</th><td class="mirage-hard">no, hard</td><td>yes</td></tr>'
    assert rows[2] == "<th>B</th><td>?</td><td>?</td></tr>"
    plain = item(options=["cat", "dog", "None of the above"], answer="C", provenance={"option_labels": []})
    assert "mirage-option-labels" not in task_data(plain, Path("/b"), Path("/"))["record_html"]


def test_pull_sees_every_change_to_what_push_sets(tmp_path: Path):
    """A member could change the label config or a review setting; pull compares the project with what push sets."""
    from annotation.builddir import load_build
    from annotation.push import project_settings, settings_changes, wanted_config
    from tests.annotation.builds import make_build

    build = load_build(make_build(tmp_path, 5))
    pushed = project_settings("p", build, wanted_config(build), 1)
    assert settings_changes(pushed, build, 1) == {}
    assert settings_changes(pushed, build, 3) == {"maximum_annotations": 3}
    loose = dict(pushed, label_config=pushed["label_config"].replace('<Choice value="reject"',
                                                                   '<Choice value="maybe"/><Choice value="reject"'))
    assert set(settings_changes(loose, build, 1)) == {"label_config"}
    for key, value in (("skip_queue", "REQUEUE_FOR_OTHERS"), ("show_annotation_history", True),
                       ("expert_instruction", "<p>anything goes</p>")):
        assert set(settings_changes(dict(pushed, **{key: value}), build, 1)) == {key}
