"""Snapshot tests of the MIOH wording: every template variant rendered for fixed probes.

A change of wording must be deliberate: regenerate with ``MIRAGE_UPDATE_SNAPSHOTS=1 python -m pytest tests/templates``
and review the diff of ``snapshots/mioh.txt``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from builders.mioh.questions import Spec
from builders.mioh.render import Claim, Wording, claim_text, prioritize
from sources.errors import ConfigError
from templates.loader import load_templates, render, with_article

SNAPSHOT = Path(__file__).parent / "snapshots" / "mioh.txt"

PROBES = {
    "existence": ("dog", "apple"),
    "attribute": (("red", "scarf"), ("striped", "mouse_(computer_equipment)")),
    "position": (("dog", "next to", "cat"), ("umbrella", "above", "person")),
}


def specs() -> list[tuple[str, Spec]]:
    out = []
    for task, (probe, other) in PROBES.items():
        out += [
            ("all", Spec(task, "comprehensive", "all", (0, 1, 2, 3), probe=probe, options=(probe, other))),
            ("any", Spec(task, "comprehensive", "any", (0, 1, 2, 3), probe=probe)),
            ("which", Spec(task, "selective", "which", (0, 1, 2, 3), probe=probe)),
        ]
        if task == "position":
            out += [("pair-2", Spec(task, "comparative", "pair", (0, 1), probe=probe, pair=(0, 1))),
                    ("pair-4", Spec(task, "comparative", "pair", (0, 1, 2, 3), probe=probe, pair=(2, 0)))]
        else:
            out.append(("differs", Spec(task, "comparative", "differs", (0, 1, 2, 3), probe=probe, options=(probe, other), pair=(1, 3))))
    out += [
        ("total", Spec("counting", "comprehensive", "total", (0, 1), probe="zebra", options=(3, 4, 5, 6))),
        ("most", Spec("counting", "comparative", "most", (0, 1, 2), probe="zebra")),
        ("fewest", Spec("counting", "comparative", "fewest", (0, 1, 2), probe="zebra")),
        ("exact", Spec("counting", "selective", "exact", (0, 1, 2, 3), probe="backpack", count=1)),
        ("exact", Spec("counting", "selective", "exact", (0, 1, 2, 3), probe="sandwich", count=2)),
        ("most", Spec("counting", "comparative", "most", (0, 1, 2), probe="skis")),  # a category named by its pair
        ("any", Spec("existence", "comprehensive", "any", (0, 1, 2, 3), probe="skis")),
    ]
    return out


def rendered() -> str:
    lines = []
    for name, spec in specs():
        w = Wording(spec.task)
        lines.append(f"[{spec.task}/{name}] {w.question(spec)}")
        lines.append("    " + " | ".join(w.options(spec)))
    claims = [
        ("existence", Claim("absent", "dog")), ("existence", Claim("present", "apple", image=2)),
        ("existence", Claim("present", "dog")), ("attribute", Claim("absent", ("black", "cup"))),
        ("position", Claim("present", ("dog", "left of", "cat"), image=0)),
        ("counting", Claim("count", "backpack", image=1, value=2)), ("counting", Claim("total", "zebra", value=7)),
        ("counting", Claim("extreme", "zebra", image=3, extreme="most")),
        ("counting", Claim("count", "person", image=0, value=1)), ("existence", Claim("absent", "scissors")),
    ]
    for task, claim in claims:
        w = Wording(task)
        kind, clause = claim_text(w, claim)
        for pressure in ("sycophantic", "instructional_override"):
            variants = w.linguistic[pressure][kind]
            field = "negated" if kind == "deny" else "clause"
            lines.append(f"[{task}/{pressure}/{kind}] " + render(variants[0], **{field: clause}))
    lines.append("[prioritize] " + prioritize(Wording("existence"), "Is there at least one dog in any of these images?"))
    return "\n".join(lines) + "\n"


def test_rendered_templates_match_the_snapshot():
    text = rendered()
    if os.environ.get("MIRAGE_UPDATE_SNAPSHOTS"):
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(text)
    assert text == SNAPSHOT.read_text(), "wording changed: review and regenerate the snapshot"


def test_paper_wording_is_kept():
    """Figures I-II of the paper, word for word where the paper gives them."""
    text = SNAPSHOT.read_text()
    assert "Which of the following objects appears in all of these images?" in text
    assert "Yes, all of them | Yes, in some of them | No, in none of them | I don't know" in text
    # the paper's "exactly 1 'backpack'(s)" is written in English number instead (issue 37)
    assert "In which image can you find exactly 1 backpack?" in text
    assert "exactly 2 sandwiches?" in text and "'(s)" not in text
    assert "Both | Neither | Image 1 | Image 2" in text
    assert "Which of the following is present in Image 2 but not in Image 4?" in text
    assert "mouse (computer equipment)" in text


def test_includes_merge_shared_parts_without_copies():
    existence = load_templates("mioh", "existence")
    assert existence["none_of_the_above"] == "None of the above"  # from common.yaml
    assert existence["task"] == "existence"
    raw = (Path(__file__).resolve().parents[2] / "templates" / "mioh" / "existence.yaml").read_text()
    assert "None of the above" not in raw


def test_render_refuses_missing_fields_and_articles_are_english():
    with pytest.raises(ConfigError, match="object"):
        render("a {object}")
    assert with_article("apple") == "an apple" and with_article("dog") == "a dog"


def test_linguistic_variants_never_leak_the_answer_letter():
    for pressure in ("sycophantic", "instructional_override"):
        for kind, variants in load_templates("mioh", "linguistic")[pressure].items():
            for v in variants:
                assert "{negated}" in v or "{clause}" in v
