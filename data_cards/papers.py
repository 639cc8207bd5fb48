"""The papers whose constructions Mirage follows, as the card names and describes them.

One entry per benchmark: its short name on the card, the paper's title and authors, and what the benchmark asks.
"""

from __future__ import annotations

BENCHMARKS: dict[str, dict[str, str]] = {
    "mioh": {
        "pretty": "MIOH",
        "title": "Towards Robust Benchmark of Object Hallucination on Multiple Images",
        "authors": "anonymous authors, under double-blind review",
        "description": "Multi-image object hallucination: existence, counting, attribute and position questions "
        "(comprehensive, comparative and selective multiple-choice questions with a \"None of the above\" option) "
        "under adversarial pressures: hard positives, hard negatives, the number of images and misleading text.",
    },
    "mementos": {
        "pretty": "Mementos",
        "title": "Mementos: A Comprehensive Benchmark for Multimodal Large Language Model Reasoning over Image "
        "Sequences",
        "authors": "anonymous ACL submission",
        "description": "Reasoning over image sequences: object and behaviour hallucination in descriptions of "
        "sequences sampled from videos and comics.",
    },
    "predictive": {
        "pretty": "Predictive Reasoning",
        "title": "Benchmarking Sequential Visual Input Reasoning and Prediction in Multimodal Large Language Models",
        "authors": "Zhu, Sha, Shu, Zhao, Zhao and Yin",
        "description": "Predictive reasoning over image sequences: abstract patterns, human activity and physical "
        "interaction prediction.",
    },
    "reefknot": {
        "pretty": "Reefknot",
        "title": "Reefknot: A Comprehensive Benchmark for Relation Hallucination Evaluation, Analysis and "
        "Mitigation in Multimodal Large Language Models",
        "authors": "Zheng, Chen, Yan, Zou and Hu",
        "description": "Relation hallucination: perceptive and cognitive (subject, relation, object) triplets asked "
        "as yes/no, multiple-choice and open questions.",
    },
    "pope": {
        "pretty": "POPE",
        "title": "Evaluating Object Hallucination in Large Vision-Language Models",
        "authors": "Li, Du, Zhou, Wang, Zhao and Wen",
        "description": "Object hallucination: \"Is there a/an X in the image?\" asked of COCO images in three "
        "splits (random, popular, adversarial absent objects). `python -m scoring pope` reads answers by POPE's "
        "own rule (evaluate.py: \"no\" when the first sentence holds no/No/not, else \"yes\"), so numbers "
        "compare with the paper's, and reports the strict reading of Mirage's one extractor beside it.",
    },
    "mmsap": {
        "pretty": "MM-SAP",
        "title": "MM-SAP: A Comprehensive Benchmark for Assessing Self-Awareness of Multimodal Large Language "
        "Models in Perception",
        "authors": "Wang, Liao, Liu, Liu, Wang and Wang",
        "description": "Self-awareness in perception: multiple-choice questions with a refusal option over "
        "known-knowns, knowledge questions and unanswerable questions.",
    },
}
