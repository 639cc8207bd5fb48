"""MM-SAP: self-awareness in perception ("MM-SAP: A Comprehensive Benchmark for Assessing Self-Awareness of
Multimodal Large Language Models in Perception"; see ``docs/papers.md``).

``python -m builders.mmsap`` builds the three subsets on the demo world: BasicVisQA from its exact annotations
(colour, count, shape, position), BeyondVisQA from templates grounded in them (six categories), KnowVisQA from
the shipped authored knowledge file. With ``--vqav2-questions/--vqav2-annotations/--coco-images`` BasicVisQA comes
from VQAv2 (type map and agreement filter, wrong options from the corpus's own answer statistics), with
``--coco-instances`` BeyondVisQA is grounded in COCO, with ``--authored`` KnowVisQA comes from people.

Pipeline: sources -> :class:`~builders.mmsap.questions.Question` per subset (:mod:`.scenes`, :mod:`.vqa`,
:mod:`.authored`) -> items (:mod:`.layout`: refusal and answer positions balanced, ``--shuffles K`` variants) ->
build directory with ``build.json`` (statistics, validity, blind baselines; :mod:`.report`).

Choices where the paper is silent (each documented where it is made):

* eight BasicVisQA types: the six of Fig. 6 (action, color, counting, object recognition, position, OCR) plus
  shape and scene; the demo world asks four of them (color, counting, shape, position);
* a VQAv2 question has one right answer when >= 80 % of its ten answers share the majority answer's key;
* wrong options are drawn from the corpus's own answer statistics (same question_type first), weighted by
  frequency; counts get near integers with the right count's rank among them uniform (demo: always 1-4);
* the demo world's questions ask only what a viewer can check (:mod:`filters.legibility`), and KnowVisQA
  questions point at the shape they ask about without naming it (``{object}`` in the authored file);
* positions are dealt, not drawn: (answer, refusal) slot pairs in balanced blocks per subset and shuffle round;
* pairs (NaturalBench's group metric, :mod:`builders.pairs`): a demo BasicVisQA question's partner is the first
  unused image, in the same seeded order, that asks it with another of its options as the answer (the two share
  their options); authored records with the same words and different answers are paired in file order, a
  ``demo:`` partner pointed at in the same words, and show one option list (both answers among it); a VQAv2
  question's partner asks the same words of another image (:mod:`builders.mmsap.vqa`); a question without a
  partner is set aside and taken unpaired only when too few pairs exist; BeyondVisQA never (its gold is the
  refusal);
* a refusal written in words is scored as the refusal option (scoring/mmsap.py).
"""

from builders.registry import lazy_exports

__all__ = ["MmsapConfig", "build", "main", "parser", "write_build"]
__getattr__ = lazy_exports(__name__, {"MmsapConfig": "config", "build": "builder", "write_build": "builder", "main": "cli",
                                      "parser": "cli"})
