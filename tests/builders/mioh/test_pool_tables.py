"""The pools' decision tables (:meth:`Pools.prepare`) say what the per-pair decisions from the facts say.

Labels, image lists per probe and label, counts and refusal counts are read from tables filled once over every
image; here every image and probe is decided again one pair at a time from the image's facts
(:meth:`Pools.label_from_facts`, ``decide_*``) and compared, on the demo world (exhaustive, relations exhaustive) and on a federated PACO file
(attribute and counting refusals).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from builders import mioh
from builders.mioh.labels import POS_HARD, Label
from builders.mioh.pools import COUNT_REFUSED, NOT_EXHAUSTIVE, Pools, Refusal
from builders.mioh.refusals import refusal_counts
from filters.base import FilterStats
from tests.fixtures.real_formats import make_paco

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def pool_of(records, exhaustive_relations: bool) -> Pools:
    return Pools(records, mioh.MiohConfig().pool_config(exhaustive_relations=exhaustive_relations), FilterStats())


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Pools:
    from sources.demo import load_demo

    return pool_of(load_demo(seed=0, n_images=120, cache_dir=tmp_path_factory.mktemp("cache")), True)


@pytest.fixture(scope="module")
def paco(tmp_path_factory) -> Pools:
    from sources.paco import read_paco

    files = make_paco(tmp_path_factory.mktemp("paco"))
    return pool_of(read_paco(files.annotations, files.images_dir), False)


def label_disagreements(pools: Pools, task: str) -> list[tuple[int, object]]:
    """(image, probe) wherever the label read from the tables is not the one decided from the facts."""
    return [(img, probe) for probe in pools.probes(task) for img in range(len(pools.facts))
            if pools.label_uncached(task, img, probe) != pools.label_from_facts(task, img, probe)]


def list_disagreements(pools: Pools, task: str) -> list[tuple[object, str, bool]]:
    """(probe, status, hard) wherever :meth:`Pools.images` differs from labelling every image one by one."""
    out = []
    n = len(pools.facts)
    for probe in pools.probes(task):
        labels = [pools.label_from_facts(task, img, probe) for img in range(n)]
        for status in ("pos", "neg"):
            for hard in (False, True):
                expected = [img for img, lab in enumerate(labels)
                            if lab is not None and lab.status == status and lab.hard == hard]
                if pools.images(task, probe, status, hard).tolist() != expected:
                    out.append((probe, status, hard))
    return out


def pair_refusals(pools: Pools, task: str) -> Counter:
    """Refusals of every (image, probe) pair whose category the image shows, decided one pair at a time."""
    found: Counter = Counter()
    for img, facts in enumerate(pools.facts):
        for probe in pools.probes(task):
            category = probe[1] if task == "attribute" else probe  # type: ignore[index]
            if category not in facts.categories:
                continue
            decide = {"existence": pools.decide_existence, "counting": pools.decide_count,
                      "attribute": pools.decide_attribute}[task]
            result = decide(img, probe)  # type: ignore[arg-type]
            if isinstance(result, Refusal):
                found[result.reason] += 1
    return found


@pytest.mark.parametrize("task", ["existence", "counting", "attribute", "position"])
def test_tables_give_every_label_back(demo, paco, task):
    assert label_disagreements(demo, task) == []
    if task != "position":
        assert label_disagreements(paco, task) == []


def test_tables_give_clip_labels_back(tmp_path):
    from builders.mioh.clip import compute_signals
    from sources.demo import load_demo
    from tests.builders.mioh.test_label_rows import SpreadScorer

    records = load_demo(seed=0, n_images=60, cache_dir=tmp_path)
    config = mioh.MiohConfig().pool_config(exhaustive_relations=True)
    pools = Pools(records, config, FilterStats(), clip=lambda inc: compute_signals(
        SpreadScorer(), records, inc, -1.0, 1.0, with_attributes=True))
    for task in ("existence", "counting", "attribute"):
        labels = [pools.label_uncached(task, img, p) for p in pools.probes(task) for img in range(len(pools.facts))]
        assert any(lab is not None and lab.signal == "clip" for lab in labels), task  # CLIP decided some
        assert label_disagreements(pools, task) == [], task


@pytest.mark.parametrize("task", ["existence", "attribute", "position"])
def test_demo_image_lists_match_every_label(demo, task):
    """(Counting draws its images by count, :meth:`Pools.count_images`: see the counts test.)"""
    assert list_disagreements(demo, task) == []


@pytest.mark.parametrize("task", ["existence", "counting", "attribute"])
def test_federated_image_lists_and_refusals_match_every_pair(paco, task):
    if task != "counting":
        assert list_disagreements(paco, task) == []
    assert paco.shown_refusals(task) == dict(pair_refusals(paco, task))


def test_the_federated_fixture_has_refusals_to_get_right(paco):
    assert sum(pair_refusals(paco, "attribute").values()) and sum(pair_refusals(paco, "counting").values())


def test_counts_match_every_pair(demo, paco):
    for pools in (demo, paco):
        for category in pools.probes("counting"):
            expected: dict[int, list[int]] = {}
            for img in range(len(pools.facts)):
                n = pools.count(img, category)
                if n is not None:
                    expected.setdefault(n, []).append(img)
            assert {n: imgs for n, imgs in pools.count_images(category).items()} == expected, category
            for n, (easy, hard) in pools.count_split(category).items():
                labels = {img: pools.counting(img, category) for img in expected[n]}
                assert easy == [i for i, lab in labels.items() if not lab.hard]  # type: ignore[union-attr]
                assert hard == [i for i, lab in labels.items() if lab.hard]  # type: ignore[union-attr]


def test_a_wrong_label_in_a_table_is_caught(demo):
    """The label comparison can fail: a hard positive written back as an easy one disagrees."""
    pools = pool_of(demo.records, True)
    labels, _ = pools._category_table("existence")
    cell = tuple(int(x) for x in np.argwhere(labels.codes == POS_HARD)[0])
    labels.put(cell, Label("pos"))
    assert label_disagreements(pools, "existence") == [(cell[0], pools.categories[cell[1]])]


def test_a_wrong_table_entry_is_caught(paco):
    """The comparisons can fail: a count table that refuses one countable pair disagrees with the pairs."""
    pools = pool_of(paco.records, False)
    _, counts = pools._category_table("counting")
    img, c = map(int, np.argwhere(counts >= 0)[0])
    counts[img, c] = COUNT_REFUSED
    assert pools.shown_refusals("counting") != dict(pair_refusals(pools, "counting"))
    reported = refusal_counts(pools, "counting")["reasons"][NOT_EXHAUSTIVE]
    assert reported == pair_refusals(pools, "counting")[NOT_EXHAUSTIVE] + 1


def test_unverified_position_pairs_are_counted_pair_by_pair(tmp_path):
    """The position refusals build.json reports are the (image, triple) pairs where the subject or the object is
    missing and no missing one is verified absent, counted here one pair at a time."""
    from builders.mioh.pools import UNVERIFIED_ABSENCE
    from sources.absence import verify_absence
    from sources.svg import read_svg
    from tests.fixtures.real_formats import make_coco_for_svg, make_svg

    svg, coco = make_svg(tmp_path / "svg"), make_coco_for_svg(tmp_path / "coco")
    records = verify_absence(read_svg(svg.annotations, svg.images_dir), coco.annotations)[0]
    pools = pool_of(records, False)
    expected = 0
    for img in range(len(pools.facts)):
        for subject, _, obj in pools.probes("position"):
            missing = [c for c in (pools.category_index(subject), pools.category_index(obj))
                       if not pools.incidence[img, c]]
            if missing and not any(pools.verified_absent[img, c] for c in missing):
                expected += 1
    assert pools.verified_absent.any() and expected > 0  # both kinds of missing category occur
    assert refusal_counts(pools, "position")["reasons"][UNVERIFIED_ABSENCE] == expected
