"""Benchmark builders: one package per benchmark (``builders/mioh/``, ``builders/mementos/``, ...) and what they all
share - the item, the build runner, the command line, MCQ dealing, the quality report, seeding and the LLM client.
See ``docs/architecture.md`` ("Adding a benchmark")."""
