"""Harness exports: a release as an lmms-eval task folder and as VLMEvalKit TSVs, so labs run it with zero glue.

Written into every release by ``python -m data_cards release`` (``<release>/harness/``), and for an existing
release by ``python -m scoring.harness export RELEASE_DIR --repo ORG/NAME --version X.Y.Z``:

* ``harness/lmms_eval/``: :mod:`scoring.harness.lmms_eval_tasks` (run with ``--include_path``);
* ``harness/vlmevalkit/``: :mod:`scoring.harness.vlmevalkit` (copy the TSVs into ``$LMUData``).

Both score (or, for VLMEvalKit, are read back and scored) with Mirage's own answer extraction.
"""

from __future__ import annotations

from pathlib import Path

from .lmms_eval_tasks import write_lmms_eval
from .rows import read_release_tasks
from .vlmevalkit import write_vlmevalkit

HARNESS_DIR = "harness"
PLACEHOLDER_REPO = "ORG/NAME"
"""The dataset path written when the release names no Hub repo (as the data card's loading examples do)."""


def write_harness_exports(
    release_dir: str | Path, *, release: str, version: str, repo_id: str | None = None, out_dir: str | Path | None = None
) -> list[Path]:
    """Write ``harness/lmms_eval/`` and ``harness/vlmevalkit/`` for a release dir; returns the files written.

    ``out_dir`` defaults to ``<release_dir>/harness``. Existing files there are replaced, others left alone.
    """
    root = Path(out_dir) if out_dir is not None else Path(release_dir) / HARNESS_DIR
    tasks = read_release_tasks(release_dir)
    files = write_lmms_eval(root / "lmms_eval", tasks, release=release, repo_id=repo_id or PLACEHOLDER_REPO,
                            version=version)
    files += write_vlmevalkit(root / "vlmevalkit", tasks, release=release)
    return files
