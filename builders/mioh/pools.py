"""MIOH primitive pools (paper Sec. 4.1 and 4.3): every (image, probe) pair of one source decided, kept as columns.

:mod:`builders.mioh.rules` decides the pairs whose categories an image shows; a pair whose category it does not
show is a negative exactly where the absence is verified (:meth:`Pools.absent_decided`), with the label absence
gets there (:func:`builders.mioh.rules.absent_labels`). The pools keep both as tables (what the prepared-pools
cache writes, :mod:`builders.mioh.prepared`) and answer what drawing questions asks of them:

* :meth:`Pools.label`: one pair's :class:`~builders.mioh.labels.Label` (``None``: undecidable);
* :meth:`Pools.images`: the images where a probe has a status and difficulty (the pools a question's images are
  drawn from);
* :meth:`Pools.rows`: the codes of many probes in a few images at once (a question's distractors);
* :meth:`Pools.count`, :meth:`Pools.count_images`, :meth:`Pools.count_split`: counts.

The tables, for ``n`` images and ``C`` categories:

``grid`` (``n x C``)
    ``present`` (the image has an instance of the category, crowd regions included), ``verified`` (absent and
    verified so: everywhere unannotated in an exhaustive source), ``attribute_verified`` (absent as far as
    attribute questions go: PACO's attribute pass verifies too; neither where a look-alike is in view, ``lookalike``),
    and the absent label (``absent_hard``,
    ``absent_signal``, ``absent_score``).
one per task (cells: each probe in each image showing what it names, probe then image)
    ``probe`` (its number in :meth:`Pools.probes`), ``image``, the label; existence and counting also
    ``max_area`` (the relative area of the most visible usable instance), counting ``count`` (or
    :data:`~builders.mioh.rules.NOT_COUNTABLE` / :data:`~builders.mioh.rules.COUNT_REFUSED`), attributes
    ``refusal``.
``images``
    ``id``, ``file``, ``n_objects`` (annotated objects, the image-scope counting limit's measure).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import asdict
from itertools import compress
from typing import TYPE_CHECKING, Any, Callable, Hashable, Sequence

import numpy as np

from builders.mioh import rules
from builders.mioh.labels import NEG, POS, UNDECIDED, Label, LabelColumns
from builders.mioh.rules import NOT_COUNTABLE, PoolConfig
from filters.cooccurrence import CooccurrenceStats, HardNegativeThresholds, hard_negative_mask
from filters.geometry import GeometryThresholds, Measures
from sources.tables import SourceTables

if TYPE_CHECKING:
    from builders.mioh.clip import ClipSignals

Probe = Hashable
EASY_NEG = Label("neg")  # a relation whose subject or object is verified absent

SPLITS_KEPT = 512
"""Probes whose image lists (:meth:`Pools.images`) a pool keeps, the most recently drawn (each list is up to a
source's images, and a scene-graph source has tens of thousands of triples)."""


class Pools:
    """The primitive pools of one source, for the tasks it serves (see the module docstring for the tables)."""

    def __init__(self, info: dict[str, Any], tables: dict[str, dict[str, Any]], clip: ClipSignals | None = None
                 ) -> None:
        """``info``: the source and the pools described (JSON); ``tables``: the columns by table; ``clip``: CLIP's
        z-scores, where the CLIP stage ran."""
        self.info = info
        self.tables = tables
        self.clip = clip
        self.source: str = info["source"]
        self.categories: tuple[str, ...] = tuple(info["categories"])
        self.n_images: int = info["n_images"]
        self.config = PoolConfig(GeometryThresholds(**info["config"]["geometry"]),
                                 HardNegativeThresholds(**info["config"]["hard_negative"]),
                                 **{k: v for k, v in info["config"].items() if k not in ("geometry", "hard_negative")})
        self._probes = {task: [tuple(p) if isinstance(p, list) else p for p in found]
                        for task, found in info["probes"].items()}
        self._category = {c: k for k, c in enumerate(self.categories)}
        grid = tables["grid"]
        shape = (self.n_images, len(self.categories))
        self.incidence = _flags(grid["present"], shape)
        """Image x category: the category has at least one instance (crowd included) in the image."""
        self.verified_absent = _flags(grid["verified"], shape)
        """Image x category: absent, and verified so (everywhere unannotated in an exhaustive source)."""
        self.attribute_verified_absent = _flags(grid["attribute_verified"], shape)
        self.lookalike = _flags(grid["lookalike"], shape)
        """Image x category: something there could be taken for the category (its absence is not what a viewer
        can confirm: undecidable, whatever the source verified)."""
        self.absent = LabelColumns(
            NEG + _flags(grid["absent_hard"], shape).astype(np.int8),
            np.asarray(grid["absent_signal"]).reshape(shape), np.asarray(grid["absent_score"]).reshape(shape),
            None if clip is None else clip.category_z_matrix())
        """The label of every category where it is absent (read where the absence decides the pair)."""
        self._labels: dict[tuple, Label | None] = {}
        self._memo: dict[Hashable, Any] = {}
        self._splits: OrderedDict[tuple[str, Probe], dict[tuple[str, bool], np.ndarray]] = OrderedDict()
        """The most recently drawn probes' image lists (a dict, not ``functools.lru_cache`` on a bound method: that
        would make the pools a reference cycle, whose tables only the cyclic collector frees)."""

    # --------------------------------------------------------------------------------------------- building

    @classmethod
    def build(cls, source: SourceTables, measures: Measures, config: PoolConfig, tasks: Sequence[str],
              clip: Callable[[np.ndarray], ClipSignals] | None = None) -> Pools:
        """The pools of ``source`` for ``tasks``, from its instances' geometry (:func:`filters.geometry.measure`)
        and, where given, CLIP's signals (computed by ``clip`` from the image x category incidence)."""
        objects = rules.Objects.of(source, measures, config.geometry)
        states = rules.object_states(objects)
        present = np.zeros((source.n_images, len(source.categories)), dtype=bool)
        present[objects.pair_image, objects.pair_category] = True
        clip = clip(present) if clip is not None else None  # type: ignore[assignment]
        cooc = CooccurrenceStats.from_incidence(present, source.categories)
        context = cooc.context_scores(present)
        hard_negative = hard_negative_mask(context, config.hard_negative) & ~present
        absent = rules.absent_labels(context.p, hard_negative, clip)

        n_objects = np.bincount(objects.image, minlength=source.n_images)
        tables: dict[str, dict[str, Any]] = {
            "grid": {"present": present, "verified": rules.verified_absence(source, present, objects.could_be),
                     "attribute_verified": rules.verified_absence(
                         source, present, objects.could_be, ("verified_absent", "attributes_verified_absent")),
                     "lookalike": objects.could_be,
                     "absent_hard": absent.codes > NEG, "absent_signal": absent.signals, "absent_score": absent.scores},
            "images": {"id": source.images.column("id"), "file": source.images.column("file"),
                       "n_objects": n_objects.astype(np.int32)},
        }
        visible = np.zeros(len(source.categories), dtype=bool)
        visible[objects.pair_category[states.visible]] = True
        probes: dict[str, list] = {task: [] for task in tasks}
        if {"existence", "counting"} & set(tasks):
            names = sorted(c for c, shown in zip(source.categories, visible) if shown)
            number = np.full(len(source.categories), len(names), dtype=np.int64)
            number[[source.categories.index(c) for c in names]] = np.arange(len(names))
            probe = number[objects.pair_category]
            order = np.lexsort((objects.pair_image, probe))[:int(np.count_nonzero(probe < len(names)))]
            max_area = np.zeros(objects.n_pairs)
            np.maximum.at(max_area, objects.pair, np.where(objects.usable(), objects.relative_area, 0.0))
            counting, counts = rules.counting(objects, states, n_objects, source.list_matrix(("not_exhaustive",)),
                                              config, clip)
            labels = {"existence": rules.existence(objects, states, clip), "counting": counting}
            for task in {"existence", "counting"} & set(tasks):
                probes[task] = names
                tables[task] = {"probe": probe[order], "image": objects.pair_image[order],
                                **labels[task].take(order).columns(""), "max_area": max_area[order],
                                **({"count": counts[order]} if task == "counting" else {})}
        if "attribute" in tasks:
            probes["attribute"] = rules.attribute_probes(source, objects, states)
            cells = rules.attributes(source, objects, states, probes["attribute"], clip)
            tables["attribute"] = {"probe": cells.probe, "image": cells.image, **cells.labels.columns(""),
                                   "refusal": cells.refusals}
        if "position" in tasks:
            triples, triple_of = rules.relation_triples(source)
            probes["position"] = triples
            cells = rules.positions(source, objects, states, triples, triple_of, present, config.relations_exhaustive)
            tables["position"] = {"probe": cells.probe, "image": cells.image, **cells.labels.columns("")}
        info = {"source": source.source, "path": source.path, "license": source.license,
                "exhaustive": source.exhaustive, "generated": source.generated, "categories": list(source.categories),
                "n_images": source.n_images, "config": asdict(config), "probes": probes,
                "attribute_types": dict(sorted(source.attribute_types.items()))}
        return cls(info, tables, clip)  # type: ignore[arg-type]

    # ---------------------------------------------------------------------------------------------- labels

    def category_index(self, category: str) -> int:
        """Column of ``category`` in the image x category matrices."""
        return self._category[category]

    def probes(self, task: str) -> list[Probe]:
        """Probes with at least one positive image, sorted."""
        return self._probes[task]

    def probe_kinds(self, task: str) -> np.ndarray:
        """Per probe of :meth:`probes`: its kind - for attributes the attribute's type ("colour", "pattern"; empty
        where the source gives none), for other tasks one kind for all. Distractors are drawn of the gold's kind:
        a colour among colours (issue 40: colour golds among mixed options were a blind guesser's pick)."""
        def make() -> np.ndarray:
            types = self.info.get("attribute_types", {})
            return np.array([types.get(p[0], "") if task == "attribute" else "" for p in self._probes[task]],
                            dtype=object)
        return self._memoised(("kinds", task), make)

    def probe_groups(self, task: str) -> np.ndarray:
        """Per probe of :meth:`probes`: a number shared by the probes one question should not offer together -
        for attributes the object (one "red square" per question, never "red square" and "blue square": where
        the object is in the images, every other attribute of it is a hard negative, so easy questions could only
        pair the gold's object with nothing, and a lone object noun gave the gold away); for relations the two
        objects, in either order ("a star left of a ring" and "a ring right of a star" say one thing, so two
        such options are both wrong, and a reader who saw that skipped them); else the probe itself."""
        def make() -> np.ndarray:
            probes = self._probes[task]
            if task == "attribute":
                return np.array([self._category[p[1]] for p in probes], dtype=np.int64)
            if task == "position":
                subjects, objects = self._relation_categories()
                low, high = np.minimum(subjects, objects), np.maximum(subjects, objects)
                return low * (len(self._category) + 1) + high
            return np.arange(len(probes))
        return self._memoised(("groups", task), make)

    def easy_positives(self, task: str) -> np.ndarray:
        """Per probe of :meth:`probes`: how many images show it easily (a plain positive)."""
        return self._memoised(("easy-positives", task), lambda: np.bincount(
            np.asarray(self.tables[task]["probe"])[np.asarray(self.tables[task]["code"]) == POS],
            minlength=len(self._probes[task])))

    def probe_number(self, task: str, probe: Probe) -> int:
        """``probe``'s position in :meth:`probes`."""
        numbers = self._memoised(("numbers", task), lambda: {p: k for k, p in enumerate(self._probes[task])})
        return numbers[probe]

    def absent_decided(self, task: str) -> np.ndarray:
        """Image x category: the category is missing and that decides the pair - where its absence is verified
        (for attributes: by either annotation pass; for counting: within the count limit too, the image counting
        0)."""
        if task == "attribute":
            return self.attribute_verified_absent
        if task == "counting":
            return self._memoised("count-absent", lambda: self.verified_absent & rules.within_limit(
                self.object_counts(), self.config)[:, None])
        return self.verified_absent

    def label(self, task: str, img: int, probe: Probe) -> Label | None:
        """The label of ``probe`` in image ``img`` for ``task`` (``None``: undecidable); memoised."""
        key = (task, img, probe)
        try:
            return self._labels[key]
        except KeyError:
            found = self._labels[key] = self._label(task, img, probe)
            return found

    def _label(self, task: str, img: int, probe: Probe) -> Label | None:
        if task == "position":
            s, o = self._category[probe[0]], self._category[probe[2]]  # type: ignore[index]
            if self.incidence[img, s] and self.incidence[img, o]:
                return self._cell(task, self.probe_number(task, probe), img)
            return EASY_NEG if self.verified_absent[img, s] or self.verified_absent[img, o] else None
        c = self._category[probe[1] if task == "attribute" else probe]  # type: ignore[index]
        if self.incidence[img, c]:
            return self._cell(task, self.probe_number(task, probe), img)
        return self.absent.get((img, c)) if self.absent_decided(task)[img, c] else None

    def absent_label(self, img: int, category: str) -> Label:
        """The label a missing ``category`` gets in ``img`` where its absence is verified."""
        return self.absent.get((img, self._category[category]))  # type: ignore[return-value]

    def _cell(self, task: str, number: int, img: int, column: str | None = None) -> Any:
        """The label (or the value of ``column``) of probe ``number`` in ``img`` from the ``task`` cells, ``None``
        where there is no cell."""
        start, images = self._cells_of(task, number)
        k = int(np.searchsorted(images, img))
        if k == len(images) or images[k] != img:
            return None
        if column is not None:
            return np.asarray(self.tables[task][column])[start + k]
        return self._memoised(("cell-labels", task), lambda: LabelColumns.of(self.tables[task], "", self.clip)
                              ).get(start + k)

    def _cells_of(self, task: str, number: int) -> tuple[int, np.ndarray]:
        """Where probe ``number``'s cells start in the ``task`` table, and their images (sorted)."""
        table = self.tables[task]
        bounds = self._memoised(("bounds", task), lambda: np.searchsorted(
            np.asarray(table["probe"]), np.arange(len(self._probes[task]) + 1)))
        start, end = int(bounds[number]), int(bounds[number + 1])
        return start, np.asarray(table["image"])[start:end]

    # ------------------------------------------------------------------------------------------ image lists

    def codes_over_images(self, task: str, probe: Probe) -> np.ndarray:
        """The code (:data:`~builders.mioh.labels.UNDECIDED`, ``NEG``, ...) of ``probe`` in every image."""
        if task == "position":
            s, o = self._category[probe[0]], self._category[probe[2]]  # type: ignore[index]
            absent = self._memoised("verified-absent-by-category", lambda: np.asfortranarray(self.verified_absent))
            codes = np.full(self.n_images, UNDECIDED, dtype=np.int8)
            codes[absent[:, s] | absent[:, o]] = NEG  # (a category's images contiguous: read column by column)
            number = self.probe_number(task, probe)
            start, images = self._cells_of(task, number)
            codes[images] = np.asarray(self.tables[task]["code"])[start:start + len(images)]
            return codes
        return self._code_matrix(task)[:, self.probe_number(task, probe)]

    def images(self, task: str, probe: Probe, status: str, hard: bool) -> np.ndarray:
        """Indices of images where ``probe`` has ``status`` and difficulty ``hard``, as a sorted ``int32`` array."""
        key = (task, probe)
        split = self._splits.get(key)
        if split is None:
            split = self._splits[key] = self._split(task, probe)
            if len(self._splits) > SPLITS_KEPT:
                self._splits.popitem(last=False)
        else:
            self._splits.move_to_end(key)
        return split[(status, hard)]

    def _split(self, task: str, probe: Probe) -> dict[tuple[str, bool], np.ndarray]:
        codes = self.codes_over_images(task, probe)
        return {(status, hard): np.flatnonzero(codes == (POS if status == "pos" else NEG) + int(hard)).astype(np.int32)
                for status in ("pos", "neg") for hard in (False, True)}

    def decidable(self, task: str, images: Sequence[int]) -> np.ndarray | None:
        """Per probe of :meth:`probes`: whether its category is shown, or missing with its absence deciding the
        pair, in every one of ``images`` - what a probe needs to be decided there (:meth:`rows` says whether it
        is); ``None`` for position, whose probes name two categories."""
        if task == "position":
            return None
        picked = np.asarray(images)
        shown_or_decided = (self.incidence[picked] | self.absent_decided(task)[picked]).all(axis=0)
        return shown_or_decided[self._probe_categories(task)]

    def _probe_categories(self, task: str) -> np.ndarray:
        """The category of each probe of a task whose probes name one."""
        return self._memoised(("probe-categories", task), lambda: np.array(
            [self._category[p[1] if task == "attribute" else p] for p in self._probes[task]], dtype=np.int64))

    def _relation_categories(self) -> tuple[np.ndarray, np.ndarray]:
        """The subject's and the object's category of each relation probe."""
        return self._memoised("relation-categories", lambda: tuple(np.array(
            [self._category[p[k]] for p in self._probes["position"]], dtype=np.int64) for k in (0, 2)))

    def rows(self, task: str, images: Sequence[int], columns: np.ndarray) -> np.ndarray:
        """The codes of probes ``columns`` (numbers in :meth:`probes`) in ``images``: images x columns."""
        if task != "position":
            return self._code_matrix(task)[np.ix_(np.asarray(images), columns)]
        where = np.full(len(self._probes[task]), -1, dtype=np.int64)
        where[columns] = np.arange(len(columns))
        subjects, objects = (categories[columns] for categories in self._relation_categories())
        out = np.full((len(images), len(columns)), UNDECIDED, dtype=np.int8)
        for row, img in enumerate(images):
            shown, verified = self.incidence[img], self.verified_absent[img]
            out[row, ~(shown[subjects] & shown[objects]) & (verified[subjects] | verified[objects])] = NEG
            probes, codes = self._cells_in_image(img)
            local = where[probes]
            out[row, local[local >= 0]] = codes[local >= 0]
        return out

    def _cells_in_image(self, img: int) -> tuple[np.ndarray, np.ndarray]:
        """The position cells of image ``img``: their probe numbers and codes."""
        table = self.tables["position"]
        order, starts = self._memoised("cells-by-image", lambda: _by_image(np.asarray(table["image"]), self.n_images))
        picked = order[starts[img]:starts[img + 1]]
        return np.asarray(table["probe"])[picked], np.asarray(table["code"])[picked]

    def _code_matrix(self, task: str) -> np.ndarray:
        """Image x probe codes of a task whose probes name one category (column-major: a probe's images are
        contiguous), made once: the absent pairs where their absence decides them, the shown ones from the
        task's cells."""
        def made() -> np.ndarray:
            cats = self._probe_categories(task)
            codes = np.where(self.absent_decided(task)[:, cats], self.absent.codes[:, cats], UNDECIDED).astype(np.int8)
            table = self.tables[task]
            codes[np.asarray(table["image"]), np.asarray(table["probe"])] = np.asarray(table["code"])
            return np.asfortranarray(codes)

        return self._memoised(("code-matrix", task), made)

    # ---------------------------------------------------------------------------------------------- counts

    def count(self, img: int, category: str) -> int | None:
        """How many instances of ``category`` the image shows, or ``None`` when it cannot be counted."""
        n = int(self._count_matrix()[img, self.probe_number("counting", category)])
        return n if n >= 0 else None

    def _count_matrix(self) -> np.ndarray:
        """Image x counting probe: the count, 0 where the category's absence decides it, a negative code where
        it cannot be counted (column-major: a probe's images are contiguous), made once."""
        def made() -> np.ndarray:
            cats = self._probe_categories("counting")
            counts = np.full((self.n_images, len(cats)), NOT_COUNTABLE, dtype=np.int32, order="F")
            counts[self.absent_decided("counting")[:, cats]] = 0
            table = self.tables["counting"]
            counts[np.asarray(table["image"]), np.asarray(table["probe"])] = np.maximum(
                np.asarray(table["count"]), NOT_COUNTABLE)
            return counts

        return self._memoised("count-matrix", made)

    def count_images(self, category: str) -> dict[int, list[int]]:
        """Countable images of ``category`` grouped by count (counts in the order of their first image)."""
        def made() -> dict[int, list[int]]:
            counts = self._count_matrix()[:, self.probe_number("counting", category)]
            decided = counts[counts >= 0]
            values, first = np.unique(decided, return_index=True)
            return {int(v): np.flatnonzero(counts == v).tolist() for v in values[np.argsort(first)]}

        return self._memoised(("count", category), made)

    def count_split(self, category: str) -> dict[int, tuple[list[int], list[int]]]:
        """Countable images of ``category`` by count, each split into (easy, hard) by their counting label."""
        def made() -> dict[int, tuple[list[int], list[int]]]:
            plain = np.isin(self.codes_over_images("counting", category), (POS, NEG))
            split = {}
            for n, imgs in self.count_images(category).items():  # the lists share count_images' numbers
                easy = plain[imgs]
                split[n] = (list(compress(imgs, easy.tolist())), list(compress(imgs, (~easy).tolist())))
            return split

        return self._memoised(("count-split", category), made)

    def object_counts(self) -> np.ndarray:
        """Annotated objects per image (the image-scope counting limit's measure)."""
        return np.asarray(self.tables["images"]["n_objects"])

    # ------------------------------------------------------------------------------------------- reporting

    def image_id(self, img: int) -> str:
        """The record id of image ``img``."""
        return self._names("id")[img]

    def image_file(self, img: int) -> str:
        """The image file of image ``img``."""
        return self._names("file")[img]

    def index_of(self, image_id: str) -> int:
        """Position of an image (by record id) in the source."""
        return self._memoised("index", lambda: {name: k for k, name in enumerate(self._names("id"))})[image_id]

    def _names(self, key: str) -> list[str]:
        values = self.tables["images"][key]
        return self._memoised(("names", key), lambda: values.to_pylist() if hasattr(values, "to_pylist") else values)

    def max_relative_area(self, img: int, category: str) -> float:
        """Relative area of the most visible usable instance of ``category`` (0 when none)."""
        task = "existence" if "existence" in self.tables else "counting"
        found = self._cell(task, self.probe_number(task, category), img, "max_area")
        return 0.0 if found is None else float(found)

    def _memoised(self, key: Hashable, make: Any) -> Any:
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = make()
        return found


def _flags(values: Any, shape: tuple[int, int]) -> np.ndarray:
    """A boolean matrix (kept as bytes in the cache: viewed, not copied)."""
    found = np.asarray(values).reshape(shape)
    return found.view(bool) if found.dtype == np.uint8 else found.astype(bool, copy=False)


def _by_image(images: np.ndarray, n_images: int) -> tuple[np.ndarray, np.ndarray]:
    """Cells ordered by image, and where each image's cells start in that order."""
    order = np.argsort(images, kind="stable")
    return order, np.searchsorted(images[order], np.arange(n_images + 1))


