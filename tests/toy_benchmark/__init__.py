"""A sixth benchmark, for tests only: how many red squares does a tiny generated image hold (multiple choice).

It is what a new benchmark is: one package (a config, a builder on its own generated world, a scorer and an
independent checker) and one registry line (``builders.registry.register(SPEC)``, or an entry point of the
group ``mirage.benchmarks``). ``tests/test_toy_benchmark.py`` takes it through build, lint, review, release,
twin and scoring with no other change to Mirage.
"""
