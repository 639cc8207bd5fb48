"""The decomposed ablation (Sec. 5.5): ``--decomposed`` adds one single-image yes/no question per image of every
comprehensive existence item; answers re-derived from the demo world's raw annotations by the independent
checker; default builds do not change."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from builders import mioh
from builders.items import make_item
from builders.mioh.decomposed import decompose
from tests.builders.mioh.test_build import cache_dir, demo_checker  # noqa: F401 - session fixtures

pytestmark = pytest.mark.slow


def _items(build: Path) -> list[dict]:
    return [json.loads(line) for line in (build / "items.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def decomposed_build(tmp_path_factory, cache_dir) -> Path:  # noqa: F811
    out = tmp_path_factory.mktemp("decomposed")
    assert mioh.main(["--decomposed", "--tasks", "existence", "--n-questions", "2", "--out", str(out),
                      "--cache-dir", str(cache_dir), "--no-progress"]) == 0
    return out / "n4-seed0-decomposed"


def truth_of(checker, item: dict) -> str | None:
    """Yes/no from the raw annotations: is the probe in the image (named by its file)?"""
    fact = checker.fact("existence", Path(item["images"][0]).stem, item["provenance"]["probe"])
    return None if fact is None else ("yes" if fact[0] else "no")


def test_every_comprehensive_existence_item_is_decomposed_image_by_image(decomposed_build, demo_checker):  # noqa: F811
    items = _items(decomposed_build)
    single = [it for it in items if it["question_type"] == "decomposed"]
    parents = {it["id"]: it for it in items if it["task"] == "existence" and it["question_type"] == "comprehensive"}
    assert single and parents
    members = Counter(g for it in single for g in it["provenance"]["groups"])
    assert members == {pid: len(p["images"]) for pid, p in parents.items()}
    for it in single:
        assert it["options"] == [] and it["context"] == "" and len(it["images"]) == 1
        assert it["question"] == f"Is there {'an' if it['provenance']['probe'][0] in 'aeiou' else 'a'} " \
                                 f"{it['provenance']['probe']} in this image?"
        for pid in it["provenance"]["groups"]:
            assert it["images"][0] in parents[pid]["images"] and it["provenance"]["probe"] == parents[pid]["provenance"]["probe"]
    wrong = {it["id"]: (it["answer"], truth_of(demo_checker, it)) for it in single
             if truth_of(demo_checker, it) != it["answer"]}
    assert not wrong
    build = json.loads((decomposed_build / "build.json").read_text())
    assert build["stats"]["decomposed"] == {"parents": len(parents), "questions": len(single), "skipped": 0}


def test_the_check_catches_a_planted_wrong_answer(decomposed_build, demo_checker):  # noqa: F811
    it = next(it for it in _items(decomposed_build) if it["question_type"] == "decomposed")
    planted = dict(it, answer="no" if it["answer"] == "yes" else "yes")
    assert truth_of(demo_checker, planted) != planted["answer"]


def test_shared_questions_belong_to_every_group_and_unknown_labels_are_skipped() -> None:
    def parent(images, labels, qid):
        return make_item(benchmark="mioh", task="existence", question_type="comprehensive", pressure="easy",
                         images=images, question=f"q{qid}", options=("a", "b"), answer="A",
                         provenance={"probe": "dog", "images": [{"label": lab} for lab in labels]})

    p1, p2 = parent(["x.png", "y.png"], ["pos", "neg"], 1), parent(["x.png", "z.png"], ["pos", "pos"], 2)
    p3 = parent(["w.png"], [None], 3)
    single, stats = decompose([p1, p2, p3])
    by_image = {it.images[0]: it for it in single}
    assert stats == {"parents": 2, "questions": 3, "skipped": 1}
    assert by_image["x.png"].provenance["groups"] == sorted([p1.id, p2.id])
    assert by_image["x.png"].provenance["group_sizes"] == {p1.id: 2, p2.id: 2}
    assert [by_image[n].answer for n in ("x.png", "y.png", "z.png")] == ["yes", "no", "yes"]
    assert by_image["y.png"].question == "Is there a dog in this image?"
