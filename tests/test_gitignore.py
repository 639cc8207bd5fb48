"""What the README's commands write stays out of git (issue 51: ``preds/`` and ``results/`` of the Evaluate section
showed as untracked)."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("path", ["preds/qwen.jsonl", "results/qwen/results.json", "builds/mioh/x/items.jsonl",
                                  "releases/mioh/1.0.0/README.md", ".venv-base/bin/python"])
def test_the_readme_commands_outputs_are_ignored(path):
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout (install git: apt-get install git)")
    assert subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q", path]).returncode == 0, path
