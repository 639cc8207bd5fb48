"""Options on the page: where the right answer and the refusal go, and the shuffled variants (Sec. 4.2).

Every question shows four ordinary options and the refusal "Sorry, I can't help with it" (one wording
everywhere, ``templates/mmsap/common.yaml``). Positions are not left to chance: per subset and per shuffle round a
:class:`~builders.mcq.BalancedCycle` deals (answer slot, refusal slot) pairs - the 20 ordered pairs of distinct
slots among five - so within every round both the answer letter and the refusal letter are exactly balanced over
each block of 20 questions (BeyondVisQA, whose answer *is* the refusal, deals the five refusal slots). The wrong
options fill the free slots in a seeded order.

The two questions of a pair (:mod:`builders.pairs`) are laid out together: their own cycles deal the first
question's (answer slot, refusal slot), balanced as above, and the partner's answer slot among the three others
(a balanced cycle over their ranks), so the two never answer with the same letter (a model that always picks one
letter gets no pair right) and share the refusal slot. The two share their options (each answer is one of the
other's wrong options: demo, VQAv2 and authored questions are paired only so), and show them in the same order.

``shuffles=K`` emits K variants of each question (the paper asks each model five times with the options
shuffled and reports mean and variance), linked by ``provenance.group``; round ``k`` is balanced on its own, and a
variant never repeats an earlier variant's exact order (so every item id is distinct).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from itertools import permutations
from typing import Any, Iterable, Sequence

from builders.items import Item, make_item
from builders.mcq import BalancedCycle, letter
from builders.mmsap.questions import SUBSET_NAMES, SUBSETS, Question
from builders.seeding import rng
from templates.loader import load_templates

BENCHMARK = "mmsap"
PRESSURE = "none"
"""MM-SAP has no adversarial pressure axis; the item field is kept constant."""


def refusal_wording() -> str:
    return str(load_templates("mmsap", "common")["refusal"])


def lint_promises(subsets: Iterable[str]) -> dict[str, Any]:
    """What ``build.json`` promises the lint (:mod:`builders.lint.independence`): BeyondVisQA is answered by the
    refusal in every item, by the paper's design (formula 1: the refusal is its only aware option), so the blind
    baselines that find the refusal (always refuse; the longest option and the language prior, which find the one
    wording every item shares) are a property of the benchmark, noted rather than flagged. KnowVisQA, where the
    refusal is aware too, still has its right answer in ``answer`` and needs no promise."""
    if "beyond" not in set(subsets):
        return {}
    why = "MM-SAP formula 1: the refusal is the only aware option of BeyondVisQA"
    return {"fixed_answers": {"beyond": {"answer": refusal_wording(), "why": why}}}


def n_options() -> int:
    return int(load_templates("mmsap", "common")["ordinary_options"]) + 1


def slot_pairs(n: int) -> list[tuple[int, int]]:
    """Every (answer slot, refusal slot) with the two distinct."""
    return [(a, r) for a in range(n) for r in range(n) if a != r]


def to_items(questions: Iterable[Question], shuffles: int, seed: int) -> list[Item]:
    """The items of ``questions``: ``shuffles`` variants each, positions dealt per subset and round."""
    refusal, n = refusal_wording(), n_options()
    ordered = sorted(questions, key=Question.sort_key)
    members: dict[str, dict[str, Question]] = defaultdict(dict)
    for q in ordered:
        if "pair" in q.provenance:
            members[q.provenance["pair"]["id"]][q.provenance["pair"]["role"]] = q
    items: list[Item] = []
    for subset in SUBSETS:
        batch = [q for q in ordered if q.subset == subset]
        cycles = [
            BalancedCycle([(None, r) for r in range(n)] if subset == "beyond" else slot_pairs(n),
                          rng(seed, f"mmsap/positions/{subset}/{k}"))
            for k in range(shuffles)
        ]
        pair_cycles = [(BalancedCycle(slot_pairs(n), rng(seed, f"mmsap/positions/{subset}/pairs/{k}")),
                        BalancedCycle(range(n - 2), rng(seed, f"mmsap/positions/{subset}/partners/{k}")))
                       for k in range(shuffles)]
        for q in batch:
            both = members.get(q.provenance["pair"]["id"], {}) if "pair" in q.provenance else {}
            if len(both) == 2:
                if q is both["a"]:
                    items += _pair_items(both["a"], both["b"], pair_cycles, refusal, n, seed, shuffles)
                continue
            group = q.group_id()
            seen: set[tuple[str, ...]] = set()
            for k in range(shuffles):
                options, answer_slot, refusal_slot = _layout(q, cycles[k].next(), refusal, n, seed, group, k, seen)
                items.append(_item(q, options, answer_slot, refusal_slot, group, k, shuffles))
    return items


def _pair_items(a: Question, b: Question, cycles: Sequence[tuple[BalancedCycle, BalancedCycle]], refusal: str,
                n: int, seed: int, shuffles: int) -> list[Item]:
    """The items of a pair, round by round: the first's answer and refusal slots, then the partner's answer slot
    among the others, each from its round's cycle; both show their one option list in one order (the module
    docstring)."""
    if {a.answer, *a.distractors} != {b.answer, *b.distractors}:
        raise ValueError(f"pair {a.provenance['pair']['id']}: the two questions do not share their options")
    groups = (a.group_id(), b.group_id())
    wrong = tuple(d for d in a.distractors if d != b.answer)
    both = replace(a, distractors=wrong)
    seen: set[tuple[str, ...]] = set()
    out = []
    for k in range(shuffles):
        slot_a, refusal_slot = cycles[k][0].next()
        slot_b = [s for s in range(n) if s not in (slot_a, refusal_slot)][cycles[k][1].next()]
        options, _, _ = _layout(both, (slot_a, refusal_slot), refusal, n - 1, seed, groups[0], k, seen,
                                taken=(slot_b, b.answer))
        out += [_item(q, options, slot, refusal_slot, group, k, shuffles)
                for q, slot, group in zip((a, b), (slot_a, slot_b), groups)]
    return out


def _layout(q: Question, slots: tuple[int | None, int], refusal: str, n: int, seed: int, group: str, k: int,
            seen: set[tuple[str, ...]], taken: tuple[int, str] | None = None) -> tuple[tuple[str, ...], int, int]:
    """Options of ``q`` with its answer and the refusal at ``slots`` and its wrong options in a seeded order not in
    ``seen``; ``taken``: (slot, option) placed first (a partner's answer), ``n`` then counting the other slots."""
    answer_slot, refusal_slot = slots
    expected = n - 1 if q.answer is None else n - 2
    if len(q.distractors) != expected:
        raise ValueError(f"{q.subset} question needs {expected} wrong options, got {len(q.distractors)}")
    width = n + (taken is not None)
    free = [s for s in range(width) if s not in (answer_slot, refusal_slot) and (taken is None or s != taken[0])]
    orders = list(permutations(q.distractors))
    generator = rng(seed, f"mmsap/distractor-order/{group}/{k}")
    for index in generator.permutation(len(orders)):
        options: list[str] = [""] * width
        options[refusal_slot] = refusal
        if taken is not None:
            options[taken[0]] = taken[1]
        if answer_slot is not None:
            options[answer_slot] = q.answer  # type: ignore[assignment]
        for slot, text in zip(free, orders[index]):
            options[slot] = text
        if tuple(options) not in seen:
            seen.add(tuple(options))
            return tuple(options), refusal_slot if answer_slot is None else answer_slot, refusal_slot
    raise ValueError(f"question {group}: no unused option order left for shuffle {k}")


def _item(q: Question, options: Sequence[str], answer_slot: int, refusal_slot: int, group: str, k: int,
          shuffles: int) -> Item:
    pair = q.provenance.get("pair")
    if pair and shuffles > 1:  # one pair per shuffle round, as every metric is per round
        pair = {**pair, "id": f"{pair['id']}/{k}"}
    aware = {"basic": [answer_slot], "know": sorted({answer_slot, refusal_slot}), "beyond": [refusal_slot]}[q.subset]
    return make_item(
        benchmark=BENCHMARK, task=q.subset, question_type=q.subtask, pressure=PRESSURE, images=[q.image],
        question=q.question, options=options, answer=letter(answer_slot),
        provenance={
            **q.provenance, **({"pair": pair} if pair else {}), "subset": SUBSET_NAMES[q.subset], "group": group,
            "shuffle": k, "shuffles": shuffles,
            "refusal": letter(refusal_slot), "aware": [letter(s) for s in aware], "answer_slots": len(options),
        },
    )
