"""Test-wide settings: offline Hugging Face, caches in temporary directories, and CI strictness.

In CI (``CI=true``) a test that would skip because an integration dependency is missing fails instead: the CI
script installs them all, so a skip there would mean an install step silently broke.
"""

from __future__ import annotations

import os
import tempfile

import pytest

_CACHE = tempfile.mkdtemp(prefix="mirage-test-cache-")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HOME", os.path.join(_CACHE, "hf"))
os.environ.setdefault("HF_DATASETS_CACHE", os.path.join(_CACHE, "hf-datasets"))
os.environ.setdefault("MIRAGE_CACHE_DIR", os.path.join(_CACHE, "mirage"))


def require(available: bool, what: str, hint: str = "bash .ci/install") -> None:
    """Skip (locally) or fail (in CI) a test whose integration dependency is missing."""
    if available:
        return
    message = f"{what} is not installed (run: {hint})"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"CI must run this test: {message}")
    pytest.skip(message, allow_module_level=True)
