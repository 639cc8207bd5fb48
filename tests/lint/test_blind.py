"""The blind audit finds shortcuts nobody wrote a rule for, and stays quiet where there is none.

Shortcuts are planted into real demo builds (MIOH and Reefknot, built as a user builds them). Each plant first
draws every item's gold at random (seeded), which removes whatever the build's own text gives away, then ties a
marker to the gold: the context denies the gold option, the gold is the second smallest number, the subject noun
follows from the gold relation, one question word says "yes", the context mentions the gold. None of these has a
rule in :mod:`builders.lint.blind`; the learner must find each from generic features. The **control** ties the
same marker to a random choice instead of the gold: it must not be flagged, in at most 1 of 20 seeds.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import re
from pathlib import Path
from typing import Callable

import pytest

from builders.items import OPTION_LETTERS, Item, read_items
from tests.conftest import have, require

pytestmark = pytest.mark.slow

CONTROL_SEEDS = 20


@pytest.fixture(scope="module", autouse=True)
def learner() -> None:
    require(have("sklearn"), "scikit-learn (the blind audit's learner)", "pip install -e '.[lint]'")


@pytest.fixture(scope="module")
def mioh_items(tmp_path_factory) -> list[Item]:
    from builders import mioh

    out = tmp_path_factory.mktemp("mioh")
    assert mioh.main(["--n-images", "4", "--out", str(out), "--name", "b", "--no-progress",
                      "--cache-dir", os.environ["MIRAGE_CACHE_DIR"]]) == 0
    return read_items(out / "b" / "items.jsonl")


@pytest.fixture(scope="module")
def reefknot_items(tmp_path_factory) -> list[Item]:
    from builders import reefknot

    out = tmp_path_factory.mktemp("reefknot")
    assert reefknot.main(["--out", str(out), "--name", "b", "--no-progress",
                          "--cache-dir", os.environ["MIRAGE_CACHE_DIR"]]) == 0
    return read_items(out / "b" / "items.jsonl")


Marker = Callable[[Item, int, random.Random], Item]
"""Rewrites an item's text so that it points at choice ``k``."""


def choices(item: Item) -> tuple[str, ...]:
    return item.options or ("yes", "no")


def with_gold(item: Item, k: int, **changes) -> Item:
    answer = OPTION_LETTERS[k] if item.options else ("yes", "no")[k]
    return dataclasses.replace(item, answer=answer, **changes)


def balanced_golds(items: list[Item], rng: random.Random) -> list[int]:
    """A random gold per item with every answer letter equally often within each pressure and question type, as
    a builder balances them: a letter that happens to be drawn more often in one cell is a shortcut of its own."""
    golds = [0] * len(items)
    strata: dict[tuple, list[int]] = {}
    for i, it in enumerate(items):
        strata.setdefault((it.pressure, it.question_type, len(choices(it))), []).append(i)
    for (_, _, n), members in sorted(strata.items()):
        rng.shuffle(members)
        offset = rng.randrange(n)
        for j, i in enumerate(members):
            golds[i] = (j + offset) % n
    return golds


def plant(items: list[Item], marker: Marker, seed: int, on_gold: bool) -> list[Item]:
    """Every item with a random (balanced) gold; ``marker`` points at the gold (a plant) or at a random choice
    (control)."""
    rng = random.Random(seed)
    out = []
    for it, k in zip(items, balanced_golds(items, rng)):
        target = k if on_gold else rng.randrange(len(choices(it)))
        out.append(with_gold(marker(it, target, rng), k))
    return out


def context_denies(item: Item, k: int, rng: random.Random) -> Item:
    return dataclasses.replace(item, context=f"I checked twice: the answer is certainly not {choices(item)[k]}.")


def context_mentions(item: Item, k: int, rng: random.Random) -> Item:
    return dataclasses.replace(item, context=f"A friend who saw these pictures talked about {choices(item)[k]}.")


SUBJECTS = ["vase", "kettle", "lantern", "anchor", "saddle", "trumpet", "compass", "helmet", "pillow", "ladder"]


def subject_from(item: Item, k: int, rng: random.Random) -> Item:
    """The question's subject noun becomes a function of choice ``k``'s relation text."""
    noun = SUBJECTS[sum(map(ord, choices(item)[k])) % len(SUBJECTS)]
    return dataclasses.replace(item, question=re.sub(r"between the \w+", f"between the {noun}", item.question, 1))


def yes_word(item: Item, k: int, rng: random.Random) -> Item:
    """"clearly" appears in the question exactly when choice ``k`` is "yes"."""
    question = item.question.replace("Is the ", "Is the clearly ", 1) if k == 0 else item.question
    return dataclasses.replace(item, question=question)


def numeric(items: list[Item], seed: int, on_gold: bool) -> list[Item]:
    """The gold is the second smallest number (a plant) or a random option (control)."""
    golds = balanced_golds(items, random.Random(seed))
    out = []
    for it, k in zip(items, golds):
        values = sorted((int(o), j) for j, o in enumerate(it.options) if o.isdigit())
        out.append(with_gold(it, values[1][1] if on_gold else k))
    return out


def flagged(items: list[Item]) -> list[str]:
    from builders.lint.blind import audit

    return audit(items)["flagged"]


def task(items: list[Item], name: str, kind: str) -> list[Item]:
    keep = [it for it in items if it.task == name]
    if kind == "mcq":
        return [it for it in keep if it.options]
    if kind == "yes_no":
        return [it for it in keep if not it.options and it.answer in ("yes", "no")]
    if kind == "numbers":
        return [it for it in keep if sum(bool(re.fullmatch(r"\d+", o)) for o in it.options) >= 3]
    return keep


CASES = {
    "the gold is the option the context denies": ("mioh", "existence", "mcq", context_denies),
    "the context mentions the gold option": ("mioh", "attribute", "mcq", context_mentions),
    "the relation follows from the subject noun": ("reefknot", "perception", "mcq", subject_from),
    "one question word predicts yes/no": ("reefknot", "perception", "yes_no", yes_word),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_planted_shortcut_is_flagged_and_its_control_is_not(case, request):
    source, name, kind, marker = CASES[case]
    items = task(request.getfixturevalue(f"{source}_items"), name, kind)
    assert len(items) >= 40, (case, len(items))
    assert f"{source}/{name}" in flagged(plant(items, marker, seed=0, on_gold=True)), case
    controls = [flagged(plant(items, marker, seed, on_gold=False)) for seed in range(CONTROL_SEEDS)]
    assert sum(bool(f) for f in controls) <= 1, (case, controls)


def test_the_second_smallest_number_is_flagged_and_a_random_number_is_not(mioh_items):
    items = task(mioh_items, "counting", "numbers")  # comprehensive counts: four numbers and "None of the above"
    assert len(items) >= 30, len(items)
    assert "mioh/counting" in flagged(numeric(items, 0, on_gold=True))
    controls = [flagged(numeric(items, seed, on_gold=False)) for seed in range(CONTROL_SEEDS)]
    assert sum(bool(f) for f in controls) <= 1, controls


def test_the_audit_is_reproducible_across_processes(mioh_items, tmp_path):
    """The same items give byte-identical audits in processes with different string hashing (the features are
    built from sets of words)."""
    import subprocess
    import sys

    from builders.items import write_items

    path = tmp_path / "items.jsonl"
    write_items(path, task(mioh_items, "attribute", "mcq"))
    code = ("import sys; from builders.items import read_items, canonical_json; from builders.lint.blind import audit; "
            "print(canonical_json(audit(read_items(sys.argv[1]))))")
    root = Path(__file__).resolve().parents[2]
    outs = [subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(root)}).stdout
            for seed in ("1", "2")]
    assert outs[0] == outs[1] and '"cells"' in outs[0]


def test_items_over_the_same_images_are_never_on_both_sides(mioh_items, monkeypatch):
    """Twins over the same images (MM-SAP's shuffles, MIOH's decomposed questions) fall in one fold; split item by
    item (the grouping switched off) they would not."""
    from builders.lint import blind

    base = task(mioh_items, "position", "mcq")
    twins = base + [dataclasses.replace(it, question=it.question + " Look again.",
                                        images=tuple(reversed(it.images))) for it in base]

    def split_sets() -> int:
        folds = blind.folds_of(twins, list(range(len(twins))))
        assert len(folds) == blind.FOLDS and sorted(i for f in folds for i in f) == list(range(len(twins)))
        where = {}
        for n, fold in enumerate(folds):
            for i in fold:
                where.setdefault(frozenset(twins[i].images), set()).add(n)
        return sum(len(folds_of_set) > 1 for folds_of_set in where.values())

    assert split_sets() == 0
    monkeypatch.setattr(blind, "image_set", lambda it: it.question + "|".join(it.images))
    assert split_sets() > 0


def _blind_cells(section: dict) -> dict[str, tuple]:
    audit = section["checks"]["independence"]["summary"]["blind"]
    return {c["cell"]: (c["accuracy"], c["low95"], c["flagged"], c.get("twinned", False)) for c in audit["cells"]}


def test_popev2_gets_one_verdict_on_its_file_and_its_import_and_twins_are_not_flagged(tmp_path):
    """Issue 54: the file flagged POPEv2's "normal" setting (60 %), its import did not (44 %). Each question is
    asked of an image and of its edited copy with the other answer: a text-only learner cannot tell the two
    apart, so a setting's figure is noise, and the two routes (the same items in another order) must agree."""
    from builders.imports.cli import main as import_main
    from lint.cli import main as lint_main
    from tests.lint.test_imports import write_popev2

    source = write_popev2(tmp_path, 300)
    assert lint_main([str(source), "--format", "pope", "--out", str(tmp_path / "o"), "--checks", "independence"]) == 0
    assert import_main(["pope", str(source), "--out", str(tmp_path / "b"), "--name", "v2"]) == 0
    by_file = _blind_cells(json.loads((tmp_path / "o" / "lint.json").read_text()))
    by_import = _blind_cells(json.loads((tmp_path / "b" / "v2" / "build.json").read_text())["lint"])
    assert by_file == by_import
    settings = {name: cell for name, cell in by_file.items() if "pressure=" in name}
    assert len(settings) == 2 and all(twinned and not flag for _, _, flag, twinned in settings.values())
    # the control: the edited image's question says so, the learner can tell the twins apart, and the setting
    # whose answers lean (two "no" in three) is flagged
    rows = json.loads(source.read_text())
    for row in rows:
        if row["image_name"].startswith("/images/"):
            row["query"] = row["query"].replace("the image", "the edited image")
    source.write_text(json.dumps(rows))
    assert lint_main([str(source), "--format", "pope", "--out", str(tmp_path / "o2"), "--checks",
                      "independence"]) == 0
    told = _blind_cells(json.loads((tmp_path / "o2" / "lint.json").read_text()))
    assert told["pope/existence pressure=counterfactual"][2:] == (True, False)


def test_the_verdict_does_not_depend_on_the_order_of_the_items(mioh_items):
    from builders.lint.blind import audit

    items = task(mioh_items, "attribute", "mcq")
    cells = [audit(order)["cells"] for order in (items, items[::-1])]
    assert cells[0] == cells[1]
