"""What a viewer can tell: legibility of instances, decidable counts and absences, clear directions; and the demo
world's look-alike table re-measured from the outlines the renderer draws."""

from __future__ import annotations

from itertools import combinations

import pytest

from filters.geometry import InstanceGeometry
from filters.legibility import ImageReading, LegibilityRules, clear_direction, read_instance
from sources.demo import legibility as table
from sources.demo.world import CATEGORIES
from sources.records import ImageRecord, Instance

W, H = 640, 480
RULES = LegibilityRules.demo()


def shape(iid: str, category: str, side: float, visible: float = 1.0, box=(0, 0, 10, 10)) -> Instance:
    """An instance whose visible area is ``side**2`` px and whose whole area is ``side**2 / visible``."""
    return Instance(iid, category, box, side * side, amodal_area=side * side / visible)


def geometry(inst: Instance, method: str = "amodal", truncation: float = 0.0) -> InstanceGeometry:
    occlusion = 1 - inst.area / inst.amodal_area if inst.amodal_area else 0.0
    return InstanceGeometry(inst.id, inst.category, inst.area / (W * H), occlusion, truncation, method)  # type: ignore


def reading(*instances: Instance) -> ImageReading:
    image = ImageRecord("im", "demo", "im.png", W, H, instances=instances)
    return ImageReading(image, {i.id: geometry(i) for i in instances}, RULES)


def test_a_polygon_needs_nearly_all_of_its_outline_a_curved_shape_most_of_it():
    for category, fraction, legible in (("hexagon", 0.92, True), ("hexagon", 0.85, False), ("heart", 0.8, True),
                                        ("heart", 0.7, False)):
        r = read_instance(shape("a", category, 80, fraction), geometry(shape("a", category, 80, fraction)), W, H,
                          RULES)
        assert r.legible is legible, (category, fraction)
    hidden = shape("a", "hexagon", 80, 0.6)
    r = read_instance(hidden, geometry(hidden), W, H, RULES)
    assert r.could_be == {"circle", "octagon", "pentagon", "square", "triangle", "diamond", "trapezoid"}
    assert "visible" in r.reason


def test_a_polygon_with_a_corner_hidden_may_be_another_polygon():
    """A triangle with its apex behind another shape shows as a trapezoid (seen in a MIOH demo item whose
    gold said no trapezoid was there): no polygon is absent beside it, and it counts for none."""
    cut = reading(shape("a", "triangle", 90, 0.85), shape("b", "circle", 60))
    assert not cut.absent("trapezoid") and not cut.absent("square") and cut.absent("star")
    assert cut.count("triangle") is None
    whole = reading(shape("a", "triangle", 90), shape("b", "circle", 60))
    assert whole.absent("trapezoid") and whole.count("triangle") == 1


def test_a_small_octagon_could_be_a_circle_and_sizes_scale_with_the_image():
    small, large = shape("a", "octagon", 40), shape("b", "octagon", 50)
    assert read_instance(small, geometry(small), W, H, RULES).could_be == {"circle"}
    assert read_instance(large, geometry(large), W, H, RULES).legible
    twice = read_instance(small, geometry(small), 2 * W, 2 * H, RULES)  # 40 px of a 1280x960 image are 20 px
    assert twice.could_be == {"circle", "hexagon"}
    tiny = shape("c", "star", 12)
    assert read_instance(tiny, geometry(tiny), W, H, RULES).reason == "12 px < 16 px"


def test_a_frame_cut_measured_on_the_box_where_the_whole_area_is_unknown():
    cut = Instance("a", "dog", (0, 0, 50, 50), 2500.0)
    assert not read_instance(cut, geometry(cut, "mask_proxy", truncation=0.5), W, H, LegibilityRules()).legible
    assert read_instance(cut, geometry(cut, "mask_proxy", truncation=0.25), W, H, LegibilityRules()).legible


def test_counts_and_absences_only_where_a_viewer_can_be_sure():
    r = reading(shape("c1", "circle", 60), shape("c2", "circle", 60), shape("s", "star", 60))
    assert r.count("circle") == 2 and r.count("star") == 1 and r.absent("octagon") and not r.absent("star")
    r = reading(shape("c1", "circle", 60), shape("o", "octagon", 35), shape("h", "heart", 60, 0.5))
    assert r.count("circle") is None  # the small octagon may be counted as a circle
    assert r.count("octagon") is None and r.count("heart") is None
    assert not r.absent("circle") and r.absent("hexagon") and r.absent("star")
    assert reading(shape("c", "circle", 60), shape("o", "octagon", 60)).count("circle") == 1


@pytest.mark.parametrize("a, b, expected", [
    ((0, 100, 50, 50), (200, 110, 50, 50), "left of"),
    ((200, 110, 50, 50), (0, 100, 50, 50), "right of"),
    ((100, 0, 50, 50), (110, 200, 50, 50), "above"),
    ((110, 200, 50, 50), (100, 0, 50, 50), "below"),
    ((0, 0, 50, 50), (200, 200, 50, 50), None),  # apart on both axes: a diagonal
    ((0, 100, 50, 50), (200, 130, 50, 50), None),  # sharing 20 of 50 rows: higher and to the left
    ((0, 0, 60, 60), (40, 30, 60, 60), None),  # overlapping on both axes
])
def test_a_direction_holds_only_where_one_axis_clearly_dominates(a, b, expected):
    assert clear_direction(a, b) == expected


def test_the_lookalike_table_is_what_the_demo_outlines_measure():
    measured = {pair: table.lookalike_distance(*pair) for pair in combinations(sorted(CATEGORIES), 2)}
    close = {pair: d for pair, d in measured.items() if d < table.LOOKALIKE_CUTOFF}
    assert set(close) == set(table.LOOKALIKES)
    assert all(abs(close[pair] - table.LOOKALIKES[pair]) < 0.002 for pair in close), close
    assert table.lookalike_sizes()[frozenset(("circle", "octagon"))] == pytest.approx(48, abs=0.1)


def test_the_column_reading_agrees_with_read_instance_on_the_demo_world(tmp_path):
    """:func:`filters.legibility.read_columns` (MIOH's arrays) reads every demo instance as
    :func:`read_instance` does (MM-SAP's records): legible or not, and what it could be taken for."""
    import numpy as np

    from filters.geometry import measure_image
    from filters.legibility import read_columns
    from sources.demo import load_demo

    records = load_demo(seed=0, n_images=80, cache_dir=tmp_path)
    cats = list(records.categories)
    rows, want = [], []
    for im in records.images:
        geoms = measure_image(im)
        for inst in im.instances:
            g = geoms[inst.id]
            rows.append((cats.index(inst.category), inst.area, im.width, im.height, g.occlusion,
                         g.occlusion_method == "amodal", g.truncation))
            want.append(read_instance(inst, g, im.width, im.height, RULES))
    columns = [np.array(c) for c in zip(*rows)]
    legible, could_be = read_columns(cats, *columns, rules=RULES)
    assert legible.tolist() == [r.legible for r in want]
    assert [{cats[k] for k in np.flatnonzero(row)} for row in could_be] == [set(r.could_be) for r in want]
    assert 0 < legible.sum() < len(want)  # both kinds occur


def test_the_array_rules_agree_with_the_checkers_restatement():
    """clear_directions and next_to_states (the builders' one statement of each rule) say what the independent
    checkers' plain restatement (tests/builders/viewer.py) says, on random boxes where every outcome occurs."""
    import numpy as np

    from filters.legibility import DIRECTIONS, clear_directions, next_to_states
    from tests.builders import viewer

    rng = np.random.default_rng(0)
    a = rng.integers(0, 200, size=(2000, 4)).astype(float)
    b = rng.integers(0, 200, size=(2000, 4)).astype(float)
    a[:, 2:] += 1
    b[:, 2:] += 1
    pairs = [({"bbox": tuple(x)}, {"bbox": tuple(y)}) for x, y in zip(a.tolist(), b.tolist())]
    got = [DIRECTIONS[k] if k >= 0 else None for k in clear_directions(a, b)]
    want = [viewer.side(x, y) for x, y in pairs]
    assert got == want and len(set(want)) == 5  # all four directions and undecidable occur
    states = {1: True, 0: False, -1: None}
    got = [states[int(k)] for k in next_to_states(a, b)]
    want = [viewer.next_to(x, y) for x, y in pairs]
    assert got == want and len(set(want)) == 3


@pytest.mark.parametrize("b, expected", [
    ((60, 10, 50, 50), True),     # 10 px apart beside a 50 px wide box: a fifth of its width
    ((62, 10, 50, 50), True),     # 12 px: just under a quarter
    ((70, 10, 50, 50), None),     # 20 px: neither clearly next to nor clearly apart (issue 53's band)
    ((90, 10, 50, 50), None),     # 40 px
    ((100, 10, 50, 50), False),   # 50 px: apart by the narrower width
    ((40, 10, 50, 50), True),     # overlapping by 10 px: a fifth
    ((20, 10, 50, 50), None),     # overlapping by 30 px
    ((60, 40, 50, 50), None),     # beside but sharing only 20 of 50 rows
    ((0, 110, 50, 50), False),    # 60 px below
])
def test_next_to_has_a_margin_both_ways(b, expected):
    import numpy as np

    from filters.legibility import next_to_states

    state = int(next_to_states(np.array([(0.0, 0.0, 50.0, 50.0)]), np.array([b], dtype=float))[0])
    assert {1: True, 0: False, -1: None}[state] is expected
