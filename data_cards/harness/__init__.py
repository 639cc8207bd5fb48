"""Harness exports: a release as an lmms-eval task folder and as VLMEvalKit TSVs, so labs run it with zero glue.

Written into every release by ``python -m data_cards release`` (``<release>/harness/``), and for an existing
release by ``python -m scoring.harness export RELEASE_DIR --repo ORG/NAME --version X.Y.Z``:

* ``harness/lmms_eval/``: :mod:`data_cards.harness.lmms_eval` (run with ``--include_path``);
* ``harness/vlmevalkit/``: :mod:`data_cards.harness.vlmevalkit` (copy the TSVs into ``$LMUData``).

Both score (or, for VLMEvalKit, are read back and scored) with Mirage's own answer extraction: the task folder's
``utils.py`` calls :mod:`scoring.harness.lmms_eval_utils` inside lmms-eval, and ``python -m scoring.harness
circular`` reads VLMEvalKit's result sheets. Writing the files needs nothing of ``scoring`` (the answer formats,
fixed options and instructions come from :mod:`builders.semantics`), so a release is made without the layer above
it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from .lmms_eval import lmms_name, write_lmms_eval
from .rows import read_release_tasks
from .vlmevalkit import write_vlmevalkit

HARNESS_DIR = "harness"
PLACEHOLDER_REPO = "ORG/NAME"
"""The dataset path written when the release names no Hub repo (as the data card's loading examples do)."""


def write_harness_exports(
    release_dir: str | Path, *, release: str, version: str, repo_id: str | None = None,
    out_dir: str | Path | None = None, progress: Callable[[int, int], None] | None = None,
) -> list[Path]:
    """Write ``harness/lmms_eval/`` and ``harness/vlmevalkit/`` for a release dir; returns the files written.

    ``out_dir`` defaults to ``<release_dir>/harness``. Existing files there are replaced, others left alone.
    ``progress(done, total)`` follows the VLMEvalKit sheets, item by item (the images are encoded there).
    """
    root = Path(out_dir) if out_dir is not None else Path(release_dir) / HARNESS_DIR
    tasks = read_release_tasks(release_dir)
    repo = repo_id or PLACEHOLDER_REPO
    files = write_lmms_eval(root / "lmms_eval", tasks, release=release, repo_id=repo, version=version)
    files += write_vlmevalkit(root / "vlmevalkit", tasks, release=release, progress=progress)
    readme = root / "README.md"
    sheets = [f.stem for f in files if f.suffix == ".tsv" and not f.stem.endswith("_CIRCULAR")]
    readme.write_text(README.format(release=release, version=version, repo=repo, group=lmms_name(release),
                                    benchmark=tasks[0].rows[0]["benchmark"], sheet=(sheets or ["NAME"])[0]),
                      encoding="utf-8", newline="\n")
    return [*files, readme]


README = """# Running {release} v{version} in lmms-eval and VLMEvalKit

Written by Mirage with the release. Both score with Mirage's answer extraction, so the numbers equal
`python -m scoring {benchmark}` on the same outputs.

## lmms-eval (`lmms_eval/`)

```bash
pip install lmms-eval mirage-bench    # the tasks' utils.py imports Mirage
lmms-eval --model MODEL --model_args ... --tasks {group} --include_path lmms_eval --log_samples --output_path out/
```

The tasks load `{repo}` at tag `v{version}`. Per task: `accuracy`, `acc_<pressure>`, `unparsed_rate` and, for
yes/no items, `yes_ratio` (the share of the model's yes/no answers that are "yes"). Open answers are not scored
here: `python -m scoring {benchmark} --release {repo}@v{version} --predictions out/.../*_samples_*.jsonl`.

## VLMEvalKit (`vlmevalkit/`)

Copy the TSVs into `$LMUData` and run each as a custom dataset: `python run.py --data {sheet} --model MODEL`.
`*_MCQ_CIRCULAR` is VLMEvalKit's circular layout (rotation k at index + k * 1e6; "None of the above", "I don't
know" and refusal options stay in place). Score result sheets with Mirage:
`python -m scoring {benchmark} --release {repo}@v{version} --predictions MODEL_<sheet>.xlsx`, and circular ones with
`python -m scoring.harness circular MODEL_<sheet>_CIRCULAR.xlsx`.
"""
