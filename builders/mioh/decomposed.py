"""The decomposed ablation (paper Sec. 5.5): every comprehensive existence item, asked again image by image.

With ``--decomposed`` a build also holds, for each comprehensive existence item ("Which of the following objects
appears in all of these images?", "Is there at least one X in any of these images?"), one single-image yes/no
question per image, "Is there a {object} in this image?" (``templates/mioh/decomposed.yaml``), whose answer is the
image's own label for the item's probe (``provenance.images[k].label``: ``pos`` -> yes, ``neg`` -> no). The
scorer (:mod:`scoring.mioh`) counts a group correct when all its questions are answered correctly and compares
that with the multi-image accuracy (Fig. 5).

Choices where the paper is silent:

* the questions carry no linguistic context, also for items under sycophantic / instructional-override
  pressure: the ablation isolates the multi-image *visual* setting ("identical visual content"); the parent's
  pressure is kept as the question's ``pressure`` so the comparison can be broken down by it;
* the object asked about is the item's probe: for "any" items the object of the question, for "all" items the
  object the answer hinges on (the right option, or the near miss when "None of the above" is right);
* question type ``decomposed``, so every other MIOH table leaves them out;
* an item id is a hash of what the model sees, so the same image asked about the same object is *one* question
  even when several comprehensive items share it: ``provenance.groups`` lists every parent item id, and
  ``provenance.group_sizes`` their image counts (a group is complete when it has that many members);
* an item with an image whose label for the probe is unknown (neither verified present nor verified absent) is
  not decomposed (counted in ``build.json`` under ``decomposed.skipped``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Iterable

from builders.items import Item, make_item
from templates.loader import load_templates, render, with_article

QUESTION_TYPE = "decomposed"
TEMPLATE = "mioh/existence/decomposed/single"


def decompose(items: Iterable[Item]) -> tuple[list[Item], dict[str, Any]]:
    """The single-image questions of every comprehensive existence item, and counts for ``build.json``."""
    wording = load_templates("mioh", "decomposed")["question"]
    by_id: dict[str, Item] = {}
    parents = skipped = 0
    for parent in items:
        if parent.task != "existence" or parent.question_type != "comprehensive":
            continue
        probe = parent.provenance.get("probe")
        labels = [img.get("label") for img in parent.provenance.get("images", ())]
        if not isinstance(probe, str) or len(labels) != len(parent.images) or any(
                lab not in ("pos", "neg") for lab in labels):
            skipped += 1
            continue
        parents += 1
        question = render(wording, probe=with_article(probe))
        for k, (image, label) in enumerate(zip(parent.images, labels)):
            item = make_item(
                benchmark=parent.benchmark, task=parent.task, question_type=QUESTION_TYPE, pressure=parent.pressure,
                images=[image], question=question, options=(), answer="yes" if label == "pos" else "no",
                provenance={"template": TEMPLATE, "probe": probe, "label": label,
                            "source": parent.provenance.get("source"), "image": parent.provenance["images"][k]},
            )
            known = by_id.get(item.id)
            groups = dict(known.provenance["group_sizes"]) if known else {}
            groups[parent.id] = len(parent.images)
            provenance = {**item.provenance, "groups": sorted(groups), "group_sizes": dict(sorted(groups.items()))}
            by_id[item.id] = replace(item, provenance=provenance)
    return list(by_id.values()), {"parents": parents, "questions": len(by_id), "skipped": skipped}
