"""MM-SAP's quality report: validity checks and blind baselines, per subset, for build.json and the summary.

Validity (each a count that must be zero, or one wording):

* ``refusal_wordings`` - the distinct refusal texts (must be exactly one) and items without exactly one refusal;
* ``distractor_in_human_answers`` - VQAv2 items offering a wrong option whose key equals one of the ten answers';
* ``nonexistent_present`` - "nonexistent objects" questions whose object the image does show;
* ``duplicate_options`` - items offering two options with the same key;
* ``authored_names_entity`` - authored questions whose text names what the image is to show (``entity``, the
  category of a ``demo:`` image): such a question is answered without looking (issue 40).

``numeric_gold_ranks`` counts, per subset, the right answer's rank among the numeric options (0 = smallest): a
counting question whose right count is always the second smallest is answered blind.

Blind baselines are scored the way the benchmark is (formula 2, the self-aware score: the refusal is aware in
KnowVisQA and BeyondVisQA): always refuse, always "A", the longest option, next to chance (a uniform guess,
``|aware| / 5``); the longest ordinary option (the refusal left out) shows whether wrong options give the right
one away by length. Always refuse scores 100 % on BeyondVisQA by design - the paper's point - and 0 on BasicVisQA.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Mapping, Sequence

from builders import quality
from builders.items import OPTION_LETTERS, Item
from builders.mmsap.answers import AnswerTable
from builders.mmsap.authored import names_entity
from builders.mmsap.questions import SUBSETS
from sources.records import RecordSet
from sources.vqav2 import VqaQuestion


def position_balance(letters: Sequence[str], slots: int) -> dict[str, Any]:
    """Observed letter counts against the uniform expectation and the chi-square test."""
    observed = Counter(letters)
    expected = len(letters) / slots if letters else 0.0
    test = quality.chi_square([observed[OPTION_LETTERS[p]] for p in range(slots)], [expected] * slots)
    return {
        "observed": {OPTION_LETTERS[p]: observed[OPTION_LETTERS[p]] for p in range(slots)},
        "expected": round(expected, 3),
        "chi2": round(test.chi2, 4),
        "p_value": round(test.p_value, 4),
    }


def blind_baselines(items: Sequence[Item]) -> dict[str, float]:
    """Self-aware score (formula 2) of strategies that never look at the image."""
    if not items:
        return {}

    def longest_ordinary(it: Item) -> str:
        lengths = [-1 if OPTION_LETTERS[k] == it.provenance["refusal"] else len(o) for k, o in enumerate(it.options)]
        return OPTION_LETTERS[lengths.index(max(lengths))]

    def share(pick) -> float:
        return round(sum(pick(it) in it.provenance["aware"] for it in items) / len(items), 4)

    return {
        "chance": round(sum(len(it.provenance["aware"]) / len(it.options) for it in items) / len(items), 4),
        "always_refuse": share(lambda it: it.provenance["refusal"]),
        "always_A": share(lambda it: "A"),
        "longest_option": share(quality.longest_option),
        "longest_ordinary_option": share(longest_ordinary),
    }


def validity(items: Sequence[Item], refusal: str, table: AnswerTable, vqa: Mapping[int, VqaQuestion],
             records: RecordSet | None) -> dict[str, Any]:
    wordings = Counter()
    without_one_refusal = 0
    duplicates = 0
    for it in items:
        refusals = [o for o in it.options if table.key(o) == table.key(refusal)]
        wordings.update(refusals)
        without_one_refusal += len(refusals) != 1
        keys = [table.key(o) for o in it.options]
        duplicates += len(set(keys)) != len(keys)
    in_answers = checked_vqa = 0
    for it in items:
        qid = it.provenance.get("question_id")
        if it.provenance.get("source") == "vqav2" and qid in vqa:
            checked_vqa += 1
            human = {table.key(a) for a in vqa[qid].answers}
            wrong = [o for k, o in enumerate(it.options) if OPTION_LETTERS[k] not in it.provenance["aware"]
                     and OPTION_LETTERS[k] != it.provenance["refusal"]]
            in_answers += any(table.key(o) in human for o in wrong)
    present = checked_absent = 0
    if records is not None:
        shown = {im.id: im.categories for im in records.images}
        for it in items:
            grounding = it.provenance.get("grounding", {})
            if it.question_type == "nonexistent_objects" and it.provenance.get("image_id") in shown:
                checked_absent += 1
                present += grounding.get("absent") in shown[it.provenance["image_id"]]
    with_entity = [it for it in items if it.provenance.get("entity")]
    naming = sorted({it.provenance["record"] for it in with_entity
                     if names_entity(it.question, it.provenance["entity"])})
    return {
        "refusal_wordings": sorted(wordings),
        "items_without_exactly_one_refusal": without_one_refusal,
        "duplicate_options": duplicates,
        "distractor_in_human_answers": {"items_checked": checked_vqa, "violations": in_answers},
        "nonexistent_present": {"items_checked": checked_absent, "violations": present},
        "authored_names_entity": {"items_checked": len(with_entity), "violations": len(naming),
                                  "records": naming},
    }


def numeric_gold_ranks(items: Sequence[Item]) -> dict[str, int]:
    """How often the right answer is the k-th smallest of an item's numeric options (items with numeric answers)."""
    ranks: Counter = Counter()
    for it in items:
        values = {}
        for k, option in enumerate(it.options):
            if option.strip().isdigit():
                values[OPTION_LETTERS[k]] = int(option)
        if it.answer in values and len(values) > 1:
            ranks[sorted(set(values.values())).index(values[it.answer])] += 1
    return {str(k): ranks[k] for k in sorted(ranks)}


def mmsap_quality(items: Sequence[Item], refusal: str, table: AnswerTable, vqa: Mapping[int, VqaQuestion],
                  records: RecordSet | None) -> dict[str, Any]:
    """The whole report: validity, answer and refusal letter balance, blind baselines per subset."""
    slots = len(items[0].options) if items else 5
    per_subset = {}
    for subset in SUBSETS:
        mine = [it for it in items if it.task == subset]
        if mine:
            per_subset[subset] = {
                "items": len(mine),
                "answer_letters": position_balance([it.answer for it in mine], slots),
                "refusal_letters": position_balance([it.provenance["refusal"] for it in mine], slots),
                "blind_baselines": blind_baselines(mine),
                "numeric_gold_ranks": numeric_gold_ranks(mine),
            }
    return {
        "validity": validity(items, refusal, table, vqa, records),
        "answer_letters": position_balance([it.answer for it in items], slots),
        "refusal_letters": position_balance([it.provenance["refusal"] for it in items], slots),
        "blind_baselines": blind_baselines(items),
        "subsets": per_subset,
    }
