"""The question spec every MM-SAP source produces, before options are laid out.

A :class:`Question` is what was decided about one question - its subset (BasicVisQA, KnowVisQA, BeyondVisQA),
subtask, image, wording, right answer and wrong options - and :mod:`builders.mmsap.layout` turns it into items
(option order, refusal position, shuffled variants). Keeping the two apart lets the shuffled variants of
Sec. 4.2 share one decided question.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

from builders.items import canonical_json
from builders.pairs import pair_provenance

SUBSETS: tuple[str, ...] = ("basic", "know", "beyond")
"""BasicVisQA (known-knowns), KnowVisQA (known-knowns or known-unknowns), BeyondVisQA (known-unknowns)."""
SUBSET_NAMES: Mapping[str, str] = {"basic": "BasicVisQA", "know": "KnowVisQA", "beyond": "BeyondVisQA"}
BEYOND_CATEGORIES: tuple[str, ...] = (
    "nonexistent_objects", "background_information", "temporal_unpredictability",
    "missing_visual_information", "other_modalities", "intractable_quantity",
)
KNOW_DOMAINS: tuple[str, ...] = ("animals_plants", "brands_products", "art", "landmarks", "food", "organizations")
DEMO_BASIC_TYPES: tuple[str, ...] = ("color", "counting", "shape", "position")


@dataclass(frozen=True)
class Question:
    """One decided question: ``answer`` is ``None`` in BeyondVisQA, whose only aware answer is the refusal."""

    subset: str
    subtask: str
    image: str
    """Path of the image file (copied into the build when the source is generated)."""
    question: str
    answer: str | None
    distractors: tuple[str, ...]
    """Three wrong options (four in BeyondVisQA, which has no right one)."""
    provenance: Mapping[str, Any] = field(default_factory=dict)

    def group_id(self) -> str:
        """Links the shuffled variants of one question: a hash of what they share (not of the option order)."""
        payload = canonical_json([self.subset, self.subtask, Path(self.image).name, self.question, self.answer,
                                  sorted(self.distractors)])
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:12]

    def sort_key(self) -> tuple[str, str, str]:
        return (self.subset, self.subtask, self.group_id())


PAIRED_SUBSETS: tuple[str, ...] = ("basic", "know")
"""The subsets whose questions get a partner (:func:`paired`); BeyondVisQA's gold is always the refusal."""


def paired(a: Question, b: Question) -> tuple[Question, Question]:
    """``a`` and its partner ``b`` (the same question on another image, with another answer), each marked with the
    pair (:func:`builders.pairs.pair_provenance`; the id is ``a``'s group). A caller has checked the partner."""
    pair_id = a.group_id()
    return tuple(replace(q, provenance={**q.provenance, **pair_provenance(pair_id, role)})  # type: ignore[return-value]
                 for q, role in ((a, "a"), (b, "b")))
