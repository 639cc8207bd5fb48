"""Reefknot end to end: every answer re-derived by the independent checker (demo, VG v1.0/v1.2/v1.4 layouts), a
planted wrong answer caught, validity figures, determinism, bad input as one line with exit 2 and no build."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builders import reefknot
from tests.builders.pair_check import SAME, pair_problems, paired_share
from tests.builders.reefknot.checker import Checker, read_items
from tests.builders.reefknot.vg_fixture import SCENES, make_vg
from tests.conftest import have, require

FIXTURE_OPTIONS = ("--min-predicate-count", "1", "--min-name-count", "1", "--prior-support", "100")
"""The fixture is tiny: every name and predicate is rare and no pair has a language prior worth the name."""


def run(*argv: str) -> int:
    return reefknot.main([*argv, "--no-progress"])


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("rk-cache")


@pytest.fixture(scope="module")
def demo_build(tmp_path_factory, cache_dir) -> Path:
    out = tmp_path_factory.mktemp("rk-builds")
    assert run("--demo-images", "60", "--out", str(out), "--cache-dir", str(cache_dir)) == 0
    return out / "demo-seed0"


@pytest.fixture(scope="module")
def demo_checker(cache_dir, demo_build) -> Checker:
    (folder,) = (cache_dir / "reefknot-demo").iterdir()
    return Checker(folder / "relationships.json", folder / "image_data.json", folder / "objects.json", exhaustive=True)


def test_demo_build_passes_the_checker(demo_build, demo_checker):
    items = read_items(demo_build / "items.jsonl")
    assert demo_checker.check(items) == []
    cells = {(it["question_type"], it["task"]) for it in items}
    assert cells == {(s, c) for s in ("yes_no", "mcq", "vqa") for c in ("perception", "cognition")}


@pytest.mark.slow
def test_default_demo_build_pairs_its_closed_questions(tmp_path):
    """Issue 55: the default build pairs at least 90 % of its Y/N and MCQ items; each pair asks one question of
    two images with different answers (a Y/N pair: yes on one, its "no" on the other), and the checker agrees
    with both items of every pair."""
    cache = tmp_path / "cache"
    assert run("--out", str(tmp_path), "--cache-dir", str(cache)) == 0
    items = read_items(tmp_path / "demo-seed0" / "items.jsonl")
    closed = [it for it in items if it["question_type"] != "vqa"]
    assert paired_share(closed) >= 0.9
    assert json.loads((tmp_path / "demo-seed0" / "build.json").read_text())["stats"]["pairs"]["items"] == len(closed)
    assert pair_problems(items, same=tuple(f for f in SAME if f != "pressure")) == []
    yes_no = [it for it in closed if it["question_type"] == "yes_no" and "pair" in it["provenance"]]
    assert yes_no and {it["answer"] for it in yes_no} == {"yes", "no"}
    (folder,) = (cache / "reefknot-demo").iterdir()
    checker = Checker(folder / "relationships.json", folder / "image_data.json", folder / "objects.json",
                      exhaustive=True)
    assert checker.check([it for it in closed if "pair" in it["provenance"]]) == []


def test_checker_catches_a_flipped_answer(demo_build, demo_checker):
    items = read_items(demo_build / "items.jsonl")
    yn = next(it for it in items if it["question_type"] == "yes_no")
    mcq = next(it for it in items if it["question_type"] == "mcq")
    vqa = next(it for it in items if it["question_type"] == "vqa")
    flipped = [
        {**yn, "answer": "no" if yn["answer"] == "yes" else "yes"},
        {**mcq, "answer": "A" if mcq["answer"] != "A" else "B"},
        {**vqa, "answer": vqa["answer"].replace(" the ", " the the ", 1)},
    ]
    assert [bad[0] for bad in demo_checker.check(flipped)] == [yn["id"], mcq["id"], vqa["id"]]


def test_checker_catches_an_impossible_relation_and_a_false_accepted_answer(demo_build, demo_checker):
    """A cognitive question asking a shape for a relation no shape of its kind has anywhere in the source is
    invalid even when its answer ("no") is right; a VQA item accepting a relation the pair does not hold is too."""
    items = read_items(demo_build / "items.jsonl")
    no = next(
        it for it in items
        if it["task"] == "cognition" and it["answer"] == "no" and it["provenance"]["triplet"]["subject"] != "arrow"
    )
    asked = no["provenance"]["asked_relation"]
    impossible = {**no, "question": no["question"].replace(f" {asked} ", " pointing at ", 1)}
    mcq = next(it for it in items if it["task"] == "cognition" and it["question_type"] == "mcq"
               and it["provenance"]["triplet"]["subject"] != "arrow")
    wrong = next(k for k, o in enumerate(mcq["options"]) if "ABCD"[k] != mcq["answer"])
    offered = {**mcq, "options": [*mcq["options"][:wrong], "pointing at", *mcq["options"][wrong + 1:]]}
    vqa = next(it for it in items if it["question_type"] == "vqa")
    accepts = {**vqa, "provenance": {**vqa["provenance"], "accepted_answers": [
        *vqa["provenance"]["accepted_answers"], vqa["answer"].replace(vqa["provenance"]["triplet"]["relation"],
                                                                      "surrounding")]}}
    found = {bad[0]: bad[2] for bad in demo_checker.check([impossible, offered, accepts])}
    assert "never pointing at" in found[no["id"]] and "never pointing at" in found[mcq["id"]]
    assert "accepted answers" in found[vqa["id"]]
    assert all(len(it["provenance"]["accepted_answers"]) >= 1 for it in items if it["question_type"] == "vqa")


def test_validity_figures_hold(demo_build):
    build = json.loads((demo_build / "build.json").read_text())
    q = build["stats"]["quality"]
    assert q["two_answers"] == q["duplicate_questions"] == q["agreement_faults"] == 0
    for cat, counts in q["yes_no_balance"].items():
        assert counts["yes"] == counts["no"] > 0, cat
    base = q["blind_baselines"]
    assert base["yes_no"]["always_yes"] == 0.5
    assert abs(base["yes_no"]["language_prior"] - 0.5) <= 0.1
    assert abs(base["mcq"]["always_A"] - 0.25) <= 0.05
    phases = build["stats"]["phases"]
    b = phases["b_filtering"]
    assert b["kept"] + sum(b["dropped"].values()) == b["in"]
    assert phases["a_triplets"]["relations"] == b["in"]
    planned = phases["e_questions"]["planned"]
    # one scale for every count: the Table 2 proportions hold (Y/N rounded to even)
    assert abs(planned["yes_no/perception"] / planned["yes_no/cognition"] - 5440 / 4300) < 0.2


def test_builds_are_byte_identical_for_a_seed(tmp_path, cache_dir):
    for name in ("a", "b"):
        assert run("--demo-images", "30", "--out", str(tmp_path / name), "--cache-dir", str(cache_dir)) == 0
    a, b = ((tmp_path / n / "demo-seed0" / "items.jsonl").read_bytes() for n in ("a", "b"))
    assert a == b and a
    assert run("--demo-images", "30", "--seed", "1", "--out", str(tmp_path / "c"), "--cache-dir", str(cache_dir)) == 0
    assert (tmp_path / "c" / "demo-seed1" / "items.jsonl").read_bytes() != a


@pytest.mark.parametrize("version", ["1.0", "1.2", "1.4"])
def test_visual_genome_layouts_pass_the_checker(version, tmp_path):
    vg = make_vg(tmp_path / "vg", version)
    args = [
        "--vg-relationships",
        str(vg["relationships"]),
        "--vg-images",
        str(vg["images"]),
        "--vg-image-data",
        str(vg["image_data"]),
        "--out",
        str(tmp_path / "out"),
        *FIXTURE_OPTIONS,
    ]
    if version != "1.0":
        args += ["--vg-objects", str(vg["objects"])]
    assert run(*args) == 0
    build = tmp_path / "out" / "visual_genome-seed0"
    items = read_items(build / "items.jsonl")
    checker = Checker(vg["relationships"], vg["image_data"], vg["objects"] if version != "1.0" else None)
    assert checker.check(items) == []
    assert {it["task"] for it in items} == {"perception", "cognition"}
    assert all((build / it["images"][0]).is_file() for it in items)  # relative to the build folder
    stats = json.loads((build / "build.json").read_text())["stats"]
    if version != "1.0":  # the second dog of image 12 comes from objects.json only
        assert stats["phases"]["b_filtering"]["dropped"]["several instances of the subject's category"] >= 1
        assert stats["read"]["endpoints_missing_from_objects"] == 1


def test_visual_genome_without_image_data_reads_image_headers(tmp_path):
    vg = make_vg(tmp_path / "vg", "1.2")
    assert (
        run(
            "--vg-relationships",
            str(vg["relationships"]),
            "--vg-images",
            str(vg["images"]),
            "--out",
            str(tmp_path / "out"),
            *FIXTURE_OPTIONS,
        )
        == 0
    )
    items = read_items(tmp_path / "out" / "visual_genome-seed0" / "items.jsonl")
    assert Checker(vg["relationships"], vg["image_data"]).check(items) == []


def _edit(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


BAD_INPUTS = {
    # name: (edit of the fixture, words of the one-line error)
    "relationships not an array": (lambda p: p["relationships"].write_text('{"a": 1}'), "top level must be an array"),
    "truncated file": (lambda p: p["relationships"].write_text(p["relationships"].read_text()[:-40]), "malformed JSON"),
    "empty file": (lambda p: p["relationships"].write_text(""), "empty"),
    "missing predicate": (
        lambda p: _edit(p["relationships"], lambda d: d[0]["relationships"][0].pop("predicate")),
        "predicate",
    ),
    "negative box": (
        lambda p: _edit(p["relationships"], lambda d: d[0]["relationships"][0]["subject"].update(w=-5)),
        "non-positive size",
    ),
    "empty names list": (
        lambda p: _edit(p["relationships"], lambda d: d[1]["relationships"][0]["object"].update(names=[])),
        "'names' is empty",
    ),
    "image missing from image_data": (lambda p: _edit(p["image_data"], lambda d: d.pop(2)), "not in"),
    "duplicate image id": (lambda p: _edit(p["relationships"], lambda d: d.append(d[0])), "duplicate image id"),
    "objects entry not an object": (lambda p: _edit(p["objects"], lambda d: d.__setitem__(0, [1])), "must be"),
    "predicate not a string": (
        lambda p: _edit(p["relationships"], lambda d: d[0]["relationships"][1].update(predicate=7)),
        "predicate",
    ),
    "relationships file missing": (lambda p: p["relationships"].unlink(), "not found"),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_is_one_line_exit_2_and_no_build(case, tmp_path, capsys):
    vg = make_vg(tmp_path / "vg", "1.4")
    edit, words = BAD_INPUTS[case]
    edit(vg)
    out = tmp_path / "out"
    code = run(
        "--vg-relationships",
        str(vg["relationships"]),
        "--vg-images",
        str(vg["images"]),
        "--vg-image-data",
        str(vg["image_data"]),
        "--vg-objects",
        str(vg["objects"]),
        "--out",
        str(out),
        *FIXTURE_OPTIONS,
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith("error: ") and words in err[0], err
    assert ".json" in err[0]
    assert not out.exists() or not any(out.iterdir())


@pytest.mark.parametrize(
    "argv, words",
    [
        (["--yn-perception", "3"], "even"),
        (["--min-area", "2"], "--min-area"),
        (["--vg-relationships", "x.json"], "go together"),
        (["--prior-share", "5"], "--prior-share"),
        (["--vg-objects", "o.json"], "need --vg-relationships"),
    ],
)
def test_bad_options_are_one_line_exit_2(argv, words, tmp_path, capsys):
    assert run(*argv, "--out", str(tmp_path)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0]


def test_word_lists_hold_only_strings():
    """YAML reads a bare ``on``/``no``/``yes`` as a boolean: every phrase in the lists must stay a string."""
    import yaml

    root = Path(__file__).resolve().parents[3] / "templates" / "reefknot"

    def walk(value, where):
        if isinstance(value, dict):
            for k, v in value.items():
                assert isinstance(k, str), f"{where}: key {k!r}"
                walk(v, f"{where}.{k}")
        elif isinstance(value, list):
            for v in value:
                assert isinstance(v, (str, dict, list)), f"{where}: item {v!r}"
                walk(v, where)

    for path in sorted(root.glob("*.yaml")):
        walk(yaml.safe_load(path.read_text()), path.name)


def test_svg_scene_graphs_build(tmp_path):
    """SVG files hold spatial relations only: perception is built, cognition is reported short."""
    from tests.fixtures.real_formats import make_svg

    fx = make_svg(tmp_path / "svg")
    assert (
        run(
            "--svg",
            str(fx.annotations),
            "--svg-images",
            str(fx.images_dir),
            "--out",
            str(tmp_path / "out"),
            "--min-area",
            "0",
            *FIXTURE_OPTIONS,
        )
        == 0
    )
    build = json.loads((tmp_path / "out" / "svg-seed0" / "build.json").read_text())
    q = build["stats"]["quality"]
    assert q["yes_no_balance"]["perception"]["yes"] == q["yes_no_balance"]["perception"]["no"] > 0
    assert q["two_answers"] == q["duplicate_questions"] == q["agreement_faults"] == 0
    assert {s["set"] for s in build["skipped"] if s["category"] == "cognition"} == {"yes_no", "mcq", "vqa"}
    assert all(s["made"] == 0 for s in build["skipped"] if s["category"] == "cognition")


def test_categories_from_an_llm_with_the_paper_prompt(tmp_path, monkeypatch):
    """With --llm-model every relation is put to the LLM with the A.5 prompt; an unusable answer falls back to the
    offline rule; provenance names the deciding method; answers are cached (a rerun asks nothing)."""
    require(have("openai"), "openai (the llm extra)", "pip install -e '.[llm]'")
    from tests.support.openai_stub import StubOpenAI

    asked: list[str] = []

    def responder(body):
        prompt = body["messages"][-1]["content"]
        assert "relation term classification assistant" in prompt and "Input: on -> Perception" in prompt
        phrase = prompt.rsplit("Input: ", 1)[1].strip()
        asked.append(phrase)
        if phrase == "carrying":
            return "I am not sure."
        return "Cognition" if phrase.startswith(("pointing", "surround", "covering", "hiding", "standing")) else "Perception"

    monkeypatch.setenv("OPENAI_API_KEY", "test")
    with StubOpenAI(responder=responder) as stub:
        args = (
            "--demo-images",
            "30",
            "--out",
            str(tmp_path / "out"),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--llm-model",
            "stub-model",
            "--llm-base-url",
            stub.base_url,
        )
        assert run(*args) == 0
        items = read_items(tmp_path / "out" / "demo-seed0" / "items.jsonl")
        methods = {it["provenance"]["triplet"]["relation"]: it["provenance"]["category_method"] for it in items}
        assert methods.pop("carrying") == "override (llm answer unusable)"
        assert set(methods.values()) == {"llm:stub-model"}
        n = len(asked)
        assert run(*args) == 0 and len(asked) == n  # cached


def test_visual_genome_v1_0_merges_an_object_written_under_new_ids(tmp_path):
    """Issue 38: v1.0 gives the same object a new id in every relationship; merged by id only, every object of
    two relationships looked like two instances and the several-instances rule dropped nearly everything."""
    vg = make_vg(tmp_path / "vg", "1.0")
    assert run("--vg-relationships", str(vg["relationships"]), "--vg-images", str(vg["images"]), "--vg-image-data",
               str(vg["image_data"]), "--out", str(tmp_path / "out"), *FIXTURE_OPTIONS) == 0
    stats = json.loads((tmp_path / "out" / "visual_genome-seed0" / "build.json").read_text())["stats"]
    relations = sum(len(scene) for scene in SCENES)
    repeats = sum(2 * len(scene) - len({n for s, _, o in scene for n in (s, o)}) for scene in SCENES)
    assert stats["read"]["objects_merged_by_box"] == repeats > 0
    dropped = stats["phases"]["b_filtering"]["dropped"]
    assert not any(reason.startswith("several instances") for reason in dropped)
    assert stats["phases"]["b_filtering"]["in"] == relations


def test_an_empty_build_names_the_filter_counts(tmp_path, capsys):
    """The error used to say "see the filters" with no build.json to see them in: it now carries the counts."""
    vg = make_vg(tmp_path / "vg", "1.2")
    code = run("--vg-relationships", str(vg["relationships"]), "--vg-images", str(vg["images"]), "--vg-image-data",
               str(vg["image_data"]), "--out", str(tmp_path / "out"), "--min-name-count", "1000")
    err = capsys.readouterr().err.strip().splitlines()
    relations = sum(len(scene) for scene in SCENES)
    assert code == 2 and len(err) == 1, err
    assert f"of {relations} relationships in {len(SCENES)} images, 0 triplets passed the filters" in err[0]
    assert "(dropped: rare name" in err[0]
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_too_few_triplets_for_the_counts_says_so(tmp_path, capsys):
    vg = make_vg(tmp_path / "vg", "1.2")
    def one_relationship(data: list) -> None:
        del data[1:]
        data[0]["relationships"] = data[0]["relationships"][:1]

    _edit(vg["relationships"], one_relationship)
    code = run("--vg-relationships", str(vg["relationships"]), "--vg-images", str(vg["images"]), "--vg-image-data",
               str(vg["image_data"]), "--out", str(tmp_path / "out"), *FIXTURE_OPTIONS)
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert "of 1 relationship in 1 image, 1 triplet passed the filters (dropped: none)" in err[0]
    assert "too few to keep the asked counts in proportion" in err[0]


def _vg_args(vg: dict[str, Path], out: Path, image_data: bool = True) -> list[str]:
    return ["--vg-relationships", str(vg["relationships"]), "--vg-images", str(vg["images"]),
            *(["--vg-image-data", str(vg["image_data"])] if image_data else []), "--vg-objects", str(vg["objects"]),
            "--out", str(out), *FIXTURE_OPTIONS]


@pytest.mark.parametrize("image_data", [True, False], ids=["sizes from image_data", "sizes from headers"])
def test_missing_images_are_skipped_and_listed(image_data, tmp_path):
    """Issue 38: the builder stopped at the first of the 108,077 VG images a partial download lacks. By default
    such images are left out; build.json lists them and the items are those a source without them gives."""
    vg = make_vg(tmp_path / "vg", "1.4")
    (vg["images"] / "VG_100K" / "1.jpg").unlink()
    (vg["images"] / "VG_100K_2" / "4.jpg").unlink()
    assert run(*_vg_args(vg, tmp_path / "out", image_data)) == 0
    build = tmp_path / "out" / "visual_genome-seed0"
    stats = json.loads((build / "build.json").read_text())["stats"]
    images = stats["images"]
    assert (images["on_missing_image"], images["not_found"], sorted(images["image_ids"])) == ("skip", 2, ["1", "4"])
    items = read_items(build / "items.jsonl")
    assert items and {it["provenance"]["image_id"] for it in items}.isdisjoint({"1", "4"})
    assert all((build / it["images"][0]).is_file() for it in items)  # relative to the build folder
    assert Checker(vg["relationships"], vg["image_data"], vg["objects"]).check(items) == []
    b = stats["phases"]["b_filtering"]
    assert b["kept"] + sum(b["dropped"].values()) == b["in"]
    if image_data:  # the language prior still counts their annotations; their triplets are a filter drop
        assert b["dropped"]["image file not found (--on-missing-image skip)"] == images["triplets_dropped"] > 0
    else:  # without sizes an image cannot be read at all
        assert images["relationships_not_read"] == 6 and stats["read"]["images"] == 10


@pytest.mark.parametrize("image_data", [True, False], ids=["sizes from image_data", "sizes from headers"])
def test_missing_image_fails_in_one_line_on_request(image_data, tmp_path, capsys):
    vg = make_vg(tmp_path / "vg", "1.4")
    (vg["images"] / "VG_100K" / "1.jpg").unlink()
    assert run(*_vg_args(vg, tmp_path / "out", image_data), "--on-missing-image", "fail") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "image file not found" in err[0] and str(vg["images"] / "1.jpg") in err[0], err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


DIRECTIONS = ("left of", "right of", "above", "below")


def test_checker_catches_a_planted_diagonal_pair_and_a_second_true_direction(demo_build, demo_checker):
    """Issue 53: a direction is asked only where the boxes show it. Moving the subject of a "left of"/"above" item
    off its axis (diagonal) makes the question invalid; offering, in an MCQ, the direction the boxes show besides
    the answer gives it two true options; a "no" asked of the direction the boxes show is wrong."""
    items = read_items(demo_build / "items.jsonl")
    yes = next(it for it in items if it["question_type"] == "yes_no" and it["answer"] == "yes"
               and it["provenance"]["asked_relation"] in DIRECTIONS)
    image = demo_checker.images[Path(yes["images"][0]).name]
    subject = yes["provenance"]["subject_id"]
    name, (x, y, w, h) = image["objects"][subject]
    ox, oy, ow, oh = yes["provenance"]["object_box"]
    dx = ow + w if yes["provenance"]["asked_relation"] in ("above", "below") else 0
    dy = oh + h if dx == 0 else 0
    image["objects"][subject] = (name, (x + dx, y + dy, w, h))  # off the axis: apart both ways
    try:
        assert [bad[0] for bad in demo_checker.check([yes])] == [yes["id"]]
        assert "no clear direction" in demo_checker.check([yes])[0][2]
    finally:
        image["objects"][subject] = (name, (x, y, w, h))
    assert demo_checker.check([yes]) == []
    mcq = next(it for it in items if it["question_type"] == "mcq" and it["task"] == "perception"
               and it["options"]["ABCD".index(it["answer"])] not in DIRECTIONS
               and any(o in DIRECTIONS for o in it["options"]))
    sbox, obox = mcq["provenance"]["subject_box"], mcq["provenance"]["object_box"]
    shown = next(d for d in DIRECTIONS if d not in mcq["options"]
                 and demo_checker.false_in_image(d, set(), sbox, obox) is False)
    wrong = next(k for k, o in enumerate(mcq["options"]) if o in DIRECTIONS)
    planted = {**mcq, "options": [*mcq["options"][:wrong], shown, *mcq["options"][wrong + 1:]]}
    found = demo_checker.check([planted])
    assert found and ("true options" in found[0][2] or "not provably false" in found[0][2])
    no = next(it for it in items if it["question_type"] == "yes_no" and it["answer"] == "no"
              and it["provenance"]["asked_relation"] in DIRECTIONS)
    asked = no["provenance"]["asked_relation"]
    truth = next(d for d in DIRECTIONS if demo_checker.true_in_image(
        d, set(), no["provenance"]["subject_box"], no["provenance"]["object_box"]))
    said = {**no, "question": no["question"].replace(f" {asked} ", f" {truth} ", 1)}
    assert demo_checker.check([said]) == [(no["id"], "no", "yes")]


def test_every_direction_of_a_demo_build_is_clear_by_its_boxes(demo_build):
    """The build's own record agrees: no directional gold on a diagonal pair (the checker re-derives it above)."""
    items = read_items(demo_build / "items.jsonl")
    stats = json.loads((demo_build / "build.json").read_text())["stats"]
    assert stats["phases"]["b_filtering"]["dropped"]["direction not clear by the boxes (diagonal or overlapping)"] > 0
    assert any(it["provenance"]["triplet"]["relation"] in DIRECTIONS for it in items)


@pytest.mark.parametrize("image_data", [True, False])
def test_visual_genome_v1_0_as_the_real_file_writes_it(image_data, tmp_path):
    """Issue 53: v1.0's predicates ("is ON the", "is is left of the the", "are riding") reach no question and take
    their category from the bare relation; images whose URL says img_<id>.jpg are found as <id>.jpg."""
    vg = make_vg(tmp_path / "vg", "1.0", raw=True)
    args = ["--vg-relationships", str(vg["relationships"]), "--vg-images", str(vg["images"]),
            "--on-missing-image", "fail", "--out", str(tmp_path / "out"), *FIXTURE_OPTIONS]
    if image_data:
        args += ["--vg-image-data", str(vg["image_data"])]
    assert run(*args) == 0
    build = tmp_path / "out" / "visual_genome-seed0"
    items = read_items(build / "items.jsonl")
    checker = Checker(vg["relationships"], vg["image_data"] if image_data else None)
    assert items and checker.check(items) == []
    bare = {p.strip().lower() for scene in SCENES for _, p, _ in scene}
    assert {it["provenance"]["triplet"]["relation"] for it in items} <= bare
    for it in items:
        text = " ".join([it["question"], *it["options"], it["answer"]]).lower()
        assert " is is " not in text and " the the " not in text and " is on the in " not in text, it["question"]
        relation = it["provenance"]["triplet"]["relation"]
        assert it["task"] == ("cognition" if relation.split()[0].endswith("ing") else "perception"), relation
    stats = json.loads((build / "build.json").read_text())["stats"]
    assert stats["images"]["not_found"] == 0 if image_data else stats["read"]["images_without_file"] == 0
    assert stats["phases"]["e_questions"]["wording_lint"]["items_dropped"] == 0


def test_no_item_the_wording_lint_flags_is_written():
    """A flagged question goes, and its Y/N partner with it (yes and no stay 1:1); counted for build.json."""
    from builders.items import make_item
    from builders.reefknot.builder import without_wording_faults

    def yes_no(question: str, answer: str, relation: str) -> object:
        return make_item(benchmark="reefknot", task="perception", question_type="yes_no", pressure="none",
                         images=["1.jpg"], question=question, options=(), answer=answer,
                         provenance={"image_id": "1", "triplet": {"subject": "cd", "relation": relation,
                                                                  "object": "cd case"}})

    items = [yes_no("Is the cd in the cd case in this photo?", "yes", "in"),
             yes_no("Is the cd is on the the cd case in this photo?", "no", "in"),
             make_item(benchmark="reefknot", task="perception", question_type="yes_no", pressure="none",
                       images=["2.jpg"], question="Is the cup on the table in this photo?", options=(), answer="yes",
                       provenance={"image_id": "2", "triplet": {"subject": "cup", "relation": "on",
                                                                "object": "table"}})]
    kept, counts = without_wording_faults(items)
    assert kept == items[2:]
    assert counts["items_flagged"] == 1 and counts["items_dropped"] == 2 and counts["faults"]["doubled"] >= 1


def test_a_scene_graph_gives_no_no_to_a_relation_it_merely_does_not_annotate(tmp_path):
    """Issue 53: on Visual Genome a cognitive relation absent from the graph may still hold in the picture: it may be
    an MCQ distractor, never the "no" of a Y/N pair; the checker rejects such a "no"."""
    vg = make_vg(tmp_path / "vg", "1.4")
    assert run("--vg-relationships", str(vg["relationships"]), "--vg-images", str(vg["images"]), "--vg-image-data",
               str(vg["image_data"]), "--vg-objects", str(vg["objects"]), "--out", str(tmp_path / "out"),
               *FIXTURE_OPTIONS) == 0
    items = read_items(tmp_path / "out" / "visual_genome-seed0" / "items.jsonl")
    nos = [it for it in items if it["question_type"] == "yes_no" and it["answer"] == "no"]
    assert nos and all(it["provenance"]["negative"]["rule"].startswith("boxes:") for it in nos)  # "sitting on" too
    assert any(it["question_type"] == "mcq" and it["task"] == "cognition" for it in items)
    yes = next(it for it in items if it["question_type"] == "yes_no" and it["answer"] == "yes")
    relation = yes["provenance"]["asked_relation"]
    unannotated = next(r for r in ("watching", "feeding", "chasing", "holding")
                       if r not in yes["provenance"]["annotated_relations"])
    planted = {**yes, "answer": "no", "question": yes["question"].replace(f" {relation} ", f" {unannotated} ", 1)}
    checker = Checker(vg["relationships"], vg["image_data"], vg["objects"])
    assert checker.check([yes]) == []
    assert "merely does not annotate" in checker.check([planted])[0][2]
