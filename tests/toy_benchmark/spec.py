"""The toy benchmark's spec: everything Mirage's stages read about it."""

from builders.registry import BenchmarkSpec, Paper, licences

SPEC = BenchmarkSpec(
    name="toy",
    pretty="Toy Squares",
    paper=Paper(title="Counting Squares Is All You Need", authors=("Ada Lovelace", "Alan Turing"),
                venue="Proceedings of Nowhere 2026", identifiers=("arXiv:0000.00000",)),
    description="How many red squares a small generated image holds, asked as a four-option question.",
    config="tests.toy_benchmark.config:ToyConfig",
    build="tests.toy_benchmark.builder:write_build",
    cli="tests.toy_benchmark.builder:main",
    scorer="tests.toy_benchmark.scorer",
    review_kinds=("mcq",),
    licences=licences("demo"),
)
