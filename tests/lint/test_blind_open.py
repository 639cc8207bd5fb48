"""The blind audit of open answers flags a reference written from the question's words and stays quiet on
references the text does not give away; clips of one video never answer each other."""

from __future__ import annotations

import dataclasses
import random

import pytest

from builders.items import make_item
from builders.lint.blind_open import keyword_f1, nearest_reference, token_f1
from tests.conftest import have, require

OBJECTS = ("dog", "cat", "car", "tree", "cup", "ball", "bird", "lamp", "kite", "drum")
VERBS = ("moves", "falls", "spins", "stops", "grows", "shrinks")


@pytest.fixture(autouse=True)
def _sklearn() -> None:
    require(have("sklearn"), "scikit-learn (the lint extra)", "pip install -e '.[lint]'")


def _predictive(leak: bool, n: int = 60, seed: int = 0) -> list:
    """Open items over one video each; the reference is drawn at random, or (``leak``) copies the question's
    two objects."""
    rnd = random.Random(seed)
    items = []
    for k in range(n):
        a, b = rnd.sample(OBJECTS, 2)
        answer = (f"The {a} {rnd.choice(VERBS)} into the {b}." if leak
                  else f"The {rnd.choice(OBJECTS)} {rnd.choice(VERBS)} into the {rnd.choice(OBJECTS)}.")
        items.append(make_item(benchmark="predictive", task="physical_interaction", question_type="open",
                               pressure="none", images=[f"v{k}/v{k}-f{j}.jpg" for j in range(3)],
                               question=f"What happens next between the {a} and the {b}?", options=(),
                               answer=answer, provenance={"video_id": f"v{k}"}))
    return items


def _mementos(leak: bool, n: int = 60, seed: int = 0) -> list:
    """Mementos sequences whose stored reference keywords are random, or (``leak``) name the context's objects."""
    rnd = random.Random(seed)
    items = []
    for k in range(n):
        seen = rnd.sample(OBJECTS, 2)
        objects = seen if leak else rnd.sample(OBJECTS, 2)
        behaviours = [rnd.choice(VERBS)]
        items.append(make_item(benchmark="mementos", task="robotics", question_type="open", pressure="none",
                               images=[f"m{k}/m{k}-f{j}.jpg" for j in range(4)],
                               question="Describe what happens in the frames.",
                               context=f"The scene holds a {seen[0]} and a {seen[1]}.", options=(),
                               answer=f"The {objects[0]} {behaviours[0]} past the {objects[1]}.",
                               provenance={"video_id": f"m{k}", "keywords": {"objects": objects,
                                                                             "behaviours": behaviours}}))
    return items


@pytest.mark.parametrize("make", [_predictive, _mementos])
def test_a_reference_written_from_the_text_is_flagged_and_a_random_one_is_not(make):
    from builders.lint.blind import audit

    leaked = audit(make(leak=True))
    assert leaked["flagged"] and all(c["open"] for c in leaked["cells"]), leaked["cells"]
    cell = leaked["cells"][0]
    assert cell["above_chance"] == ["nearest_reference"] and cell["low95"] > cell["chance"] + leaked["margin"]
    control = [audit(make(leak=False, seed=seed))["flagged"] for seed in range(5)]
    assert sum(bool(f) for f in control) <= 1, control
    assert leaked["open_items"] == 60


def test_the_metrics_by_hand():
    assert token_f1("The dog runs to the cup.", "A dog runs.") == pytest.approx(2 * 1 * (2 / 4) / (1 + 2 / 4))
    assert token_f1("dog", "") == 0.0
    ref = make_item(benchmark="mementos", task="t", question_type="open", pressure="none", images=["a.jpg"],
                    question="q", options=(), answer="x",
                    provenance={"keywords": {"objects": ["Dog", "cup"], "behaviours": ["run"]}})
    out = make_item(benchmark="mementos", task="t", question_type="open", pressure="none", images=["b.jpg"],
                    question="q", options=(), answer="y",
                    provenance={"keywords": {"objects": ["dog"], "behaviours": ["jump"]}})
    assert keyword_f1(ref, out) == pytest.approx((2 / 3 + 0) / 2)  # objects P 1, R 1/2; behaviours 0


def test_clips_of_one_video_never_answer_each_other():
    """Two clips of each video share their question and reference: grouped by video, the nearest training item
    is never the sibling, so the copy a sibling would give is not counted as the text's doing."""
    from builders.lint.blind import folds_of, video

    items = [dataclasses.replace(it, images=tuple(name.replace("/", f"/{clip}-") for name in it.images))
             for clip in ("a", "b") for it in _predictive(leak=False, n=7)]  # other frames, one video
    members = list(range(len(items)))
    picked = nearest_reference(items, members, folds_of(items, members, group=video))
    assert len(picked) == len(items)
    assert all(video(items[i]) != video(items[j]) for i, j in picked.items())


def test_reefknot_answers_are_judged_exactly_in_the_questions_format():
    """A written relation is put between the question's own objects, then judged as Reefknot's exact judge does."""
    from builders.lint.blind_open import in_format, score

    def vqa(subject, relation, obj):
        return make_item(benchmark="reefknot", task="perception", question_type="vqa", pressure="none",
                         images=[f"{subject}-{obj}.png"], options=(),
                         question=f"What is the relation between the {subject} and the {obj} in this photo? Please "
                                  f"answer in the following format: The {subject} is <relation> the {obj}.",
                         answer=f"The {subject} is {relation} the {obj}.")

    star, cross, other = vqa("star", "right of", "hexagon"), vqa("cross", "right of", "square"), vqa("cross", "on", "cup")
    assert in_format(star, cross) == "The star is right of the hexagon."
    assert score(star, cross) == 1.0 and score(star, other) == 0.0


def test_a_task_with_closed_and_open_items_has_a_cell_for_each():
    from builders.lint.blind import audit

    open_items = _predictive(leak=True, n=30)
    closed = [make_item(benchmark="predictive", task="physical_interaction", question_type="yes_no",
                        pressure="none", images=[f"y{k}.jpg"], question=f"Is there a {OBJECTS[k % 10]}?",
                        options=(), answer=("yes", "no")[k % 2]) for k in range(30)]
    names = [c["cell"] for c in audit(open_items + closed)["cells"]]
    assert names == ["predictive/physical_interaction", "predictive/physical_interaction:open"]
