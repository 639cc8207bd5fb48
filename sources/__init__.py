"""Readers of public datasets and the built-in demo world. Knows nothing of benchmarks."""
