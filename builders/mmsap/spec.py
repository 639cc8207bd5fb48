"""MM-SAP as the registry knows it (:mod:`builders.registry`)."""

from builders.registry import BenchmarkSpec, Paper, licences

SPEC = BenchmarkSpec(
    name="mmsap",
    pretty="MM-SAP",
    paper=Paper(
        title="MM-SAP: A Comprehensive Benchmark for Assessing Self-Awareness of Multimodal Large Language Models "
              "in Perception",
        authors=("Yuhao Wang", "Yusheng Liao", "Heyang Liu", "Hongcheng Liu", "Yu Wang", "Yanfeng Wang"),
        venue="ACL 2024 (long papers)",
        identifiers=("arXiv:2401.07529",),
    ),
    description="Self-awareness in perception: multiple-choice questions with a refusal option over "
    "known-knowns, knowledge questions and unanswerable questions.",
    config="builders.mmsap.config:MmsapConfig",
    build="builders.mmsap.builder:write_build",
    cli="builders.mmsap.cli:main",
    scorer="scoring.mmsap",
    review_kinds=("mcq",),
    authoring=("builders.mmsap.authoring:QUESTIONS",),
    licences=licences("demo", "coco", "vqav2", "visual_genome"),
    source_options={"coco": "coco", "vqav2": "vqav2"},
)
