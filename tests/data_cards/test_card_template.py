"""The card template is Jinja rendered by ``huggingface_hub``'s ``DatasetCard.from_template``, which renders a
placeholder it has no value for as an empty string: the card refuses such a template instead."""

from __future__ import annotations

import pytest

from builders.items import make_item
from tests.conftest import require_release_extra

require_release_extra()  # data_cards.card renders the card with huggingface_hub and jinja2

from data_cards.card import TEMPLATE_PATH, render_card, split_card  # noqa: E402
from data_cards.statistics import compute_stats  # noqa: E402

CONFIGS = [{"name": "all", "glob": "data/test-*.parquet", "num_examples": 2, "num_bytes": 10, "download_size": 10,
            "default": True, "task": None}]


def _card(template_path=TEMPLATE_PATH) -> str:
    items = [make_item(benchmark="toy", task="existence", question_type="yes_no", pressure="easy", images=["a.png"],
                       question=f"Is there a cat {k}?", options=(), answer="yes") for k in range(2)]
    return render_card(version="1.0.0", name="toy", build={"benchmark": "toy", "name": "toy-seed0", "seed": 0},
                       stats=compute_stats(items, {it.id: "unreviewed" for it in items}), configs=CONFIGS,
                       review=None, excluded={}, template_path=template_path)


def test_a_placeholder_without_a_value_is_refused_by_name(tmp_path):
    template = tmp_path / "card.md"
    template.write_text("---\n{{ card_data }}\n---\n\n# {{ pretty_name }}\n\n{{ pretty_nmae }}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"card\.md: placeholder\(s\) pretty_nmae have no value"):
        _card(template)


def test_every_placeholder_of_the_template_is_filled():
    card = _card()
    meta, body = split_card(card)
    assert meta["pretty_name"] == "Mirage toy" and body.startswith("\n# Dataset Card for Mirage toy\n")
    assert "**2 items** in **1 task(s)**" in body and "{{" not in body.replace("{{ }} placeholders", "")
    assert card.endswith("`manifest.json`.\n")  # one newline at the end, as the template has
