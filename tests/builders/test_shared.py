"""The pieces every builder shares: items, balanced positions, the quality report, atomic build dirs, seeding."""

from __future__ import annotations

import json
from collections import Counter
from typing import ClassVar

import numpy as np
import pytest

from builders.items import Item, item_id, make_item, read_items, write_items
from builders.mcq import BalancedCycle, ShareSchedule
from builders.quality import answer_balance, blind_baselines, chi_square, nota_share
from builders.run import open_build
from builders.seeding import rng


def mcq(answer: str, options=("a", "bb", "ccc", "None of the above"), slots: int = 3) -> Item:
    return make_item(benchmark="t", task="x", question_type="q", pressure="easy", images=["i.png"],
                     question=f"q{answer}{options}", options=options, answer=answer,
                     provenance={"answer_slots": slots})


@pytest.mark.parametrize("path", ["a/b.jpg", "/x/y/z.png", "b.jpg", "a//b.jpg", "a/./b.jpg", "images/x y.jpg",
                                  "a/b/", "a/b/.", "a/b/..", "", ".", "/", "a\\b.jpg"])
def test_image_names_are_what_pathlib_says(path):
    """Item ids hash image names: the remembered shortcut must name every path as ``Path(path).name`` does."""
    from pathlib import Path

    from builders.items import image_name

    image_name.cache_clear()
    assert image_name(path) == Path(path).name


def test_item_id_depends_on_what_the_model_sees_not_where_images_live():
    a = item_id("mioh", "existence", ["/a/x.png"], "Q?", ["A", "B"])
    assert a == item_id("mioh", "existence", ["/elsewhere/x.png"], "Q?", ["A", "B"])
    assert a != item_id("mioh", "existence", ["/a/x.png"], "Q?", ["B", "A"])
    assert a != item_id("mioh", "existence", ["/a/x.png"], "Q?", ["A", "B"], context="I think...")


def test_items_round_trip_sorted_and_canonical(tmp_path):
    items = [mcq("B"), mcq("A")]
    write_items(tmp_path / "items.jsonl", items)
    lines = (tmp_path / "items.jsonl").read_text().splitlines()
    assert [json.loads(l)["id"] for l in lines] == sorted(it.id for it in items)
    assert sorted(read_items(tmp_path / "items.jsonl"), key=lambda i: i.id) == sorted(items, key=lambda i: i.id)
    assert mcq("C").answer_text == "ccc"


def test_an_items_json_is_made_once_and_travels_with_it():
    """The text a worker process made is the one the build's process writes (pickled with the item); an item
    made from another (``replace``) makes its own, and equal items have equal text either way."""
    import pickle
    from dataclasses import replace

    from builders.items import canonical_json

    item = mcq("A")
    text = item.to_json()
    assert text == canonical_json(json.loads(text)) and item.to_json() is text
    moved = pickle.loads(pickle.dumps(item))
    assert moved.__dict__.get("_json") == text and moved.to_json() == text and moved == item  # not made again
    other = replace(item, answer="B")
    assert json.loads(other.to_json())["answer"] == "B" and json.loads(item.to_json())["answer"] == "A"


@pytest.mark.parametrize("context", ["", 'says "images":["/a/x.png"] here', "é \u2028 \\ \n"])
def test_an_item_moved_to_other_image_paths_keeps_its_text_right(context):
    """``with_images`` rewrites the text a worker made; it must equal the text made afresh, even where the context
    or the provenance spell the images array too."""
    from dataclasses import replace

    item = make_item(benchmark="t", task="x", question_type="q", pressure="easy", images=["/a/x.png", "/b/é y.png"],
                     question="q?", options=("a", "b"), answer="A", context=context,
                     provenance={"images": ["/a/x.png", "/b/é y.png"], "note": '"images":["/a/x.png","/b/é y.png"]'})
    item.to_json()
    moved = item.with_images(["../a/x.png", "../../b/é y.png"])
    assert moved.__dict__.get("_json") is not None  # kept, not made again
    assert moved.to_json() == replace(item, images=("../a/x.png", "../../b/é y.png")).to_json()
    assert moved.id == item.id and json.loads(moved.to_json())["provenance"] == item.provenance


@pytest.mark.parametrize("path", ["/w/b/img.png", "/w/img.png", "/x.png", "/w/b/c/d.png", "/w/../w/b/i.png",
                                  "/w//b/i.png", "/w/b/", "/w/b/..", "/w/b/.", "/a b/é.png"])
def test_relative_image_paths_are_what_relpath_says(path):
    import os
    from pathlib import Path

    from builders.run import _relative_path

    for base in ("/w/b", "/", "/w", "/q/r"):
        assert _relative_path(path, base) == Path(os.path.relpath(path, base)).as_posix()


def test_balanced_cycle_is_exactly_uniform_per_block_and_seeded():
    cycle = BalancedCycle(range(5), rng(0, "t"))
    draws = [cycle.next() for _ in range(50)]
    assert Counter(draws) == {k: 10 for k in range(5)}
    again = BalancedCycle(range(5), rng(0, "t"))
    assert [again.next() for _ in range(50)] == draws
    other = BalancedCycle(range(5), rng(0, "u"))
    assert [other.next() for _ in range(50)] != draws


@pytest.mark.parametrize("share, n, expected", [(0.2, 10, 2), (0.2, 100, 20), (0.0, 30, 0), (0.5, 7, 4)])
def test_share_schedule_hits_the_share(share, n, expected):
    s = ShareSchedule(share)
    assert sum(s.next() for _ in range(n)) == expected


def test_chi_square_matches_tables_and_the_library():
    """scipy's documented example (a fair die: statistic 2.0, p 0.8491), the chi-square distribution's tail,
    and the edge cases the callers rely on."""
    from scipy.stats import chi2, chisquare

    die = chi_square([16, 18, 16, 14, 12, 12], [88 / 6] * 6)
    assert (die.chi2, die.dof) == (pytest.approx(2.0), 5) and die.p_value == pytest.approx(0.84914503608460956)
    assert chi_square([60, 40], [50, 50]).p_value == pytest.approx(chi2.sf(4.0, 1))
    assert chi_square([20, 0], [20, 0]) == (0.0, 0, 1.0)  # one category left: nothing to test
    assert chi_square([0, 0, 0], [0, 0, 0]) == (0.0, 0, 1.0)
    assert chi_square([5, 3, 0], [8, 0, 0]).chi2 == float("inf")  # observed where none was expected
    assert chi_square([5, 5, 0], [5, 5, 0]) == (0.0, 1, 1.0)  # a category that cannot occur is left out
    draws = np.random.default_rng(7)
    for n in (2, 3, 5, 8, 13, 26):  # the letters of any item, bit for bit what scipy.stats.chisquare says
        observed = draws.integers(0, 40, size=n)
        expected = np.full(n, observed.sum() / n)
        library = chisquare(observed, expected)
        assert chi_square(observed.tolist(), expected.tolist())[::2] == (library.statistic, library.pvalue)


def test_quality_report_sees_a_biased_benchmark():
    biased = [mcq("A") for _ in range(30)] + [mcq("D") for _ in range(10)]
    balance = answer_balance(biased)
    assert balance["observed"] == {"A": 30, "B": 0, "C": 0}
    assert balance["p_value"] < 0.001
    assert nota_share(biased)["share"] == 0.25
    base = blind_baselines(biased)
    assert base["always_A"] == 0.75 and base["chance"] == 0.25
    fair = [mcq(l) for l in "ABC" * 10]
    assert answer_balance(fair)["p_value"] > 0.99
    assert blind_baselines(fair)["longest_option"] == 0.0  # "None of the above" is the longest, never right here
    assert base["longest_option"] == 0.25


def test_open_build_is_atomic(tmp_path):
    with open_build(tmp_path, "b") as out:
        (out.path / "items.jsonl").write_text("one\n")
        assert not (tmp_path / "b").exists()
    assert (tmp_path / "b" / "items.jsonl").read_text() == "one\n"
    with pytest.raises(ValueError):
        with open_build(tmp_path, "b") as out:
            (out.path / "items.jsonl").write_text("two\n")
            raise ValueError("crash")
    assert (tmp_path / "b" / "items.jsonl").read_text() == "one\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]
    with open_build(tmp_path, "b") as out:
        (out.path / "items.jsonl").write_text("three\n")
    assert (tmp_path / "b" / "items.jsonl").read_text() == "three\n"


def test_build_options_are_parsed_into_the_config(tmp_path):
    """The shared --seed/--out/--name/--cache-dir/--no-progress and a builder's own options reach the config
    alike: flags over the config file over the dataclass defaults, help made from the declarations."""
    from dataclasses import dataclass

    from builders.cli import builder_parser, parse_config
    from builders.options import BuildOptions
    from commandline.options import option

    @dataclass
    class Config(BuildOptions):
        OPTION_HELP: ClassVar[dict[str, str]] = {"seed_of": "everything", "build_name": "x-seed<S>",
                                                 "cache_of": "nothing"}
        out: str = "builds/x"
        demo_images: int = option(7, metavar="N", help="demo size (default {default})")

    p = builder_parser("x", "a test builder", Config)
    text = " ".join(p.format_help().split())
    assert "--demo-images N demo size (default 7)" in text and "(default builds/x)" in text
    assert "seed of everything (default 0)" in text and "--llm-model NAME" in text
    config_file = tmp_path / "c.yaml"
    config_file.write_text("seed: 3\ndemo_images: 5\n")
    config = parse_config(Config, p, ["--config", str(config_file), "--demo-images", "9", "--no-progress"])
    assert (config.seed, config.demo_images, config.progress, config.out) == (3, 9, False, "builds/x")
    assert p.prog == "python -m builders.x"


def test_write_items_build_copies_generated_images_and_writes_the_record(tmp_path):
    from dataclasses import dataclass

    from builders.options import BuildOptions
    from builders.run import write_items_build

    @dataclass
    class Config(BuildOptions):
        out: str = str(tmp_path / "builds")

        def build_name(self) -> str:
            return "b"

    picture = tmp_path / "scene.png"
    picture.write_bytes(b"png")
    item = make_item(benchmark="x", task="t", question_type="q", pressure="easy", images=[str(picture)],
                     question="Q?", options=[], answer="yes")
    stats = {"input_hashes": {"a": "generated"}, "skipped": [], "n": 1}
    path, written = write_items_build(Config(), "x", [item], stats, [{"name": "demo", "path": ""}], localise=True,
                                      extra={"lint_promises": {"p": 1}})
    assert written[0].images == ("images/scene.png",) and (path / "images" / "scene.png").read_bytes() == b"png"
    record = json.loads((path / "build.json").read_text())
    assert record["stats"] == {"n": 1} and record["input_hashes"] == {"a": "generated"}
    assert record["lint_promises"] == {"p": 1} and record["items"] == 1 and record["name"] == "b"
