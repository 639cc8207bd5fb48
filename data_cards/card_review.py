"""The card's "Annotations" section and its warnings: who reviewed the release, how the review decided, how far
the reviewers agreed, and - in bold - what no person checked."""

from __future__ import annotations

from typing import Any, Mapping

from .rechecks import recheck_lines
from .tables import md_table, short

OUTCOMES = ("total", "keep", "fix", "drop", "adjudicate", "pending")
TAG_OUTCOMES = ("kept or fixed", "dropped", "undecided")


def review_values(
    review: Mapping[str, Any] | None, stats: Mapping[str, Any], excluded: Mapping[str, int]
) -> dict[str, str]:
    """The template's values for this section (``review``: the build's review summary, ``None`` when the release
    was made without one)."""
    if review is None:
        return {
            "unreviewed_warning": (
                "> **Warning: this release was not reviewed by people.** It was made with `--include-unreviewed` "
                "from a build that has no human review; answers come from the source annotations alone.\n"
            ),
            "annotation_process": (
                "None: this release was made with `--include-unreviewed` and **no item was reviewed by people**. "
                "Answers come from the source annotations through the builder's templates."
            ),
            "annotators": "No human annotators reviewed this release.",
            "review_limitation": "No human review checked them in this release.",
        }
    n_unrev = stats["review_status"].get("unreviewed", 0)
    return {
        "unreviewed_warning": (
            f"> **Warning: {n_unrev} of {stats['num_items']} items were not reviewed by people** (released with "
            "`--include-unreviewed`; their `review_status` is `unreviewed`).\n"
            if n_unrev
            else ""
        ),
        "annotation_process": _annotation_process(review, stats, excluded),
        "annotators": _annotators(review.get("reviewers") or []),
        "review_limitation": (
            "Human reviewers checked the released answers (see Annotations)."
            if not n_unrev
            else f"{n_unrev} released items were not checked by people."
        ),
    }


def _annotation_process(review: Mapping[str, Any], stats: Mapping[str, Any], excluded: Mapping[str, int]) -> str:
    """How the review ran and what it decided, over the build and in this release."""
    counts = review.get("counts") or {}
    counts_table = md_table(["outcome", "items"], [(f"`{k}`", counts[k]) for k in OUTCOMES if k in counts])
    released = md_table(["review_status", "items"], [(f"`{k}`", v) for k, v in stats["review_status"].items()])
    excluded_text = (
        "Left out of this release: " + ", ".join(f"{v} `{k}`" for k, v in sorted(excluded.items())) + "."
        if excluded
        else "No reviewed item was left out except those the reviewers dropped."
    )
    adjudicated = int(review.get("adjudicated") or 0)
    adjudicated_text = (
        f"**{adjudicated} item(s) had no majority and were settled by the maintainer's adjudication** "
        "(their `review_status` is the adjudicated outcome)."
        if adjudicated
        else "No item was settled by adjudication."
    )
    problems = review.get("problems") or []
    problems_text = (
        "Problems reported by the review:\n\n" + "\n".join(f"- {short(p, 200)}" for p in problems)
        if problems
        else "The review reported no problems."
    )
    text = (
        "Every item of the build was put to human reviewers in Label Studio (project "
        f"`{short(review.get('project'), 60)}`, exported {review.get('pulled_at') or 'at an unrecorded time'}). "
        f"{review.get('overlap') or 3} reviewers see each item; each accepts it, fixes its answer, or rejects it; "
        "the majority decides "
        "(`keep`, `fix`: answer corrected, `drop`), and items without a majority go to adjudication. Only kept "
        "and fixed items are released unless the release says otherwise.\n\n"
        f"Review outcome over the build:\n\n{counts_table}\n\nIn this release:\n\n{released}\n\n{excluded_text}\n\n"
        f"{adjudicated_text}\n\n{_agreement_text(review)}\n\n{_issues_text(review)}\n\n{problems_text}\n\n"
        f"{_ledger_text(review)}"
    )
    rechecked = recheck_lines(review.get("rechecked") or [])
    if rechecked:
        text += (
            "\n\nItems were sent back to three reviewers after several models agreed on another answer than "
            "the released one (`python -m scoring health`); the reviewers saw the models' answer beside the "
            "gold and decided by majority as before:\n\n" + "\n".join(rechecked))
    return text


def _issues_text(review: Mapping[str, Any]) -> str:
    tags = review.get("issue_tags") or {}
    if not tags:
        return "The reviewers tagged no issues."
    by_outcome = review.get("issue_tags_by_outcome") or {}
    return (
        "Issues the reviewers tagged, counted over every item of the build's review, **including the items they "
        "dropped**, which are not in this release (an item counts once per tag; it can have several), and what "
        "the review decided for those items:\n\n"
        + md_table(["issue", "items", *TAG_OUTCOMES],
                   [(t, n, *((by_outcome.get(t) or {}).get(o, 0) for o in TAG_OUTCOMES)) for t, n in tags.items()])
    )


def _annotators(reviewers: list[Mapping[str, Any]]) -> str:
    if not reviewers:
        return "The review export lists no reviewers."
    rows = [(r["id"], r["annotations"], _agreement_cell(r)) for r in reviewers]
    return (
        f"{len(reviewers)} reviewer(s) of the Mirage team, listed by anonymised id only (no names or e-mail "
        "addresses are published):\n\n" + md_table(["reviewer", "annotations", "agreement with majority"], rows)
    )


def _agreement_cell(r: Mapping[str, Any]) -> str:
    a = r.get("agreement_with_majority")
    if not isinstance(a, (int, float)):
        return "-"
    agreed, decided = r.get("agreed_items"), r.get("decided_items")
    frac = f" ({agreed}/{decided})" if isinstance(agreed, int) and isinstance(decided, int) else ""
    return f"{100 * a:.1f}%{frac}"


def _agreement_text(review: Mapping[str, Any]) -> str:
    def fmt(v: Any, pct: bool = False) -> str:
        if not isinstance(v, (int, float)):
            return "not computed"
        return f"{100 * v:.1f}%" if pct else f"{v:.3f}"

    n = review.get("rated_items")
    over = f" over the {n} items with all their votes" if isinstance(n, int) else ""
    return (
        f"Agreement between reviewers on the verdict (accept / fix / reject){over}: raw agreement "
        f"**{fmt(review.get('raw_agreement'), True)}** (the share of reviewer pairs giving the same verdict), "
        f"Gwet's AC1 **{fmt(review.get('gwet_ac1'))}**, Fleiss' kappa **{fmt(review.get('fleiss_kappa'))}**. "
        "Reading them: kappa corrects for chance with the verdicts' own shares, so when nearly every verdict is "
        "\"accept\" its chance term approaches 1 and kappa falls even though reviewers almost always agree (the kappa "
        "paradox); AC1 (Gwet 2008) uses a chance term that shrinks in that case, so read raw agreement and AC1 "
        "together, and kappa as a warning about the rare verdicts."
    )


def _ledger_text(review: Mapping[str, Any]) -> str:
    """What the counts above rest on: only votes the rooms' vote ledgers vouch for, or the maintainer's word."""
    left_out, accepted = review.get("votes_quarantined") or 0, review.get("votes_accepted_unverified") or 0
    text = ("Only votes the review rooms' vote ledgers vouch for are counted (each vote as its reviewer submitted "
            "it, unchanged by anyone else)")
    if left_out:
        text += f"; {left_out} vote(s) they did not vouch for were left out"
    if accepted:
        text += (f"; {accepted} vote(s) they did not vouch for were counted on the maintainer's word "
                 "(`pull --accept-unverified`)")
    return text + "."
