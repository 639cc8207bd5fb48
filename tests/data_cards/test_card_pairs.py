"""The card's pair figures come from the released items: an item dropped in review takes its pair out of the
paired count, and its partner stays in the release, unpaired."""

from __future__ import annotations

from builders.items import make_item
from builders.pairs import pair_provenance
from data_cards.card_creation import pairs_text
from data_cards.statistics import compute_stats


def test_a_dropped_item_leaves_its_partner_released_and_unpaired():
    items = [make_item(benchmark="mmsap", task="basic", question_type="color", pressure="none",
                       images=[f"{k}.png"], question=f"Q{k // 2}?", options=("w", "x"), answer="AB"[k % 2],
                       provenance=pair_provenance(f"p{k // 2}", "ab"[k % 2])) for k in range(6)]
    kept = items[1:]  # the reviewers dropped item 0 (pair p0, role a)
    stats = compute_stats(kept, {it.id: "accepted" for it in kept})
    assert stats["num_items"] == 5
    assert stats["pairs"]["all"] == {"items": 5, "paired": 4, "pairs": 2, "unpaired": 1, "share": 0.8}
    text = pairs_text(stats["pairs"])
    assert "4 of 5 items (80%) are in 2 complete pairs" in text and "group_accuracy" in text
    assert "does not apply" in pairs_text(compute_stats(items[:1], {items[0].id: "accepted"})["pairs"])
