"""The rule pieces of MM-SAP on their own: answer keys, the type map, and draws that do not depend on neighbours."""

from __future__ import annotations

import numpy as np

from builders.mmsap.answers import answer_table
from builders.mmsap.vqa import distractors, intern_corpus, selected, type_map
from sources.vqav2 import read_vqav2
from tests.builders.mmsap.fixtures import make_vqav2


def test_answer_keys_merge_spellings_plurals_and_synonyms():
    key = answer_table().key
    assert key("Two") == key("2") == "2"
    assert key("Dogs.") == key("the dog") == key("puppy")
    assert key("grey") == key("Gray") and key("TV") == key("television")
    assert key("black & white") == key("black and white")
    assert key("glasses") == key("glass") and key("bus") == "bus"
    assert key("red") != key("blue")


def test_type_map_assigns_by_prefix_answer_type_and_keywords():
    t = type_map()
    assert t.assign("How many dogs are there?", "how many", "number") == "counting"
    assert t.assign("What color is the bus?", "what color is the", "other") == "color"
    assert t.assign("What is the man doing?", "what is the man", "other") == "action"
    assert t.assign("What is the man holding?", "what is the man", "other") == "object_recognition"
    assert t.assign("What does the sign say?", "what does the", "other") == "ocr"
    assert t.assign("Is the dog asleep?", "is the", "yes/no") is None
    assert t.assign("Why is he smiling?", "why", "other") is None
    assert len(t.names) == 8


def test_a_questions_options_do_not_depend_on_which_others_are_drawn(tmp_path):
    images = list(range(1, 13))
    q, a, _ = make_vqav2(tmp_path, images)
    table, types = answer_table(), type_map()
    corpus = intern_corpus(read_vqav2(q, a).questions, types, table)
    rows = selected(corpus, 0.8)
    every = distractors(corpus, rows, types, table, seed=3)
    some = distractors(corpus, rows[::3], types, table, seed=3)
    assert np.array_equal(every[::3], some)
    assert not np.array_equal(every, distractors(corpus, rows, types, table, seed=4))
