"""Benchmark builders: one module per benchmark, plus the item type, the LLM client and the build runner."""
