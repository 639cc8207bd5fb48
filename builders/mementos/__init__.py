"""Mementos: reasoning over image sequences ("Mementos: A Comprehensive Benchmark for Multimodal Large Language
Model Reasoning over Image Sequences"; see ``docs/papers.md``).

``python -m builders.mementos`` builds the benchmark on the demo world's short videos; with ``--nextqa CSV --videos
DIR`` (daily life), ``--robot DIR`` (robotics) and/or ``--comics DIR`` it builds from the paper's kinds of data.
Pipeline: video records (:mod:`sources.nextqa`, :mod:`sources.robot`, :mod:`sources.comics`,
:mod:`sources.demo.video`) -> frames by the paper's sampling rules (:mod:`sources.video`, cached by content) ->
reference descriptions (NExT-QA: QA pairs merged, :mod:`builders.mementos.descriptions`; demo: the event script;
robot and comics: a person's ``description.txt``) -> object and behaviour keywords
(:mod:`builders.mementos.keywords`; demo: the script's lists) -> one open-answer item per sequence, written
atomically with ``build.json``. :mod:`scoring.mementos` scores predictions against these items.

An item: ``task`` the domain (``daily_life``, ``robotics``, ``comics``), ``question_type`` ``"description"``,
``images`` the frame sequence, ``question`` the paper's description prompt, ``answer`` the reference description,
``provenance`` the keyword lists (what scoring compares against), frame indices, policy, source ids and how the
description and keywords were made. It is an open answer, so the review loop shows a text box: reviewers correct
the description (a corrected one has its keywords re-extracted at scoring time).

Choices where the paper is silent:

* ``pressure`` is ``"easy"``: Mementos applies no adversarial manipulation; what makes a sequence hard - its
  number of frames and its episode length - is in ``provenance`` (``n_frames``, ``episode_length``) and scoring
  breaks results down by both (Figure 6), rather than one being singled out as the item's pressure;
* policies: NExT-QA ``daily_life``, robots ``robotics`` (the paper's rules); comics keep every panel (the panels
  are the artist's key moments, Sec. 2.1.1); the demo videos (60-150 frames) use ``uniform:8`` so the default build
  stays within the review tool's ten images per task. ``--policy`` overrides the policy of every video source;
* demo videos are a ``daily_life`` stand-in (the paper's largest domain, and like NExT-QA their reference text
  comes from structured ground truth, here the event script);
* ``--max-videos N`` keeps a seeded sample of N videos per source (``rng(seed, "mementos/select/<source>")``).
"""

from builders.registry import lazy_exports

__all__ = ["MementosConfig", "build", "main", "parser", "write_build"]
__getattr__ = lazy_exports(__name__, {"MementosConfig": "config", "build": "builder", "write_build": "builder", "main": "cli",
                                      "parser": "cli"})
