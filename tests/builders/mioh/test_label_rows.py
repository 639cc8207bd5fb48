"""Label rows (:mod:`builders.mioh.label_rows`) say, probe by probe, what :meth:`Pools.label` says.

Every image and every probe of every task, on the sources whose rules differ: the demo world (exhaustive, relations
exhaustive, with and without CLIP signals), a federated PACO file (attribute refusals), and SVG scene graphs with and
without verified absences (relations not exhaustive).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from builders import mioh
from builders.mioh.clip import compute_signals
from builders.mioh.label_rows import LabelRows
from builders.mioh.labels import UNDECIDED, label_code
from builders.mioh.pools import Pools
from filters.base import FilterStats
from tests.fixtures.real_formats import make_coco_for_svg, make_paco, make_svg

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def disagreements(pools: Pools, task: str) -> list[tuple[int, object, int, int]]:
    """(image, probe, row code, label code) wherever the row and the label decided from the image's facts
    (:meth:`Pools.label_from_facts`) differ."""
    rows = LabelRows(pools)
    probes = pools.probes(task)
    out = []
    for img in range(len(pools.facts)):
        row = rows.row(task, img)
        assert row.shape == (len(probes),) and row.dtype == np.int8
        for k, probe in enumerate(probes):
            expected = label_code(pools.label_from_facts(task, img, probe))
            if row[k] != expected:
                out.append((img, probe, int(row[k]), expected))
    return out + column_disagreements(rows, task)


def column_disagreements(rows: LabelRows, task: str) -> list[tuple[int, object, int, int]]:
    """(image, probe, code asked by column, code of the whole row) wherever rows asked for a random third of the
    probes, in random order (as :meth:`Sampler._distractors` asks for them), differ from the whole rows."""
    probes = rows.pools.probes(task)
    columns = np.random.default_rng(0).permutation(len(probes))[: max(1, len(probes) // 3)]
    images = range(len(rows.pools.facts))
    whole, stacked = rows.stack(task, images), rows.stack(task, images, columns)
    one_by_one = np.stack([rows.row(task, img, columns) for img in images])
    assert stacked.shape == one_by_one.shape == (len(images), len(columns))
    return [(img, probes[c], int(asked[img, j]), int(whole[img, c]))
            for asked in (stacked, one_by_one) for img in images for j, c in enumerate(columns.tolist())
            if asked[img, j] != whole[img, c]]


def pool_of(records, exhaustive_relations: bool, clip=None) -> Pools:
    config = mioh.MiohConfig().pool_config(exhaustive_relations=exhaustive_relations)
    return Pools(records, config, FilterStats(), clip=clip)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from sources.demo import load_demo

    return load_demo(seed=0, n_images=120, cache_dir=tmp_path_factory.mktemp("cache"))


class SpreadScorer:
    """CLIP similarities with a spread (so z-scores exist and some pairs are abnormal), fixed by the file name."""

    def similarity(self, image_paths, prompts) -> np.ndarray:
        seeds = [sum(Path(p).name.encode()) for p in image_paths]
        return np.array([[((s * 7919 + j * 104729) % 1000) / 1000 for j in range(len(prompts))] for s in seeds],
                        dtype=np.float32)


@pytest.mark.parametrize("task", ["existence", "attribute", "position"])
def test_demo_rows_match_every_label(demo, task):
    assert disagreements(pool_of(demo, exhaustive_relations=True), task) == []


@pytest.mark.parametrize("task", ["existence", "attribute"])
def test_demo_rows_match_every_label_with_clip_signals(demo, task):
    pools = pool_of(demo, True, clip=lambda inc: compute_signals(SpreadScorer(), demo, inc, -1.0, 1.0,
                                                                 with_attributes=True))
    assert pools.clip is not None and (pools.absent_hard & ~pools.hard_negative).any()  # CLIP made some hard
    assert disagreements(pools, task) == []


def test_federated_rows_match_every_label(tmp_path):
    from sources.absence import verify_absence
    from sources.paco import read_paco
    from sources.svg import read_svg

    paco, svg, coco = make_paco(tmp_path / "paco"), make_svg(tmp_path / "svg"), make_coco_for_svg(tmp_path / "coco")
    attribute = pool_of(read_paco(paco.annotations, paco.images_dir), False)
    assert disagreements(attribute, "attribute") == []
    every = LabelRows(attribute).stack("attribute", range(len(attribute.facts)))
    assert (every == UNDECIDED).any() and (every >= 0).any()  # the fixture has refusals to get right
    records = read_svg(svg.annotations, svg.images_dir)
    for recs in (records, verify_absence(records, coco.annotations)[0]):
        assert disagreements(pool_of(recs, False), "position") == []


def test_counting_has_no_rows(demo):
    with pytest.raises(ValueError, match="no label rows for 'counting'"):
        LabelRows(pool_of(demo, True)).row("counting", 0)


def test_a_wrong_column_is_caught(tmp_path, monkeypatch):
    """The column comparison can fail: scene-graph rows asked by column that put a triple's own label in the
    wrong column."""
    from sources.svg import read_svg

    svg = make_svg(tmp_path / "svg")
    rows = LabelRows(pool_of(read_svg(svg.annotations, svg.images_dir), False))
    assert column_disagreements(rows, "position") == []
    among = rows._positions_among
    monkeypatch.setattr(rows, "_positions_among", lambda columns: np.roll(among(columns), 1))
    assert column_disagreements(rows, "position") != []


def test_a_wrong_row_is_caught(demo, monkeypatch):
    """The comparison can fail: rows that forget the hard negatives disagree with the labels."""
    pools = pool_of(demo, True)
    assert pools.hard_negative.any()  # co-occurrence hard negatives, which the label keeps
    monkeypatch.setattr(pools, "absent_hard", np.zeros_like(pools.absent_hard))
    found = disagreements(pools, "existence")
    assert found and all(row == 0 and label == 1 for _, _, row, label in found)
