"""MIOH primitive pools (paper Sec. 4.1 and 4.3): what is true, false or undecidable in each image, and how hard.

For every task the pool answers one question: for image ``i`` and probe ``p`` (an object, an attribute-object
pair, a subject-relation-object triple, or an object to count), is ``p`` certainly present (``pos``), certainly
absent (``neg``), or undecidable (``None``)? Undecidable pairs are never used: no question may rest on them.
Positives and negatives also carry a difficulty (paper Sec. 4.3, Appendix B):

* hard positive - the object is there but every visible instance of it is small, heavily occluded or truncated
  (geometry filter), or - when CLIP ran - its image-text similarity is abnormally low;
* hard negative - the object is absent but what is present makes it likely (co-occurrence with a present
  object), or for attributes and relations, the object is there with a *different* attribute / relation.

Reading of the paper's rules, each a config option (``PoolConfig``):

* objects nobody can see (below ``min_visible`` area or almost fully occluded) make their image undecidable for
  that object: neither a fair positive nor a safe negative;
* an object present only as a crowd region is undecidable for existence, and any crowd region of a category makes
  the image undecidable for counting that category (a crowd cannot be counted);
* counting is limited to images with at most ``count_max_objects`` (5) annotated objects **in total**
  (``count_scope="image"``, the reading chosen: the paper's reason is annotation reliability in crowded images),
  or of the asked category (``count_scope="category"``);
* an attribute is certainly absent from an object category in an image when the category is absent, or when
  every instance of it has attributes of that attribute's type annotated and none has this one;
* a relation is certainly false when its subject or object category is absent; when both are present it is
  false only if the source annotates relations exhaustively (the demo world), or if each category has a single
  instance and the opposite relation (``left of`` / ``right of``, ...) is annotated between them.

Absent is not unannotated. In an exhaustive source (``RecordSet.exhaustive``: COCO, COCO-ReM, the demo world) a
category without an instance is absent; in a federated one (LVIS/PACO) or a scene graph (SVG, Visual Genome) it
is absent only where the source verified it (``ImageRecord.verified_absent``: PACO's ``neg_category_ids``, or an
exhaustive source covering the image, :mod:`sources.absence`); anywhere else the pair is undecidable - never a
negative, never a hard negative. On top of that (each a :class:`Refusal` with its reason, counted by
:mod:`builders.mioh.refusals`):

* attributes: a category is also verified absent by PACO's ``neg_category_ids_attrs``; an attribute is denied
  only when the category is in neither ``not_exhaustive_category_ids`` (an unannotated instance may carry it)
  nor ``not_exhaustive_category_ids_attrs``, and no instance has the attribute's type flagged unknown
  (``unknown_color``, ...);
* counting refuses a category listed in ``not_exhaustive_category_ids``;
* positions: a missing subject or object makes the relation false only when its absence is verified; otherwise
  a negative needs the annotated contradiction above. That contradiction trusts the scene graph's instance
  count ("the only cup is right of the only dog"); a scene graph may miss a second cup, a risk accepted here
  because the opposite relation was annotated between the objects the graph does name.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Hashable, Mapping, Sequence

import numpy as np

from builders.mioh.labels import NEG, POS, POS_HARD, UNDECIDED, Label, LabelColumns
from builders.mioh.recent import RecentEntries
from filters.base import FilterStats
from filters.cooccurrence import (
    CooccurrenceStats,
    HardNegativeThresholds,
    hard_negative_mask,
    incidence_matrix,
    record_indices,
)
from filters.geometry import Difficulty, GeometryThresholds, classify_images
from filters.occlusion_workers import occlusions_ahead
from sources.records import ImageRecord, RecordSet

if TYPE_CHECKING:
    from builders.mioh.clip import ClipSignals

OPPOSITE_RELATIONS: Mapping[str, str] = {
    "left of": "right of",
    "right of": "left of",
    "above": "below",
    "below": "above",
    "in front of": "behind",
    "behind": "in front of",
    "on": "under",
    "under": "on",
}

Probe = Hashable

FACTS_CHUNK = 2000
"""Images classified per geometry call: large enough for numpy to pay off, small enough for a live progress bar."""

SPLIT_MEMO_BYTES = 64 << 20
"""The image lists of the probes drawn last (:meth:`Pools.images`) kept up to this many bytes a pool: every
object and attribute probe of a paper-scale build (32 and 20 MB), some 550 of its thousands of scene-graph
triples (each drawn a few times, mostly within one question)."""


EASY_POS = Label("pos")
EASY_NEG = Label("neg")
ATTRIBUTE_NEG = Label("neg", True, "attribute", None)
"""An attribute every instance could show (its type is annotated on all of them) and none does."""
RELATION_NEG = Label("neg", True, "relation", None)
"""A relation contradicted by the scene graph (or by an exhaustive source): the objects are there, not so."""

UNVERIFIED_ABSENCE = "absence not verified"
NOT_EXHAUSTIVE = "instances not all annotated"
ATTRIBUTES_NOT_EXHAUSTIVE = "attributes not all annotated"
ATTRIBUTE_TYPE_UNKNOWN = "attribute type unknown"
REFUSAL_REASONS = (UNVERIFIED_ABSENCE, NOT_EXHAUSTIVE, ATTRIBUTES_NOT_EXHAUSTIVE, ATTRIBUTE_TYPE_UNKNOWN)


NOT_COUNTABLE, COUNT_REFUSED = -1, -2
"""Counting table entries that are not a count: undecidable, refused (:data:`NOT_EXHAUSTIVE`)."""


@dataclass(frozen=True)
class Refusal:
    """A pair an exhaustive reading of the annotations would decide, left undecidable because the source did not
    verify it (federated or open-vocabulary annotation); ``reason`` is one of :data:`REFUSAL_REASONS`."""

    reason: str


def verified_absence(records: RecordSet, incidence: np.ndarray, lists: tuple[str, ...] = ("verified_absent",)) -> np.ndarray:
    """Image x category: no instance, and the source says so (exhaustive, or the category in one of ``lists``)."""
    if records.exhaustive:
        return ~incidence
    index = {c: k for k, c in enumerate(records.categories)}
    verified = np.zeros_like(incidence)
    for i, image in enumerate(records.images):
        for name in lists:
            for cat in getattr(image, name):
                if cat in index:
                    verified[i, index[cat]] = True
    return verified & ~incidence


@dataclass(frozen=True)
class PoolConfig:
    """Rules that decide the pools; every field is a build option."""

    geometry: GeometryThresholds = field(default_factory=GeometryThresholds)
    hard_negative: HardNegativeThresholds = field(default_factory=HardNegativeThresholds)
    count_max_objects: int = 5
    count_scope: str = "image"
    relations_exhaustive: bool = False


@dataclass(frozen=True)
class CategoryState:
    """What one image shows of one category."""

    visible: bool
    """At least one usable (non-crowd, visible) instance."""
    undecidable: bool
    """Instances exist but none can be used (crowd only, or too small / hidden)."""
    hard: bool
    """Every usable instance is hard to see."""
    signal: str | None
    score: float | None
    count: int | None
    """Number of instances when countable, else ``None``."""


@dataclass(frozen=True)
class AttributeFacts:
    """The attribute evidence of one category's instances in one image (see :meth:`Pools.decide_attribute`)."""

    by_attribute: dict[str, list[Difficulty]]
    """Attribute -> the geometry labels of the usable instances that carry it, in instance order."""
    crowd_or_dropped: bool
    """Some instance is a crowd region or too hard to see: no attribute can be denied."""
    kinds_on_every_instance: frozenset
    """Attribute types every instance has some attribute of (only those can be denied)."""
    unknown_kinds: frozenset
    """Attribute types some instance has flagged unknown."""


def _geometry_signal(diff: Difficulty) -> tuple[str, float]:
    rule = diff.rule or "relative_area"
    g = diff.geometry
    if rule.startswith("occlusion"):
        return "occluded", g.occlusion
    if rule.startswith("truncation"):
        return "truncated", g.truncation
    return "small", g.relative_area


class ImageFacts:
    """Per-image state of every category, attribute and relation, computed once from the records."""

    _DERIVED = frozenset({"categories", "any_hard", "n_objects", "instances", "relations_by_categories"})

    def __init__(self, image: ImageRecord, diffs: dict[str, Difficulty]) -> None:
        """``diffs``: the geometry label of every instance (:func:`filters.geometry.classify_images`)."""
        self.image = image
        self.difficulty = diffs
        self._derive()

    @classmethod
    def lazy(cls, image: ImageRecord, diffs: dict[str, Difficulty]) -> ImageFacts:
        """The facts of ``image``, the state derived from its record and labels made when first read.

        Why: a rerun opens an image's facts from the prepared-pools cache (:mod:`builders.mioh.prepared`) mostly
        for its record (the file a question shows); deriving the rest there cost a paper-scale rerun ~1 s."""
        facts = cls.__new__(cls)
        facts.image = image
        facts.difficulty = diffs
        return facts

    def __getattr__(self, name: str) -> object:  # only called for an attribute not set (yet)
        if name not in ImageFacts._DERIVED or "image" not in vars(self):
            raise AttributeError(name)
        self._derive()
        return vars(self)[name]

    def _derive(self) -> None:
        image, diffs = self.image, self.difficulty
        by_cat: dict[str, list] = {}
        for inst in image.instances:
            by_cat.setdefault(inst.category, []).append(inst)
        self.categories: dict[str, CategoryState] = {}
        for cat, insts in by_cat.items():
            usable = [i for i in insts if not i.iscrowd and diffs[i.id].level != "drop"]
            crowd = any(i.iscrowd for i in insts)
            dropped = any(diffs[i.id].level == "drop" for i in insts if not i.iscrowd)
            hard_ones = [diffs[i.id] for i in usable if diffs[i.id].level == "hard"]
            all_hard = bool(usable) and len(hard_ones) == len(usable)
            signal, score = _geometry_signal(hard_ones[0]) if all_hard else (None, None)
            countable = not crowd and not dropped
            self.categories[cat] = CategoryState(
                visible=bool(usable),
                undecidable=not usable,
                hard=all_hard,
                signal=signal,
                score=score,
                count=sum(1 for i in insts if not i.iscrowd) if countable else None,
            )
        self.any_hard: dict[str, tuple[str, float] | None] = {
            cat: next(
                (_geometry_signal(diffs[i.id]) for i in insts if not i.iscrowd and diffs[i.id].level == "hard"),
                None,
            )
            for cat, insts in by_cat.items()
        }
        self.n_objects = len(image.instances)
        self.instances = by_cat
        cat_of = {i.id: i.category for i in image.instances}
        self.relations_by_categories: dict[tuple[str, str, str], list] = {}
        """``(subject category, predicate, object category)`` -> the relations that show it."""
        for r in image.relations:
            self.relations_by_categories.setdefault((cat_of[r.subject], r.predicate, cat_of[r.object]), []).append(r)


class Pools:
    """The primitive pools of one record set, for all four tasks."""

    def __init__(
        self,
        records: RecordSet,
        config: PoolConfig,
        stats: FilterStats,
        progress: Callable[[int, int], None] | None = None,
        clip: Callable[[np.ndarray], "ClipSignals"] | None = None,
    ) -> None:
        """``clip``, when given, computes CLIP signals from the image x category incidence (see
        :mod:`builders.mioh.clip`); its hard pairs are OR-ed with geometry and co-occurrence."""
        self.records = records
        self.config = config
        self.stats = stats
        self.categories = tuple(records.categories)
        self._cat_index = {c: k for k, c in enumerate(self.categories)}
        image_idx, category_idx = record_indices(records)
        self.incidence = incidence_matrix(image_idx, category_idx, len(records.images), len(self.categories))
        """Image x category: the category has at least one instance (crowd included) in the image."""
        # CLIP first: if it turns out unavailable (weights unreadable), nothing has been counted yet.
        self.clip: ClipSignals | None = clip(self.incidence) if clip is not None else None
        self.cooc = CooccurrenceStats.from_incidence(self.incidence, self.categories)
        scores = self.cooc.context_scores(self.incidence)
        self.hard_negative = hard_negative_mask(scores, config.hard_negative) & ~self.incidence
        """Image x category: absent, and the present objects make it likely (all pairs scored at once)."""
        self.context_p = scores.p
        self.absent_hard = self.hard_negative | (self.clip.hard_absent_mask() if self.clip else False)
        """Image x category: a hard negative by co-occurrence or by CLIP (used only where absence is verified)."""
        self.verified_absent = verified_absence(records, self.incidence)
        """Image x category: absent, and verified so (everywhere unannotated in an exhaustive source)."""
        self.attribute_verified_absent = verified_absence(
            records, self.incidence, ("verified_absent", "attributes_verified_absent")
        )
        """Image x category: absent as far as attribute questions go (PACO's attribute pass verifies too)."""
        self.facts: list[ImageFacts] = []
        images = records.images
        for start, occlusions in zip(range(0, len(images), FACTS_CHUNK), occlusions_ahead(images, FACTS_CHUNK)):
            chunk = images[start:start + FACTS_CHUNK]
            for image, diffs in zip(chunk, classify_images(chunk, config.geometry, stats, occlusions=occlusions)):
                self.facts.append(ImageFacts(image, diffs))
            if progress:
                progress(len(self.facts), len(images))
        self._image_lists: dict[tuple, list[int]] = {}
        self._labels: dict[tuple, Label | None] = {}

    _TRANSIENT = ("_image_lists", "_splits", "_labels", "_attribute_memo", "_numbers", "_relations_of_image",
                  "_by_column")
    """Memos filled while questions are drawn: not part of a pickled (prepared, cached) pool. The tables
    :meth:`prepare` fills are kept: they are what lets a rerun read per-image facts only where it asks."""

    def __getstate__(self) -> dict:
        state = {k: v for k, v in self.__dict__.items() if k not in self._TRANSIENT}
        return {**state, "_image_lists": {}, "_labels": {}}

    def category_index(self, category: str) -> int:
        """Column of ``category`` in the image x category matrices."""
        return self._cat_index[category]

    def prepare(self, tasks: Sequence[str]) -> None:
        """Fill every table that is read over all images for ``tasks``, or holds what a label says: probes,
        decision tables, object counts, areas, the image index.

        Why: these are the only reads of every image's facts once the pools exist. The prepared-pools cache
        (:mod:`builders.mioh.prepared`) stores a pool after this, so a rerun unpickles an image's facts only
        where a question shows the image, instead of all of them (most of a paper-scale rerun's time)."""
        self._image_index()
        self.object_counts()
        for task in tasks:
            self.probes(task)
            if task == "position":
                self._positions_decided()
            elif task == "attribute":
                for category in sorted({c for _, c in self.probes(task)}):  # type: ignore[misc]
                    self._attribute_columns(category)
            else:
                self._category_table(task)
                self._max_areas()

    # ----------------------------------------------------------------------------------------- labels per task

    def absent_label(self, img: int, category: str) -> Label:
        """An absent category: a hard negative when what is present makes it likely (co-occurrence)."""
        c = self._cat_index[category]
        cooc = bool(self.hard_negative[img, c])
        z = self.clip.category_z(img, category) if self.clip else None
        if cooc or not self.absent_hard[img, c]:
            return Label("neg", cooc, "cooccurrence" if cooc else None, float(self.context_p[img, c]), z)
        return Label("neg", True, "clip", z, z)

    def _with_clip(self, label: Label, z: float | None) -> Label:
        """A positive made hard by an abnormally low CLIP similarity when geometry did not already."""
        if z is None:
            return label
        if not label.hard and self.clip is not None and z <= self.clip.low_z:
            return Label("pos", True, "clip", z, z)
        return replace(label, clip_z=z)

    def _missing(self, img: int, category: str, verified: np.ndarray) -> Label | Refusal:
        """The label of a category with no instance in the image: absent only where that is verified."""
        if verified[img, self._cat_index[category]]:
            return self.absent_label(img, category)
        return Refusal(UNVERIFIED_ABSENCE)

    def existence(self, img: int, category: str) -> Label | None:
        return _decided(self.decide_existence(img, category))

    def decide_existence(self, img: int, category: str) -> Label | Refusal | None:
        state = self.facts[img].categories.get(category)
        if state is None:
            return self._missing(img, category, self.verified_absent)
        if state.undecidable:
            return None
        z = self.clip.category_z(img, category) if self.clip else None
        return self._with_clip(Label("pos", state.hard, state.signal, state.score), z)

    def count(self, img: int, category: str) -> int | None:
        """How many instances of ``category`` the image shows, or ``None`` when it cannot be counted (read from
        the counting table where the image shows the category, as :meth:`decide_count` decides it)."""
        c = self._cat_index[category]
        if self.incidence[img, c]:
            n = int(self._category_table("counting")[1][img, c])  # type: ignore[index]
            return n if n >= 0 else None
        if self.config.count_scope == "image" and self.object_counts()[img] > self.config.count_max_objects:
            return None
        return 0 if self.verified_absent[img, c] else None

    def decide_count(self, img: int, category: str) -> int | Refusal | None:
        facts = self.facts[img]
        limit = self.config.count_max_objects
        if self.config.count_scope == "image" and facts.n_objects > limit:
            return None
        state = facts.categories.get(category)
        if state is None:
            return 0 if self.verified_absent[img, self._cat_index[category]] else Refusal(UNVERIFIED_ABSENCE)
        if state.count is None or (self.config.count_scope == "category" and state.count > limit):
            return None
        if category in facts.image.not_exhaustive:
            return Refusal(NOT_EXHAUSTIVE)
        return state.count

    def counting(self, img: int, category: str) -> Label | None:
        """Counting difficulty: hard positive when any counted instance is hard to see (one missed = wrong count)."""
        return self._counting_label(img, category, self.decide_count(img, category))

    def _counting_label(self, img: int, category: str, n: int | Refusal | None) -> Label | None:
        """:meth:`counting`, given the count :meth:`decide_count` gave."""
        if n is None or isinstance(n, Refusal):
            return None
        if n == 0:
            return self.absent_label(img, category)
        hard = self.facts[img].any_hard.get(category)
        z = self.clip.category_z(img, category) if self.clip else None
        return self._with_clip(Label("pos", True, hard[0], hard[1]) if hard else EASY_POS, z)

    def attribute(self, img: int, probe: tuple[str, str]) -> Label | None:
        return _decided(self.decide_attribute(img, probe))

    def decide_attribute(self, img: int, probe: tuple[str, str]) -> Label | Refusal | None:
        attribute, category = probe
        return self.decide_attributes(img, category, (attribute,))[0]

    def decide_attributes(
        self, img: int, category: str, attributes: Sequence[str]
    ) -> list[Label | Refusal | None]:
        """:meth:`decide_attribute` of several attributes of one category in one image.

        Why: an attribute the instances do not show is decided by its type alone, and a paper-scale PACO asks
        every attribute of a category in every image that shows it; deciding them together gathers what the
        instances say once and each attribute type once."""
        facts = self.facts[img]
        state = facts.categories.get(category)
        if state is None:
            return [self._missing(img, category, self.attribute_verified_absent)] * len(attributes)
        if state.undecidable:
            return [None] * len(attributes)
        shown = self._attribute_facts(img, category)
        by_kind: dict[str | None, Label | Refusal | None] = {}
        out: list[Label | Refusal | None] = []
        for attribute in attributes:
            diffs = shown.by_attribute.get(attribute)
            if diffs:
                z = self.clip.attribute_z(img, (attribute, category)) if self.clip else None
                if all(d.level == "hard" for d in diffs):
                    signal, score = _geometry_signal(diffs[0])
                    out.append(self._with_clip(Label("pos", True, signal, score), z))
                else:
                    out.append(self._with_clip(EASY_POS, z))
                continue
            kind = self.records.attribute_types.get(attribute)
            if kind not in by_kind:
                by_kind[kind] = self._unshown_attribute(facts.image, category, shown, kind)
            out.append(by_kind[kind])
        return out

    @staticmethod
    def _unshown_attribute(
        image: ImageRecord, category: str, shown: AttributeFacts, kind: str | None
    ) -> Label | Refusal | None:
        """An attribute of type ``kind`` that no instance of ``category`` shows: false where every instance has
        an attribute of that type and the annotation is exhaustive."""
        if shown.crowd_or_dropped or not kind or kind not in shown.kinds_on_every_instance:
            return None
        if category in image.not_exhaustive:
            return Refusal(NOT_EXHAUSTIVE)
        if category in image.attributes_not_exhaustive:
            return Refusal(ATTRIBUTES_NOT_EXHAUSTIVE)
        if kind in shown.unknown_kinds:
            return Refusal(ATTRIBUTE_TYPE_UNKNOWN)
        return ATTRIBUTE_NEG

    def _attribute_facts(self, img: int, category: str) -> AttributeFacts:
        """What the instances of ``category`` in ``img`` say about attributes, gathered once for every
        attribute asked of them (a paper-scale PACO asks a dozen attributes of each image's categories)."""
        memo = self.__dict__.setdefault("_attribute_memo", {})
        key = (img, category)
        found = memo.get(key)
        if found is None:
            facts = self.facts[img]
            insts = facts.instances[category]
            types = self.records.attribute_types
            by_attribute: dict[str, list[Difficulty]] = {}
            for inst in insts:
                diff = facts.difficulty[inst.id]
                if not inst.iscrowd and diff.level != "drop":
                    for a in dict.fromkeys(inst.attributes):
                        by_attribute.setdefault(a, []).append(diff)
            kinds = [{types.get(a) for a in inst.attributes} for inst in insts]
            found = memo[key] = AttributeFacts(
                by_attribute=by_attribute,
                crowd_or_dropped=any(i.iscrowd or facts.difficulty[i.id].level == "drop" for i in insts),
                kinds_on_every_instance=frozenset(set.intersection(*kinds)) if kinds else frozenset(),
                unknown_kinds=frozenset().union(*(i.unknown_attribute_types for i in insts)),
            )
        return found

    def position(self, img: int, probe: tuple[str, str, str]) -> Label | None:
        return _decided(self.decide_position(img, probe))

    def decide_position(self, img: int, probe: tuple[str, str, str]) -> Label | Refusal | None:
        subject, relation, obj = probe
        facts = self.facts[img]
        s_state, o_state = facts.categories.get(subject), facts.categories.get(obj)
        if s_state is None or o_state is None:
            row = self.verified_absent[img]
            verified = row[self._cat_index[subject]] or row[self._cat_index[obj]]
            return EASY_NEG if verified else Refusal(UNVERIFIED_ABSENCE)
        if s_state.undecidable or o_state.undecidable:
            return None
        holding = facts.relations_by_categories.get(probe, ())
        difficulty = facts.difficulty
        first_hard: Difficulty | None = None  # of the first usable pair: its subject where hard, else its object
        for r in holding:  # one pass, no pair of dropped objects used (a paper-scale SVG asks 500,000 times)
            of_subject, of_object = difficulty[r.subject], difficulty[r.object]
            if of_subject.level == "drop" or of_object.level == "drop":
                continue
            hard = of_subject if of_subject.level == "hard" else of_object if of_object.level == "hard" else None
            if hard is None:  # a usable pair without a hard object: the relation shows plainly
                return EASY_POS
            if first_hard is None:
                first_hard = hard
        if first_hard is not None:  # every usable pair showing the relation involves a hard object
            signal, score = _geometry_signal(first_hard)
            return Label("pos", True, signal, score)
        if holding:
            return None
        if self.config.relations_exhaustive:
            return RELATION_NEG
        opposite = OPPOSITE_RELATIONS.get(relation)
        single = len(facts.instances[subject]) == 1 and len(facts.instances[obj]) == 1
        if opposite and single and facts.relations_by_categories.get((subject, opposite, obj)):
            return RELATION_NEG
        return None

    def label(self, task: str, img: int, probe: Probe) -> Label | None:
        """The label of ``probe`` in image ``img`` for ``task`` (``None``: undecidable); memoised."""
        key = (task, img, probe)
        try:
            return self._labels[key]
        except KeyError:
            lab = self._labels[key] = self.label_uncached(task, img, probe)
            return lab

    def label_uncached(self, task: str, img: int, probe: Probe) -> Label | None:
        """:meth:`label` without the memo (label rows, :mod:`builders.mioh.label_rows`, keep their own), read
        from the task's decision tables where the image shows what the probe names, from the absence matrices
        where it does not: what :meth:`label_from_facts` says, without reading the image's facts."""
        if task == "position":
            return self._position_label(img, probe)  # type: ignore[arg-type]
        if task not in ("existence", "counting", "attribute"):
            raise ValueError(task)
        category = probe[1] if task == "attribute" else probe  # type: ignore[index]
        c = self._cat_index[category]  # type: ignore[index]
        if self.incidence[img, c]:
            if task == "attribute":
                shown, attributes, labels, _ = self._attribute_columns(category)  # type: ignore[arg-type]
                return labels.get((int(np.searchsorted(shown, img)), attributes[probe[0]]))  # type: ignore[index]
            return self._category_table(task)[0].get((img, c))
        if task == "counting":
            return None if self.count(img, category) is None else self.absent_label(img, category)  # type: ignore[arg-type]
        verified = self.attribute_verified_absent if task == "attribute" else self.verified_absent
        return self.absent_label(img, category) if verified[img, c] else None  # type: ignore[arg-type]

    def category_code_table(self, task: str) -> np.ndarray:
        """:func:`label_code` of every category (by column) in every image for ``task`` (existence, counting),
        the decision table's codes: valid where the image shows the category (elsewhere the table holds no
        label: absent categories are decided from the absence matrices).

        Why: label rows (:mod:`builders.mioh.label_rows`) read it for every probe an image shows, which asked
        one probe at a time was over a million calls in a paper-scale build."""
        return self._category_table(task)[0].codes

    def attribute_block(self, category: str) -> tuple[np.ndarray, np.ndarray]:
        """The images showing ``category`` (sorted) and :func:`label_code` of every attribute probe of the
        category (in :meth:`probes` order) in each of them: the category's decision table
        (:meth:`category_code_table`'s sibling)."""
        shown, _, labels, _ = self._attribute_columns(category)
        return shown, labels.codes

    def _position_label(self, img: int, probe: tuple[str, str, str]) -> Label | None:
        s, o = self._cat_index[probe[0]], self._cat_index[probe[2]]
        if not (self.incidence[img, s] and self.incidence[img, o]):
            return EASY_NEG if self.verified_absent[img, s] or self.verified_absent[img, o] else None
        start, images, labels = self._position_table(probe)
        k = int(np.searchsorted(images, img))
        return labels.get(start + k) if k < len(images) and images[k] == img else None

    def label_from_facts(self, task: str, img: int, probe: Probe) -> Label | None:
        """:meth:`label_uncached` decided from the image's facts: what fills the decision tables."""
        if task == "existence":
            return self.existence(img, probe)  # type: ignore[arg-type]
        if task == "attribute":
            return self.attribute(img, probe)  # type: ignore[arg-type]
        if task == "position":
            return self.position(img, probe)  # type: ignore[arg-type]
        if task == "counting":
            return self.counting(img, probe)  # type: ignore[arg-type]
        raise ValueError(task)

    # ------------------------------------------------------------------------------------------- probe lists

    def probes(self, task: str) -> list[Probe]:
        """Probes with at least one positive image, sorted (deterministic)."""
        memo = self.__dict__.setdefault("_probes", {})
        if task not in memo:
            found: set = set()
            for facts in self.facts:
                visible = [c for c, s in facts.categories.items() if s.visible]
                if task in ("existence", "counting"):
                    found.update(visible)
                elif task == "attribute":
                    for cat in visible:
                        for inst in facts.instances[cat]:
                            if not inst.iscrowd:
                                found.update((a, cat) for a in inst.attributes)
                elif task == "position":
                    cat_of = {i.id: i.category for i in facts.image.instances}
                    # Same-category relations ("a hexagon left of a hexagon") read as riddles: not asked.
                    found.update(
                        (cat_of[r.subject], r.predicate, cat_of[r.object])
                        for r in facts.image.relations
                        if cat_of[r.subject] != cat_of[r.object]
                    )
            memo[task] = sorted(found)
        return memo[task]

    def images(self, task: str, probe: Probe, status: str, hard: bool | None = None) -> np.ndarray:
        """Indices of images where ``probe`` has ``status`` (and difficulty ``hard`` unless ``None``), as a sorted
        ``int32`` array."""
        split = self._split(task, probe)
        if hard is None:
            return np.sort(np.concatenate([split[(status, False)], split[(status, True)]]))
        return split[(status, hard)]

    def _split(self, task: str, probe: Probe) -> dict[tuple[str, bool], np.ndarray]:
        """Images of ``probe`` by (status, hard), from :meth:`codes_over_images`; those of the probes drawn last
        are kept (:data:`SPLIT_MEMO_BYTES`).

        Why arrays: a verified-absence list holds most of a source's images, and a paper-scale build draws
        thousands of probes; as Python lists these took seconds to make and gigabytes to keep."""
        splits = self.__dict__.get("_splits")
        if splits is None:
            splits = self._splits = RecentEntries(SPLIT_MEMO_BYTES)
        found = splits.get((task, probe))
        if found is None:
            codes = self.codes_over_images(task, probe)
            found = {(status, hard): np.flatnonzero(codes == (POS if status == "pos" else NEG) + int(hard))
                     .astype(np.int32) for status in ("pos", "neg") for hard in (False, True)}
            splits.put((task, probe), found, sum(images.nbytes for images in found.values()))
        return found

    def codes_over_images(self, task: str, probe: Probe) -> np.ndarray:
        """:func:`label_code` of ``probe`` in every image, in one pass (``int8``, one per image).

        Only images that show every category the probe names need the decision tables; in the others the probe
        is absent where the absence is verified (undecidable elsewhere), and the precomputed co-occurrence mask
        says which absences are hard (positions: never). The two sets of images are disjoint
        (:func:`verified_absence` excludes shown categories)."""
        codes = np.full(len(self.facts), UNDECIDED, dtype=np.int8)
        if task == "position":
            s, o = self._cat_index[probe[0]], self._cat_index[probe[2]]  # type: ignore[index]
            codes[self._column("verified_absent", s) | self._column("verified_absent", o)] = NEG
            start, candidates, labels = self._position_table(probe)  # type: ignore[arg-type]
            codes[candidates] = labels.codes[start:start + len(candidates)]
            return codes
        c = self._cat_index[probe[1] if task == "attribute" else probe]  # type: ignore[index]
        absent = self._column("attribute_verified_absent" if task == "attribute" else "verified_absent", c)
        codes[absent] = NEG + self._column("absent_hard", c)[absent]
        candidates, shown = self._decided_column(task, probe)
        codes[candidates] = shown
        return codes

    def _column(self, matrix: str, c: int) -> np.ndarray:
        """Column ``c`` of the image x category matrix named ``matrix``, from a column-major copy made once.

        Why: a column of a row-major matrix is a strided read across all of it, and drawing questions reads
        thousands of columns (a copy of a COCO-train-sized matrix is 9 MB)."""
        memo = self.__dict__.setdefault("_by_column", {})
        found = memo.get(matrix)
        if found is None:
            found = memo[matrix] = np.asfortranarray(getattr(self, matrix))
        return found[:, c]

    # ------------------------------------------------------------------------------------------- decision tables

    def _decided_column(self, task: str, probe: Probe) -> tuple[np.ndarray, np.ndarray]:
        """The images showing the category ``probe`` names (not positions) and the probe's code
        (:func:`label_code`) in each, from the task's decision table."""
        if task == "attribute":
            attribute, category = probe  # type: ignore[misc]
            shown, attributes, labels, _ = self._attribute_columns(category)
            return shown, labels.codes[:, attributes[attribute]]
        c = self._cat_index[probe]  # type: ignore[index]
        shown = np.flatnonzero(self._column("incidence", c))
        return shown, self._category_table(task)[0].codes[shown, c]

    def _category_table(self, task: str) -> tuple[LabelColumns, np.ndarray | None]:
        """Existence / counting decided in every image for every category it shows (image x category; undecided
        where the category is missing), and for counting the counts (:data:`NOT_COUNTABLE`,
        :data:`COUNT_REFUSED`, or the number)."""
        memo = self.__dict__.setdefault("_category_tables", {})
        if task not in memo:
            labels = LabelColumns.undecided(self.incidence.shape)
            counts = np.full(self.incidence.shape, NOT_COUNTABLE, dtype=np.int32) if task == "counting" else None
            for img, c in zip(*(axis.tolist() for axis in np.nonzero(self.incidence))):
                category = self.categories[c]
                if counts is None:
                    labels.put((img, c), self.label_from_facts(task, img, category))
                    continue
                n = self.decide_count(img, category)  # decided once, for the count and the label
                labels.put((img, c), self._counting_label(img, category, n))
                counts[img, c] = COUNT_REFUSED if isinstance(n, Refusal) else NOT_COUNTABLE if n is None else n
            memo[task] = (labels, counts)
        return memo[task]

    def _attribute_columns(self, category: str) -> tuple[np.ndarray, dict[str, int], LabelColumns, np.ndarray]:
        """The images showing ``category``, its attributes' columns, and every attribute probe of the category
        decided in each of those images (images x attributes), together: the labels and the refusals (0: none,
        ``k + 1``: ``REFUSAL_REASONS[k]``)."""
        memo = self.__dict__.setdefault("_attribute_tables", {})
        if category not in memo:
            attributes = [a for a, c in self.probes("attribute") if c == category]  # type: ignore[misc]
            shown = np.flatnonzero(self.incidence[:, self._cat_index[category]])
            labels = LabelColumns.undecided((len(shown), len(attributes)))
            refusals = np.zeros((len(shown), len(attributes)), dtype=np.int8)
            for row, img in enumerate(shown.tolist()):
                for k, result in enumerate(self.decide_attributes(img, category, attributes)):
                    if isinstance(result, Refusal):
                        refusals[row, k] = REFUSAL_REASONS.index(result.reason) + 1
                    else:
                        labels.put((row, k), result)
            memo[category] = (shown, {a: k for k, a in enumerate(attributes)}, labels, refusals)
        return memo[category]

    def _position_table(self, probe: tuple[str, str, str]) -> tuple[int, np.ndarray, LabelColumns]:
        """Where the position table holds ``probe``: its first cell, the images it is decided in (sorted; the
        only ones where both categories are shown and it can be decided), and the table's labels."""
        spans, images, labels = self._positions_decided()
        start, end = spans.get(probe, (0, 0))
        return start, images[start:end], labels

    def _positions_decided(self) -> tuple[dict[tuple[str, str, str], tuple[int, int]], np.ndarray, LabelColumns]:
        """Every triple decided in its candidate images (:meth:`_position_candidates`), one run of cells per
        triple: ``{triple: (first cell, end)}``, the image of each cell, the labels."""
        if "_positions" not in self.__dict__:
            spans: dict[tuple[str, str, str], tuple[int, int]] = {}
            images: list[int] = []
            decided: list[Label | None] = []
            for triple in self.probes("position"):
                candidates = self._position_candidates(triple)  # type: ignore[arg-type]
                spans[triple] = (len(images), len(images) + len(candidates))  # type: ignore[index]
                images.extend(candidates)
                decided.extend(self.position(img, triple) for img in candidates)  # type: ignore[arg-type]
            labels = LabelColumns.undecided(len(images))
            for cell, label in enumerate(decided):
                labels.put(cell, label)
            self._positions = (spans, np.array(images, dtype=np.int64), labels)
        return self._positions

    def _position_candidates(self, probe: tuple[str, str, str]) -> list[int]:
        """The images where ``probe`` can be decided while both its categories are shown, sorted: all of them
        where relations are exhaustive, else those annotating it or its opposite.

        Why: a paper-scale scene-graph source has tens of thousands of triples and each pair of categories is
        shown together in thousands of images, nearly all without a relation between them (undecidable);
        labelling each of those was most of a build's time."""
        if self.config.relations_exhaustive:
            both = self.incidence[:, self._cat_index[probe[0]]] & self.incidence[:, self._cat_index[probe[2]]]
            return np.flatnonzero(both).tolist()
        by_relation = self._relation_index()
        subject, relation, obj = probe
        found = by_relation.get(probe, [])
        opposite = OPPOSITE_RELATIONS.get(relation)
        if opposite is not None:
            found = sorted(set(found).union(by_relation.get((subject, opposite, obj), [])))
        return found

    def shown_refusals(self, task: str) -> dict[str, int]:
        """Refusals, by reason, among the pairs of ``task``'s probes whose categories the image shows (the
        missing ones are counted from the matrices by :mod:`builders.mioh.refusals`). Read from the decision
        tables: a shown category is never refused existence, nor a relation between two shown ones."""
        found: dict[str, int] = {}
        if task == "counting":
            columns = [self._cat_index[c] for c in self.probes(task)]  # type: ignore[index]
            counts = self._category_table(task)[1]
            refused = int(np.count_nonzero(counts[:, columns] == COUNT_REFUSED))  # type: ignore[index]
            if refused:
                found[NOT_EXHAUSTIVE] = refused
        elif task == "attribute":
            for category in sorted({c for _, c in self.probes(task)}):  # type: ignore[misc]
                numbers = np.bincount(self._attribute_columns(category)[3].ravel(), minlength=len(REFUSAL_REASONS) + 1)
                for reason, n in zip(REFUSAL_REASONS, numbers[1:].tolist()):
                    if n:
                        found[reason] = found.get(reason, 0) + n
        return found

    def _image_numbers(self, mask: np.ndarray) -> list[int]:
        """``np.flatnonzero(mask).tolist()``, made of one shared ``int`` object per image.

        Why: image lists are memoised per probe, and a verified-absence list holds most of a source's images;
        with a fresh 28-byte int per entry, the lists of a paper-scale build took gigabytes."""
        if "_numbers" not in self.__dict__:
            self._numbers = np.array(list(range(len(self.facts))), dtype=object)
        return self._numbers[mask].tolist()

    def relations_in(self, img: int) -> list[tuple[str, str, str]]:
        """The ``(subject category, predicate, object category)`` triples image ``img`` annotates (the keys of
        its facts' ``relations_by_categories``, in no set order), read from the relation index."""
        if "_relations_of_image" not in self.__dict__:
            by_image: dict[int, list[tuple[str, str, str]]] = {}
            for triple, images in self._relation_index().items():
                for n in images:
                    by_image.setdefault(n, []).append(triple)
            self._relations_of_image = by_image
        return self._relations_of_image.get(img, [])

    def _relation_index(self) -> dict[tuple[str, str, str], list[int]]:
        """``(subject category, predicate, object category)`` -> the images annotating it, in order."""
        if "_by_relation" not in self.__dict__:
            index: dict[tuple[str, str, str], list[int]] = {}
            for img, facts in enumerate(self.facts):
                for triple in facts.relations_by_categories:
                    index.setdefault(triple, []).append(img)
            self._by_relation = index
        return self._by_relation

    def count_images(self, category: str) -> dict[int, list[int]]:
        """Countable images of ``category`` grouped by count."""
        key = ("count", category)
        if key not in self._image_lists:
            # Images without the category count 0 exactly where :meth:`decide_count` says so (verified absent,
            # within the image-scope limit): one numpy expression; only images showing it are asked one by one.
            c = self._cat_index[category]
            counts = np.full(len(self.facts), -1, dtype=np.int64)
            zero = self.verified_absent[:, c] & ~self.incidence[:, c]
            if self.config.count_scope == "image":
                zero &= self.object_counts() <= self.config.count_max_objects
            counts[zero] = 0
            shown = self.incidence[:, c]
            counts[shown] = np.maximum(self._category_table("counting")[1][shown, c], -1)  # type: ignore[index]
            decided = np.flatnonzero(counts >= 0)
            values, first = np.unique(counts[decided], return_index=True)
            groups = {int(v): self._image_numbers(counts == v) for v in values[np.argsort(first)]}
            self._image_lists[key] = groups  # type: ignore[assignment]
        return self._image_lists[key]  # type: ignore[return-value]

    def object_counts(self) -> np.ndarray:
        """Annotated objects per image (the image-scope counting limit's measure)."""
        if "_n_objects" not in self.__dict__:
            self._n_objects = np.array([f.n_objects for f in self.facts], dtype=np.int64)
        return self._n_objects

    # ------------------------------------------------------------------------------------------- reporting

    def index_of(self, image_id: str) -> int:
        """Position of an image (by record id) in the record set."""
        return self._image_index()[image_id]

    def image_id(self, img: int) -> str:
        """The record id of image ``img``."""
        return self._image_names()[0][img]

    def image_file(self, img: int) -> str:
        """The image file of image ``img``."""
        return self._image_names()[1][img]

    def _image_names(self) -> tuple[list[str], list[str]]:
        if "_names" not in self.__dict__:
            self._names = ([image.id for image in self.records.images], [image.file for image in self.records.images])
        return self._names

    def _image_index(self) -> dict[str, int]:
        if "_index" not in self.__dict__:
            self._index = {image_id: n for n, image_id in enumerate(self._image_names()[0])}
        return self._index

    def max_relative_area(self, img: int, category: str) -> float:
        """Relative area of the most visible usable instance of ``category`` (0 when none)."""
        return float(self._max_areas()[img, self._cat_index[category]])

    def _max_areas(self) -> np.ndarray:
        """:meth:`max_relative_area` of every image and category (image x category), from the facts."""
        if "_areas" not in self.__dict__:
            areas = np.zeros(self.incidence.shape, dtype=np.float64)
            for img, c in zip(*(axis.tolist() for axis in np.nonzero(self.incidence))):
                facts = self.facts[img]
                areas[img, c] = max((facts.difficulty[i.id].geometry.relative_area
                                     for i in facts.instances[self.categories[c]]
                                     if not i.iscrowd and facts.difficulty[i.id].level != "drop"), default=0.0)
            self._areas = areas
        return self._areas

    def count_split(self, category: str) -> dict[int, tuple[list[int], list[int]]]:
        """Countable images of ``category`` by count, each split into (easy, hard) by :meth:`counting`."""
        key = ("count-split", category)
        if key not in self._image_lists:
            split: dict[int, tuple[list[int], list[int]]] = {}
            for c, imgs in self.count_images(category).items():
                if c == 0:  # absent: :meth:`absent_label`, hard exactly where ``absent_hard`` says (most images)
                    zero = np.zeros(len(self.facts), dtype=bool)
                    zero[imgs] = True
                    hard = self.absent_hard[:, self._cat_index[category]]
                    split[c] = (self._image_numbers(zero & ~hard), self._image_numbers(zero & hard))
                    continue
                codes = self._category_table("counting")[0].codes[imgs, self._cat_index[category]].tolist()
                split[c] = ([i for i, code in zip(imgs, codes) if code == POS],
                            [i for i, code in zip(imgs, codes) if code == POS_HARD])
            self._image_lists[key] = split  # type: ignore[assignment]
        return self._image_lists[key]  # type: ignore[return-value]


def _decided(result: Label | Refusal | None) -> Label | None:
    """A label, or ``None`` for a pair that is undecidable (refusals included)."""
    return None if isinstance(result, Refusal) else result
