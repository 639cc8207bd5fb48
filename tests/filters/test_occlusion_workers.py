"""Occlusion measured in forked workers (:mod:`filters.occlusion_workers`) equals what the caller measures itself,
chunk by chunk, on polygon, RLE and crowd masks (COCO format) and on exact amodal areas (the demo world)."""

from __future__ import annotations

import numpy as np
import pytest

from filters import occlusion_workers
from filters.base import FilterStats
from filters.geometry import classify_images, occlusions_of
from sources import forking
from sources.forking import fork_affordable, usable_cores
from tests.fixtures.real_formats import make_coco


@pytest.fixture(scope="module")
def image_sets(tmp_path_factory):
    from sources.coco import read_coco
    from sources.demo import load_demo

    coco = make_coco(tmp_path_factory.mktemp("coco"))
    demo = load_demo(seed=0, n_images=60, cache_dir=tmp_path_factory.mktemp("cache"))
    return {"coco": read_coco(coco.annotations, coco.images_dir).images, "demo": demo.images}


def same(a, b) -> bool:
    return len(a) == len(b) and all(np.array_equal(x[0], y[0]) and list(x[1]) == list(y[1]) for x, y in zip(a, b))


@pytest.mark.parametrize("name", ["coco", "demo"])
def test_workers_measure_what_the_caller_would(image_sets, name):
    if usable_cores() < 2 or not fork_affordable(2):
        pytest.skip("needs two cores and the memory to fork")
    images = image_sets[name]
    chunk = 5
    ahead = list(occlusion_workers.occlusions_ahead(images, chunk, min_instances=0))
    assert all(part is not None for part in ahead)  # the workers ran
    for k, part in enumerate(ahead):
        mine = occlusions_of(images[k * chunk:(k + 1) * chunk])
        assert same(part, mine), k
    methods = {m for part in ahead for _, ms in part for m in ms}
    assert methods >= ({"mask_proxy"} if name == "coco" else {"amodal"})
    if name == "demo":  # objects drawn over each other: occlusions that are not all zero are compared
        assert any((occ > 0).any() for part in ahead for occ, _ in part)


def test_small_sources_are_measured_by_the_caller(image_sets):
    images = image_sets["coco"]
    assert list(occlusion_workers.occlusions_ahead(images, 5)) == [None, None, None]  # 12 images, few instances


def test_a_process_given_one_core_measures_in_itself(image_sets, monkeypatch):
    """A source's child given a share of one core (the sources outnumber the cores) starts no workers, however
    many cores the machine has."""
    monkeypatch.setattr(forking.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.setattr(forking, "_SHARE", None)
    assert forking.usable_cores() == 4
    forking.share_cores(1)
    assert forking.usable_cores() == 1
    assert list(occlusion_workers.occlusions_ahead(image_sets["coco"], 5, min_instances=0)) == [None, None, None]


def test_labels_from_given_occlusions_equal_labels_measured_inline(image_sets):
    images = image_sets["coco"]
    given, inline = FilterStats(), FilterStats()
    a = classify_images(images, stats=given, occlusions=occlusions_of(images))
    b = classify_images(images, stats=inline)
    assert a == b and given == inline


def test_a_wrong_occlusion_changes_the_labels(image_sets):
    """The comparison above can fail: occlusions that are not the images' own give other labels."""
    images = image_sets["coco"]
    wrong = [(np.ones_like(occ), methods) for occ, methods in occlusions_of(images)]
    assert classify_images(images, occlusions=wrong) != classify_images(images)
