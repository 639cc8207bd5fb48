"""Test-wide settings: offline Hugging Face, caches in temporary directories, and CI strictness.

In CI (``CI=true``) a test that would skip fails instead: the CI script installs every integration dependency,
so a skip there would mean an install step silently broke (:func:`skip_or_fail`, and
:func:`pytest_runtest_makereport` for any other skip). The exceptions are declared by marker in
:data:`CI_MAY_SKIP`, and the run's summary says in one line which of them did not run and why.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import shutil
import tempfile
from typing import Iterator, NoReturn

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


def in_ci() -> bool:
    """Whether this run is CI's (``CI`` set to 1, true or yes)."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def skip_or_fail(why: str) -> NoReturn:
    """Skip (locally) or fail (in CI) a test that cannot run here, saying ``why``."""
    if in_ci():
        pytest.fail(f"CI must run this test: {why}")
    pytest.skip(why, allow_module_level=True)


def require(available: bool, what: str, hint: str = "bash .ci/install") -> None:
    """Skip (locally) or fail (in CI) a test whose integration dependency is missing."""
    if not available:
        skip_or_fail(f"{what} is not installed (run: {hint})")


CI_MAY_SKIP = {
    "gpu": "the GPU decode path (nvJPEG, fp16 autocast: the production path on a GPU) did not run here: "
           "no CUDA GPU on this machine; it runs only on a GPU machine",
    "real_hub": "the real-Hub test did not run here: it needs MIRAGE_HF_TOKEN and MIRAGE_HF_SCRATCH_REPO (a write "
                "token and a scratch repo)",
}
"""The skips CI allows, by marker: what cannot run on a CI machine at all, with the summary's line for each."""


def pytest_configure(config: pytest.Config) -> None:
    for marker, line in CI_MAY_SKIP.items():
        config.addinivalue_line("markers", f"{marker}: may skip in CI too, where the summary says: {line}")


def cuda_available() -> bool:
    """Whether torch is installed and sees a CUDA GPU (torch imported only when a ``gpu`` test asks)."""
    if not have("torch"):
        return False
    import torch

    return torch.cuda.is_available()


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("gpu") is not None and not cuda_available():
        pytest.skip(CI_MAY_SKIP["gpu"])


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """In CI, a skip fails its test unless the test carries a marker of :data:`CI_MAY_SKIP`."""
    report = yield
    if (report.skipped and in_ci() and not hasattr(report, "wasxfail")
            and not any(item.get_closest_marker(m) for m in CI_MAY_SKIP)):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"CI must run this test, but it skipped: {reason}"
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    """In CI, a module that skips as a whole (``pytest.skip(allow_module_level=True)``, ``importorskip``) fails its
    collection: no marker can declare it, as no test of it was collected."""
    report = yield
    if report.skipped and in_ci():
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        report.outcome = "failed"
        report.longrepr = f"CI must run this module, but it skipped: {reason}"
    return report


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    """One line per declared exception of :data:`CI_MAY_SKIP` whose tests skipped in this run."""
    skipped = terminalreporter.stats.get("skipped", [])
    for marker, line in CI_MAY_SKIP.items():
        names = sorted({r.nodeid for r in skipped if marker in getattr(r, "keywords", {})})  # a module's skip is a CollectReport, without keywords
        if names:
            terminalreporter.write_line(f"{marker}: {line} ({len(names)} test(s): {', '.join(names)})")


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
