"""The test session's own housekeeping: its temporary cache folder does not outlive the run, and every test has a
timeout."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests import conftest

ROOT = Path(__file__).resolve().parent.parent


def test_the_session_cache_exists_while_tests_run() -> None:
    cache = Path(conftest._CACHE)
    assert cache.is_dir() and cache.name.startswith("mirage-test-cache-")
    print(f"session cache: {cache}")  # read by the test below, which runs this one in a child pytest


def test_a_test_run_leaves_no_cache_folder_behind(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    for name in ("MIRAGE_CACHE_DIR", "HF_HOME", "HF_DATASETS_CACHE"):
        env.pop(name, None)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider",
         f"{Path(__file__).relative_to(ROOT)}::test_the_session_cache_exists_while_tests_run"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    (cache,) = re.findall(r"session cache: (\S+)", run.stdout)
    assert Path(cache).parent.resolve() == tmp_path.resolve()  # the child made its cache in its temp dir ...
    assert not Path(cache).exists() and not list(tmp_path.glob("mirage-test-cache-*"))  # ... and removed it


def test_every_test_has_a_timeout(pytestconfig) -> None:
    """pytest-timeout is configured in pyproject.toml, so a hung child fails its test instead of hanging CI."""
    assert pytestconfig.pluginmanager.hasplugin("timeout")
    assert float(pytestconfig.getini("timeout")) >= 600
