"""Reefknot: relation hallucination from scene graphs (``../shared/seeds/003_704526b6aa616904.txt``).

``python -m builders.reefknot`` builds the benchmark on the demo scenes (:mod:`sources.demo.reefknot`); with
``--vg-relationships``/``--vg-images`` on Visual Genome (v1.0, v1.2, v1.4 layouts, streamed) or with ``--svg`` on
Synthetic Visual Genome. Pipeline, as the paper's Fig. 3: triplets (a) and filtering (b) in
:mod:`builders.reefknot.triplets`, perceptive/cognitive categories (c, d) in :mod:`builders.reefknot.categorize`,
false relations in :mod:`builders.reefknot.negatives`, the three question sets (e) in
:mod:`builders.reefknot.questions`, validity and blind baselines in :mod:`builders.reefknot.validity`; the
official release is imported by :mod:`builders.reefknot.importer`. Phase (f), the paper's three rounds of manual
checking, is Mirage's annotation round trip (``annotation/``).

Choices where the paper is silent (each a config option or a list in ``templates/reefknot/``):

* the several-instances rule (A.2 1a) applies to the object too, so every question points at one thing; with
  ``--vg-objects`` instances are counted over all objects, else over relationship endpoints;
* minor details are boxes below ``min_area`` = 1 % of the image (A.2 2a gives no number);
* image-independent triplets (A.2 2b): the pair's most frequent relation when it holds >= ``prior_share`` (0: always)
  of the pair's >= ``prior_support`` (5) triplets in the source; the same relation is never used as a negative or
  distractor, so the language-prior baseline sits at chance;
* noise: names/predicates seen fewer than 2/5 times, non-word phrases, and the possessive/partonomy predicates
  listed in ``filters.yaml`` (they cannot follow "is/are" in the VQA format);
* the relation balance (A.2 "Data Bias") is a round-robin draw over relations (over (subject, relation) on an
  exhaustive source), plus an optional hard cap;
* directions (``left of``, ``above``, ...) are decided on every source by the clear-direction rule MIOH and MM-SAP
  use (:func:`filters.legibility.clear_direction`): a triplet is kept only where its boxes show it, a direction is
  false only where they clearly show another, a diagonal pair is asked no direction;
* Visual Genome predicates are normalised before anything else ("is on the" -> "on",
  :func:`sources.visual_genome.normalise_predicate`), and no item the wording lint flags is written (a Y/N pair
  goes whole; counted in build.json ``phases.e_questions.wording_lint``);
* other perceptive negatives on non-exhaustive sources must be contradicted by the boxes (rules in
  :func:`builders.reefknot.negatives.box_contradicts`); cognitive ones must be absent and seen with the subject
  (with the pair, else with the subject elsewhere in the source) and never a near-synonym of an annotated one, and
  on a scene graph they serve as MCQ distractors only: unannotated is not false, so no "no" rests on it;
* MCQ options: each relation is the answer about a quarter of the times it is offered (so no option's words or
  length tell); VQA accepts every annotated relation of the pair (``provenance.accepted_answers``);
* the A.5 in-context examples are not printed in the paper: ours follow its definitions and examples;
* the offline categoriser is spaCy's tag of the first word (verb: cognitive) with an override table;
* VQA asks only pairs with one annotated relation of the category; MCQ/VQA ask a pair at most once per set;
* counts default to Table 2 and scale down by one factor per category when the source is too small.
"""

from builders.registry import lazy_exports

__all__ = ["ReefknotConfig", "build", "main", "parser", "write_build"]
__getattr__ = lazy_exports(__name__, {"ReefknotConfig": "config", "build": "builder", "write_build": "builder", "main": "cli",
                                      "parser": "cli"})
