"""What a review of a build consists of, as ``annotation`` writes it and ``data_cards`` publishes it: the
verdicts, the issue tags, and the agreement among the reviewers (Fleiss' kappa, raw agreement, Gwet's AC1).

Here, below both layers, so that a release's card recomputes the agreement of a ``review.json`` with the same code
that wrote it, without importing the Label Studio side.
"""

from __future__ import annotations

from typing import Mapping, Sequence

VERDICTS = ("accept", "fix", "reject")
ISSUE_TAGS = ("ambiguous", "annotation error", "image unsuitable", "wording", "trivial", "minor detail")
"""Issue tags: the issue's four, plus two from Reefknot A.2 (trivial/image-independent questions, minor details)."""


def fleiss_kappa(rows: Sequence[Mapping[str, int]], categories: Sequence[str] = VERDICTS) -> float | None:
    """Fleiss' kappa of items each rated by the same number of raters, by statsmodels'
    :func:`~statsmodels.stats.inter_rater.fleiss_kappa`.

    ``rows``: per item, the number of raters per category. ``None`` when undefined: no items, fewer than two
    raters, or every rating in a single category (chance agreement 1).
    """
    from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_kappa  # the annotation extra

    table = [[r.get(c, 0) for c in categories] for r in rows]
    table = [counts for counts in table if sum(counts) > 0]
    if not table:
        return None
    n = sum(table[0])
    if n < 2 or any(sum(counts) != n for counts in table):
        raise ValueError("Fleiss' kappa needs the same number (>= 2) of ratings per item")
    totals = [sum(column) for column in zip(*table)]
    if max(totals) == sum(totals):  # one category only: chance agreement 1, kappa 0/0
        return None
    return float(statsmodels_kappa(table, method="fleiss"))


def raw_agreement(rows: Sequence[Mapping[str, int]], categories: Sequence[str] = VERDICTS) -> float | None:
    """Observed agreement: the share of agreeing pairs of raters, averaged over items (Fleiss' P-bar).

    Items with fewer than two ratings are left out; ``None`` when none is left.
    """
    shares = []
    for r in rows:
        n = sum(r.get(c, 0) for c in categories)
        if n >= 2:
            shares.append((sum(r.get(c, 0) ** 2 for c in categories) - n) / (n * (n - 1)))
    return sum(shares) / len(shares) if shares else None


def gwet_ac1(rows: Sequence[Mapping[str, int]], categories: Sequence[str] = VERDICTS) -> float | None:
    """Gwet's AC1 for several raters (Gwet 2008, "Computing inter-rater reliability and its variance in the
    presence of high agreement", Br. J. Math. Stat. Psychol. 61:29-48).

    ``(p_a - p_e) / (1 - p_e)`` with ``p_a`` the raw agreement and ``p_e = sum_k pi_k (1 - pi_k) / (q - 1)``,
    ``pi_k`` the share of ratings in category ``k`` and ``q`` the number of categories. Unlike kappa, whose chance
    term grows towards 1 when nearly every verdict is "accept" (the kappa paradox), AC1's chance term shrinks
    then, so high raw agreement is not reported as poor agreement. ``None`` when undefined.
    """
    rows = [r for r in rows if sum(r.get(c, 0) for c in categories) >= 2]
    pa = raw_agreement(rows, categories)
    if pa is None or len(categories) < 2:
        return None
    total = sum(sum(r.get(c, 0) for c in categories) for r in rows)
    pi = [sum(r.get(c, 0) for r in rows) / total for c in categories]
    pe = sum(x * (1 - x) for x in pi) / (len(categories) - 1)
    return (pa - pe) / (1 - pe) if pe < 1 else None


def agreement_figures(rows: Sequence[Mapping[str, int]]) -> dict[str, float | None]:
    """Fleiss' kappa, raw agreement and Gwet's AC1 of the verdicts, rounded to 6 places for the files."""
    try:
        kappa = fleiss_kappa(rows)
    except ValueError:  # unequal numbers of ratings (a hand-edited review): raw agreement and AC1 still hold
        kappa = None
    out = {"fleiss_kappa": kappa, "raw_agreement": raw_agreement(rows), "gwet_ac1": gwet_ac1(rows)}
    return {k: None if v is None else round(v, 6) for k, v in out.items()}


RECHECK_FILE = "recheck.json"
"""Beside ``review.json``: the re-reviews of items a model health check suspected (``annotation pull
--recheck``), one round per Label Studio project, ``{"rounds": {project: {"pulled_at", "health", "items"}}}``."""

RECHECK_DECISIONS = ("keep", "fix", "drop")


def apply_rechecks(items: Mapping[str, Mapping], recheck: Mapping | None,
                   built: Mapping[str, str] | None = None) -> dict[str, dict]:
    """``review.json``'s ``items`` with the decisions of the re-reviews on top, rounds in the order pulled.

    Why here: ``annotation`` writes ``reviewed.jsonl`` from it and ``data_cards`` checks a release against it,
    and both must agree on what a re-review changed. A re-review that reached a decision wins over the first
    review: ``fix`` sets the answer, ``drop`` drops the item, ``keep`` confirms the answer it was shown (the
    first review's, fixed or not). An item the re-review left undecided keeps its first decision. Every
    re-reviewed entry carries ``recheck``: the round's project, its decision, votes, the answer before and the
    models' answer that made it a suspect.

    ``built`` (item id -> the answer the builder gave): a re-review that "fixes" an item back to that answer
    restores it, so the item is ``keep`` again, not a ``fix`` whose builder labels would be filed as superseded
    (issue 51)."""
    out = {iid: dict(entry) for iid, entry in items.items()}
    rounds = sorted(((recheck or {}).get("rounds") or {}).values(), key=lambda r: str(r.get("pulled_at") or ""))
    for rnd in rounds:
        for iid, entry in (rnd.get("items") or {}).items():
            base = dict(out.get(iid) or {})
            note = {"project": rnd.get("project"), "status": entry.get("status"), "votes": entry.get("votes"),
                    "before": entry.get("before"), "answer": entry.get("answer"), "models": entry.get("models")}
            if entry.get("status") == "fix" and built is not None and entry.get("answer") == built.get(iid):
                base["status"] = "keep"  # back to the builder's answer: its labels hold again
                for key in ("answer", "answer_label"):
                    base.pop(key, None)
            elif entry.get("status") == "fix":
                base.update(status="fix", answer=entry.get("answer"), answer_label=entry.get("answer_label"))
            elif entry.get("status") == "drop":
                base["status"] = "drop"
            base["recheck"] = note
            out[iid] = base
    return out
