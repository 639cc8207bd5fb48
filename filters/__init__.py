"""Reusable scores on records: each filter stores a score, applies a threshold and says why it drops."""
