"""Mementos as the registry knows it (:mod:`builders.registry`)."""

from builders.registry import BenchmarkSpec, Paper, licences

SPEC = BenchmarkSpec(
    name="mementos",
    pretty="Mementos",
    paper=Paper(
        title="Mementos: A Comprehensive Benchmark for Multimodal Large Language Model Reasoning over Image "
              "Sequences",
        authors=("Xiyao Wang", "Yuhang Zhou", "Xiaoyu Liu", "Hongjin Lu", "Yuancheng Xu", "Feihong He",
                 "Jaehong Yoon", "Taixi Lu", "Gedas Bertasius", "Mohit Bansal", "Huaxiu Yao", "Furong Huang"),
        venue="ACL 2024 (long papers)",
        identifiers=("arXiv:2401.10529",),
        specified_from="the anonymous ACL submission",
    ),
    description="Reasoning over image sequences: object and behaviour hallucination in descriptions of "
    "sequences sampled from videos and comics.",
    config="builders.mementos.config:MementosConfig",
    build="builders.mementos.builder:write_build",
    cli="builders.mementos.cli:main",
    scorer="scoring.mementos",
    review_kinds=("vqa",),
    authoring=("builders.mementos.authoring:DESCRIPTIONS",),
    imports={"mementos-csv": "builders.imports.mementos_csv"},
    licences=licences("demo"),
    source_options={"nextqa": "nextqa"},
    open_metric="keyword_f1",
)
