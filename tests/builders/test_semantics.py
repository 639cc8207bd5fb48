"""The item semantics (builders/semantics/): answer formats, fixed options, the prompt, and that the modules which
used to decide these for themselves now ask the one module (and agree on the items where they used to differ)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from builders.items import make_item
from builders.semantics.format import (
    YES_NO,
    answer_format,
    answer_text,
    choices,
    gold_index,
    is_closed,
    is_multiple_choice,
    is_open,
    is_yes_no,
    letter_index,
)
from builders.semantics.options import (
    is_abstention,
    is_dont_know,
    is_fixed_option,
    is_none_of_the_above,
    is_refusal,
    longest_option_index,
    refusal_letters,
    refusal_option,
)
from builders.semantics.prompt import INSTRUCTIONS, lettered, prompt_text

ROOT = Path(__file__).resolve().parents[2]


def item(**kw):
    base = dict(benchmark="b", task="t", question_type="q", pressure="p", images=["a.png"], question="Q?",
                options=[], answer="yes")
    base.update(kw)
    return make_item(**base)


MCQ = item(options=["cat", "dog", "None of the above"], answer="B")
YN = item(answer="No")
OPEN = item(answer="a man riding a horse")
OFF_LIST = item(options=["cat", "dog"], answer="C")
"""Shown as multiple choice, but its answer names none of its options (the lint's options check's finding)."""
VQA_YES = item(question_type="vqa", answer="yes")
"""An open question whose reference happens to read "yes": still open."""
YES_WITH_OPTIONS = item(options=["cat", "dog"], answer="yes")
LETTERED_YES_NO = item(options=["yes", "no"], answer="A")
EDGES = [MCQ, YN, OPEN, OFF_LIST, VQA_YES, YES_WITH_OPTIONS, LETTERED_YES_NO]


# ------------------------------------------------------------------------------------------------ format


def test_answer_formats() -> None:
    assert [answer_format(it) for it in EDGES] == ["option", "yes_no", "open", "option", "open", "yes_no", "option"]
    assert answer_format(item(question_type="Open_Ended", options=["x"], answer="A")) == "open"


def test_multiple_choice_needs_an_answer_among_the_options() -> None:
    assert [is_multiple_choice(it) for it in EDGES] == [True, False, False, False, False, False, True]
    assert not is_multiple_choice(item(options=["cat", "dog"], answer="AB"))
    assert not is_multiple_choice(item(options=["cat", "dog"], answer=""))


def test_closed_yes_no_and_open_partition_the_well_formed_items() -> None:
    for it in (MCQ, YN, OPEN, VQA_YES, YES_WITH_OPTIONS, LETTERED_YES_NO):
        assert [is_closed(it), is_open(it)].count(True) == 1, it
    assert is_yes_no(YN) and is_yes_no(YES_WITH_OPTIONS) and not is_yes_no(VQA_YES)
    assert not is_closed(OFF_LIST) and not is_open(OFF_LIST)


def test_letter_index() -> None:
    assert letter_index("B", ["x", "y"]) == 1
    assert letter_index("C", ["x", "y"]) is None
    assert letter_index("b", ["x", "y"]) is None
    assert letter_index("", ["x", "y"]) is None


def test_answer_text_never_raises() -> None:
    assert answer_text(MCQ) == "dog" == MCQ.answer_text
    assert answer_text(OFF_LIST) == "C" == OFF_LIST.answer_text
    assert answer_text(YN) == "No"


def test_choices_and_gold() -> None:
    assert choices(MCQ) == ("cat", "dog", "None of the above") and gold_index(MCQ) == 1
    assert choices(YN) == YES_NO and gold_index(YN) == 1
    assert choices(YES_WITH_OPTIONS) == YES_NO and gold_index(YES_WITH_OPTIONS) == 0
    with pytest.raises(ValueError):
        gold_index(OFF_LIST)


# ------------------------------------------------------------------------------------------------ options


@pytest.mark.parametrize("text", ["None of the above", "none of the above.", "None of these", "None of them",
                                  "  NONE OF THE OPTIONS"])
def test_none_of_the_above(text: str) -> None:
    assert is_none_of_the_above(text) and is_abstention(text) and is_fixed_option(text)
    assert not is_refusal(text) and not is_dont_know(text)


@pytest.mark.parametrize("text", ["No, in none of them", "none", "Nonetheless, a dog", "All of the above"])
def test_not_none_of_the_above(text: str) -> None:
    assert not is_none_of_the_above(text)


@pytest.mark.parametrize("text", ["I don't know", "i dont know", "I do not know.", "I don’t know"])
def test_dont_know(text: str) -> None:
    assert is_dont_know(text) and is_refusal(text) and is_abstention(text) and is_fixed_option(text)


@pytest.mark.parametrize("text", ["I know", "I don't know which is bigger, but B", "Don't know-how"])
def test_not_dont_know(text: str) -> None:
    assert not is_dont_know(text)


@pytest.mark.parametrize("text", ["Sorry, I can't help with it", "I cannot tell from the image", "hard to say",
                                  "unanswerable", "It cannot be determined"])
def test_refusal(text: str) -> None:
    assert is_refusal(text) and is_abstention(text) and is_fixed_option(text)
    assert not is_none_of_the_above(text)


@pytest.mark.parametrize("text", ["I can't see a dog", "The dog is known to be there", "Image 2", "Neither"])
def test_not_a_refusal(text: str) -> None:
    assert not is_refusal(text) and not is_abstention(text)


def test_collective_options_are_fixed_but_no_abstention() -> None:
    for text in ("All of the above", "Neither of them"):
        assert is_fixed_option(text) and not is_abstention(text)
    for text in ("cat", "Yes, all of them", "Image 3", "Both"):
        assert not is_fixed_option(text)


def test_the_refusal_option_and_its_letters() -> None:
    mmsap = ("red", "Sorry, I can't help with it", "blue")
    assert refusal_letters(mmsap) == ("B",) and refusal_option(mmsap) == 1
    two = ("I don't know", "Sorry, I can't help with it")
    assert refusal_letters(two) == ("A", "B") and refusal_option(two) is None
    assert refusal_option(("cat", "dog")) is None


def test_longest_option_takes_the_first_on_a_tie() -> None:
    assert longest_option_index(["ab", "abcd", "wxyz", "a"]) == 1


# ------------------------------------------------------------------------------------------------ prompt


def test_prompt_of_a_multiple_choice_item_over_several_images() -> None:
    it = item(images=["a.png", "b.png"], context="Someone says there is a cat.", options=["cat", "dog"],
              answer="A", question="Which is in Image 1?")
    assert prompt_text(it).split("\n") == [
        "You are given 2 images, Image 1 to Image 2, in order.", "Someone says there is a cat.",
        "Which is in Image 1?", "A. cat", "B. dog", INSTRUCTIONS["option"]]
    assert prompt_text(it, announce_images=False, instruct=False).split("\n") == [
        "Someone says there is a cat.", "Which is in Image 1?", "A. cat", "B. dog"]


def test_prompt_of_yes_no_and_open_items_shows_no_options() -> None:
    assert prompt_text(YES_WITH_OPTIONS) == f"Q?\n{INSTRUCTIONS['yes_no']}"
    assert prompt_text(OPEN) == f"Q?\n{INSTRUCTIONS['open']}"
    assert lettered(["x", "y"]) == ["A. x", "B. y"]


# ------------------------------------------------------------------------------------------------ consumers


def test_the_consumers_agree_with_the_module_where_they_used_to_differ() -> None:
    """Each consumer once decided these for itself, and the edge items below were read differently (the review
    rooms called an open item with reference "yes" open but the harness exports yes/no; the lint called an item
    with options and a yes answer neither yes/no nor MCQ)."""
    from annotation.config import KINDS, correction_choices, item_kind
    from builders.quality import blind_baselines
    from data_cards.statistics import answer_label
    from data_cards.harness.vlmevalkit import FORMS, rotations
    from scoring.harness.lmms_eval_utils import prompt_text as harness_prompt

    for it in EDGES:
        assert item_kind(it) == KINDS[answer_format(it)], it
        assert harness_prompt(it) == prompt_text(it)
        assert FORMS[answer_format(it)]  # the sheet an item goes to is named by its format
        label = answer_label(it)
        assert label == (it.answer if is_multiple_choice(it) else it.answer.lower() if is_yes_no(it)
                         else "(open answer)"), it
    assert correction_choices(LETTERED_YES_NO) == {"A. yes": "A", "B. no": "B"}
    assert correction_choices(YES_WITH_OPTIONS) == {"yes": "yes", "no": "no"}
    assert correction_choices(VQA_YES) == {}
    assert len(rotations(OFF_LIST.options, OFF_LIST.answer)) == 1  # nothing to follow: the answer names no option
    assert [r.options for r in rotations(MCQ.options, MCQ.answer)] == [
        ("cat", "dog", "None of the above"), ("dog", "cat", "None of the above")]
    assert blind_baselines([MCQ, OFF_LIST, YN])["always_A"] == 0.0  # one item counted: OFF_LIST is no MCQ


def test_the_lint_counts_the_items_the_module_calls_closed() -> None:
    from builders.lint import lint

    items = [item(question=f"Q{i}?", answer="yes" if i % 2 else "no", options=["cat", "dog"] if i % 3 == 0 else [])
             for i in range(40)]
    summary = lint(items, checks=["balance"]).results["balance"].summary
    observed = summary["tasks"]["b/t"]["yes_no"]["observed"]
    assert observed["yes"] + observed["no"] == sum(is_yes_no(it) for it in items) == 40


CONSUMERS = {
    "builders/items.py", "builders/quality.py", "builders/lint/base.py", "builders/lint/balance.py",
    "builders/lint/blind.py", "builders/lint/choices.py", "builders/lint/independence.py",
    "builders/lint/contradictions.py", "builders/mioh/builder.py", "data_cards/statistics.py",
    "data_cards/harness/vlmevalkit.py", "data_cards/harness/lmms_eval.py", "annotation/config.py",
    "scoring/mioh.py", "scoring/health.py", "scoring/harness/lmms_eval_utils.py", "scoring/harness/circular.py",
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


@pytest.mark.parametrize("name", sorted(CONSUMERS))
def test_a_consumer_reads_the_module(name: str) -> None:
    semantics = [m for m in _imports(ROOT / name) if m.startswith("builders.semantics")]
    assert semantics or name == "builders/lint/base.py" and "builders.semantics.format" in _imports(ROOT / name)


def test_the_module_stands_on_sources_alone() -> None:
    """The bottom of builders/: it imports sources/ and itself, nothing else of the project."""
    project = ("builders", "sources", "filters", "templates", "annotation", "data_cards", "scoring", "lint")
    for path in sorted((ROOT / "builders" / "semantics").glob("*.py")):
        ours = {m for m in _imports(path) if m.split(".")[0] in project}
        assert all(m.startswith(("sources", "builders.semantics")) for m in ours), (path.name, ours)


def test_the_lints_text_only_model_is_read_by_the_scorers_extractor(monkeypatch) -> None:
    """"I think B" is B to every scorer; the lint's own reader took the first capital, "I", and found no answer."""
    from types import SimpleNamespace

    import builders.llm
    from builders.lint.base import LintContext
    from builders.lint.independence import ask_text_only

    replies = {"Which? (0)": "I think B.", "Which? (1)": "Sorry, I cannot tell.", "Q?": "No, I don't think so."}

    class Client:
        def complete_many(self, requests):
            return [SimpleNamespace(text=replies[r.messages[-1]["content"].split("\n")[0]]) for r in requests]

        def usage(self):
            return {}

    monkeypatch.setattr(builders.llm, "make_client", lambda config: Client())
    items = [item(question=f"Which? ({k})", options=["cat", "dog", "cow", "pig", "None of the above"], answer="B")
             for k in range(2)] + [item(answer="no")]
    summary, right = ask_text_only(items, LintContext(llm=SimpleNamespace(model="stub", enabled=True)))
    assert right == {0: True, 1: False, 2: True}
    assert summary["tasks"]["b/t"] == {"items": 3, "right": 2, "unparsed": 1, "accuracy": 0.6667,
                                       "chance": round((0.2 + 0.2 + 0.5) / 3, 4)}
