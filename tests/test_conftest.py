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


OPTIONAL = {"requests", "pyarrow", "datasets", "huggingface_hub", "matplotlib", "torch", "torchvision", "open_clip",
            "cv2", "decord", "spacy", "openai", "label_studio_sdk", "ray", "transformers", "playwright", "isal"}
"""Modules of the extras that `pip install -e '.[test]'` does not bring (a base install's tests skip without them)."""


def unguarded_optional_imports(path: Path, root: Path = ROOT) -> list[str]:
    """Module-level imports of :data:`OPTIONAL` modules in ``path`` not preceded by a module-level ``require...(``
    call: such a module fails to collect on a base install instead of skipping with the extra's name."""
    import ast

    guarded, found = False, []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            name = getattr(node.value.func, "id", getattr(node.value.func, "attr", ""))
            guarded |= name.startswith("require")
        names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                 else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
        found += [f"{path.relative_to(root)}:{node.lineno}: {n}" for n in names
                  if n.split(".")[0] in OPTIONAL and not guarded]
    return found


def test_test_modules_import_extras_only_after_requiring_them() -> None:
    found = [line for path in sorted((ROOT / "tests").rglob("*.py")) for line in unguarded_optional_imports(path)]
    assert not found, "\n".join(found)


def test_the_import_scan_sees_an_unguarded_one(tmp_path: Path) -> None:
    module = tmp_path / "test_probe.py"
    module.write_text("import pytest\nimport requests\n")
    assert unguarded_optional_imports(module, tmp_path) == ["test_probe.py:2: requests"]
    module.write_text("from tests.conftest import require\nrequire(False, 'x')\nimport requests\n")
    assert unguarded_optional_imports(module, tmp_path) == []


PROBE = '''
import pytest
from tests.conftest import skip_or_fail


def test_plain_skip():
    pytest.skip("no reason given")


@pytest.mark.skipif(True, reason="marked skip")
def test_marked_skip():
    pass


def test_routed_skip():
    skip_or_fail("not here")


@pytest.mark.gpu
def test_on_the_gpu():
    pass
'''

PROBE_MODULE = '''
import pytest

pytest.skip("the whole module", allow_module_level=True)


def test_never_collected():
    pass
'''
"""A module that skips as a whole: its report is a collection report (no test, no keywords)."""


def _probe_run(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess[str]:
    """The :data:`PROBE` tests in a child pytest with this conftest as a plugin, ``CI`` set to ``ci``."""
    (tmp_path / "test_probe.py").write_text(PROBE)
    (tmp_path / "test_probe_module.py").write_text(PROBE_MODULE)
    env = {k: v for k, v in os.environ.items() if k != "CI"} | ({"CI": ci} if ci is not None else {})
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env["CUDA_VISIBLE_DEVICES"] = ""  # the gpu probe skips even on a GPU machine
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfEs", "-p", "no:cacheprovider",
                           "-p", "tests.conftest", "--rootdir", str(tmp_path), "-c", os.devnull,
                           "--continue-on-collection-errors",
                           str(tmp_path / "test_probe.py"), str(tmp_path / "test_probe_module.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


def test_in_ci_every_skip_fails_but_the_declared_gpu_one(tmp_path: Path) -> None:
    run = _probe_run(tmp_path, "true")
    failed = set(re.findall(r"^(?:FAILED|ERROR) \S+::(\w+)", run.stdout, re.MULTILINE))  # a setup skip: ERROR
    assert failed == {"test_plain_skip", "test_marked_skip", "test_routed_skip"}, run.stdout + run.stderr
    assert "1 skipped" in run.stdout and "CI must run this test" in run.stdout
    assert "ERROR test_probe_module.py" in run.stdout and "CI must run this module" in run.stdout
    assert "Unknown pytest.mark" not in run.stdout  # the declared markers are registered
    (line,) = [s for s in run.stdout.splitlines() if s.startswith("gpu: ")]
    assert "GPU decode path" in line and "did not run here" in line and "test_on_the_gpu" in line


def test_outside_ci_the_skips_are_skips(tmp_path: Path) -> None:
    run = _probe_run(tmp_path, None)
    assert run.returncode == 0 and "5 skipped" in run.stdout, run.stdout + run.stderr
    assert any(s.startswith("gpu: ") and "test_on_the_gpu" in s for s in run.stdout.splitlines())
