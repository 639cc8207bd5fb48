"""Test-wide settings: offline Hugging Face, caches in temporary directories, and CI strictness.

In CI (``CI=true``) a test that would skip because an integration dependency is missing fails instead: the CI
script installs them all, so a skip there would mean an install step silently broke.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import shutil
import tempfile

import pytest

_CACHE = tempfile.mkdtemp(prefix="mirage-test-cache-")
"""Hugging Face and Mirage caches of this run (demo scenes, ~13 MB): removed when the session ends."""
atexit.register(shutil.rmtree, _CACHE, True)  # also when pytest never reaches pytest_sessionfinish
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_HOME", os.path.join(_CACHE, "hf"))
os.environ.setdefault("HF_DATASETS_CACHE", os.path.join(_CACHE, "hf-datasets"))
os.environ.setdefault("MIRAGE_CACHE_DIR", os.path.join(_CACHE, "mirage"))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    shutil.rmtree(_CACHE, ignore_errors=True)


def have(*modules: str) -> bool:
    """Whether every one of ``modules`` is installed (looked up on the path, not imported)."""
    return all(importlib.util.find_spec(m) is not None for m in modules)


def venv_imports(python: "os.PathLike[str]", *modules: str) -> bool:
    """Whether the virtualenv of ``python`` exists and imports every one of ``modules`` (in a child process).

    A venv's interpreter existing is not enough: one made by an older install step could not import transformers
    or Mirage itself, and its test then failed instead of saying what to install.
    """
    import subprocess

    if not os.path.exists(python):
        return False
    code = "\n".join(f"import {m}" for m in modules)
    return subprocess.run([os.fspath(python), "-c", code], capture_output=True, timeout=300).returncode == 0


def require(available: bool, what: str, hint: str = "bash .ci/install") -> None:
    """Skip (locally) or fail (in CI) a test whose integration dependency is missing."""
    if available:
        return
    message = f"{what} is not installed (run: {hint})"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"CI must run this test: {message}")
    pytest.skip(message, allow_module_level=True)


@pytest.fixture
def spacy_model() -> None:
    """Skip (fail in CI) a test that extracts keywords unless spaCy and an English model load."""
    from filters.text import NlpUnavailable, load_nlp

    try:
        load_nlp()
    except NlpUnavailable:
        require(False, "spaCy with an English model", "bash .ci/install-nlp.sh")


RELEASE_EXTRA = ("datasets", "huggingface_hub", "jinja2", "pyarrow", "matplotlib", "statsmodels")


def require_release_extra() -> None:
    """Skip (fail in CI) a test that writes or reads a release unless the release extra is installed."""
    require(have(*RELEASE_EXTRA), f"the release extra ({', '.join(RELEASE_EXTRA)})",
            "pip install -e '.[release]' or bash .ci/install-release.sh")


ANNOTATION_EXTRA = ("label_studio_sdk", "requests", "statsmodels", "aiohttp")


def require_annotation_extra() -> None:
    """Skip (fail in CI) a test that talks to Label Studio unless the annotation extra is installed."""
    require(have(*ANNOTATION_EXTRA), f"the annotation extra ({', '.join(ANNOTATION_EXTRA)})",
            "pip install -e '.[annotation]' or bash .ci/install-annotation.sh")
