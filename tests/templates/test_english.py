"""The wording's English: "a"/"an" by sound, plurals and counted nouns, as builders write them."""

from __future__ import annotations

import pytest

from templates.english import accepts, counted, plural, with_article


@pytest.mark.parametrize("phrase, expected", [
    ("orange", "an orange"), ("orange digital clock", "an orange digital clock"), ("hour glass", "an hour glass"),
    ("unicorn", "a unicorn"), ("one-way sign", "a one-way sign"), ("MRI scanner", "an MRI scanner"),
    ("8-ball", "an 8-ball"), ("European car", "a European car"), ("umbrella", "an umbrella"), ("dog", "a dog"),
    ("skis", "a pair of skis"), ("red skis", "a pair of red skis"), ("scissors", "a pair of scissors"),
    ("stairs", "a flight of stairs"), ("dog next to skis", "a dog next to skis"),
])
def test_with_article_by_sound(phrase, expected):
    assert with_article(phrase) == expected


@pytest.mark.parametrize("noun, expected", [
    ("pentagon", "pentagons"), ("bus", "buses"), ("person", "people"), ("knife", "knives"), ("sheep", "sheep"),
    ("wine glass", "wine glasses"), ("cross", "crosses"), ("skis", "pairs of skis"),
    ("mouse (computer equipment)", "mice (computer equipment)"),
])
def test_plural_of_a_category(noun, expected):
    assert plural(noun) == expected


def test_counted_nouns_agree_with_their_number():
    assert [counted(n, "backpack") for n in (0, 1, 2)] == ["0 backpacks", "1 backpack", "2 backpacks"]
    assert [counted(n, "skis") for n in (1, 3)] == ["1 pair of skis", "3 pairs of skis"]


def test_either_article_where_usage_divides():
    assert accepts("a", "herb") and accepts("an", "herb")
    assert accepts("an", "SUV") and accepts("a", "SUV") and not accepts("a", "MRI")
    assert not accepts("a", "orange") and not accepts("an", "unicorn")
