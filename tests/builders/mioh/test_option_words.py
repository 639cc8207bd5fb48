"""Option words right about as often as offered (issue 40): the sampler's tally and what it does with it.

A text-only learner reads option words one by one. In the demo world "hexagon" was the gold of 40 % of the
options naming it and "crescent" of 8 %, so the sampler tallies each word of the options it emits and draws
against the imbalance; these tests hold the tally and both draws to that."""

from __future__ import annotations

import numpy as np

from builders.mioh.questions import GOLD_CANDIDATES, Key, Sampler, Spec, probe_words

PROBES = [("blue", "crescent"), ("blue", "square"), ("red", "crescent"), ("red", "square")]


class FourProbes:
    """The two lookups the tally reads from a task's pools: its probes and a probe's number."""

    def probes(self, task: str) -> list:
        return PROBES

    def probe_number(self, task: str, probe) -> int:
        return PROBES.index(probe)


def spec(gold: tuple[str, str], other: tuple[str, str]) -> tuple[Spec, Key]:
    return Spec("attribute", "comparative", "differs", (0, 1), probe=gold, options=(gold, other)), Key(0, "option")


def test_a_probe_is_its_words():
    assert probe_words("dog") == ("dog",)
    assert probe_words(("red", "square")) == ("red", "square")
    assert probe_words(("cup", "on", "table")) == ("cup", "on", "table")


def test_words_right_too_often_are_offered_first_and_the_others_drawn_as_gold():
    sampler = Sampler(FourProbes(), n_images=2)  # type: ignore[arg-type]
    for _ in range(3):  # squares right, crescents offered but never right
        sampler.remember(*spec(("red", "square"), ("blue", "crescent")))
    surplus = sampler._gold_surplus("attribute", [0, 1, 2, 3])
    assert surplus[3] > surplus[1] == surplus[2] == 0 > surplus[0], surplus  # red square most, blue crescent least
    # The gold of the next option question: the least right of GOLD_CANDIDATES uniform draws.
    rng = np.random.default_rng(0)
    golds = [sampler._probe(rng, "attribute", balanced=True) for _ in range(400)]
    crescents = sum(g[1] == "crescent" for g in golds) / len(golds)
    assert crescents > 0.5 + 0.1 and GOLD_CANDIDATES > 1  # uniform draws would give crescents half the time
    assert sampler._probe(np.random.default_rng(0), "attribute") in PROBES  # unbalanced: uniform, untouched


def test_only_option_questions_are_tallied():
    sampler = Sampler(FourProbes(), n_images=2)  # type: ignore[arg-type]
    sampler.remember(Spec("attribute", "selective", "which", (0, 1), probe=("red", "square")), Key(0, "image"))
    assert not sampler._gold_surplus("attribute", [0, 1, 2, 3]).any()
