"""Every probe's label in one image at once: :meth:`Pools.label` as a vector over ``pools.probes(task)``.

Why: drawing a question's distractors asks, for a few images, which probes hold where. Asked one probe at a time
through :meth:`Pools.label`, that was most of a paper-scale build (thousands of attribute probes, tens of thousands
of scene-graph triples, millions of Python calls). Rows answer the same question with a few numpy expressions:
probes whose categories the image does not show are decided from the verified-absence and hard-negative matrices
(what :meth:`Pools.decide_existence` and its siblings do for a missing category), the probes whose categories it
shows are read from the decision tables :meth:`Pools.prepare` filled, and only the triples a scene graph
annotates go through :meth:`Pools.label_uncached` one by one (a few per image).
``tests/builders/mioh/test_label_rows.py`` checks every row against :meth:`Pools.label`, probe by probe.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from builders.mioh.labels import NEG, UNDECIDED, label_code
from builders.mioh.pools import OPPOSITE_RELATIONS, Pools, Probe


class LabelRows:
    """Label rows of one pool, per task; the rows of the smaller vocabularies are made for every image at once and
    kept, position rows (one entry per scene-graph triple) are recomputed from the absence matrices and the kept
    codes of each image's own triples (:meth:`related_codes`)."""

    TASKS = ("existence", "attribute", "position")
    """The set-fact tasks, whose options are probes (counting's are numbers)."""

    def __init__(self, pools: Pools) -> None:
        self.pools = pools
        self._columns: dict[str, tuple[np.ndarray, ...]] = {}
        self._matrices: dict[str, np.ndarray] = {}
        self._related_codes: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._numbers: dict[str, dict[Probe, int]] = {}

    def columns(self, task: str) -> tuple[np.ndarray, ...]:
        """Category columns of every probe of ``task`` (positions: subject and object), computed once."""
        if task not in self._columns:
            index, probes = self.pools.category_index, self.pools.probes(task)
            if task == "position":
                self._columns[task] = (np.array([index(p[0]) for p in probes], dtype=np.int64),
                                       np.array([index(p[2]) for p in probes], dtype=np.int64))
            elif task == "attribute":
                self._columns[task] = (np.array([index(p[1]) for p in probes], dtype=np.int64),)
            else:
                self._columns[task] = (np.array([index(p) for p in probes], dtype=np.int64),)
        return self._columns[task]

    def numbers(self, task: str) -> dict[Probe, int]:
        """Probe -> its position in ``pools.probes(task)``, built once."""
        if task not in self._numbers:
            self._numbers[task] = {p: k for k, p in enumerate(self.pools.probes(task))}
        return self._numbers[task]

    def row(self, task: str, img: int, columns: np.ndarray | None = None) -> np.ndarray:
        """``int8`` codes (:func:`builders.mioh.labels.label_code`) of every probe of ``task`` in image ``img``;
        with ``columns`` (probe numbers), of those probes only, in that order."""
        if task not in self.TASKS:
            raise ValueError(f"no label rows for {task!r}: one of {', '.join(self.TASKS)}")
        if task == "position":
            return self._position_row(img, columns)
        rows = self._category_rows(task)
        return rows[img] if columns is None else rows[img, columns]

    def stack(self, task: str, images: Iterable[int], columns: np.ndarray | None = None) -> np.ndarray:
        """Rows of ``images`` stacked: images x probes (``columns``: as in :meth:`row`)."""
        if task == "position" and columns is not None:  # where each triple sits among the columns, found once
            where = self._positions_among(columns)
            return np.stack([self._position_row(img, columns, where) for img in images])
        return np.stack([self.row(task, img, columns) for img in images])

    def _positions_among(self, columns: np.ndarray) -> np.ndarray:
        """Each position probe's index in ``columns``, -1 where it is not among them."""
        where = np.full(len(self.pools.probes("position")), -1, dtype=np.int64)
        where[columns] = np.arange(len(columns))
        return where

    # ------------------------------------------------------------------------------------------------ rows

    def _category_rows(self, task: str) -> np.ndarray:
        """Every image's row of a task whose probes name one category (images x probes), made at once and kept: a
        missing category is a (hard where likely) negative where its absence is verified (attributes: by the
        attribute pass too), undecidable elsewhere; a shown one is read from the task's decision table.

        Why at once: drawing asks for the rows of tens of thousands of images, one numpy pass per row cost more
        than the whole matrix (a COCO-train-sized source: 118,000 x 80 codes, 9 MB)."""
        found = self._matrices.get(task)
        if found is not None:
            return found
        pools = self.pools
        (cats,) = self.columns(task)
        shown = pools.incidence[:, cats]
        verified = (pools.attribute_verified_absent if task == "attribute" else pools.verified_absent)[:, cats]
        rows = np.full(shown.shape, UNDECIDED, dtype=np.int8)
        absent = ~shown & verified
        rows[absent] = NEG + pools.absent_hard[:, cats][absent]
        if task == "attribute":  # per category: the images showing it x its probes, one decision-table block
            for category, probe_numbers in self._attribute_groups().items():
                images, codes = pools.attribute_block(category)
                rows[np.ix_(images, probe_numbers)] = codes
        else:
            rows[shown] = pools.category_code_table(task)[:, cats][shown]
        self._matrices[task] = rows
        return rows

    def _position_row(self, img: int, columns: np.ndarray | None = None, where: np.ndarray | None = None
                      ) -> np.ndarray:
        """Triples: false (easy) where the subject or the object is missing and verified absent; where both are
        shown, only the triples :meth:`related` lists can be decided unless relations are exhaustive.
        ``columns``: the triples asked for (all of them, in order, when ``None``); ``where``: each triple's
        position among the columns (-1: not asked), when the caller has it.

        Why columns: a scene-graph source has tens of thousands of triples, and a question's distractors are
        usually found among the first few thousand of its random order (:meth:`Sampler._distractors`)."""
        pools = self.pools
        subjects, objects = self.columns("position")
        if columns is not None:
            subjects, objects = subjects[columns], objects[columns]
        shown, verified = pools.incidence[img], pools.verified_absent[img]
        both = shown[subjects] & shown[objects]
        row = np.full(len(subjects), UNDECIDED, dtype=np.int8)
        row[~both & (verified[subjects] | verified[objects])] = NEG
        if pools.config.relations_exhaustive:
            asked = np.flatnonzero(both)
            numbers = asked if columns is None else columns[asked]
            probes = pools.probes("position")
            row[asked] = [label_code(pools.label_uncached("position", img, probes[k])) for k in numbers.tolist()]
            return row
        numbers, codes = self.related_codes(img)
        if columns is None:
            row[numbers] = codes
        else:
            local = (self._positions_among(columns) if where is None else where)[numbers]
            hit = local >= 0
            row[local[hit]] = codes[hit]
        return row

    def _attribute_groups(self) -> dict[str, np.ndarray]:
        """Each category of the attribute probes -> the numbers of its probes, in probe order."""
        numbers: dict[str, list[int]] = {}
        for k, (_, category) in enumerate(self.pools.probes("attribute")):  # type: ignore[misc]
            numbers.setdefault(category, []).append(k)
        return {category: np.array(found, dtype=np.int64) for category, found in numbers.items()}

    def related(self, img: int) -> list[int]:
        """Numbers of the triples ``img`` annotates, as given or opposite (a few per image): where relations are
        not exhaustive, the only triples :meth:`Pools.decide_position` can decide while both categories are
        shown."""
        index = self.numbers("position")
        return sorted({
            k for subject, relation, obj in self.pools.relations_in(img)
            for rel in (relation, OPPOSITE_RELATIONS.get(relation))
            if (k := index.get((subject, rel, obj))) is not None})

    def related_codes(self, img: int) -> tuple[np.ndarray, np.ndarray]:
        """The numbers of :meth:`related` and their codes (from :meth:`Pools.label_uncached`), kept: the only
        entries of a position row that are not decided from the absence matrices, a few per image."""
        found = self._related_codes.get(img)
        if found is None:
            numbers = self.related(img)
            probes = self.pools.probes("position")
            found = self._related_codes[img] = (
                np.array(numbers, dtype=np.int64),
                np.array([label_code(self.pools.label_uncached("position", img, probes[k])) for k in numbers],
                         dtype=np.int8),
            )
        return found
