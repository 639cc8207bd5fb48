"""MIOH's labelling rules (paper Sec. 4.1 and 4.3), each stated once, as expressions over a source's columns.

For every task a rule answers one question: for image ``i`` and probe ``p`` (an object, an attribute-object pair,
a subject-relation-object triple, or an object to count), is ``p`` certainly present (``pos``), certainly absent
(``neg``), or undecidable? Undecidable pairs are never used: no question may rest on them. Positives and
negatives also carry a difficulty (paper Sec. 4.3, Appendix B): a hard positive is there but hard to see, a hard
negative is absent but made likely by what is there. Each function below states one task's rule; the thresholds
are build options (:class:`PoolConfig`).

Absent is not unannotated. In an exhaustive source (COCO, COCO-ReM, the demo world) a category without an
instance is absent; in a federated one (LVIS/PACO) or a scene graph (SVG, Visual Genome) it is absent only where
the source verified it (PACO's ``neg_category_ids``, or an exhaustive source covering the image:
:mod:`sources.absence`); anywhere else the pair is undecidable - never a negative, never a hard negative. A pair
an exhaustive reading would decide but the source does not support is a *refusal*, counted by reason for
``build.json`` (:data:`REFUSAL_REASONS`).

Every function takes the whole source at once (numpy over its instances, relations and (image, category) pairs)
and returns labels as :class:`~builders.mioh.labels.LabelColumns`; :class:`builders.mioh.pools.Pools` keeps them
and answers per pair.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Mapping

import numpy as np

from builders.mioh.labels import NEG, NEG_HARD, POS, POS_HARD, SIGNALS, LabelColumns
from filters.cooccurrence import HardNegativeThresholds
from filters.geometry import METHODS, GeometryThresholds, Measures
from filters.legibility import (DIRECTIONS, NEXT_TO, NOT_NEXT_TO, LegibilityRules, clear_directions, next_to_states,
                                read_columns)
from sources.tables import SourceTables, column, flat_lists

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

NEXT_TO_RELATION = "next to"
"""The relation decided with a margin both ways (:func:`filters.legibility.next_to_states`)."""

UNVERIFIED_ABSENCE = "absence not verified"
NOT_EXHAUSTIVE = "instances not all annotated"
ATTRIBUTES_NOT_EXHAUSTIVE = "attributes not all annotated"
ATTRIBUTE_TYPE_UNKNOWN = "attribute type unknown"
REFUSAL_REASONS = (UNVERIFIED_ABSENCE, NOT_EXHAUSTIVE, ATTRIBUTES_NOT_EXHAUSTIVE, ATTRIBUTE_TYPE_UNKNOWN)
"""Why a pair an exhaustive reading would decide is left undecidable; refusal codes are ``k + 1``."""

NOT_COUNTABLE, COUNT_REFUSED = -1, -2
"""Counts that are not a count: undecidable, refused (:data:`NOT_EXHAUSTIVE`)."""

HARD, DROP = 1, 2
"""Geometry labels (:data:`filters.geometry.LEVELS`)."""

MEASURES = ("relative_area", "occlusion", "truncation")
_SIGNALS = np.array([SIGNALS.index(s) for s in ("small", "occluded", "truncated")], dtype=np.int8)
"""The signal of a hard instance, by the measure of the first geometry rule it fails."""


@dataclass(frozen=True)
class PoolConfig:
    """Rules that decide the pools; every field is a build option."""

    geometry: GeometryThresholds = field(default_factory=GeometryThresholds)
    hard_negative: HardNegativeThresholds = field(default_factory=HardNegativeThresholds)
    count_max_objects: int = 5
    count_scope: str = "image"
    relations_exhaustive: bool = False


# ---------------------------------------------------------------------------------------------- instances


@dataclass(frozen=True)
class Objects:
    """A source's instances as the rules read them, and its (image, category) pairs: the pairs where the image
    has at least one instance of the category (crowd regions included), in image then category order."""

    n_images: int
    n_categories: int
    image: np.ndarray
    category: np.ndarray
    crowd: np.ndarray
    level: np.ndarray
    signal: np.ndarray
    """What makes an instance hard to see (an index into :data:`SIGNALS`), from its first failed geometry rule."""
    score: np.ndarray
    """The measure behind :attr:`signal` (relative area, occlusion or truncation)."""
    relative_area: np.ndarray
    pair: np.ndarray
    """Each instance's pair (a row of the pair arrays)."""
    pair_image: np.ndarray
    pair_category: np.ndarray
    legible: np.ndarray
    """A viewer can name the instance's category (:func:`legibility_rules`, :func:`filters.legibility.read_columns`)."""
    could_be: np.ndarray
    """Image x category: some instance there could be taken for the category (a look-alike too small or too hidden
    to tell apart: a 35 px octagon for a circle)."""

    @classmethod
    def of(cls, source: SourceTables, measures: Measures, thresholds: GeometryThresholds) -> Objects:
        image = column(source.instances, "image").astype(np.int64)
        category = column(source.instances, "category").astype(np.int64)
        which = np.array([MEASURES.index(rule.name) for rule in thresholds.rules()] + [0])[measures.rule]
        score = np.stack([measures.relative_area, measures.occlusion, measures.truncation])[which, np.arange(len(which))]
        key = image * len(source.categories) + category
        keys, pair = np.unique(key, return_inverse=True)
        legible, near = read_columns(
            source.categories, category, column(source.instances, "area").astype(np.float64),
            column(source.images, "width").astype(np.float64)[image],
            column(source.images, "height").astype(np.float64)[image], measures.occlusion,
            measures.method == METHODS.index("amodal"), measures.truncation, legibility_rules(source))
        could_be = np.zeros((source.n_images, len(source.categories)), dtype=bool)
        rows, looked = np.nonzero(near)
        could_be[image[rows], looked] = True
        return cls(source.n_images, len(source.categories), image, category, column(source.instances, "iscrowd"),
                   measures.level.astype(np.int8), _SIGNALS[which], score, measures.relative_area, pair.reshape(-1),
                   keys // max(1, len(source.categories)), keys % max(1, len(source.categories)), legible, could_be)

    @property
    def n_pairs(self) -> int:
        return len(self.pair_image)

    def count(self, mask: np.ndarray) -> np.ndarray:
        """Per pair: its instances where ``mask`` holds."""
        return np.bincount(self.pair[mask], minlength=self.n_pairs)

    def first(self, mask: np.ndarray) -> np.ndarray:
        """Per pair: its first instance (in the file's order) where ``mask`` holds, -1 where none does."""
        found = np.full(self.n_pairs, len(mask), dtype=np.int64)
        rows = np.flatnonzero(mask)
        np.minimum.at(found, self.pair[rows], rows)
        found[found == len(mask)] = -1
        return found

    def pair_of(self, image: np.ndarray, category: np.ndarray) -> np.ndarray:
        """The pairs of (image, category) arrays (each a shown pair)."""
        return np.searchsorted(self.pair_image * self.n_categories + self.pair_category,
                               image * self.n_categories + category)

    def usable(self) -> np.ndarray:
        """Instances a question may rest on: not crowd regions (a crowd covers several objects and cannot be
        trusted alone), not ones nobody can see (below ``min_visible`` area, or almost fully occluded: the
        geometry filter's ``drop``), and only ones a viewer can name (:attr:`legible`): the others are neither a
        fair positive nor a safe negative."""
        return ~self.crowd & (self.level != DROP) & self.legible

    def lookalike(self) -> np.ndarray:
        """Per pair: some instance in the image could be taken for the pair's category."""
        return self.could_be[self.pair_image, self.pair_category]


def legibility_rules(source: SourceTables) -> LegibilityRules:
    """What a viewer can identify (issue 40: a label only where a person could check it in the picture).

    The demo world: its measured table (:meth:`LegibilityRules.demo`: a polygon needs 90 % of its outline in view,
    a curved shape 75 %, occlusion and the frame edge together; 16 px of ``sqrt(visible area)``; look-alike pairs
    such as circle / octagon undecidable below the size that tells them apart). Other sources (COCO-ReM, PACO,
    SVG): the size floor only. Their occlusion is a proxy that leans to "hard" (:mod:`filters.geometry`) and a
    real object is named from a part (a head, a wheel), unlike a demo polygon whose identity is its corners; their
    visible share is bounded by the geometry filter's drop rules (``min_visible``, ``max_occlusion``)."""
    if source.source == "demo" and source.generated:
        return LegibilityRules.demo()
    return LegibilityRules(default_fraction=0.0, max_truncation=float("inf"))


@dataclass(frozen=True)
class ObjectStates:
    """What each (image, category) pair shows of the category (:class:`Objects` pairs)."""

    visible: np.ndarray
    """At least one usable instance (else the pair is undecidable)."""
    all_hard: np.ndarray
    """Every usable instance is hard to see."""
    hardest: np.ndarray
    """The first usable instance (the signal of a hard pair), -1 where none."""
    countable: np.ndarray
    """No crowd region, no instance too hard to see or to name, and nothing else that could be taken for the
    category: the instances can be counted."""
    count: np.ndarray
    first_hard: np.ndarray
    """The first hard instance that is not a crowd region (what makes a count hard), -1 where none."""
    instances: np.ndarray
    crowd_or_dropped: np.ndarray


def object_states(objects: Objects) -> ObjectStates:
    """The state of every (image, category) pair, from its instances."""
    usable = objects.usable()
    n_usable = objects.count(usable)
    crowds = objects.count(objects.crowd)
    dropped = objects.count(~objects.crowd & ~usable)
    lookalike = objects.lookalike()
    return ObjectStates(
        visible=n_usable > 0,
        all_hard=(n_usable > 0) & (objects.count(usable & (objects.level == HARD)) == n_usable),
        hardest=objects.first(usable),
        countable=(crowds == 0) & (dropped == 0) & ~lookalike,
        count=objects.count(~objects.crowd),
        first_hard=objects.first(~objects.crowd & (objects.level == HARD)),
        instances=objects.count(np.ones(len(objects.image), dtype=bool)),
        crowd_or_dropped=(crowds > 0) | (dropped > 0) | lookalike,
    )


def _positives(objects: Objects, hard: np.ndarray, instance: np.ndarray, decided: np.ndarray) -> LabelColumns:
    """Positives where ``decided``: hard where ``hard``, with the geometry signal of ``instance``."""
    labels = LabelColumns.undecided(len(decided))
    labels.codes[decided] = POS + hard[decided]
    hard_here = decided & hard
    labels.signals[hard_here] = objects.signal[instance[hard_here]]
    labels.scores[hard_here] = objects.score[instance[hard_here]]
    return labels


def with_clip(labels: LabelColumns, z: np.ndarray | None, low_z: float) -> LabelColumns:
    """Positives with CLIP's z-score of their pair (``z``, NaN where none): an easy one with an abnormally low z
    becomes a hard positive of signal ``clip`` (score: the z); every other keeps its label and records the z."""
    if z is None:
        return labels
    positive = (labels.codes >= POS) & ~np.isnan(z)
    made_hard = positive & (labels.codes == POS) & (z <= low_z)
    labels.codes[made_hard] = POS_HARD
    labels.signals[made_hard] = SIGNALS.index("clip")
    labels.scores[made_hard] = z[made_hard]
    labels.clip_z = np.where(positive, z, np.nan)
    return labels


# ---------------------------------------------------------------------------------------------- absence


def verified_absence(source: SourceTables, present: np.ndarray, could_be: np.ndarray,
                     lists: tuple[str, ...] = ("verified_absent",)) -> np.ndarray:
    """Image x category: no instance, and the source says so (exhaustive, or the category in one of ``lists``,
    the images' federated lists), and nothing in the image a viewer could take for one (``could_be``,
    :attr:`Objects.could_be`): absent is only what a person can confirm is not there."""
    return (~present if source.exhaustive else source.list_matrix(lists) & ~present) & ~could_be


def absent_labels(context_p: np.ndarray, hard_negative: np.ndarray, clip: ClipSignals | None) -> LabelColumns:
    """The label of every category in every image where it is absent (image x category; read only where the
    absence is verified): a hard negative when what is present makes it likely (co-occurrence), or, when CLIP
    ran, when the image is abnormally similar to the category's prompt (signal ``clip``, score the z)."""
    z = clip.category_z_matrix() if clip is not None else None
    by_clip = ~hard_negative & (clip.hard_absent_mask() if clip is not None else False)
    labels = LabelColumns.undecided(hard_negative.shape)
    labels.codes[...] = NEG + (hard_negative | by_clip)
    labels.signals[hard_negative] = SIGNALS.index("cooccurrence")
    labels.signals[by_clip] = SIGNALS.index("clip")
    labels.scores[...] = np.where(by_clip, z if z is not None else np.nan, context_p)
    labels.clip_z = z
    return labels


# ---------------------------------------------------------------------------------------- objects, counts


def existence(objects: Objects, states: ObjectStates, clip: ClipSignals | None) -> LabelColumns:
    """Per (image, category) pair: present, and a hard positive when every usable instance is small, heavily
    occluded or truncated (the first one's measure is the signal) or, when CLIP ran, abnormally dissimilar to the
    category's prompt (:func:`with_clip`); undecidable when no instance is usable (an object present only as a
    crowd region, or only too small or hidden to see)."""
    labels = _positives(objects, states.all_hard, states.hardest, states.visible)
    return with_clip(labels, _pair_z(objects, clip), clip.low_z if clip is not None else 0.0)


def counting(objects: Objects, states: ObjectStates, n_objects: np.ndarray, not_exhaustive: np.ndarray,
             config: PoolConfig, clip: ClipSignals | None) -> tuple[LabelColumns, np.ndarray]:
    """Per (image, category) pair: the count and its label, hard when any counted instance is hard to see (one
    missed makes a wrong count); undecidable with a crowd region (a crowd cannot be counted) or an instance too
    hard to see, and beyond the limit: images with more than ``count_max_objects`` annotated objects **in total**
    (``count_scope="image"``, the reading chosen: the paper's reason is annotation reliability in crowded
    images) or of the category (``"category"``); refused where the source lists the category as not every
    instance annotated (``not_exhaustive_category_ids``). Counts: :data:`NOT_COUNTABLE`, :data:`COUNT_REFUSED`,
    or the number."""
    limit = config.count_max_objects
    counted = states.countable & within_limit(n_objects, config)[objects.pair_image]
    if config.count_scope == "category":
        counted &= states.count <= limit
    refused = counted & not_exhaustive[objects.pair_image, objects.pair_category]
    decided = counted & ~refused
    counts = np.where(decided, states.count, np.where(refused, COUNT_REFUSED, NOT_COUNTABLE)).astype(np.int32)
    labels = _positives(objects, states.first_hard >= 0, states.first_hard, decided)
    return with_clip(labels, _pair_z(objects, clip), clip.low_z if clip is not None else 0.0), counts


def within_limit(n_objects: np.ndarray, config: PoolConfig) -> np.ndarray:
    """Images the image-scope count limit leaves countable (every image under ``count_scope="category"``)."""
    if config.count_scope != "image":
        return np.ones(len(n_objects), dtype=bool)
    return n_objects <= config.count_max_objects


def _pair_z(objects: Objects, clip: ClipSignals | None) -> np.ndarray | None:
    return None if clip is None else clip.category_z_matrix()[objects.pair_image, objects.pair_category]


# ------------------------------------------------------------------------------------------------ attributes


@dataclass(frozen=True)
class Cells:
    """Probes decided in images (attributes: every probe of a category in every image showing the category;
    positions: every triple where it can be decided while both its categories are shown), probe then image."""

    probe: np.ndarray
    image: np.ndarray
    labels: LabelColumns
    refusals: np.ndarray | None = None
    """0: none, ``k + 1``: :data:`REFUSAL_REASONS` ``[k]``."""

    @classmethod
    def sorted(cls, probe: np.ndarray, image: np.ndarray, labels: LabelColumns, refusals: np.ndarray | None = None
               ) -> Cells:
        order = np.lexsort((image, probe))
        return cls(probe[order], image[order], labels.take(order), None if refusals is None else refusals[order])


def attribute_probes(source: SourceTables, objects: Objects, states: ObjectStates) -> list[tuple[str, str]]:
    """``(attribute, category)`` of every attribute a non-crowd instance carries where its category is visible,
    sorted."""
    parent, names = flat_lists(source.instances, "attributes")
    shown = ~objects.crowd[parent] & states.visible[objects.pair[parent]]
    return sorted({(a, source.categories[c]) for a, c in zip(np.array(names, dtype=object)[shown].tolist(),
                                                              objects.category[parent[shown]].tolist())})


def attributes(source: SourceTables, objects: Objects, states: ObjectStates, probes: list[tuple[str, str]],
               clip: ClipSignals | None) -> Cells:
    """Each attribute probe in each image showing its category:

    * present where a usable instance carries it (hard when every usable one that does is hard to see, with the
      first such instance's signal);
    * else false (a hard negative: the object is there, not so) where every instance has an attribute of the
      probe's type annotated, none is a crowd region or too hard to see, and the annotation is exhaustive: not
      where the category's instances or their attributes are not all annotated, or the type is flagged unknown
      on one of them (refusals);
    * undecidable elsewhere, and wherever no instance of the category is usable.
    """
    kinds = sorted(set(source.attribute_types.values()))
    parent, carried = flat_lists(source.instances, "attributes")
    names = sorted(set(carried) | {a for a, _ in probes})
    number = {name: k for k, name in enumerate(names)}
    carried_number = np.array([number[a] for a in carried], dtype=np.int64)
    kind_bit = np.array([1 << kinds.index(source.attribute_types[a]) if a in source.attribute_types else 0
                         for a in names], dtype=np.int64)
    # per pair: the attribute types every instance has some attribute of, and those some instance flags unknown
    instance_kinds = np.zeros(len(objects.image), dtype=np.int64)
    np.bitwise_or.at(instance_kinds, parent, kind_bit[carried_number])
    every = np.full(objects.n_pairs, -1, dtype=np.int64)
    np.bitwise_and.at(every, objects.pair, instance_kinds)
    unknown_parent, unknown = flat_lists(source.instances, "unknown_types")
    flagged = np.zeros(objects.n_pairs, dtype=np.int64)
    np.bitwise_or.at(flagged, objects.pair[unknown_parent],
                     np.array([1 << kinds.index(k) if k in kinds else 0 for k in unknown], dtype=np.int64))
    # the cells: every probe of a category in every pair of that category, cell by cell (pair, then probe order)
    categories = {name: k for k, name in enumerate(source.categories)}
    probe_category = np.array([categories[c] for _, c in probes], dtype=np.int64)
    of_category = np.bincount(probe_category, minlength=objects.n_categories)
    per_pair = of_category[objects.pair_category]
    cell_pair = np.repeat(np.arange(objects.n_pairs), per_pair)
    within = np.arange(len(cell_pair)) - np.repeat(np.cumsum(per_pair) - per_pair, per_pair)
    grouped = np.argsort(probe_category, kind="stable")  # probe numbers by category, in probe order
    cell_probe = grouped[(np.cumsum(of_category) - of_category)[objects.pair_category[cell_pair]] + within]
    cell_attribute = np.array([number[a] for a, _ in probes], dtype=np.int64)[cell_probe]
    # carriers of each (pair, attribute): the usable instances carrying it, in instance order
    carries = objects.usable()[parent]
    keys, first, inverse = np.unique(objects.pair[parent[carries]] * len(names) + carried_number[carries],
                                     return_index=True, return_inverse=True)
    carriers = np.bincount(inverse, minlength=len(keys))
    hard_carriers = np.bincount(inverse, weights=objects.level[parent[carries]] == HARD, minlength=len(keys))
    first_carrier = parent[carries][first]
    at = np.minimum(np.searchsorted(keys, cell_pair * len(names) + cell_attribute), max(len(keys) - 1, 0))
    visible = states.visible[cell_pair]
    present = visible & (keys[at] == cell_pair * len(names) + cell_attribute) if len(keys) else np.zeros_like(visible)
    carrier = np.where(present, first_carrier[at] if len(keys) else 0, 0)
    labels = _positives(objects, present & (hard_carriers[at] == carriers[at]), carrier, present)
    if clip is not None:
        labels = with_clip(labels, clip.attribute_z_cells(objects.pair_image[cell_pair], probes, cell_probe), clip.low_z)
    # not carried by a usable instance: denied where the type is annotated on every instance, unless refused
    bit = kind_bit[cell_attribute]
    image, category = objects.pair_image[cell_pair], objects.pair_category[cell_pair]
    deniable = visible & ~present & ~states.crowd_or_dropped[cell_pair] & ((every[cell_pair] & bit) != 0)
    reasons = np.select(
        [source.list_matrix(("not_exhaustive",))[image, category],
         source.list_matrix(("attributes_not_exhaustive",))[image, category], (flagged[cell_pair] & bit) != 0],
        [REFUSAL_REASONS.index(r) + 1 for r in (NOT_EXHAUSTIVE, ATTRIBUTES_NOT_EXHAUSTIVE, ATTRIBUTE_TYPE_UNKNOWN)], 0)
    refusals = np.where(deniable, reasons, 0).astype(np.int8)
    denied = deniable & (refusals == 0)
    labels.codes[denied] = NEG_HARD
    labels.signals[denied] = SIGNALS.index("attribute")
    return Cells.sorted(cell_probe, image, labels, refusals)


# ------------------------------------------------------------------------------------------------ positions


def predicates_of(source: SourceTables) -> list[str]:
    """Each relation's predicate."""
    return source.relations.column("predicate").to_pylist()


def _every_pair(objects: Objects, s_pair: np.ndarray, o_pair: np.ndarray, asked: np.ndarray,
                holds: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]) -> np.ndarray:
    """Per cell where ``asked``: whether ``holds(a, b, cell)`` for every subject instance ``a`` against every object
    instance ``b`` (arrays of instances and of the cells they belong to); False where a category has none."""
    out = np.zeros(len(asked), dtype=bool)
    cells = np.flatnonzero(asked)
    if not len(cells):
        return out
    order = np.argsort(objects.pair, kind="stable")  # each pair's instances, a run of ``order``
    starts = np.searchsorted(objects.pair[order], np.arange(objects.n_pairs + 1))
    n_a = (starts[1:] - starts[:-1])[s_pair[cells]]
    n_b = (starts[1:] - starts[:-1])[o_pair[cells]]
    n = n_a * n_b  # every subject instance against every object instance, cell after cell
    cell_of = np.repeat(np.arange(len(cells)), n)
    k = np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)
    a = order[starts[s_pair[cells]][cell_of] + k // n_b[cell_of]]
    b = order[starts[o_pair[cells]][cell_of] + k % n_b[cell_of]]
    fails = ~holds(a, b, cells[cell_of])
    out[cells] = (n > 0) & (np.bincount(cell_of, weights=fails, minlength=len(cells)) == 0)
    return out


def relation_triples(source: SourceTables) -> tuple[list[tuple[str, str, str]], np.ndarray]:
    """The ``(subject category, predicate, object category)`` triples of the source's relations between
    different categories, sorted (same-category relations, "a hexagon left of a hexagon", read as riddles: not
    asked), and each relation's triple (its probe number; -1 for a same-category one)."""
    subject = column(source.instances, "category")[column(source.relations, "subject")]
    obj = column(source.instances, "category")[column(source.relations, "object")]
    predicates = source.relations.column("predicate").to_pylist()
    names = source.categories
    keys = [(names[s], p, names[o]) if s != o else None for s, p, o in zip(subject.tolist(), predicates, obj.tolist())]
    triples = sorted({key for key in keys if key is not None})
    number = {triple: k for k, triple in enumerate(triples)}
    return triples, np.array([number[key] if key is not None else -1 for key in keys], dtype=np.int64)


def positions(source: SourceTables, objects: Objects, states: ObjectStates, triples: list[tuple[str, str, str]],
              triple_of: np.ndarray, present: np.ndarray, exhaustive: bool) -> Cells:
    """Each triple in the images where it can be decided while both its categories are shown: all of them where
    relations are exhaustive, else those annotating it or its opposite. There it is

    * present where a usable subject-object pair shows it (hard when every usable pair involves an object hard
      to see: the first such pair's subject where hard, else its object); for ``left of`` / ``right of`` /
      ``above`` / ``below`` only where the pair's boxes also show it with one axis clearly dominating
      (:func:`filters.legibility.clear_directions`: apart along it, overlapping across it by half the smaller
      extent); a diagonal pair is nobody's "above" (issue 40: a circle higher than a heart but far to its right);
      ``next to`` only where the boxes sit side by side with a small gap
      (:func:`filters.legibility.next_to_states`, issue 53);
    * undecidable where only unusable pairs show it, or either category has no usable instance, or something in
      the image could be taken for either category (a look-alike, :attr:`Objects.could_be`);
    * false (a hard negative) where relations are exhaustive, or where each category has a single instance and
      the opposite relation (``left of`` / ``right of``, ...) is annotated between them. That contradiction trusts
      the scene graph's instance count ("the only cup is right of the only dog"); a scene graph may miss a second
      cup, a risk accepted because the opposite relation was annotated between the objects the graph does name.
      A direction is false only where every subject-object pair of instances is clearly in another one, ``next
      to`` only where every pair is clearly apart (the band between is asked neither way);
    * undecidable elsewhere.

    A triple whose subject or object is missing is false exactly where that absence is verified
    (:class:`builders.mioh.pools.Pools` reads it from the absence matrices).
    """
    categories = {name: k for k, name in enumerate(source.categories)}
    s_cat = np.array([categories[s] for s, _, _ in triples], dtype=np.int64)
    o_cat = np.array([categories[o] for _, _, o in triples], dtype=np.int64)
    number = {triple: k for k, triple in enumerate(triples)}
    opposite = np.array([number.get((s, OPPOSITE_RELATIONS.get(r, ""), o), -1) for s, r, o in triples], dtype=np.int64)
    relation_image = column(source.relations, "image").astype(np.int64)
    asked = triple_of >= 0
    annotated = np.unique(relation_image[asked] * len(triples) + triple_of[asked])
    if exhaustive:
        cells = np.concatenate([np.flatnonzero(present[:, s] & present[:, o]) * len(triples) + t
                                for t, (s, o) in enumerate(zip(s_cat.tolist(), o_cat.tolist()))] or [np.zeros(0, int)])
    else:
        image, triple = annotated // max(1, len(triples)), annotated % max(1, len(triples))
        flipped = opposite[triple] >= 0
        cells = np.concatenate((annotated, image[flipped] * len(triples) + opposite[triple[flipped]]))
    cells = np.unique(cells)
    image, triple = cells // max(1, len(triples)), cells % max(1, len(triples))
    # the subject-object pairs showing the relation in each cell, in the file's order: usable where neither object
    # is unusable (dropped), hard where one is hard to see
    subject, obj = column(source.relations, "subject"), column(source.relations, "object")
    key = relation_image[asked] * len(triples) + triple_of[asked]
    cell_of = np.searchsorted(cells, key)
    holds = np.bincount(cell_of, minlength=len(cells)) > 0
    s_level, o_level = objects.level[subject[asked]], objects.level[obj[asked]]
    boxes = np.stack([column(source.instances, k).astype(np.float64) for k in "xywh"], axis=1)
    predicates = predicates_of(source)
    direction = np.array([DIRECTIONS.index(p) if p in DIRECTIONS else -1 for p in predicates], dtype=np.int64)[asked]
    near = np.array([p == NEXT_TO_RELATION for p in predicates], dtype=bool)[asked]
    s_box, o_box = boxes[subject[asked]], boxes[obj[asked]]
    seen = clear_directions(s_box, o_box)
    usable = objects.usable()
    usable = (usable[subject[asked]] & usable[obj[asked]] & ((direction < 0) | (seen == direction))
              & (~near | (next_to_states(s_box, o_box) == NEXT_TO)))
    hard_instance = np.where(s_level == HARD, subject[asked], np.where(o_level == HARD, obj[asked], -1))
    plain = np.bincount(cell_of[usable & (hard_instance < 0)], minlength=len(cells)) > 0
    first = np.full(len(cells), len(key), dtype=np.int64)
    np.minimum.at(first, cell_of[usable], np.flatnonzero(usable))
    hard_shown = ~plain & (first < len(key))
    hard_of = np.where(hard_shown, hard_instance[np.minimum(first, max(len(key) - 1, 0))] if len(key) else 0, 0)
    s_pair, o_pair = objects.pair_of(image, s_cat[triple]), objects.pair_of(image, o_cat[triple])
    decidable = (states.visible[s_pair] & states.visible[o_pair] & ~objects.lookalike()[s_pair]
                 & ~objects.lookalike()[o_pair])
    shown = decidable & (plain | hard_shown)
    labels = _positives(objects, hard_shown, hard_of, shown)
    single = (states.instances[s_pair] == 1) & (states.instances[o_pair] == 1)
    opposite_cell = np.where(opposite[triple] >= 0, image * len(triples) + opposite[triple], -1)
    contradicted = single & np.isin(opposite_cell, annotated)
    wanted = np.array([DIRECTIONS.index(r) if r in DIRECTIONS else -1 for _, r, _ in triples], dtype=np.int64)[triple]
    apart = np.array([r == NEXT_TO_RELATION for _, r, _ in triples], dtype=bool)[triple]

    def elsewhere(a: np.ndarray, b: np.ndarray, cell: np.ndarray) -> np.ndarray:
        shown = clear_directions(boxes[a], boxes[b])
        return (shown >= 0) & (shown != wanted[cell])

    def not_next_to(a: np.ndarray, b: np.ndarray, cell: np.ndarray) -> np.ndarray:
        return next_to_states(boxes[a], boxes[b]) == NOT_NEXT_TO

    false = (decidable & ~holds & (exhaustive | contradicted)
             & ((wanted < 0) | _every_pair(objects, s_pair, o_pair, wanted >= 0, elsewhere))
             & (~apart | _every_pair(objects, s_pair, o_pair, apart, not_next_to)))
    labels.codes[false] = NEG_HARD
    labels.signals[false] = SIGNALS.index("relation")
    return Cells.sorted(triple, image, labels)
