"""Charades step 2: classes tied for the best similarity are told apart by the video's own labels, never by the
dictionary's file order (issue 51: "pick ... book" matched "Closing a book" at 0.50, the first of three ties)."""

from __future__ import annotations

import pytest

from builders.predictive.charades_steps import Failure, Prediction, lemma_bag, predict
from tests.conftest import require

CLASSES = {"c000": "Closing a book", "c001": "Opening a book", "c002": "Taking a book from somewhere",
           "c003": "Sitting in a chair"}
DESCRIPTION = "A person sits in a chair. Then the person picks up a book."


@pytest.fixture(scope="module")
def nlp():
    from filters.text import NlpUnavailable, load_nlp

    try:
        return load_nlp()
    except NlpUnavailable:
        require(False, "spaCy with an English model", "bash .ci/install-nlp.sh")


def run(nlp, labels):
    bags = {code: lemma_bag(text, nlp) for code, text in CLASSES.items()}
    actions = [{"code": code, "start": start, "end": start + 3.0} for code, start in labels]
    return predict(DESCRIPTION, actions, CLASSES, nlp, bags, 0.5)


def test_the_tied_class_the_video_is_labelled_with_wins(nlp):
    found = run(nlp, [("c003", 0.0), ("c002", 6.0)])
    assert isinstance(found, Prediction) and (found.code, found.similarity, found.start) == ("c002", 0.5, 6.0)
    later_in_file = run(nlp, [("c001", 4.0)])  # the dictionary's first tie (c000) is not the video's
    assert isinstance(later_in_file, Prediction) and later_in_file.code == "c001"


def test_two_labelled_ties_are_ambiguous_and_none_is_not_among_the_actions(nlp):
    both = run(nlp, [("c000", 2.0), ("c002", 6.0)])
    assert isinstance(both, Failure) and str(both) == (
        "step 2: 'pick book' ties c000 (Closing a book) and c002 (Taking a book from somewhere) at 0.50, both the "
        "video's actions: ambiguous")
    none = run(nlp, [("c003", 0.0)])
    assert isinstance(none, Failure) and "is not among the video's actions" in str(none)
