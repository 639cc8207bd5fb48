"""MIOH: multi-image object hallucination ("Towards Robust Benchmark of Object Hallucination on Multiple Images";
see ``docs/papers.md``).

``python -m builders.mioh --n-images 8`` builds the benchmark on the demo world; with ``--coco-rem``/``--paco``/
``--svg`` it builds existence and counting from COCO-ReM, attributes from PACO and positions from SVG, as the
paper does (Sec. 4.1). Pipeline: sources as columns (:mod:`builders.mioh.reading`) -> primitive pools (each pair
decided by :mod:`builders.mioh.rules`, kept by :mod:`builders.mioh.pools`) -> question specs per (task, type,
pressure) cell (:mod:`builders.mioh.questions`, answers derived by ``evaluate``) -> wording from
``templates/mioh`` (:mod:`builders.mioh.render`) -> items, written atomically with ``build.json``.

Choices where the paper is silent (each a config option):

* ``n_questions`` questions per (task, question type, pressure) cell; for ``n_images`` a *family*: the same
  question asked over every size of the ladder {2, 4, 8, 10} up to ``n_images`` (Sec. 3.2: "we vary the number
  of input images for the same question"), linked by ``provenance.family``;
* hard-positive / hard-negative items put 1..N challenging images into the slots that decide the answer
  (Sec. 4.3: "0 to N challenging example may be included"; 0 would be an easy item);
* "None of the above" is the answer of its fair share (one over the options; ``nota_share`` overrides) of the
  items whose structure allows it; counting totals are consecutive numbers with the gold's rank dealt evenly;
* answer positions are dealt in balanced shuffled blocks, so blind letter baselines stay at chance;
* the context of linguistic items states a clause checked to be false for the images (the paper's misleading
  context) or, in control items (``context_control_share``; ``provenance.context_truth``), true, so that
  distrusting the context scores chance; templates word it offline, or an LLM (``--llm-model``) rewrites it and
  the rewrite is checked again (template fallback);
* CLIP signals (``--clip-*``) join geometry and co-occurrence when weights are on disk, else the stage is skipped
  with a notice.
"""

from builders.registry import lazy_exports

__all__ = ["MiohConfig", "build", "main", "parser", "write_build"]
__getattr__ = lazy_exports(__name__, {"MiohConfig": "config", "build": "builder", "write_build": "builder", "main": "cli",
                                      "parser": "cli"})
