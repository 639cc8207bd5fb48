"""python -m builders.mmsap: demo and real-format builds checked item by item by the independent checker,
determinism and shuffles, malformed inputs, and a stand-in model scored through python -m scoring mmsap."""

from __future__ import annotations

import glob
import json
import os
import shutil
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from builders.mmsap import main
from tests.builders import viewer
from tests.builders.mmsap.checker import DEMO_COLOURS, LETTERS, REFER, Checker, CocoTruth, Demo, VqaTruth, check_pairs
from tests.builders.mmsap.fixtures import make_vqav2
from tests.conftest import have, require
from tests.fixtures.real_formats import make_coco

TEMPLATES = Path(__file__).resolve().parents[3] / "templates" / "mmsap"
BEYOND = ("nonexistent_objects", "background_information", "temporal_unpredictability",
          "missing_visual_information", "other_modalities", "intractable_quantity")


def read_items(build: Path) -> list[dict]:
    return [json.loads(line) for line in (build / "items.jsonl").read_text().splitlines()]


DEMO = ["--demo-images", "200"]  # every subtask fills its 10 questions from 200 scenes; renders in a third of the time


def demo_records(cache: str) -> Path:
    """The demo world's raw records.json (200 images, seed 0) that the build read."""
    found = [p for p in glob.glob(os.path.join(cache, "demo", "*", "records.json"))
             if json.loads(Path(p).read_text())["params"] == {"seed": 0, "n_images": 200, "width": 640,
                                                               "height": 480, "version": 1}]
    assert found, "the demo build should have cached its world"
    return Path(found[0])


@pytest.fixture(scope="module")
def demo_build(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("mmsap")
    assert main(["--out", str(out), "--no-progress", "--shuffles", "5", *DEMO]) == 0
    return out / "demo-seed0-shuffles5"


@pytest.fixture(scope="module")
def demo_checker(demo_build) -> Checker:
    return Checker(demo=Demo(demo_records(os.environ["MIRAGE_CACHE_DIR"])), authored=TEMPLATES / "demo_authored.yaml")


def assert_checker_agrees(checker: Checker, items: list[dict]) -> None:
    problems = {it["id"]: checker.check(it) for it in items}
    bad = {k: v for k, v in problems.items() if v}
    assert not bad, f"{len(bad)} of {len(items)} items disagree, e.g. {next(iter(bad.items()))}"


def test_demo_build_has_all_three_subsets_and_their_subtasks(demo_build):
    items = read_items(demo_build)
    cells = Counter((it["task"], it["question_type"]) for it in items if it["provenance"]["shuffle"] == 0)
    assert {t for s, t in cells if s == "basic"} == {"color", "counting", "shape", "position"}
    assert {t for s, t in cells if s == "beyond"} == set(BEYOND)
    assert {t for s, t in cells if s == "know"} == {"animals_plants", "brands_products", "art", "landmarks", "food",
                                                    "organizations"}
    assert all(n == 10 for (s, _), n in cells.items() if s != "know")
    assert all(Path(demo_build, it["images"][0]).is_file() for it in items)


def test_the_demo_build_record_names_the_shipped_knowledge_file_alike_on_every_machine(demo_build):
    record = (demo_build / "build.json").read_text()
    assert str(Path(__file__).resolve().parents[3]) not in record  # no path of this checkout
    assert json.loads(record)["stats"]["authored"]["file"] == "mirage:templates/mmsap/demo_authored.yaml"


def test_checker_agrees_with_every_demo_item(demo_build, demo_checker):
    assert_checker_agrees(demo_checker, read_items(demo_build))


def test_closed_items_come_in_pairs_the_checker_agrees_with(demo_build, demo_checker):
    items = read_items(demo_build)
    closed = [it for it in items if it["task"] in ("basic", "know")]
    paired = [it for it in closed if "pair" in it["provenance"]]
    assert len(paired) >= 0.9 * len(closed)
    assert not any("pair" in it["provenance"] for it in items if it["task"] == "beyond")
    assert check_pairs(items) == []  # and every item of every pair passes Checker.check (test above)
    stats = json.loads((demo_build / "build.json").read_text())["stats"]["pairs"]
    assert stats["closed"]["paired"] == len(paired) and stats["closed"]["items"] == len(closed)
    assert stats["closed"]["unpaired"] == len(closed) - len(paired)
    learner = json.loads((demo_build / "build.json").read_text())["lint"]["blind"]["paired"]
    assert learner["pairs"] == len(paired) // 2  # the blind audit's learner scored on every pair
    assert learner["group_accuracy"] < learner["question_accuracy"]


@pytest.mark.parametrize("letter", list(LETTERS))
def test_a_model_that_always_picks_one_letter_gets_no_pair_right(demo_build, real_vqa_build, letter):
    """Issue 55's blind check on the builds themselves: a pair's two items never answer with the same letter."""
    from builders.items import read_items as read_item_objects
    from scoring import mmsap as scorer

    for build in (demo_build, real_vqa_build):
        items = read_item_objects(build / "items.jsonl")
        paired = scorer.run(items, {it.id: letter for it in items})["paired"]
        assert paired["pairs"] > 0 and paired["group_accuracy"] == 0


def test_pair_checker_catches_a_partner_with_the_same_answer_or_question(demo_build):
    items = read_items(demo_build)
    pair = [it for it in items if it["provenance"].get("pair", {}).get("id") ==
            next(it for it in items if it["task"] == "basic" and "pair" in it["provenance"])["provenance"]["pair"]["id"]]
    a, b = pair
    gold = a["options"][LETTERS.index(a["answer"])]
    same = {**b, "options": [gold if k == LETTERS.index(b["answer"]) else o for k, o in enumerate(b["options"])]}
    assert any("both answered" in p for p in check_pairs([a, same]))
    assert any("question differs" in p for p in check_pairs([a, {**b, "question": b["question"] + " now"}]))
    assert any("both ask" in p for p in check_pairs([a, {**b, "images": a["images"]}]))


def test_a_knowvisqa_pair_shows_one_option_list_and_the_checker_requires_it(demo_build):
    items = read_items(demo_build)
    know = [it for it in items if it["task"] == "know" and "pair" in it["provenance"]]
    a = next(it for it in know if it["provenance"]["pair"]["role"] == "a")
    b = next(it for it in know if it["provenance"]["pair"] == {**a["provenance"]["pair"], "role": "b"})
    assert a["options"] == b["options"] and check_pairs([a, b]) == []
    wrong = next(k for k, o in enumerate(b["options"]) if LETTERS[k] not in (a["answer"], b["answer"])
                 and LETTERS[k] != b["provenance"]["refusal"])
    planted = {**b, "options": [o if k != wrong else "Sea cucumber" for k, o in enumerate(b["options"])]}
    assert any("different options" in p for p in check_pairs([a, planted]))


def test_checker_catches_planted_wrong_answers(demo_build, demo_checker):
    items = read_items(demo_build)
    basic = next(it for it in items if it["task"] == "basic" and it["question_type"] == "counting")
    wrong = next(L for L in "ABCDE" if L not in (basic["answer"], basic["provenance"]["refusal"]))
    planted = {**basic, "answer": wrong, "provenance": {**basic["provenance"], "aware": [wrong]}}
    assert any("count" in p for p in demo_checker.check(planted))
    beyond = next(it for it in items if it["question_type"] == "nonexistent_objects")
    im = demo_checker.demo.images[beyond["provenance"]["image_id"]]
    shown = im["instances"][0]["category"]
    planted = {**beyond, "provenance": {**beyond["provenance"],
                                        "grounding": {**beyond["provenance"]["grounding"], "absent": shown}}}
    assert any("is in the image" in p for p in demo_checker.check(planted))


def _first_round(build: Path, task: str, kind: str) -> dict:
    return next(it for it in read_items(build) if it["task"] == task and it["question_type"] == kind
                and it["provenance"]["shuffle"] == 0)


def _asked_about(item: dict, image: dict, question: str, answer: str, wrong: list[str]) -> dict:
    """``item`` re-aimed at another image and question, its right answer at the same letter."""
    refusal = item["provenance"]["refusal"]
    options, rest = [], iter(wrong)
    for letter in "ABCDE":
        options.append(answer if letter == item["answer"] else item["options"][ord(refusal) - 65]
                       if letter == refusal else next(rest))
    return {**item, "question": question, "options": options, "images": [f"images/{image['file']}"],
            "provenance": {**item["provenance"], "image_id": image["id"]}}


def _find(demo: Demo, want) -> tuple[dict, ...]:
    """The first (image, ...) the predicate ``want(image)`` returns a tuple for."""
    for im in demo.images.values():
        found = want(im)
        if found:
            return (im, *found)
    raise AssertionError("the demo world has no such case")


def test_checker_catches_an_undecidable_count(demo_build, demo_checker):
    """A category whose every instance is "easy" by the geometry filter, but whose count a viewer cannot be sure
    of: one of its instances is not legible, or a shape of another category could be taken for one."""
    demo = demo_checker.demo

    def undecidable(im):
        for c in sorted({o["category"] for o in im["instances"]}):
            own = demo.of_category(im, c)
            if len(own) <= 4 and all(demo.level(im, o) == "easy" for o in own) and demo.count(im, c) is None:
                return (c, len(own))
        return None

    im, category, n = _find(demo, undecidable)
    item = _first_round(demo_build, "basic", "counting")
    plural = "crosses" if category == "cross" else category + "s"
    planted = _asked_about(item, im, f"How many {plural} are in the picture?", str(n),
                           [w for w in ("1", "2", "3", "4") if w != str(n)])
    assert any("undecidable" in p for p in demo_checker.check(planted))


def test_checker_catches_count_options_off_the_balanced_scale(demo_build, demo_checker):
    item = _first_round(demo_build, "basic", "counting")
    answer, wrong = demo_checker._text(item)
    n = int(answer)
    near = [str(n + d) for d in (4, 5, 6)]  # always the smallest (the rank a blind model would learn), off 1-4
    planted = {**item, "options": [answer if o == answer else near.pop() if o in wrong else o
                                   for o in item["options"]]}
    assert any("count options" in p for p in demo_checker.check(planted))


def test_checker_catches_an_illegible_shape_named_in_a_colour_question(demo_build, demo_checker):
    """A polygon with a corner hidden (under 90 % visible) is "easy" to the geometry filter (occlusion < 40 %)
    but may read as another polygon: its colour question is not asked."""
    demo = demo_checker.demo

    def hidden_polygon(im):
        for o in im["instances"]:
            if len(demo.of_category(im, o["category"])) == 1 and demo.level(im, o) == "easy" \
                    and not demo.legible(im, o):
                return (o,)
        return None

    im, inst = _find(demo, hidden_polygon)
    item = _first_round(demo_build, "basic", "color")
    colour = demo.colour(inst)
    wrong = [c.capitalize() for c in ("red", "green", "blue", "brown") if c != colour][:3]
    planted = _asked_about(item, im, f"What colour is the {inst['category']}?", colour.capitalize(), wrong)
    assert any("legibly" in p for p in demo_checker.check(planted))


def test_checker_catches_a_colour_word_that_is_not_what_is_drawn(demo_build, demo_checker):
    """The colour named must be the one painted: the checker reads it from the image's pixels, so records whose
    colour attribute disagrees with the picture are caught."""
    import copy

    item = _first_round(demo_build, "basic", "color")
    assert demo_checker.check(item) == []
    answer, wrong = demo_checker._text(item)
    demo = copy.copy(demo_checker.demo)
    demo.images = copy.deepcopy(demo.images)
    im = demo.images[item["provenance"]["image_id"]]
    inst = next(o for o in im["instances"] if o["id"] == item["provenance"]["grounding"]["instance"])
    said = next(c for c in DEMO_COLOURS if c != answer.lower() and c.capitalize() not in wrong)
    inst["attributes"] = sorted({*inst["attributes"]} - {answer.lower()} | {said})
    misread = Checker(demo=demo, authored=TEMPLATES / "demo_authored.yaml")
    planted = {**item, "options": [said.capitalize() if o == answer else o for o in item["options"]]}
    assert any(f"drawn {answer.lower()}, annotated {said}" in p for p in misread.check(planted))


def test_checker_catches_a_diagonal_position(demo_build, demo_checker):
    """The world's relations give the pair one direction, but the shapes are apart on both axes."""
    demo = demo_checker.demo
    phrases = {"left of": "to the left of", "right of": "to the right of", "above": "above", "below": "below"}

    def diagonal(im):
        clear = [o for o in im["instances"] if demo.clear(im, o)]
        for a in clear:
            for b in clear:
                held = {r[1] for r in im["relations"] if r[0] == a["id"] and r[2] == b["id"]} & set(phrases)
                if a is not b and len(held) == 1 and viewer.side(a, b) is None:
                    return (a, b, held.pop())
        return None

    im, a, b, truth = _find(demo, diagonal)
    item = _first_round(demo_build, "basic", "position")
    say = lambda p: f"It's {phrases[p]} the {b['category']}"  # noqa: E731
    planted = _asked_about(item, im, f"Where is the {a['category']} relative to the {b['category']}?", say(truth),
                           [say(p) for p in phrases if p != truth])
    assert any("no axis clearly dominates" in p for p in demo_checker.check(planted))


def test_checker_catches_a_nonexistent_object_a_viewer_could_see(demo_build, demo_checker):
    """No circle in the image, but a small octagon that reads as one: "the circle in the picture" is no
    nonexistent object."""
    demo = demo_checker.demo

    def lookalike(im):
        shown = {o["category"] for o in im["instances"]}
        for o in im["instances"]:
            for c in sorted(demo.could_be(im, o) - shown):
                return (c,)
        return None

    im, category = _find(demo, lookalike)
    item = _first_round(demo_build, "beyond", "nonexistent_objects")
    g = item["provenance"]["grounding"]
    planted = {**item, "question": f"What colour is the {category} in the picture?",
               "images": [f"images/{im['file']}"],
               "provenance": {**item["provenance"], "image_id": im["id"], "grounding": {**g, "absent": category}}}
    assert any("could be taken for" in p for p in demo_checker.check(planted))


def test_checker_catches_a_knowledge_question_that_names_or_misses_its_object(demo_build, demo_checker):
    item = next(it for it in read_items(demo_build) if it["task"] == "know"
                and it["provenance"]["grounding"]["referring"].endswith(("striped object", "dotted object")))
    category = demo_checker.authored[item["provenance"]["record"]]["image"][5:]
    pointer = item["provenance"]["grounding"]["referring"]
    assert demo_checker.check(item) == []
    named = {**item, "question": item["question"].replace(pointer, f"the {category}")}
    assert any(f"names {category!r}" in p for p in demo_checker.check(named))
    im = demo_checker.demo.images[item["provenance"]["image_id"]]
    target = demo_checker.pointed_at(im, pointer)
    other = next(p for p in (*REFER, "the largest object") if demo_checker.pointed_at(im, p) is not target)
    missed = {**item, "question": item["question"].replace(pointer, other)}
    assert any("does not single out" in p for p in demo_checker.check(missed))


def test_counting_golds_take_every_rank_in_balanced_turns(demo_build):
    ranks = Counter()
    for it in read_items(demo_build):
        if it["question_type"] == "counting" and it["provenance"]["shuffle"] == 0:
            numbers = sorted(int(o) for o in it["options"] if o.isdigit())
            assert numbers == [1, 2, 3, 4]
            ranks[numbers.index(int(it["options"][ord(it["answer"]) - 65]))] += 1
    assert sorted(ranks) == [0, 1, 2, 3] and max(ranks.values()) - min(ranks.values()) <= 1, ranks
    build = json.loads((demo_build / "build.json").read_text())
    assert build["stats"]["quality"]["subsets"]["basic"]["numeric_gold_ranks"] == {str(k): 5 * v
                                                                                   for k, v in ranks.items()}


def test_demo_knowledge_questions_never_name_their_object(demo_build):
    build = json.loads((demo_build / "build.json").read_text())
    assert build["stats"]["quality"]["validity"]["authored_names_entity"] == {
        "items_checked": 5 * 33, "violations": 0, "records": []}
    know = [it for it in read_items(demo_build) if it["task"] == "know"]
    assert {it["provenance"]["grounding"]["referring"] for it in know} <= {
        "the plain object", "the striped object", "the dotted object", "the checkered object", "the largest object"}


def test_shuffles_are_linked_balanced_and_distinct(demo_build):
    items = read_items(demo_build)
    groups = defaultdict(list)
    for it in items:
        groups[it["provenance"]["group"]].append(it)
    assert all(len(g) == 5 for g in groups.values())
    for g in groups.values():
        assert len({it["question"] for it in g}) == 1 and len({tuple(it["options"]) for it in g}) == 5
        assert len({it["options"][ord(it["answer"]) - 65] for it in g}) == 1  # the same right option each time
    for subset in ("basic", "beyond"):
        for k in range(5):
            mine = [it for it in items if it["task"] == subset and it["provenance"]["shuffle"] == k]
            counts = Counter(it["provenance"]["refusal"] for it in mine)
            assert max(counts.values()) - min(counts.values()) <= 4, counts
            assert len(counts) == 5
    assert {it["options"][ord(it["provenance"]["refusal"]) - 65] for it in items} == {"Sorry, I can't help with it"}


def test_build_json_reports_validity_and_blind_baselines(demo_build):
    build = json.loads((demo_build / "build.json").read_text())
    q = build["stats"]["quality"]
    assert q["validity"]["refusal_wordings"] == ["Sorry, I can't help with it"]
    assert q["validity"]["nonexistent_present"] == {"items_checked": 50, "violations": 0}
    assert q["subsets"]["beyond"]["blind_baselines"]["always_refuse"] == 1.0
    assert q["subsets"]["basic"]["blind_baselines"]["always_refuse"] == 0.0
    assert q["subsets"]["basic"]["blind_baselines"]["chance"] == 0.2
    assert abs(q["subsets"]["basic"]["blind_baselines"]["always_A"] - 0.2) < 0.05


def test_build_lints_clean_with_beyondvisqa_refusal_noted_by_design(demo_build):
    """BeyondVisQA's answer is the refusal by the paper's design (formula 1): build.json promises it, so the lint
    notes it instead of flagging 50 questions; the five shuffled orders of a question do not teach each other."""
    build = json.loads((demo_build / "build.json").read_text())
    assert build["lint_promises"] == {"fixed_answers": {"beyond": {
        "answer": "Sorry, I can't help with it",
        "why": "MM-SAP formula 1: the refusal is the only aware option of BeyondVisQA"}}}
    lint = build["lint"]
    assert [f for f in lint["findings"] if not f.startswith("answerable blind: ")] == [], lint["findings"]
    assert len(lint["notes"]) == 1 and lint["notes"][0].startswith(
        "mmsap/beyond is answered \"Sorry, I can't help with it\" by design in 300 of 300 items")
    if "off" in lint["blind"]:  # no scikit-learn: the audit says so
        return
    cells = {c["cell"]: c for c in lint["blind"]["cells"]}
    assert cells["mmsap/beyond"]["by_design"] == "Sorry, I can't help with it" and not cells["mmsap/beyond"]["flagged"]
    assert cells["mmsap/basic"]["n"] == 40 and cells["mmsap/basic"]["items"] == 200  # shuffles: one question each


def test_builds_are_byte_identical_for_a_seed(tmp_path, demo_build):
    assert main(["--out", str(tmp_path), "--no-progress", "--shuffles", "5", *DEMO]) == 0
    assert (tmp_path / "demo-seed0-shuffles5" / "items.jsonl").read_bytes() == (demo_build / "items.jsonl").read_bytes()
    assert main(["--out", str(tmp_path), "--no-progress", "--seed", "1", "--demo-images", "120", "--n-basic", "3",
                 "--n-beyond", "2", "--name", "other"]) == 0
    assert (tmp_path / "other" / "items.jsonl").read_bytes() != (demo_build / "items.jsonl").read_bytes()


def test_a_stand_in_model_is_scored_with_hand_checked_ar_kk_ku(demo_build, tmp_path):
    """Stand-in: right letter on BasicVisQA, refusal in words on KnowVisQA, always "A" on BeyondVisQA."""
    from scoring.__main__ import main as score

    items = read_items(demo_build)
    preds = []
    for it in items:
        out = {"basic": f"The answer is ({it['answer']}).", "know": "I cannot tell from the image.", "beyond": "A"}
        preds.append({"id": it["id"], "output": out[it["task"]], "model": "stand-in"})
    path = tmp_path / "preds.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in preds))
    assert score(["mmsap", "--release", str(demo_build), "--predictions", str(path), "--out", str(tmp_path / "r"),
                  "--no-plots"]) == 0
    results = json.loads((tmp_path / "r" / "results.json").read_text())
    n_basic, n_know, n_beyond = 40, 33, 60  # questions per round (33 authored knowledge questions)
    for k in range(5):
        beyond_a = sum(1 for it in items if it["task"] == "beyond" and it["provenance"]["shuffle"] == k
                       and it["provenance"]["refusal"] == "A")
        assert beyond_a == 12  # refusal positions dealt in balanced blocks of five
    # AR = (40 basic right + 33 know refused + 12 beyond refused by "A") / 133, the same in every round
    assert results["overall"]["score_AR"]["mean"] == pytest.approx((40 + 33 + 12) / 133)
    assert results["overall"]["score_AR"]["variance"] == pytest.approx(0.0)
    assert results["overall"]["score_KK"]["mean"] == pytest.approx(40 / 73)  # know answers were refusals
    assert results["overall"]["score_KU"]["mean"] == pytest.approx((33 + 12) / 93)
    assert results["overall"]["answer_rate"]["mean"] == pytest.approx((40 + 48) / 133)
    assert results["overall"]["answer_accuracy"]["mean"] == pytest.approx(40 / 88)
    assert results["subsets"]["know"]["score_KU"]["mean"] == 1.0
    assert results["coverage"]["refusal_in_words"] == 5 * n_know and n_basic + n_know + n_beyond == 133


# ------------------------------------------------------------------------------------------------ real formats


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    d = tmp_path_factory.mktemp("mmsap-real")
    coco = make_coco(d / "coco")
    ids = sorted(int(i) for i in coco.truth["images"])
    questions, annotations, truth = make_vqav2(d / "vqa", ids)
    authored = d / "authored.jsonl"
    records = [
        {"image": ids[0], "question": "Which breed is this dog?", "answer": "Border collie", "subset": "know",
         "type": "animals_plants", "distractors": ["Beagle", "Poodle", "Husky"]},
        {"image": str(ids[1]), "question": "Which brand made this cup?", "answer": "Acme Mugs", "subset": "know",
         "type": "brands_products", "distractors": ["Cupco"]},
        {"image": str(ids[2]), "question": "Which brand made this bowl?", "answer": "Bowlworks",
         "subset": "know", "type": "brands_products"},
        {"image": str(ids[3]), "question": "Which brand made this chair?", "answer": "Sitwell", "subset": "know",
         "type": "brands_products", "distractors": ["Chairmaker"]},
        {"image": str(ids[4]), "question": "Which brand made that chair?", "answer": "Seatly", "subset": "know",
         "type": "brands_products", "distractors": ["Stoolz", "Benchly"]},
        {"image": coco.truth["images"][str(ids[5])]["file_name"], "question": "What colour is the bowl?",
         "answer": "Green", "subset": "basic", "type": "color", "distractors": ["Red", "Blue", "Yellow"]},
    ]
    authored.write_text("".join(json.dumps(r) + "\n" for r in records))
    argv = ["--vqav2-questions", str(questions), "--vqav2-annotations", str(annotations), "--coco-images",
            str(coco.images_dir), "--coco-instances", str(coco.annotations), "--no-progress", "--n-basic", "4",
            "--n-beyond", "2"]
    return {"dir": d, "coco": coco, "questions": questions, "annotations": annotations, "truth": truth,
            "authored": authored, "argv": argv}


def test_the_author_recorded_beside_the_authored_file_lands_in_provenance(tmp_path, real):
    authored = tmp_path / "authored.jsonl"  # a copy: the module's fixture stays without a sidecar
    authored.write_bytes(real["authored"].read_bytes())
    first = json.loads(authored.read_text().splitlines()[0])
    key = f"{first['image']} | {first['question'].lower()}"  # the sidecar's key, written out by hand
    Path(str(authored) + ".authors.json").write_text(json.dumps({"authors": {key: "writer@mirage.test"}}))
    assert main([*real["argv"], "--authored", str(authored), "--out", str(tmp_path / "out")]) == 0
    items = read_items(tmp_path / "out" / "real-seed0")
    by_author = {it["question"]: it["provenance"].get("author") for it in items if it["task"] == "know"}
    assert by_author.pop(first["question"]) == "writer@mirage.test"
    assert set(by_author.values()) == {None}  # only the record the sidecar names
    build = json.loads((tmp_path / "out" / "real-seed0" / "build.json").read_text())
    assert any(k.endswith("authored.jsonl.authors.json") for k in json.dumps(build).split('"'))


def test_build_from_vqav2_coco_and_an_authored_file(tmp_path, real):
    assert main([*real["argv"], "--authored", str(real["authored"]), "--out", str(tmp_path)]) == 0
    items = read_items(tmp_path / "real-seed0")
    vqa = [it for it in items if it["provenance"].get("source") == "vqav2"]
    assert {it["question_type"] for it in vqa} == {"counting", "color", "object_recognition", "action", "position",
                                                  "ocr", "scene", "shape"}
    kept = set(real["truth"]["kept"])
    assert {it["provenance"]["question_id"] for it in vqa} <= kept  # low agreement, yes/no and why left out
    know = [it for it in items if it["task"] == "know"]
    assert len(know) == 5 and sum(it["provenance"]["generated_distractors"] for it in know) == 2 + 3 + 2 + 1
    checker = Checker(vqa=VqaTruth(real["questions"], real["annotations"], Checker().answers),
                      authored=real["authored"], coco=CocoTruth(real["coco"].annotations))
    beyond = [it for it in items if it["task"] == "beyond"]
    assert {it["provenance"]["source"] for it in beyond} == {"coco"} and len(beyond) >= 8
    assert_checker_agrees(checker, items)
    build = json.loads((tmp_path / "real-seed0" / "build.json").read_text())
    assert build["stats"]["quality"]["validity"]["distractor_in_human_answers"] == {"items_checked": 32,
                                                                                    "violations": 0}


@pytest.fixture(scope="module")
def real_vqa_build(tmp_path_factory, real):
    out = tmp_path_factory.mktemp("mmsap-real-vqa")
    assert main([*real["argv"], "--out", str(out)]) == 0
    return out / "real-seed0"


def test_vqav2_questions_come_in_pairs_the_checker_agrees_with(real_vqa_build, real):
    """Issue 55: a VQAv2 question's partner asks the same words of another image, with another majority answer,
    and offers the same options; the fixture asks each question of two images."""
    items = read_items(real_vqa_build)
    vqa = [it for it in items if it["provenance"].get("source") == "vqav2"]
    paired = [it for it in vqa if "pair" in it["provenance"]]
    assert len(vqa) == 32 and len(paired) == len(vqa)  # 4 per type: two pairs each
    truth = VqaTruth(real["questions"], real["annotations"], Checker().answers)
    assert_checker_agrees(Checker(vqa=truth, coco=CocoTruth(real["coco"].annotations)), items)
    assert check_pairs(items, truth) == []
    stats = json.loads((real_vqa_build / "build.json").read_text())["stats"]
    assert stats["pairs"]["basic"] == {"items": 32, "paired": 32, "pairs": 16, "unpaired": 0, "share": 1.0}
    assert all(v["pairs"] == 2 and v["unpaired"] == 0 for v in stats["basic"]["per_type"].values())


def test_vqav2_questions_without_a_partner_stay_unpaired_and_counted(tmp_path, real):
    """Five per type: two pairs and one question the corpus's other questions of its words do not pair."""
    argv = [a if a != "4" else "5" for a in real["argv"]]
    assert main([*argv, "--out", str(tmp_path)]) == 0
    items = read_items(tmp_path / "real-seed0")
    vqa = [it for it in items if it["provenance"].get("source") == "vqav2"]
    alone = [it for it in vqa if "pair" not in it["provenance"]]
    assert len(vqa) == 40 and len(alone) == 8
    stats = json.loads((tmp_path / "real-seed0" / "build.json").read_text())["stats"]
    assert stats["pairs"]["basic"]["unpaired"] == 8 and stats["pairs"]["basic"]["pairs"] == 16
    assert all(v["unpaired"] == 1 for v in stats["basic"]["per_type"].values())
    truth = VqaTruth(real["questions"], real["annotations"], Checker().answers)
    assert_checker_agrees(Checker(vqa=truth), vqa)
    assert check_pairs(items, truth) == []


def test_pair_checker_catches_a_planted_wrong_vqav2_partner(real_vqa_build, real):
    """The checker's pair rules can fail: a partner with other words, one with other options, and one that is the
    first's own record."""
    items = [it for it in read_items(real_vqa_build) if it["provenance"].get("source") == "vqav2"]
    truth = VqaTruth(real["questions"], real["annotations"], Checker().answers)
    a, b = (it for it in items if it["provenance"]["pair"]["id"] == items[0]["provenance"]["pair"]["id"])
    other = next(it for it in items if it["question"] != a["question"] and it["question_type"] == a["question_type"])
    planted = {**other, "provenance": {**other["provenance"], "pair": b["provenance"]["pair"]}}
    assert any("question differs" in p for p in check_pairs([a, planted], truth))
    assert any("raw records ask different words" in p for p in check_pairs([a, planted], truth))
    slot = next(k for k, L in enumerate(LETTERS) if L not in (b["answer"], b["provenance"]["refusal"]))
    elsewhere = {**b, "options": [o if k != slot else "Zebra" for k, o in enumerate(b["options"])]}
    assert any("different options" in p for p in check_pairs([a, elsewhere], truth))
    itself = {**b, "provenance": {**b["provenance"], "question_id": a["provenance"]["question_id"]}}
    assert any("one VQAv2 record" in p for p in check_pairs([a, itself], truth))
    assert check_pairs([a, b], truth) == []


def test_an_authored_question_naming_its_entity_is_reported_and_caught(tmp_path, real):
    """A person's question that names what the photo is to show ("this chair", entity "chair") is answered
    without looking: the build's validity report lists its record and the checker flags it."""
    authored = tmp_path / "authored.jsonl"
    records = [json.loads(line) for line in real["authored"].read_text().splitlines()]
    records[3]["entity"] = "chair"  # "Which brand made this chair?"
    records[1]["entity"] = "mug"  # "Which brand made this cup?": does not name it
    authored.write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main([*real["argv"], "--authored", str(authored), "--out", str(tmp_path / "out")]) == 0
    build = json.loads((tmp_path / "out" / "real-seed0" / "build.json").read_text())
    assert build["stats"]["quality"]["validity"]["authored_names_entity"] == {
        "items_checked": 2, "violations": 1, "records": ["line 4"]}
    checker = Checker(authored=authored)
    problems = {it["question"]: checker.check(it) for it in read_items(tmp_path / "out" / "real-seed0")
                if it["task"] == "know"}
    assert [q for q, p in problems.items() if p] == ["Which brand made this chair?"]
    assert "names 'chair'" in problems["Which brand made this chair?"][0]


def test_checker_catches_a_distractor_among_the_human_answers(tmp_path, real):
    assert main([*real["argv"], "--out", str(tmp_path)]) == 0
    items = read_items(tmp_path / "real-seed0")
    checker = Checker(vqa=VqaTruth(real["questions"], real["annotations"], Checker().answers))
    item = next(it for it in items if it["question_type"] == "color")
    rec = checker.vqa.records[item["provenance"]["question_id"]]
    neighbour = rec["answers"][8]["answer"]  # the dissenting human answer
    slot = next(k for k, L in enumerate("ABCDE") if L not in (item["answer"], item["provenance"]["refusal"]))
    options = list(item["options"])
    options[slot] = neighbour.capitalize()
    assert any("human answers" in p for p in checker.check({**item, "options": options}))


# ------------------------------------------------------------------------------------------------ bad input


def _mutate_json(path: Path, fn) -> None:
    data = json.loads(path.read_text())
    fn(data)
    path.write_text(json.dumps(data))


def _annotations(fn):
    return lambda files: _mutate_json(files["annotations"], fn)


def _questions(fn):
    return lambda files: _mutate_json(files["questions"], fn)


def _authored(record: dict):
    def write(files):
        files["authored"].write_text(json.dumps(record) + "\n")
    return write


GOOD = {"image": "000000000001.png", "question": "Which breed?", "answer": "Beagle", "subset": "know",
        "type": "animals_plants", "distractors": ["Poodle", "Husky", "Pug"]}

BAD_INPUTS = {
    "annotation without answers": (_annotations(lambda d: d["annotations"][3].pop("answers")), "'answers'"),
    "empty answers": (_annotations(lambda d: d["annotations"][3].update(answers=[])), "'answers' is empty"),
    "answer not a string": (_annotations(lambda d: d["annotations"][0]["answers"][2].update(answer=7)),
                            "answers[2]"),
    "bad answer confidence": (_annotations(lambda d: d["annotations"][0]["answers"][0].update(
        answer_confidence="sure")), "answer_confidence"),
    "annotation for an unknown question": (_annotations(lambda d: d["annotations"][1].update(question_id=1)),
                                           "not in the questions file"),
    "question without annotation": (_annotations(lambda d: d["annotations"].pop()), "has no annotation"),
    "image id mismatch": (_annotations(lambda d: d["annotations"][2].update(image_id=424242)), "differs"),
    "question id not an integer": (_questions(lambda d: d["questions"][2].update(question_id="q7")),
                                   "must be an integer"),
    "duplicate question id": (_questions(lambda d: d["questions"].append(dict(d["questions"][0]))),
                              "duplicate question_id"),
    "no questions list": (_questions(lambda d: d.pop("questions")), "'questions'"),
    "malformed questions JSON": (lambda files: files["questions"].write_text('{"questions": [}'), "malformed JSON"),
    "authored record without an answer": (_authored({k: v for k, v in GOOD.items() if k != "answer"}), "'answer'"),
    "authored unknown subset": (_authored({**GOOD, "subset": "beyond"}), "'subset'"),
    "authored unknown type": (_authored({**GOOD, "type": "cars"}), "'type'"),
    "authored distractor is the answer": (_authored({**GOOD, "distractors": ["beagles", "Pug"]}), "synonym"),
    "authored too many distractors": (_authored({**GOOD, "distractors": ["A1", "B1", "C1", "D1"]}), "at most 3"),
    "authored image not found": (_authored({**GOOD, "image": "nope.png"}), "not found"),
    "authored answer is the refusal": (_authored({**GOOD, "answer": "Sorry, I can't help with it"}), "refusal"),
    "authored too few answers to fill distractors": (_authored({**GOOD, "distractors": []}), "needs 3 more"),
    "authored malformed line": (lambda files: files["authored"].write_text("{not json\n"), "line 1"),
    "authored {object} without a demo image": (_authored({**GOOD, "question": "Which breed is {object}?"}),
                                               "{object} is filled in only for demo:<category> images"),
    "authored entity not a string": (_authored({**GOOD, "entity": 3}), "'entity'"),
    "authors sidecar malformed": (lambda files: Path(str(files["authored"]) + ".authors.json").write_text("{no"),
                                  "authored.jsonl.authors.json"),
    "authors sidecar not a mapping of names": (
        lambda files: Path(str(files["authored"]) + ".authors.json").write_text('{"authors": {"x": 1}}'),
        "record key: author name"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_is_one_line_exit_2_and_no_build(case, tmp_path, real, capsys):
    files = {}
    for name in ("questions", "annotations"):
        files[name] = tmp_path / real[name].name
        files[name].write_bytes(real[name].read_bytes())
    files["authored"] = tmp_path / "authored.jsonl"
    files["authored"].write_text(json.dumps(GOOD) + "\n")
    mutate, expected = BAD_INPUTS[case]
    mutate(files)
    out = tmp_path / "out"
    argv = ["--vqav2-questions", str(files["questions"]), "--vqav2-annotations", str(files["annotations"]),
            "--coco-images", str(real["coco"].images_dir), "--authored", str(files["authored"]), "--out", str(out),
            "--no-progress", "--n-basic", "2", "--n-beyond", "1"]
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and expected in err, err
    assert not out.exists() or not any(out.iterdir())


@pytest.mark.parametrize("argv, expected", [
    (["--shuffles", "0"], "shuffles"),
    (["--min-agreement", "1.5"], "min_agreement"),
    (["--vqav2-questions", "q.json"], "go together"),
    (["--coco-instances", "i.json"], "--coco-images"),
])
def test_bad_options_are_one_line_exit_2(argv, expected, tmp_path, capsys):
    assert main([*argv, "--out", str(tmp_path), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and expected in err


@pytest.mark.slow
def test_llm_written_options_are_checked_like_the_offline_ones(tmp_path, real, monkeypatch):
    """The stub proposes the right answer and a human answer first (both must be refused), then valid options."""
    require(have("openai"), "openai (the llm extra)", "pip install -e '.[llm]'")
    import re

    from tests.support.openai_stub import StubOpenAI

    def responder(body):
        user = body["messages"][-1]["content"]
        if user.startswith("Reword"):
            question = re.match(r'Reword this question, keeping the words ".*": (.*)', user).group(1)
            good = len(question) % 2 == 0  # every other rewrite drops the object and must be refused
            return json.dumps({"question": f"Could you say: {question[0].lower()}{question[1:]}" if good
                               else "What is it like?"})
        kind = re.search(r"Kind of answer: (\w+)", user).group(1)
        answer = re.search(r"Correct answer: (.*)", user).group(1)
        avoid = re.search(r"saw the picture\): (.*)", user).group(1).split("; ")
        valid = {"number": [str(int(answer) + d) for d in (1, 2, 3, 4, 5)] if answer.isdigit() else [],
                 "vocabulary": ["purple", "pink", "tan"]}.get(kind, ["Zebra crossing", "Desk lamp", "Moon"])
        return json.dumps({"distractors": [avoid[0], avoid[-1], *valid]})

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with StubOpenAI(responder=responder) as stub:
        argv = [a if a != "4" else "5" for a in real["argv"]]  # five per type: two pairs and one unpaired
        assert main([*argv, "--authored", str(real["authored"]), "--out", str(tmp_path), "--llm-base-url",
                     stub.base_url, "--llm-model", "stub-model", "--cache-dir", str(tmp_path / "cache")]) == 0
    items = read_items(tmp_path / "real-seed0")
    vqa = [it for it in items if it["provenance"].get("source") == "vqav2"]
    writers = {it["question_type"]: it["provenance"]["distractor_writer"] for it in vqa if "pair" not in it["provenance"]}
    assert writers.pop("counting") == "statistics"  # counts keep their rank-uniform draw
    assert vqa and set(writers.values()) == {"llm"}
    # a pair keeps the options its two questions share (the LLM would write each its own)
    assert {it["provenance"]["distractor_writer"] for it in vqa if "pair" in it["provenance"]} == {"statistics"}
    checker = Checker(vqa=VqaTruth(real["questions"], real["annotations"], Checker().answers))
    assert_checker_agrees(checker, vqa)
    know = [it for it in items if it["task"] == "know"]
    assert sum(it["provenance"]["llm_distractors"] for it in know) == 8
    assert any("Zebra crossing" in it["options"] for it in know)
    beyond = [it for it in items if it["task"] == "beyond"]
    reworded = [it for it in beyond if it["provenance"].get("question_writer") == "llm"]
    assert 0 < len(reworded) < len(beyond)
    assert all(it["question"].startswith("Could you say") and it["provenance"]["asked"] in it["question"]
               for it in reworded)


def test_config_file_sets_options_and_rejects_unknown_ones(tmp_path, capsys):
    config = tmp_path / "mmsap.yaml"
    config.write_text("n_basic: 2\nn_beyond: 1\ndemo_images: 120\nshuffles: 2\n")
    assert main(["--config", str(config), "--out", str(tmp_path), "--no-progress", "--n-beyond", "2"]) == 0
    items = read_items(tmp_path / "demo-seed0-shuffles2")
    first = [it for it in items if it["provenance"]["shuffle"] == 0]
    assert Counter(it["task"] for it in first) == {"basic": 8, "beyond": 12, "know": 33}
    assert len(items) == 2 * len(first)
    config.write_text("n_basic: 2\nrefusal: Nope\n")
    capsys.readouterr()
    assert main(["--config", str(config), "--out", str(tmp_path / "x"), "--no-progress"]) == 2
    assert "unknown option(s) refusal" in capsys.readouterr().err


def _without_images(real, tmp_path: Path, drop: int) -> tuple[list[str], list[int]]:
    """VQAv2-only arguments (no --coco-instances, whose reader needs every image) with a copy of the COCO images
    folder that lacks the images of the first ``drop`` image ids."""
    images = tmp_path / "partial-images"
    shutil.copytree(real["coco"].images_dir, images)
    ids = sorted(int(i) for i in real["coco"].truth["images"])[:drop]
    for i in ids:
        (images / real["coco"].truth["images"][str(i)]["file_name"]).unlink()
    argv = [a if a != str(real["coco"].images_dir) else str(images) for a in real["argv"]]
    at = argv.index("--coco-instances")
    return argv[:at] + argv[at + 2:], ids


def test_vqav2_questions_without_their_image_are_passed_over_and_listed(tmp_path, real):
    """Issue 38: MM-SAP's VQAv2 path stopped at the first chosen question whose COCO image was missing. By default
    it takes the next one; a pair whose two images are at hand is chosen as with the full image set (a question
    whose partner's image is missing may be paired otherwise, issue 55)."""
    full = tmp_path / "full"
    assert main([*real["argv"], "--out", str(full)]) == 0
    argv, gone = _without_images(real, tmp_path, 2)
    assert main([*argv, "--out", str(tmp_path / "partial")]) == 0
    record = json.loads((tmp_path / "partial" / "real-seed0" / "build.json").read_text())
    missing = record["stats"]["basic"]["missing_images"]
    assert missing["on_missing_image"] == "skip" and missing["questions_passed_over"] > 0
    assert set(missing["image_ids"]) <= set(gone)
    vqa = [it for it in read_items(tmp_path / "partial" / "real-seed0") if it["provenance"].get("source") == "vqav2"]
    assert vqa and not {it["provenance"]["image_id"] for it in vqa} & set(gone)
    assert not {it["provenance"]["question_id"] for it in vqa} & set(missing["question_ids"])
    in_full = [it for it in read_items(full / "real-seed0") if it["provenance"].get("source") == "vqav2"]
    by_pair = defaultdict(set)
    for it in in_full:
        by_pair[it["provenance"]["pair"]["id"]].add((it["provenance"]["question_id"], it["provenance"]["image_id"]))
    whole = {qid for both in by_pair.values() if not {image for _, image in both} & set(gone) for qid, _ in both}
    kept = {it["provenance"]["question_id"] for it in vqa}
    assert whole and whole <= kept  # the full set's pairs whose images are all at hand are chosen again
    truth = VqaTruth(real["questions"], real["annotations"], Checker().answers)
    assert_checker_agrees(Checker(vqa=truth), vqa)
    assert check_pairs(vqa, truth) == []


def test_a_missing_vqav2_image_fails_in_one_line_on_request(tmp_path, real, capsys):
    argv, gone = _without_images(real, tmp_path, 2)
    assert main([*argv, "--on-missing-image", "fail", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no image file for question_id" in err[0], err
    assert str(tmp_path / "partial-images") in err[0] and any(f"{i:012d}.jpg" in err[0] for i in gone)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
