"""Tests of sources/: record types, readers of the real formats, the demo world."""
