"""Co-occurrence statistics on a hand-built 5-image record set; every expected number is worked out below.

Images (categories present)          categories: fork knife table person surfboard zebra (zebra: never seen)
  1: fork (x2), knife, table
  2: fork, table, person
  3: person (crowd), surfboard
  4: person
  5: fork, knife
N = 5;  n(fork)=3 n(knife)=2 n(table)=2 n(person)=3 n(surfboard)=1 n(zebra)=0
pairs:  fork-knife 2 (1,5), fork-table 2 (1,2), fork-person 1 (2), knife-table 1 (1), table-person 1 (2),
        person-surfboard 1 (3), every other pair 0.
lift(a,b) = n(a,b) N / (n(a) n(b)):  fork-knife 2*5/6 = 5/3, fork-table 5/3, knife-table 5/4,
        fork-person 5/9, table-person 5/6, person-surfboard 5/3.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from filters.cooccurrence import (
    ContextScore,
    CooccurrenceStats,
    HardNegativeThresholds,
    hard_negative_mask,
    is_hard_negative,
    record_indices,
)
from sources.errors import ConfigError, SourceError
from sources.records import ImageRecord, Instance, RecordSet

CATS = ("fork", "knife", "table", "person", "surfboard", "zebra")
IMAGES = [
    ["fork", "fork", "knife", "table"],
    ["fork", "table", "person"],
    ["person*", "surfboard"],
    ["person"],
    ["fork", "knife"],
]


def recordset(images=IMAGES, categories=CATS) -> RecordSet:
    recs = []
    for i, cats in enumerate(images, start=1):
        insts = tuple(
            Instance(f"{i}-{k}", c.rstrip("*"), (0, 0, 1, 1), 1.0, iscrowd=c.endswith("*")) for k, c in enumerate(cats)
        )
        recs.append(ImageRecord(str(i), "test", f"{i}.jpg", 10, 10, insts))
    return RecordSet("test", "test.json", categories, tuple(recs))


@pytest.fixture(scope="module")
def stats() -> CooccurrenceStats:
    return CooccurrenceStats.from_records(recordset())


def test_image_and_pair_counts(stats):
    assert stats.n_images == 5
    assert dict(zip(CATS, stats.image_counts.tolist())) == {
        "fork": 3, "knife": 2, "table": 2, "person": 3, "surfboard": 1, "zebra": 0,
    }
    expected = {("fork", "knife"): 2, ("fork", "table"): 2, ("fork", "person"): 1, ("knife", "table"): 1,
                ("table", "person"): 1, ("person", "surfboard"): 1}
    for a, b in itertools.combinations(CATS, 2):
        want = expected.get((a, b), expected.get((b, a), 0))
        assert stats.n_pair(a, b) == want == stats.n_pair(b, a), (a, b)


@pytest.mark.parametrize(
    ("b", "a", "p"),
    [
        ("knife", "fork", 2 / 3),
        ("fork", "knife", 1.0),
        ("table", "fork", 2 / 3),
        ("person", "fork", 1 / 3),
        ("surfboard", "person", 1 / 3),
        ("person", "surfboard", 1.0),
        ("table", "knife", 1 / 2),
        ("surfboard", "fork", 0.0),
        ("fork", "zebra", 0.0),  # n(zebra) = 0: no evidence, not a division by zero
    ],
)
def test_conditional_probability(stats, b, a, p):
    assert stats.p_given(b, a) == pytest.approx(p)


@pytest.mark.parametrize(
    ("a", "b", "lift"),
    [
        ("fork", "knife", 5 / 3),
        ("knife", "fork", 5 / 3),
        ("fork", "table", 5 / 3),
        ("knife", "table", 5 / 4),
        ("fork", "person", 5 / 9),
        ("table", "person", 5 / 6),
        ("person", "surfboard", 5 / 3),
        ("knife", "person", 0.0),
        ("zebra", "fork", 0.0),
    ],
)
def test_lift(stats, a, b, lift):
    assert stats.lift(a, b) == pytest.approx(lift)


def test_from_indices_equals_from_records(stats):
    img, cat = record_indices(recordset())
    assert img.tolist() == [0, 0, 0, 0, 1, 1, 1, 2, 2, 3, 4, 4]
    other = CooccurrenceStats.from_indices(img, cat, CATS, 5)
    np.testing.assert_array_equal(other.pair_counts, stats.pair_counts)
    np.testing.assert_array_equal(other.conditional, stats.conditional)
    np.testing.assert_array_equal(other.lift_matrix, stats.lift_matrix)


def test_from_indices_matches_pairwise_loop_on_random_data():
    rng = np.random.default_rng(7)
    n_img, n_cat = 200, 9
    img = rng.integers(0, n_img, 1500)
    cat = rng.integers(0, n_cat, 1500)
    s = CooccurrenceStats.from_indices(img, cat, [f"c{k}" for k in range(n_cat)], n_img)
    sets = [set(cat[img == i].tolist()) for i in range(n_img)]
    for a in range(n_cat):
        for b in range(n_cat):
            assert s.pair_counts[a, b] == sum(1 for cs in sets if a in cs and b in cs)


def test_bad_inputs_fail_clearly(stats):
    with pytest.raises(KeyError, match="unknown category 'spoon'; known: fork, knife"):
        stats.p_given("spoon", "fork")
    with pytest.raises(SourceError, match="category 'spoon' is not in the record set's categories"):
        CooccurrenceStats.from_records(recordset(images=[["spoon"]]))
    with pytest.raises(ValueError, match="outside"):
        CooccurrenceStats.from_indices(np.array([0, 5]), np.array([0, 1]), CATS, 5)
    with pytest.raises(ValueError, match="one length"):
        CooccurrenceStats.from_indices(np.array([0, 1]), np.array([0]), CATS, 5)


# --------------------------------------------------------------------------------- context scores


def test_context_score_picks_the_strongest_present_cue(stats):
    # table | knife = 1/2 beats table | person = 1/3
    s = stats.context_score(["person", "knife"], "table")
    assert s == ContextScore("table", pytest.approx(0.5), pytest.approx(5 / 4), "knife", 1)
    assert is_hard_negative(s)
    # image 5 has fork and knife: table | fork = 2/3 beats table | knife = 1/2
    s5 = stats.context_score(["fork", "knife"], "table")
    assert (s5.cue, s5.p, s5.lift, s5.support) == ("fork", pytest.approx(2 / 3), pytest.approx(5 / 3), 2)


def test_common_object_is_not_a_hard_negative_by_lift_alone(stats):
    # person | fork = 1/3 passes min_p, but lift 5/9 < 1.2: person is merely frequent
    s = stats.context_score(["fork"], "person")
    assert s.p == pytest.approx(1 / 3) and s.lift == pytest.approx(5 / 9)
    assert not is_hard_negative(s)
    assert is_hard_negative(s, HardNegativeThresholds(min_p=0.3, min_lift=0.5))


def test_context_score_ties_and_empty_cases(stats):
    # fork | knife = fork | table = 1: the lower category index (knife) wins
    assert stats.context_score(["table", "knife"], "fork").cue == "knife"
    assert stats.context_score(["knife"], "zebra") == ContextScore("zebra", 0.0, 0.0, None, 0)
    assert stats.context_score([], "fork").cue is None
    with pytest.raises(ValueError, match="present"):
        stats.context_score(["fork"], "fork")


def test_min_support_threshold(stats):
    s = stats.context_score(["person", "knife"], "table")  # support 1
    assert not is_hard_negative(s, HardNegativeThresholds(min_support=2))
    with pytest.raises(ConfigError):
        HardNegativeThresholds(min_p=1.5)


def test_bulk_context_scores_equal_the_scalar_form(stats):
    rs = recordset()
    img, cat = record_indices(rs)
    m = np.zeros((5, len(CATS)), dtype=bool)
    m[img, cat] = True
    extra = np.zeros((2, len(CATS)), dtype=bool)
    extra[0, [1, 3]] = True  # knife + person
    rows = np.vstack([m, extra])  # the last row: nothing present
    bulk = stats.context_scores(rows)
    assert bulk.p.shape == (7, len(CATS))
    for i, row in enumerate(rows):
        present = [CATS[k] for k in np.flatnonzero(row)]
        for b, name in enumerate(CATS):
            if row[b]:
                assert bulk.cue[i, b] == -1 and bulk.p[i, b] == 0
                continue
            s = stats.context_score(present, name)
            assert bulk.p[i, b] == pytest.approx(s.p)
            assert bulk.lift[i, b] == pytest.approx(s.lift)
            assert (CATS[bulk.cue[i, b]] if bulk.cue[i, b] >= 0 else None) == s.cue
            assert bulk.support[i, b] == s.support
            assert hard_negative_mask(bulk)[i, b] == is_hard_negative(s)
    one = stats.context_scores(rows[5])
    assert one.p.shape == (len(CATS),)
    assert CATS[one.cue[2]] == "knife" and one.p[2] == pytest.approx(0.5)


def test_bulk_chunking_gives_the_same_answer(stats, monkeypatch):
    import filters.cooccurrence as co

    rng = np.random.default_rng(3)
    rows = rng.random((50, len(CATS))) < 0.3
    whole = stats.context_scores(rows)
    monkeypatch.setattr(co, "_CHUNK_ELEMENTS", len(CATS) * 3)  # about 3 present pairs per chunk
    chunked = stats.context_scores(rows)
    for field in ("p", "lift", "cue", "support"):
        np.testing.assert_array_equal(getattr(whole, field), getattr(chunked, field))
