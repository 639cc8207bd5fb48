"""Balance: can the answer be guessed from how answers are distributed?

Per (benchmark, task):

* MCQ answer letters against the uniform share each item allows (``provenance["answer_slots"]``, "None of the
  above" answers apart), a chi-square test (:func:`builders.quality.answer_balance`);
* yes/no answers against 50:50, a chi-square test with one degree of freedom;
* the share of items whose right answer is "None of the above" or a refusal option among those offering one,
  next to the chance share ``1 / len(options)``. Reported, never flagged: it is each paper's design (MM-SAP's
  BeyondVisQA is answered by refusing); the blind baselines of :mod:`builders.lint.independence` show whether it
  leaks.

A task is flagged when ``p < ALPHA`` with at least ``MIN_ITEMS`` items (smaller sets cannot show a fault), and then
its items whose answer is over-represented are flagged (removing them would restore the balance). Every item's
score is its task's p-value.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Sequence

from builders.items import Item
from builders.lint.base import CheckResult, LintContext, per_task
from builders.quality import answer_balance, chi_square
from builders.semantics.format import is_multiple_choice, is_yes_no, yes_no_answer
from builders.semantics.options import is_abstention

ALPHA = 0.001
MIN_ITEMS = 30


def yes_no_balance(items: Sequence[Item]) -> dict[str, Any]:
    counts = Counter(yes_no_answer(it) for it in items)
    n = counts["yes"] + counts["no"]
    test = chi_square([counts["yes"], counts["no"]], [n / 2, n / 2])
    return {"observed": {"yes": counts["yes"], "no": counts["no"]}, "chi2": round(test.chi2, 4), "dof": 1,
            "p_value": round(test.p_value, 6)}


def refusal_share(items: Sequence[Item]) -> dict[str, Any] | None:
    offered = [it for it in items if any(map(is_abstention, it.options))]
    if not offered:
        return None
    right = sum(is_abstention(it.answer_text) for it in offered)
    chance = sum(1 / len(it.options) for it in offered) / len(offered)
    return {"offered": len(offered), "right": right, "share": round(right / len(offered), 4),
            "chance": round(chance, 4)}


def check(items: Sequence[Item], context: LintContext) -> CheckResult:
    result = CheckResult("balance", [1.0] * len(items))
    tasks: dict[str, Any] = {}
    for (benchmark, task), members in per_task(items).items():
        name = f"{benchmark}/{task}"
        mcq = [i for i in members if is_multiple_choice(items[i])]
        yn = [i for i in members if is_yes_no(items[i])]
        entry: dict[str, Any] = {}
        for kind, subset, test in (("letters", mcq, lambda s: answer_balance(s)),
                                   ("yes_no", yn, lambda s: yes_no_balance(s))):
            if not subset:
                continue
            stats = test([items[i] for i in subset])
            stats["flagged"] = len(subset) >= MIN_ITEMS and stats["p_value"] < ALPHA
            entry[kind] = stats
            for i in subset:
                result.scores[i] = min(result.scores[i], float(stats["p_value"]))
            if stats["flagged"]:
                expected = stats.get("expected") or {"yes": len(subset) / 2, "no": len(subset) / 2}
                over = {a for a, n in stats["observed"].items() if n > expected.get(a, 0)}
                for i in subset:
                    answer = items[i].answer if kind == "letters" else yes_no_answer(items[i])
                    if answer in over:
                        result.flag(i, f"{kind} of {name} unbalanced (p={stats['p_value']:.2g}); "
                                       f"answer {answer!r} over-represented", float(stats["p_value"]))
        share = refusal_share([items[i] for i in mcq])
        if share:
            entry["refusal_or_nota"] = share
        tasks[name] = entry
    result.summary = {"alpha": ALPHA, "min_items": MIN_ITEMS, "tasks": tasks,
                      "unbalanced_tasks": sorted(t for t, e in tasks.items()
                                                 if any(isinstance(v, dict) and v.get("flagged") for v in e.values()))}
    return result


__all__ = ["check"]
