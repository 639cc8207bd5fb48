"""The blind audit's learner on pairs: a guess left at chance is no answer, and only a wholly right pair counts."""

from __future__ import annotations

from builders.items import make_item
from builders.lint.blind_pairs import learner_pairs
from builders.pairs import pair_provenance


def test_learner_pairs_counts_whole_pairs_and_chance_as_wrong():
    items = [make_item(benchmark="mioh", task="existence", question_type="selective", pressure="easy",
                       images=[f"{k}.png"], question=f"Q{k // 2}?", options=("w", "x"), answer="AB"[k % 2],
                       provenance=pair_provenance(f"p{k // 2}", "ab"[k % 2])) for k in range(4)]
    result = learner_pairs(items, {0: 1.0, 1: 0.5, 2: 1.0, 3: 1.0})  # p0: right + left at chance; p1: both right
    assert result == {"question_accuracy": 0.75, "group_accuracy": 0.5, "pairs": 2, "unpaired": 0}
