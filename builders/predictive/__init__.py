"""Predictive reasoning (Giraffe-Bench, "Benchmarking Sequential Visual Input Reasoning and Prediction in Multimodal
Large Language Models"; see ``docs/papers.md``): what comes next?

``python -m builders.predictive`` builds three tasks with no data: ``abstract_pattern`` (the pattern generator,
:mod:`builders.predictive.patterns`; ``--icons DIR`` for Icon645 icons, ``--authored FILE`` for hand-made
entries), ``human_activity`` and ``physical_interaction`` (the demo videos, :mod:`builders.predictive.demo`).
An item: ``images`` the sequence, ``question`` the paper's image query (App. F, ``templates/predictive``),
``answer`` the reference prediction (``pred``), ``provenance`` the pattern description (``pattern``), generator,
scenario and parameters, or for clips the context captions, held-out events and shape attributes.
With ``--activitynet``, ``--charades``, ``--clevrer-annotations`` or ``--roboset`` the paper's datasets replace the
demo videos (:mod:`builders.predictive.real`, :mod:`builders.predictive.charades_steps`; their choices where the
paper is silent are listed there and in ``docs/papers.md``).
:mod:`scoring.predictive` judges predictions with the paper's three LLM evaluators (SGAE, PPE, MGAE).

Choices where the paper is silent:

* the generator's scenarios (26, listed in :data:`builders.predictive.patterns.SCENARIOS`) and their wording;
  rotation has eleven variants; "shadow rotation" is a still object whose grey shadow circles it (a sundial);
* entries are spread evenly over scenarios; 3-5 images drawn per entry, some scenarios cap it (accelerating
  motion and doubling fit 4 images at most, cycles need one image more than their length);
* images are flat, unaliased drawings (binary alpha, nearest-neighbour resizing), so a checker can verify pixels;
  user icons are thresholded at alpha 128 and recoloured only by the colour-cycle and shadow scenarios;
* ``pressure`` is ``"easy"`` and ``question_type`` ``"prediction"`` for every item (no adversarial pressure);
* activity: the held-out event is the script's last event (ties included); physics: the first collision, with the
  shapes that do not collide named in the reference; demo physics asks the CLEVRER query with "{n} evenly spaced
  frames" instead of "five ... concluding frame of each second" (the demo clips are shorter than five seconds);
* authored entries need 3-5 images (the paper's range) and unique ids.
"""

from builders.registry import lazy_exports

__all__ = ["PredictiveConfig", "build", "main", "parser", "write_build"]
__getattr__ = lazy_exports(__name__, {"PredictiveConfig": "config", "build": "builder", "write_build": "builder", "main": "cli",
                                      "parser": "cli"})
