"""Answer extraction against a corpus of real-world answer styles, including every failure issue 10 lists for
the harnesses ("The correct answer is (B)" read as "T", "yes." and "The answer is yes" scored wrong, "no" found
inside "notice", an unparseable answer replaced by a random letter)."""

from __future__ import annotations

import pytest

from builders.items import make_item
from builders.llm import LLMConfig, TemplateBackend
from builders.semantics.extract import Answer, extract, extract_option, extract_yes_no, is_correct, strip_thinking
from builders.semantics.format import answer_format
from builders.semantics.options import is_refusal, refusal_letters

FIVE = ("cat", "dog", "red cross", "cross", "None of the above")
IMAGES = ("Image 1", "Image 2", "Image 3", "Image 4", "None of the above")
COUNTS = ("2", "5", "6", "9", "None of the above")
ANY = ("Yes, all of them", "Yes, in some of them", "No, in none of them", "I don't know")
MMSAP = ("red", "blue", "green", "white", "Sorry, I can't help with it")

# (output, options, expected kind, expected value)
OPTION_CASES = [
    # letters in their dresses
    ("B", FIVE, "option", "B"),
    ("(B)", FIVE, "option", "B"),
    ("B.", FIVE, "option", "B"),
    ("B)", FIVE, "option", "B"),
    ("B: dog", FIVE, "option", "B"),
    ("**B**", FIVE, "option", "B"),
    ("**B. dog**", FIVE, "option", "B"),
    ("[B]", FIVE, "option", "B"),
    (" b ", FIVE, "option", "B"),
    ("B. dog", FIVE, "option", "B"),
    ("(C) red cross", FIVE, "option", "C"),
    ("Option B", FIVE, "option", "B"),
    ("A", FIVE, "option", "A"),
    ("A.", FIVE, "option", "A"),
    ("(A)", FIVE, "option", "A"),
    ("E", FIVE, "option", "E"),
    # declarations
    ("The answer is B", FIVE, "option", "B"),
    ("The answer is B.", FIVE, "option", "B"),
    ("The correct answer is (B)", FIVE, "option", "B"),  # the harnesses read "T"
    ("The correct answer is (B) dog.", FIVE, "option", "B"),
    ("Answer: B", FIVE, "option", "B"),
    ("Answer: (D)", FIVE, "option", "D"),
    ("answer: c", FIVE, "option", "C"),
    ("The answer is A.", FIVE, "option", "A"),
    ("The best answer is A", FIVE, "option", "A"),
    ("My answer would be option C.", FIVE, "option", "C"),
    ("I choose D.", FIVE, "option", "D"),
    ("I would go with (B).", FIVE, "option", "B"),
    ("Final answer: E", FIVE, "option", "E"),
    ("\\boxed{C}", FIVE, "option", "C"),
    ("The answer is $\\boxed{C}$", FIVE, "option", "C"),
    ("Correct option: B", FIVE, "option", "B"),
    # reasoning first, then the answer
    ("Let me look at each image. Image 1 shows a cat and a dog. Image 2 shows a dog. "
     "The dog appears in all images, so the answer is B.", FIVE, "option", "B"),
    ("Step 1: count the crosses. Step 2: compare.\n\nTherefore, C", FIVE, "option", "C"),
    ("I first thought the answer is A, but looking again... Final answer: (C)", FIVE, "option", "C"),
    ("A cat appears in image 1 and a dog in image 2. The answer is (B).", FIVE, "option", "B"),
    # thinking blocks
    ("<think>Maybe A? No, the cat is missing in Image 2. So not A.</think>B", FIVE, "option", "B"),
    ("<think>hmm, is it C or D?</think>\n\nThe answer is D.", FIVE, "option", "D"),
    ("The cat is only in image 1, so not A.</think> Answer: B", FIVE, "option", "B"),  # opening tag was in the prompt
    ("<think>Let me check Image 1. It has a cat, so maybe A", FIVE, "unparsed", ""),  # cut off mid-thought
    ("<thinking>D is wrong</thinking>(E)", FIVE, "option", "E"),
    # the option's text instead of its letter
    ("dog", FIVE, "option", "B"),
    ("Dog.", FIVE, "option", "B"),
    ("The dog", FIVE, "option", "B"),
    ("red cross", FIVE, "option", "C"),  # "cross" is inside "red cross": hidden by the longer match
    ("cross", FIVE, "option", "D"),
    ("None of the above.", FIVE, "option", "E"),
    ("None of the above", IMAGES, "option", "E"),
    ("Image 3", IMAGES, "option", "C"),
    ("It is in Image 3.", IMAGES, "option", "C"),
    ("Yes, in some of them.", ANY, "option", "B"),
    ("No, in none of them", ANY, "option", "C"),
    ("5", COUNTS, "option", "B"),
    ("There are 6 octagons in total.", COUNTS, "option", "C"),
    ("The object that appears in every image is the dog, not the cat.", FIVE, "option", "B"),
    ("The answer is not A, it is B.", FIVE, "option", "B"),
    ("Option (C) is correct.", FIVE, "option", "C"),
    ("B, because the dog appears in both images.", FIVE, "option", "B"),
    ("ANSWER: D", FIVE, "option", "D"),
    ("None.", FIVE, "option", "E"),
    ("None of them.", IMAGES, "option", "E"),
    ("The second image.", IMAGES, "option", "B"),
    ("It is in the fourth image, not the first image.", IMAGES, "option", "D"),
    # refusals: the refusal option when the item has one, else a refusal
    ("I don't know", ANY, "option", "D"),
    ("I cannot tell from these images.", ANY, "option", "D"),
    ("Sorry, I can't help with it.", MMSAP, "option", "E"),
    ("Sorry, I can't help with that.", MMSAP, "option", "E"),
    ("I'm unable to determine the colour from this image.", MMSAP, "option", "E"),
    ("I cannot tell from these images.", FIVE, "refusal", ""),
    ("Sorry, I can't help with it.", FIVE, "refusal", ""),
    ("It is impossible to determine which object it is.", FIVE, "refusal", ""),
    # ambiguous or empty: unparsed, never guessed
    ("A or B", FIVE, "unparsed", ""),
    ("A, C", FIVE, "unparsed", ""),
    ("The answer is B. The answer is C.", FIVE, "unparsed", ""),
    ("The answer is B or C.", FIVE, "unparsed", ""),
    ("(B) and (C) both appear.", FIVE, "unparsed", ""),
    ("Both the cat and the dog appear.", FIVE, "unparsed", ""),
    ("", FIVE, "unparsed", ""),
    ("The images show various shapes on a white background.", FIVE, "unparsed", ""),
    ("T", FIVE, "unparsed", ""),  # not an option letter (five options: A-E)
    ("The", FIVE, "unparsed", ""),
    ("F", FIVE, "unparsed", ""),
    ("A dog is sitting in each image.", FIVE, "option", "B"),  # "A" is the article; the text names the dog
    ("I think it's not B.", FIVE, "unparsed", ""),
]

YES_NO_CASES = [
    ("yes", "yes"),
    ("Yes", "yes"),
    ("yes.", "yes"),  # the harnesses' exact match fails here
    ("Yes.", "yes"),
    ("YES", "yes"),
    ("**Yes**", "yes"),
    ("The answer is yes", "yes"),
    ("The answer is yes.", "yes"),
    ("Answer: No", "no"),
    ("Yes, there is.", "yes"),
    ("Yes, there is a dog in the image.", "yes"),
    ("No, there is no dog in the image.", "no"),
    ("No.", "no"),
    ("no", "no"),
    ("Nope.", "no"),
    ("Yeah, I can see one.", "yes"),
    ("There is no dog in this image.", "no"),
    ("I don't see any dog in the image.", "no"),
    ("The dog is not present.", "no"),
    ("There is a dog in the image.", "yes"),
    ("I notice a dog near the tree.", "yes"),  # "no" inside "notice" is not the word no
    ("Nobody would miss it: the dog is clearly visible.", "yes"),  # nor inside "nobody"
    ("Yesterday's photo shows a dog.", "yes"),  # nor "yes" inside "yesterday"
    ("<think>Could the blob be a dog? It has no legs... no, it is a dog.</think>Yes", "yes"),
    ("Looking carefully at the left side, the brown shape has ears and a tail. Therefore, yes.", "yes"),
    ("The shape could be a cat, but on closer inspection... So the answer is no.", "no"),
    ("I'm not sure, but I think yes.", "yes"),
    ("Yes and no.", "unparsed"),
    ("Yes. Actually, no.", "yes"),  # the opening word decides; a later correction without a declaration does not
    ("I cannot tell.", "refusal"),
    ("Sorry, I can't help with it.", "refusal"),
    ("I'm not sure.", "refusal"),
    ("", "unparsed"),
    ("A brown shape.", "unparsed"),
    ("I can't see a dog in the picture.", "no"),  # not a refusal: it answers
    ("I don't think so.", "no"),
    ("Not at all.", "no"),
    ("Definitely yes!", "yes"),
    ("There are no dogs here, only cats.", "no"),
]


@pytest.mark.parametrize(("output", "options", "kind", "value"), OPTION_CASES)
def test_option_corpus(output: str, options: tuple[str, ...], kind: str, value: str) -> None:
    assert extract_option(output, options, refusal_letters(options)) == Answer(kind, value)


@pytest.mark.parametrize(("output", "expected"), YES_NO_CASES)
def test_yes_no_corpus(output: str, expected: str) -> None:
    got = extract_yes_no(output)
    if expected in ("yes", "no"):
        assert got == Answer("yes_no", expected)
    else:
        assert got == Answer(expected, "")


DRESSES = ("{}", "({})", "{}.", "{})", "**{}**", "[{}]", "Answer: {}", "The answer is ({}).", "\\boxed{{{}}}",
           "Option {}", "I choose {}.", "<think>not sure</think>{}")
"""How a model writes an option's letter; the corpus above tries most of them on B only."""


@pytest.mark.parametrize("options", [FIVE, IMAGES[2:], ANY], ids=["five", "three", "four"])
def test_every_letter_reads_in_every_dress_and_none_past_the_last(options: tuple[str, ...]) -> None:
    letters = "ABCDEFGH"[: len(options)]
    beyond = "ABCDEFGH"[len(options)]
    for dress in DRESSES:
        for letter in letters:
            assert extract_option(dress.format(letter), options) == Answer("option", letter), dress.format(letter)
        assert extract_option(dress.format(beyond), options) == Answer("unparsed", ""), dress.format(beyond)


def test_a_reading_is_always_one_of_the_items_letters() -> None:
    """Every output of both corpora read against three options only: what was D or E before is now no option,
    and the reader must say unparsed (or refusal) instead of naming a letter the item does not have."""
    three = FIVE[:2] + ("None of the above",)
    for output, *_ in OPTION_CASES + YES_NO_CASES:
        got = extract_option(output, three, refusal_letters(three))
        assert got.kind in ("option", "refusal", "unparsed"), output
        assert got.kind != "option" or got.value in "ABC", (output, got)


def test_the_harness_failures_of_issue_10() -> None:
    """Each named failure, with the naive readings the harnesses make, so the test shows what differs."""
    naive_first_capital = next(c for c in "The correct answer is (B)" if c.isupper())
    assert naive_first_capital == "T"
    assert extract_option("The correct answer is (B)", FIVE) == Answer("option", "B")
    assert "yes." != "yes" and extract_yes_no("yes.") == Answer("yes_no", "yes")
    assert extract_yes_no("The answer is yes") == Answer("yes_no", "yes")
    assert "no" in "I notice a dog" and extract_yes_no("I notice a dog") == Answer("yes_no", "yes")
    assert extract_option("Hmm, these are interesting shapes.", FIVE) == Answer("unparsed", "")


def test_strip_thinking() -> None:
    assert strip_thinking("<think>a</think> B <think>c</think>") == "B"
    assert strip_thinking("<think>never finished") == ""
    assert strip_thinking("thought in the prompt</think>B") == "B"
    assert strip_thinking("plain") == "plain"


def test_is_refusal() -> None:
    assert is_refusal("I don't know")
    assert is_refusal("Sorry, I can't help with it")
    assert not is_refusal("I can't see a dog")
    assert not is_refusal("The dog is known to be there")


def _item(answer: str, options: tuple[str, ...] = (), question: str = "Is there a dog?"):
    return make_item(benchmark="demo", task="existence", question_type="t", pressure="easy", images=["a.png"],
                     question=question, options=options, answer=answer)


def test_dispatch_and_correctness() -> None:
    yn = _item("no", ("yes", "no"))  # yes/no items may list yes/no as options: the answer decides the format
    assert answer_format(yn) == "yes_no" and extract("No.", yn) == Answer("yes_no", "no") and is_correct(
        extract("No.", yn), yn)
    mcq = _item("B", FIVE)
    assert answer_format(mcq) == "option" and is_correct(extract("The answer is (B)", mcq), mcq)
    assert not is_correct(extract("I cannot tell", mcq), mcq)
    open_item = _item("a dog on a mat")
    assert extract("<think>x</think>A dog.", open_item) == Answer("open", "A dog.")


class _Scripted(TemplateBackend):
    """A client that answers every request with a fixed reply and records the prompts."""

    def __init__(self, reply: str) -> None:
        super().__init__(LLMConfig())
        self.reply, self.prompts = reply, []

    def complete(self, messages, *, json_schema=None, fallback=None):  # type: ignore[override]
        self.prompts.append(messages)
        return super().complete(messages, json_schema=json_schema, fallback=self.reply)


def test_llm_fallback_only_for_unparsed_and_only_strict_replies() -> None:
    mcq = _item("B", FIVE)
    llm = _Scripted("B")
    assert extract("The second of them, clearly.", mcq, llm) == Answer("option", "B")
    assert "The second of them" in llm.prompts[0][-1]["content"]
    assert extract("(C)", mcq, llm) == Answer("option", "C") and len(llm.prompts) == 1  # rules decided: not asked
    assert extract("The second of them.", mcq, _Scripted("It is probably B")) == Answer("unparsed", "")
    assert extract("The second of them.", mcq, _Scripted("Z")) == Answer("unparsed", "")
    assert extract("Hmm.", _item("yes"), _Scripted("yes")) == Answer("yes_no", "yes")
