"""A small hand-made MIOH build (and its release) whose every metric can be computed by hand in the tests.

Twelve comprehensive/comparative/selective items over two tasks and all six pressures, one number-of-images family
per task, "None of the above" and "I don't know" options, and two decomposed groups (Sec. 5.5) of single-image
yes/no questions. Images are tiny PNGs, each a different colour (the stand-in model finds items by image hash).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from builders.items import Item, make_item, write_items

NOTA = "None of the above"
SHAPES = ("cat", "dog", "cow", "bird", NOTA)
ANY = ("Yes, all of them", "Yes, in some of them", "No, in none of them", "I don't know")
COUNTS = ("1", "2", "3", "4", NOTA)

# (key, task, question type, pressure, n images, options, answer, family)
SPECS: list[tuple[str, str, str, str, int, tuple[str, ...], str, str | None]] = [
    ("e1", "existence", "comprehensive", "easy", 2, SHAPES, "B", None),
    ("e2", "existence", "selective", "easy", 2, ("Image 1", "Image 2", NOTA), "C", None),
    ("e3", "existence", "comparative", "hard_negative", 2, SHAPES, "A", None),
    ("e4", "existence", "comprehensive", "hard_positive", 2, ANY, "B", None),
    ("e5", "existence", "selective", "sycophantic", 2, ("Image 1", "Image 2", NOTA), "A", None),
    ("e6", "existence", "comparative", "instructional_override", 2, SHAPES, "C", None),
    ("e7", "existence", "selective", "n_images", 2, ("Image 1", "Image 2", NOTA), "A", "fe"),
    ("e8", "existence", "selective", "n_images", 4, ("Image 1", "Image 2", "Image 3", "Image 4", NOTA), "B", "fe"),
    ("c1", "counting", "comprehensive", "easy", 2, COUNTS, "A", None),
    ("c2", "counting", "comparative", "hard_negative", 2, COUNTS, "E", None),
    ("c3", "counting", "selective", "sycophantic", 2, COUNTS, "B", None),
    ("c4", "counting", "comprehensive", "n_images", 2, COUNTS, "B", "fc"),
]
DECOMPOSED = {"e1": ("yes", "yes"), "e4": ("yes", "no")}
"""Per decomposed parent: the truth of "Is there a cat in this image?" for each of its images."""


def draw(path: Path, n: int) -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (6, 6), ((40 * n) % 256, (90 * n + 30) % 256, (17 * n + 200) % 256)).save(path)


def make_mioh_build(root: Path, name: str = "hand") -> tuple[Path, dict[str, Item]]:
    """``root/builds/mioh/<name>`` and its items by key (``e1``.. and ``e1/0``, ``e1/1`` for decomposed ones)."""
    build = root / "builds" / "mioh" / name
    n = 0
    by_key: dict[str, Item] = {}
    for key, task, qtype, pressure, n_images, options, answer, family in SPECS:
        images = []
        for _ in range(n_images):
            n += 1
            images.append(f"images/img-{n:03d}.png")
            draw(build / images[-1], n)
        prov: dict[str, Any] = {"n_images": n_images, "template": f"mioh/{task}/{qtype}/x", "probe": "cat"}
        if family:
            prov.update(family=family, family_sizes=[2, 4])
        context = "I am quite sure there is none." if pressure in ("sycophantic", "instructional_override") else ""
        by_key[key] = make_item(benchmark="mioh", task=task, question_type=qtype, pressure=pressure, images=images,
                                question=f"Question {key}: which one?", options=options, answer=answer,
                                context=context, provenance=prov)
    for key, truths in DECOMPOSED.items():
        parent = by_key[key]
        for k, (image, truth) in enumerate(zip(parent.images, truths)):
            by_key[f"{key}/{k}"] = make_item(
                benchmark="mioh", task="existence", question_type="decomposed", pressure=parent.pressure,
                images=[image], question="Is there a cat in this image?", options=(), answer=truth,
                provenance={"groups": [parent.id], "group_sizes": {parent.id: len(truths)}, "probe": "cat"})
    write_items(build / "items.jsonl", by_key.values())
    (build / "build.json").write_text(json.dumps({"benchmark": "mioh", "name": name, "seed": 0, "config": {}}))
    return build, by_key


def make_mioh_release(root: Path) -> tuple[Path, Path, dict[str, Item]]:
    """(build dir, release dir, items by key): the build released as 1.0.0 without review."""
    from data_cards.release import release
    from tests.conftest import require_release_extra

    require_release_extra()
    build, by_key = make_mioh_build(root)
    return build, release(build, "1.0.0", include_unreviewed=True, out=root / "releases").path, by_key
