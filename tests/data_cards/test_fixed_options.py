"""The card says where a fixed option ("I don't know", "None of the above") is rarely the gold (issue 40)."""

from __future__ import annotations

from builders.items import make_item
from data_cards.card_limitations import derived_limitations
from data_cards.statistics import compute_stats


def _items(refusal_gold: int, n: int = 12):
    options = ("Yes, in all of them", "Yes, in some of them", "No, in none of them", "I don't know")
    return [make_item(benchmark="t", task="x", question_type="comprehensive", pressure="easy", images=[f"{k}.jpg"],
                      question=f"Is there a shape {k}?", options=options,
                      answer="D" if k < refusal_gold else "ABC"[k % 3], provenance={"template": "t/x/any"})
            for k in range(n)]


def test_a_fixed_option_never_right_is_a_derived_limitation():
    stats = compute_stats(items := _items(0), {it.id: "unreviewed" for it in items})
    refusal = next(f for f in stats["fixed_options"] if f["option"] == "I don't know")
    assert refusal == {"template": "t/x/any", "option": "I don't know", "offered": 12, "correct": 0, "fair": 3.0}
    text = derived_limitations({**stats, "task_pressure": {}}, {})
    assert "\"I don't know\" is offered in 12 items and correct in 0" in text


def test_a_fixed_option_at_its_fair_share_is_not():
    stats = compute_stats(items := _items(3), {it.id: "unreviewed" for it in items})
    assert "I don't know" not in derived_limitations({**stats, "task_pressure": {}}, {})
