"""Offline keyword extraction (filters/text.py): sentences whose nouns and verbs are known by construction."""

from __future__ import annotations

import pytest

from tests.conftest import require

try:
    from filters.text import load_nlp

    load_nlp()
    HAVE_NLP = True
except Exception:  # noqa: BLE001 - spaCy or its model missing
    HAVE_NLP = False
require(HAVE_NLP, "spaCy with an English model", "bash .ci/install-nlp.sh")

from filters.text import (  # noqa: E402
    Keywords,
    NlpUnavailable,
    extract_keywords,
    extract_many,
    lemma_of_phrase,
    load_nlp as _load,
    normalise_keyword,
)


@pytest.mark.parametrize(
    ("text", "objects", "behaviours"),
    [
        # compound noun kept (two words), adjective dropped, particle joined, pronoun object ties "place"
        ("The robot arm picks up the red block and places it in the bowl.",
         ("robot arm", "block", "bowl"), ("pick up", "place")),
        # separated particle ("picks the toy up"); an adverb is not a particle ("throws it away")
        ("The child picks the toy up and throws it away.", ("child", "toy"), ("pick up", "throw")),
        # a motion verb's particle is only its direction; colour words never start an object
        ("The orange crescent moves up and a dog appears.", ("crescent", "dog"), ("move", "appear")),
        # verbs the small model tags as plural nouns after a compound ("square jumps", "toy moves")
        ("The red square jumps. As the toy moves, the cat watches it.", ("square", "toy", "cat"),
         ("jump", "move", "watch")),
        # plurals lemmatised; the verb is tied to both of its nouns
        ("Two dogs chase the cats in the garden.", ("dog", "cat", "garden"), ("chase",)),
        # image talk is neither an object nor a behaviour ("sequence", "image", "show")
        ("The sequence of images shows a man who opens the door.", ("man", "door"), ("open",)),
        # a conjoined verb shares the subject of the verb it hangs on, down a chain
        ("The woman sits down and then reads a book.", ("woman", "book"), ("sit down", "read")),
    ],
)
def test_known_nouns_and_verbs(text: str, objects: tuple[str, ...], behaviours: tuple[str, ...]) -> None:
    assert extract_keywords(text) == Keywords(objects, behaviours)


def test_behaviours_need_an_object() -> None:
    # "we" is not an object and nothing tangible is named: no behaviour is tied to anything
    assert extract_keywords("We decided to leave early.") == Keywords((), ())


def test_abstract_nouns_are_not_objects() -> None:
    kw = extract_keywords("The interaction lasts a moment, then the cat jumps onto the table.")
    assert kw.objects == ("cat", "table")
    assert kw.behaviours == ("jump",)


def test_order_and_duplicates() -> None:
    kw = extract_keywords("A dog barks at a ball. Then the dog chases the ball, and the dog barks again.")
    assert kw.objects == ("dog", "ball")
    assert kw.behaviours == ("bark", "chase")


def test_extract_many_matches_one_by_one() -> None:
    texts = ["The man holds a cup.", "A girl rides a bicycle."]
    assert extract_many(texts) == [extract_keywords(t) for t in texts]


def test_lemma_of_phrase() -> None:
    assert lemma_of_phrase("picking up") == "pick up"
    assert lemma_of_phrase("Cups") == "cup"


def test_normalise_keyword() -> None:
    assert normalise_keyword('  "Pick   Up". ') == "pick up"
    assert normalise_keyword("[Dog]") == "dog"


def test_unknown_model_is_a_clear_error() -> None:
    with pytest.raises(NlpUnavailable, match="no spaCy English model found .*no_such_model"):
        _load("no_such_model")
