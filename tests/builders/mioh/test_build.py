"""MIOH end to end: every answer re-derived by the independent checker, determinism, atomic builds, bad input."""

from __future__ import annotations

import copy
import glob
import json
from collections import Counter
from pathlib import Path

import pytest

from builders import mioh
from builders.mioh.builder import MiohBuilder
from builders.mioh.questions import PRESSURES, QUESTION_TYPES, TASKS
from tests.builders.mioh.checker import Checker, demo_truth
from tests.builders.pair_check import pair_problems, paired_share
from tests.fixtures.real_formats import make_coco, make_paco, make_svg

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def run(*argv: str) -> int:
    return mioh.main([*argv, "--no-progress"])


def read_items(build: Path) -> list[dict]:
    return [json.loads(line) for line in (build / "items.jsonl").read_text().splitlines()]


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("mirage-cache")


@pytest.fixture(scope="session")
def demo_checker(cache_dir) -> Checker:
    from sources.demo import load_demo

    records = load_demo(seed=0, n_images=600, cache_dir=cache_dir)
    (path,) = glob.glob(str(cache_dir / "demo" / "*" / "records.json"))
    return Checker(demo_truth(Path(path)), dict(records.attribute_types), exhaustive=True)


def planted(checker: Checker, image_id: str, change) -> Checker:
    """A checker over a copy of the truth where ``change`` rewrote the objects of one image."""
    truth = {"images": copy.deepcopy(checker.images), "exhaustive": checker.absence_exhaustive, "demo": checker.demo}
    change(truth["images"][image_id]["objects"])
    return Checker(truth, checker.types, checker.exhaustive, checker.rules)


@pytest.fixture(scope="session")
def demo_build(tmp_path_factory, cache_dir, demo_checker) -> Path:
    out = tmp_path_factory.mktemp("builds")
    assert run("--n-images", "4", "--n-questions", "3", "--out", str(out), "--cache-dir", str(cache_dir)) == 0
    return out / "n4-seed0"


def assert_checker_agrees(checker: Checker, items: list[dict]) -> None:
    problems = {it["id"]: p for it in items if (p := checker.check(it))}
    assert not problems, f"{len(problems)} of {len(items)} items disagree: {list(problems.items())[:5]}"


def test_demo_build_covers_every_task_type_and_pressure(demo_build):
    items = read_items(demo_build)
    cells = Counter((it["task"], it["question_type"], it["pressure"]) for it in items)
    missing = [(t, q, p) for t in TASKS for q in QUESTION_TYPES for p in PRESSURES if not cells[(t, q, p)]]
    assert not missing
    build = json.loads((demo_build / "build.json").read_text())
    assert build["items"] == len(items)
    assert build["skipped"] == []
    assert all(len(it["images"]) == 4 for it in items if it["pressure"] != "n_images")
    assert {len(it["images"]) for it in items if it["pressure"] == "n_images"} == {2, 4}


def test_checker_agrees_with_every_demo_answer(demo_build, demo_checker):
    items = read_items(demo_build)
    assert_checker_agrees(demo_checker, items)


def test_ten_image_build_and_its_families(tmp_path, cache_dir, demo_checker):
    assert run("--n-images", "10", "--n-questions", "1", "--out", str(tmp_path), "--cache-dir", str(cache_dir)) == 0
    items = read_items(tmp_path / "n10-seed0")
    assert_checker_agrees(demo_checker, items)
    families = Counter(it["provenance"]["family"] for it in items if it["pressure"] == "n_images")
    assert families and set(families.values()) == {4}  # 2, 4, 8 and 10 images
    for family in families:
        members = [it for it in items if it["provenance"].get("family") == family]
        asked = {(it["provenance"]["template"], json.dumps(it["provenance"]["probe"])) for it in members}
        assert len(asked) == 1, "a family asks the same question (image numbers in comparative ones follow the images)"
        assert sorted(len(it["images"]) for it in members) == [2, 4, 8, 10]
    # issue 53: within each family size, the answer image of an image-slot question takes every position evenly
    slots: dict[tuple[str, int], Counter] = {}
    for it in items:
        if it["pressure"] == "n_images" and it["provenance"]["answer_state"] == "image":
            slots.setdefault((it["task"], len(it["images"])), Counter())[ord(it["answer"]) - 65] += 1
    assert slots
    for (task, size), seen in slots.items():
        counts = [seen[k] for k in range(size)]
        assert max(counts) - min(counts) <= 1, (task, size, counts)


@pytest.mark.slow
@pytest.mark.parametrize("n_images", [2, 4, 8])
def test_default_builds_pair_their_questions(n_images, tmp_path, cache_dir, demo_checker):
    """Issue 55: a default build (6 questions per cell) pairs at least 90 % of its items, each pair asks one
    question and context of two image sets with different answers, and the checker agrees with both items."""
    assert run("--n-images", str(n_images), "--out", str(tmp_path), "--cache-dir", str(cache_dir)) == 0
    build = tmp_path / f"n{n_images}-seed0"
    items = read_items(build)
    assert paired_share(items) >= 0.9
    assert pair_problems(items) == []
    assert_checker_agrees(demo_checker, [it for it in items if "pair" in it["provenance"]])
    pairs = json.loads((build / "build.json").read_text())["stats"]["pairs"]
    assert pairs["items"] == len(items) and pairs["paired"] + pairs["unpaired"] == len(items)
    truths = {(it["provenance"]["pair"]["id"], it["provenance"]["context_truth"]) for it in items
              if it["provenance"].get("context_truth") and "pair" in it["provenance"]}
    assert any(truth == "true" for _, truth in truths) and any(truth == "false" for _, truth in truths)


def test_pair_check_catches_a_partner_with_the_same_answer(demo_build):
    """The pair check is not a tautology: a partner given its pair's answer, or another question, is reported."""
    items = read_items(demo_build)
    a = next(it for it in items if it["provenance"].get("pair", {}).get("role") == "a")
    b = next(it for it in items if it["provenance"].get("pair", {}).get("id") == a["provenance"]["pair"]["id"]
             and it is not a)
    assert pair_problems([a, b]) == []
    assert any("both items answer" in p for p in pair_problems([a, dict(b, answer=a["answer"])]))
    assert any("differ in question" in p for p in pair_problems([a, dict(b, question=b["question"] + " ")]))


def test_checker_catches_a_wrong_answer(demo_build, demo_checker):
    """The checker is not a tautology: a flipped answer is reported."""
    item = read_items(demo_build)[0]
    wrong = dict(item, answer="A" if item["answer"] != "A" else "B")
    assert any("answer should be" in p for p in demo_checker.check(wrong))


def test_checker_catches_a_context_whose_truth_is_misstated(demo_build, demo_checker):
    """A misleading context marked as a control (and a control marked misleading) is reported."""
    items = read_items(demo_build)
    for truth in ("true", "false"):
        item = next(it for it in items if it["provenance"].get("context_truth") == truth)
        assert demo_checker.check(item) == []
        wrong = copy.deepcopy(item)
        wrong["provenance"]["context_truth"] = "false" if truth == "true" else "true"
        assert any("but context_truth says" in p for p in demo_checker.check(wrong))


def test_the_context_does_not_tell_the_answer(demo_build):
    """Controls (a true context) beside the paper's misleading ones: about half of the items whose options can be
    asserted or denied, and the option a context names is the gold about as often as any other option (issue 40:
    with contexts always false, distrusting them answered half the items)."""
    items = [it for it in read_items(demo_build) if it["pressure"] in ("sycophantic", "instructional_override")]
    truths = Counter(it["provenance"]["context_truth"] for it in items if it["task"] != "counting")
    assert truths["true"] and truths["false"] and 0.3 <= truths["true"] / sum(truths.values()) <= 0.7
    counting = Counter(it["provenance"]["context_truth"] for it in items if it["task"] == "counting")
    assert counting["true"] < counting["false"]  # assertions only: true one time in the number of options


def _answer_image(items: list[dict], task: str, wanted=lambda probe: True) -> tuple[dict, str]:
    """An image-slot item of ``task`` whose answer is an image, and that image's id."""
    item = next(it for it in items if it["task"] == task and it["provenance"]["template"].endswith("/which")
                and it["provenance"]["answer_state"] == "image" and wanted(it["provenance"]["probe"]))
    return item, item["provenance"]["images"][ord(item["answer"]) - 65]["id"]


def test_checker_catches_a_label_no_viewer_could_check(demo_build, demo_checker):
    """Issue 40's rules, each planted once into the truth behind a right item: the checker then rejects the item.
    A shape too hidden to read (a polygon with half its outline in view), one too small to read, a look-alike
    beside an absent shape (a small octagon where "no circle" is the label), a look-alike of a counted shape,
    and a position pair moved onto a diagonal."""
    items = read_items(demo_build)
    polygons = ("square", "triangle", "hexagon", "diamond", "pentagon", "octagon", "trapezoid")

    def of(cat):
        return lambda objects: [o for o in objects if o["category"] == cat]

    # in a hard_positive item, where a small or hidden shape is otherwise a fair (hard) positive
    hard = [it for it in items if it["pressure"] == "hard_positive"]
    item, image = _answer_image(hard, "existence", lambda p: p in polygons)
    assert demo_checker.check(item) == []
    for what, change in (("half hidden", lambda o: o.update(amodal_area=2 * o["area"])),
                         ("14 px", lambda o: o.update(area=196.0, amodal_area=196.0))):
        wrong = planted(demo_checker, image, lambda objects: [change(o) for o in of(item["provenance"]["probe"])(objects)])
        assert any("undecidable" in p for p in wrong.check(item)), what

    def with_lookalike(category, lookalike):
        return lambda objects: objects.append({"id": "planted", "category": lookalike, "bbox": [0, 0, 36, 36],
                                               "area": 1225.0, "amodal_area": 1225.0, "iscrowd": False,
                                               "attributes": ("red", "solid")})

    absent = next(it for it in items if it["task"] == "existence" and it["provenance"]["probe"] == "circle"
                  and any(im["label"] == "neg" for im in it["provenance"]["images"]))
    image = next(im["id"] for im in absent["provenance"]["images"] if im["label"] == "neg")
    assert demo_checker.check(absent) == []
    assert any("undecidable" in p for p in planted(demo_checker, image, with_lookalike("circle", "octagon")).check(absent))

    counted = next(it for it in items if it["task"] == "counting" and it["provenance"]["probe"] in ("circle", "octagon"))
    image = counted["provenance"]["images"][0]["id"]
    other = "octagon" if counted["provenance"]["probe"] == "circle" else "circle"
    assert demo_checker.check(counted) == []
    assert any("cannot be counted" in p for p in planted(demo_checker, image, with_lookalike("", other)).check(counted))

    def alone(it):  # one subject and one object in the answer image: the move leaves no other pair to answer
        subject, _, obj = it["provenance"]["probe"]
        objects = demo_checker.images[it["provenance"]["images"][ord(it["answer"]) - 65]["id"]]["objects"]
        return [o["category"] for o in objects].count(subject) == 1 == [o["category"] for o in objects].count(obj)

    positions = [it for it in items if it["task"] == "position" and it["provenance"]["template"].endswith("/which")
                 and it["provenance"]["answer_state"] == "image"
                 and it["provenance"]["probe"][1] in ("left of", "right of", "above", "below") and alone(it)]
    item, image = _answer_image(positions, "position")
    subject, relation, _ = item["provenance"]["probe"]
    assert demo_checker.check(item) == []

    def diagonal(objects):  # the subject moved a whole box across the relation's axis, inside the 640x480 frame
        for o in of(subject)(objects):
            x, y, w, h = o["bbox"]
            if relation in ("left of", "right of"):
                y = y - h - 1 if y - h - 1 >= 0 else y + h + 1
            else:
                x = x + w + 1 if x + 2 * w + 1 <= 640 else x - w - 1
            o["bbox"] = [x, y, w, h]
    assert any("undecidable" in p for p in planted(demo_checker, image, diagonal).check(item))


def test_next_to_is_asked_only_clear_of_its_band(demo_checker):
    """Issue 53: "next to" holds side by side with a small gap and is false only far apart; the checker reads a pair
    moved into the band between as undecidable, whatever the source annotates."""
    def pairs():
        for image_id, img in demo_checker.images.items():
            cats = Counter(o["category"] for o in img["objects"])
            by_id = {o["id"]: o for o in img["objects"]}
            for s, p, t in img["relations"]:
                a, b = by_id[s], by_id[t]
                room = b["bbox"][0] - 1.3 * min(a["bbox"][2], b["bbox"][2]) - a["bbox"][2]  # a moved far stays in
                if p == "next to" and cats[a["category"]] == cats[b["category"]] == 1 and room > 2:
                    probe = (a["category"], "next to", b["category"])
                    if demo_checker.fact("position", image_id, probe) is not None:
                        yield image_id, a, b, probe

    image_id, a, b, probe = next(pairs())
    assert demo_checker.fact("position", image_id, probe)[0] is True

    def moved(gap: float, annotated: bool):
        def change(objects):
            for o in objects:
                if o["id"] == a["id"]:
                    o["bbox"] = [b["bbox"][0] - gap - a["bbox"][2], b["bbox"][1], *a["bbox"][2:]]
        wrong = planted(demo_checker, image_id, change)
        if not annotated:
            wrong.images[image_id]["relations"] = [r for r in wrong.images[image_id]["relations"]
                                                   if r[1] != "next to"]
        return wrong.fact("position", image_id, probe)

    narrow = min(a["bbox"][2], b["bbox"][2])
    assert moved(0.1 * narrow, True)[0] is True
    assert moved(0.6 * narrow, True) is None and moved(0.6 * narrow, False) is None  # the band
    assert moved(1.2 * narrow, False)[0] is False


def test_i_dont_know_is_never_the_answer_and_out_of_the_chance(demo_build):
    """Issue 53: "I don't know" is offered so a model may abstain and is never the gold; it is recorded as such and
    the chance figures count three choices, not four."""
    from builders.items import read_items as items_of
    from builders.quality import guess_chance

    offered = [it for it in items_of(demo_build / "items.jsonl") if it.provenance["template"].endswith("/any")]
    assert offered
    for it in offered:
        assert it.provenance["never_gold"] == [it.options[-1]] == ["I don't know"]
        assert it.answer_text != "I don't know" and guess_chance(it) == pytest.approx(1 / 3)


def test_checker_catches_a_wrong_option_label(demo_build, demo_checker):
    """Each distractor's recorded label in each image is re-derived: a flipped label or difficulty is reported."""
    items = [it for it in read_items(demo_build) if it["provenance"]["option_labels"]]
    assert items, "the demo build has items whose options are probes"
    hard = [it for it in items if any(c["difficulty"] == "hard_negative"
                                      for o in it["provenance"]["option_labels"] for c in o["images"])]
    assert hard, "some distractor option is recorded hard in some image"
    for item, flip in ((items[0], {"present": "absent", "absent": "present", "undecidable": "present"}), (hard[0], None)):
        wrong = copy.deepcopy(item)
        cell = wrong["provenance"]["option_labels"][-1]["images"][-1]
        if flip is None:
            cell = next(c for o in wrong["provenance"]["option_labels"] for c in o["images"]
                        if c["difficulty"] == "hard_negative")
            cell["difficulty"] = "easy"
        else:
            cell["label"] = flip[cell["label"]]
        assert demo_checker.check(item) == []
        assert any(" in Image " in p and "recorded" in p for p in demo_checker.check(wrong))


def test_relation_options_name_different_pairs_of_objects(demo_build, demo_checker):
    """Issue 40: "a star left of a ring" and "a ring right of a star" say one thing; offered together both are
    wrong, and a reader skips them. No position question offers two relations between the same two objects."""
    categories = {o["category"] for image in demo_checker.images.values() for o in image["objects"]}
    asked = 0
    for item in read_items(demo_build):
        if item["task"] != "position" or not item["provenance"]["template"].endswith(("/all", "/differs")):
            continue
        pairs = [frozenset(w for w in option.split() if w in categories) for option in item["options"][:-1]]
        assert all(len(pair) == 2 for pair in pairs), item["options"]
        assert len(set(pairs)) == len(pairs), item["options"]
        asked += 1
    assert asked >= 10


def test_builds_are_byte_identical_for_a_seed(tmp_path, cache_dir):
    args = ("--n-images", "2", "--n-questions", "2", "--cache-dir", str(cache_dir))
    assert run(*args, "--out", str(tmp_path / "a")) == 0
    assert run(*args, "--out", str(tmp_path / "b")) == 0
    assert run(*args, "--out", str(tmp_path / "c"), "--seed", "1", "--demo-images", "600") == 0
    a = (tmp_path / "a" / "n2-seed0" / "items.jsonl").read_bytes()
    assert a == (tmp_path / "b" / "n2-seed0" / "items.jsonl").read_bytes()
    assert a != (tmp_path / "c" / "n2-seed1" / "items.jsonl").read_bytes()
    images_a = sorted(p.name for p in (tmp_path / "a" / "n2-seed0" / "images").iterdir())
    assert images_a == sorted(p.name for p in (tmp_path / "b" / "n2-seed0" / "images").iterdir())


def test_items_point_at_images_inside_the_build(demo_build):
    for it in read_items(demo_build):
        for path in it["images"]:
            assert path.startswith("images/") and (demo_build / path).is_file()


def test_answer_positions_and_nota_share_are_controlled(demo_build):
    build = json.loads((demo_build / "build.json").read_text())
    q = build["stats"]["quality"]
    assert q["answer_balance"]["p_value"] > 0.01
    nota = build["stats"]["nota"]  # each question form's fair share (one over its options), rounded per cell
    assert nota["requested"] == "fair" and abs(nota["share"] - nota["expected"]) <= 0.1 and nota["warning"] is None
    base = q["blind_baselines"]
    assert base["always_A"] < base["chance"] + 0.08
    assert q["hard_negative_cooccurrence"]["lift"] > 1.0
    hp = q["hard_positive_relative_area"]
    assert hp["hard_positive_median"] < hp["easy_positive_median"]


# ------------------------------------------------------------------------------------- real formats


@pytest.fixture(scope="module")
def real_sources(tmp_path_factory):
    root = tmp_path_factory.mktemp("real")
    return make_coco(root / "coco"), make_paco(root / "paco"), make_svg(root / "svg")


def test_build_from_coco_paco_svg_files(tmp_path, real_sources):
    coco, paco, svg = real_sources
    code = run(
        "--coco-rem", str(coco.annotations), "--coco-images", str(coco.images_dir),
        "--paco", str(paco.annotations), "--paco-images", str(paco.images_dir),
        "--svg", str(svg.annotations), "--svg-images", str(svg.images_dir),
        "--n-images", "2", "--n-questions", "2", "--pressures", "easy", "hard_negative", "sycophantic",
        "--out", str(tmp_path),
    )
    assert code == 0
    items = read_items(tmp_path / "n2-seed0")
    assert {it["task"] for it in items} == set(TASKS)
    for task, fixture, exhaustive in (("existence", coco, False), ("counting", coco, False),
                                      ("attribute", paco, False), ("position", svg, False)):
        checker = Checker(fixture.truth, fixture.truth.get("attribute_types", {}), exhaustive)
        assert_checker_agrees(checker, [it for it in items if it["task"] == task])
    # source images are referenced where they are, not copied
    assert not (tmp_path / "n2-seed0" / "images").exists()
    assert all((tmp_path / "n2-seed0" / p).is_file() for it in items for p in it["images"])  # relative to the build
    build = json.loads((tmp_path / "n2-seed0" / "build.json").read_text())
    assert all(h.startswith("sha256:") for h in build["input_hashes"].values())


def test_only_the_given_sources_build_their_tasks(tmp_path, real_sources):
    coco, _, _ = real_sources
    assert run("--coco-rem", str(coco.annotations), "--coco-images", str(coco.images_dir), "--n-images", "2",
               "--n-questions", "1", "--pressures", "easy", "--out", str(tmp_path)) == 0
    build = json.loads((tmp_path / "n2-seed0" / "build.json").read_text())
    assert {it["task"] for it in read_items(tmp_path / "n2-seed0")} == {"existence", "counting"}
    assert {s["task"] for s in build["skipped"] if "task" in s} == {"attribute", "position"}


# ---------------------------------------------------------------------------------------- bad input


def _coco_variants(coco) -> dict[str, tuple[Path, Path, str]]:
    """name -> (annotation file, images dir, text the error must contain)."""
    root = coco.annotations.parent
    data = json.loads(coco.annotations.read_text())

    def write(name: str, content) -> Path:
        path = root / f"{name}.json"
        path.write_text(content if isinstance(content, str) else json.dumps(content))
        return path

    def mutated(fn) -> dict:
        copy = json.loads(json.dumps(data))
        fn(copy)
        return copy

    first_ann = data["annotations"][0]["id"]
    return {
        "empty file": (write("empty", ""), coco.images_dir, "empty"),
        "malformed json": (write("malformed", '{"images": [}'), coco.images_dir, "JSON"),
        "wrong top level": (write("list", "[1, 2]"), coco.images_dir, "object"),
        "missing images key": (write("noimages", mutated(lambda d: d.pop("images"))), coco.images_dir, "images"),
        "bbox not 4 numbers": (write("bbox", mutated(lambda d: d["annotations"][0].update(bbox=[1, 2, 3]))), coco.images_dir, str(first_ann)),
        "box outside image": (write("outside", mutated(lambda d: d["annotations"][0].update(bbox=[60, 40, 30, 30]))), coco.images_dir, str(first_ann)),
        "unknown category": (write("category", mutated(lambda d: d["annotations"][0].update(category_id=999))), coco.images_dir, "999"),
        "unknown image id": (write("imageid", mutated(lambda d: d["annotations"][0].update(image_id=424242))), coco.images_dir, "424242"),
        "string width": (write("width", mutated(lambda d: d["images"][0].update(width="wide"))), coco.images_dir, "width"),
        "duplicate annotation id": (write("dup", mutated(lambda d: d["annotations"].append(dict(d["annotations"][0])))), coco.images_dir, str(first_ann)),
        "missing image file": (coco.annotations, root / "no-such-dir", "no-such-dir"),
        "missing annotation file": (root / "absent.json", coco.images_dir, "absent.json"),
    }


@pytest.mark.parametrize("case", [
    "empty file", "malformed json", "wrong top level", "missing images key", "bbox not 4 numbers", "box outside image",
    "unknown category", "unknown image id", "string width", "duplicate annotation id", "missing image file",
    "missing annotation file",
])
def test_bad_input_is_one_clear_line_exit_2_and_no_build(case, tmp_path, real_sources, capsys):
    coco, _, _ = real_sources
    ann, images, expected = _coco_variants(coco)[case]
    out = tmp_path / "out"
    code = run("--coco-rem", str(ann), "--coco-images", str(images), "--n-images", "2", "--out", str(out))
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith("error: ")
    assert str(ann.name) in err[0] or str(images) in err[0]
    assert expected in err[0]
    assert not out.exists() or not any(out.iterdir()), "a failed build must leave nothing that looks finished"


@pytest.mark.parametrize("argv, expected", [
    (["--coco-rem", "x.json"], "go together"),
    (["--config", "missing.yaml"], "missing.yaml"),
    (["--n-questions", "0"], "n_questions"),
    (["--nota-share", "1.5"], "nota_share"),
])
def test_bad_options_are_one_line_exit_2(argv, expected, tmp_path, capsys):
    assert run(*argv, "--out", str(tmp_path)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and expected in err[0]


def test_config_file_sets_options_and_rejects_unknown_ones(tmp_path, cache_dir, capsys):
    good = tmp_path / "good.yaml"
    good.write_text("n_images: 2\nn_questions: 1\ntasks: [existence]\npressures: [easy]\nname: from-file\n")
    assert run("--config", str(good), "--out", str(tmp_path / "b"), "--cache-dir", str(cache_dir)) == 0
    items = read_items(tmp_path / "b" / "from-file")
    assert {it["task"] for it in items} == {"existence"} and len(items) == 3
    bad = tmp_path / "bad.yaml"
    bad.write_text("n_imagez: 2\n")
    assert run("--config", str(bad), "--out", str(tmp_path / "c")) == 2
    assert "n_imagez" in capsys.readouterr().err


def test_a_crash_leaves_the_previous_build_untouched(tmp_path, cache_dir, monkeypatch):
    args = ("--n-images", "2", "--n-questions", "1", "--pressures", "easy", "--out", str(tmp_path), "--cache-dir", str(cache_dir))
    assert run(*args) == 0
    before = (tmp_path / "n2-seed0" / "items.jsonl").read_bytes()

    def boom(*a, **k):
        raise RuntimeError("disk full")

    monkeypatch.setattr(MiohBuilder, "to_item", boom)
    with pytest.raises(RuntimeError):
        run(*args)
    assert (tmp_path / "n2-seed0" / "items.jsonl").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["n2-seed0"]


def test_a_question_form_that_keeps_giving_up_is_not_drawn_again_in_its_cell(tmp_path, cache_dir):
    """One draw per question (``--max-attempts 1``) at eight images: relations in all of them rarely exist, so
    forms give up. After ``GIVE_UP_LIMIT`` give-ups a form is not drawn again in the cell, and every question
    wanted is accounted for: made, given up, or not tried."""
    from builders.mioh.builder import GIVE_UP_LIMIT

    assert run("--n-images", "8", "--n-questions", "20", "--max-attempts", "1", "--tasks", "position",
               "--out", str(tmp_path), "--cache-dir", str(cache_dir)) == 0
    cells = [s["cell"] for s in json.loads((tmp_path / "n8-seed0" / "build.json").read_text())["skipped"]]
    forms = {"comprehensive": 2, "comparative": 1, "selective": 1}  # all/any, pair, which
    not_tried = 0
    for cell in cells:
        gave_up = cell["reasons"].get("gave up after 1 attempts", 0)
        skipped = sum(n for reason, n in cell["reasons"].items() if reason.startswith("not tried"))
        assert gave_up <= GIVE_UP_LIMIT * forms[cell["question_type"]], cell
        assert cell["made"] + gave_up + skipped == cell["wanted"], cell
        not_tried += skipped
    assert not_tried > 0
