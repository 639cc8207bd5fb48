"""The test session's own housekeeping: its temporary cache folder does not outlive the run."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests import conftest

ROOT = Path(__file__).resolve().parent.parent


def test_the_session_cache_is_in_the_temp_dir() -> None:
    cache = Path(conftest._CACHE)
    assert cache.is_dir() and cache.resolve().parent == Path(tempfile.gettempdir()).resolve()
    assert os.environ["MIRAGE_CACHE_DIR"].startswith(str(cache))


def test_a_test_run_leaves_no_cache_folder_behind(tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    for name in ("MIRAGE_CACHE_DIR", "HF_HOME", "HF_DATASETS_CACHE"):
        env.pop(name, None)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         f"{Path(__file__).relative_to(ROOT)}::test_the_session_cache_is_in_the_temp_dir"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr  # the child made its cache under tmp_path ...
    assert not list(tmp_path.glob("mirage-test-cache-*"))  # ... and removed it at the end
