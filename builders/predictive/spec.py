"""Predictive reasoning as the registry knows it (:mod:`builders.registry`)."""

from builders.registry import BenchmarkSpec, Paper, licences

SPEC = BenchmarkSpec(
    name="predictive",
    pretty="Predictive Reasoning",
    paper=Paper(
        title="Benchmarking Sequential Visual Input Reasoning and Prediction in Multimodal Large Language Models",
        authors=("Mingwei Zhu", "Leigang Sha", "Yu Shu", "Kangjia Zhao", "Tiancheng Zhao", "Jianwei Yin"),
        venue="arXiv preprint",
        identifiers=("arXiv:2310.13473",),
    ),
    description="Predictive reasoning over image sequences: abstract patterns, human activity and physical "
    "interaction prediction.",
    config="builders.predictive.config:PredictiveConfig",
    build="builders.predictive.builder:write_build",
    cli="builders.predictive.cli:main",
    scorer="scoring.predictive",
    review_kinds=("vqa",),
    authoring=("builders.predictive.authoring:PATTERNS",),
    licences=licences("demo"),
    source_options={"activitynet": "activitynet", "charades": "charades", "clevrer": "clevrer"},
)
