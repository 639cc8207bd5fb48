"""Reefknot as the registry knows it (:mod:`builders.registry`)."""

from builders.registry import BenchmarkSpec, Paper, licences

SPEC = BenchmarkSpec(
    name="reefknot",
    pretty="Reefknot",
    paper=Paper(
        title="Reefknot: A Comprehensive Benchmark for Relation Hallucination Evaluation, Analysis and Mitigation "
              "in Multimodal Large Language Models",
        authors=("Kening Zheng", "Junkai Chen", "Yibo Yan", "Xin Zou", "Huiyu Zhou", "Xuming Hu"),
        venue="Findings of ACL 2025",
        identifiers=("arXiv:2408.09429", "ACL Anthology 2025.findings-acl.322"),
        specified_from="the arXiv version (without H. Zhou)",
    ),
    description="Relation hallucination: perceptive and cognitive (subject, relation, object) triplets asked "
    "as yes/no, multiple-choice and open questions.",
    config="builders.reefknot.config:ReefknotConfig",
    build="builders.reefknot.builder:write_build",
    cli="builders.reefknot.cli:main",
    scorer="scoring.reefknot",
    imports={"reefknot": "builders.imports.reefknot"},
    licences=licences("demo", "visual_genome"),
    source_options={"svg": "svg", "visual_genome": "visual_genome"},
    lint_promises={"yes_no_pairs": ("triplet",)},
    open_metric="relation_sentence",
)
