"""An lmms-eval task folder for a release: one YAML per task config, a group YAML, and ``utils.py``.

lmms-eval indexes every ``*.yaml`` under ``--include_path`` (``TaskManager(include_path=...)``); a task YAML names
the dataset (``dataset_path: ORG/NAME``, ``dataset_name: <config>``, ``dataset_kwargs: {revision: vX.Y.Z}``, so
the harness reads the release at its tag, never a later one), the split, and ``!function utils.<name>`` hooks that
``utils.py`` beside the YAMLs resolves. That ``utils.py`` re-exports :mod:`scoring.harness.lmms_eval_utils`:
prompts and scores are Mirage's own.

Task names are ``mirage_<release>_<task>`` and the group ``mirage_<release>`` (lower case, ``_`` for anything
else), so they cannot collide with lmms-eval's own tasks. Metrics per task: ``accuracy``, ``acc_<pressure>`` for
each pressure the release has (over the misleading items only where a pressure also has controls, items whose
context is true: the paper's figure), ``acc_<pressure>_control`` for those controls (the gap is the difference of
the two), ``unparsed_rate`` and, where the task has yes/no items, ``yes_ratio`` (the share of
the model's yes/no answers that are "yes") and, where the task has pairs (one question asked of two images with
different answers, :mod:`builders.pairs`), ``group_acc``: the share of its complete pairs with both items
right, as ``paired.group_accuracy`` of ``python -m scoring`` (not named ``group_accuracy``: lmms-eval pools a
group's metrics by substring, so the group's ``accuracy`` rule would take a task metric whose name holds
"accuracy", and the run fails). The group reports ``accuracy`` and ``unparsed_rate`` over all
tasks, each task weighted by the number of items it scores (see :mod:`scoring.harness.lmms_eval_utils`), which
makes them the overall numbers of ``python -m scoring``.

Choices where lmms-eval leaves it open: greedy decoding (temperature 0), ``max_new_tokens: 1024`` (enough for a
short chain of thought before the answer; extraction reads the final answer), no pre/post prompt.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Sequence

from builders.semantics.format import is_yes_no

from .rows import ReleaseTask, row_item

MAX_NEW_TOKENS = 1024
GROUP_METRIC = "group_acc"
"""The share of a task's pairs (:mod:`builders.pairs`) with both items right; a metric of tasks that have pairs."""
GROUP_FILE = "_group.yaml"

UTILS_TEMPLATE = '''"""lmms-eval hooks of Mirage's {name} v{version} tasks (written by Mirage; do not edit).

They score with Mirage's own answer extraction, so the numbers equal ``python -m scoring``. The environment that
runs lmms-eval needs Mirage installed: ``pip install mirage-bench`` (or ``pip install -e`` of a Mirage checkout).
"""

try:
    from scoring.harness.lmms_eval_utils import (  # noqa: F401 - resolved by the YAMLs' !function tags
        doc_to_target,
        doc_to_text,
        doc_to_visual,
        group_accuracy_of_values,
        make_process_results,
        mean_of_values,
    )
except ImportError as exc:  # pragma: no cover - the message is for users of the harness
    raise ImportError(
        "Mirage's lmms-eval tasks need Mirage in this environment: pip install mirage-bench "
        "(or pip install -e /path/to/mirage)"
    ) from exc

PRESSURES = {pressures}
CONTROLS = {controls}
process_results = make_process_results(PRESSURES, CONTROLS)
'''


def metric_name(pressure: str) -> str:
    """``acc_<pressure>`` with the pressure reduced to letters, digits and ``_`` (``LC-S`` -> ``acc_LC_S``)."""
    return "acc_" + re.sub(r"[^A-Za-z0-9]+", "_", pressure).strip("_")


def control_metric_name(pressure: str) -> str:
    """``acc_<pressure>_control``: accuracy on a pressure's control items (a true context)."""
    return metric_name(pressure) + "_control"


def lmms_name(*parts: str) -> str:
    """``mirage_<part>_<part>``: lower case, runs of anything but letters and digits become ``_``."""
    return "_".join(re.sub(r"[^a-z0-9]+", "_", p.lower()).strip("_") for p in ("mirage", *parts))


def _q(value: str) -> str:
    """A YAML scalar for any string (a JSON string is valid YAML)."""
    return json.dumps(value, ensure_ascii=False)


def task_yaml(task: ReleaseTask, *, release: str, repo_id: str, version: str, pressures: Sequence[str]) -> str:
    """One task config's YAML (see the module docstring)."""
    metrics = ["accuracy", *(metric_name(p) for p in pressures),
               *(control_metric_name(p) for p in task.control_pressures), "unparsed_rate"]
    if any(is_yes_no(row_item(r)) for r in task.rows):
        metrics.append("yes_ratio")
    if task.has_pairs:
        metrics.append(GROUP_METRIC)
    lines = [
        f"# Mirage {release} v{version}, task {task.task!r} ({len(task.rows)} items). Written by Mirage.",
        f"task: {_q(lmms_name(release, task.slug))}",
        f"dataset_path: {_q(repo_id)}",
        f"dataset_name: {_q(task.config)}",
        "dataset_kwargs:",
        f"  revision: {_q('v' + version)}",
        "test_split: test",
        "output_type: generate_until",
        "doc_to_visual: !function utils.doc_to_visual",
        "doc_to_text: !function utils.doc_to_text",
        "doc_to_target: !function utils.doc_to_target",
        "process_results: !function utils.process_results",
        "generation_kwargs:",
        f"  max_new_tokens: {MAX_NEW_TOKENS}",
        "  temperature: 0",
        "  top_p: 1.0",
        "  num_beams: 1",
        "  do_sample: false",
        "metric_list:",
    ]
    for m in metrics:
        aggregation = "group_accuracy_of_values" if m == GROUP_METRIC else "mean_of_values"
        lines += [
            f"  - metric: {m}",
            f"    aggregation: !function utils.{aggregation}",
            f"    higher_is_better: {'false' if m in ('unparsed_rate', 'yes_ratio') else 'true'}",
        ]
    lines += [
        "lmms_eval_specific_kwargs:",
        "  default:",
        '    pre_prompt: ""',
        '    post_prompt: ""',
        "metadata:",
        f"  version: {_q(version)}",
        f"  mirage_task: {_q(task.task)}",
    ]
    return "\n".join(lines) + "\n"


def group_yaml(tasks: Sequence[ReleaseTask], *, release: str, version: str) -> str:
    lines = [
        f"# Mirage {release} v{version}: every task. Written by Mirage.",
        f"group: {_q(lmms_name(release))}",
        "task:",
        *(f"  - {_q(lmms_name(release, t.slug))}" for t in tasks),
        "aggregate_metric_list:",
    ]
    for m in ("accuracy", "unparsed_rate"):
        lines += [f"  - metric: {m}", "    aggregation: mean", "    weight_by_size: true"]
    lines += ["metadata:", f"  version: {_q(version)}"]
    return "\n".join(lines) + "\n"


def write_lmms_eval(
    out_dir: Path, tasks: Sequence[ReleaseTask], *, release: str, repo_id: str, version: str
) -> list[Path]:
    """Write the task folder into ``out_dir`` (created); returns the files written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    pressures = sorted({p for t in tasks for p in t.pressures})
    written = []
    for task in tasks:
        path = out_dir / f"{task.slug}.yaml"
        path.write_text(task_yaml(task, release=release, repo_id=repo_id, version=version,
                                  pressures=task.pressures), encoding="utf-8", newline="\n")
        written.append(path)
    group = out_dir / GROUP_FILE
    group.write_text(group_yaml(tasks, release=release, version=version), encoding="utf-8", newline="\n")
    utils = out_dir / "utils.py"
    controls = sorted({p for t in tasks for p in t.control_pressures})
    utils.write_text(UTILS_TEMPLATE.format(name=release, version=version, pressures=repr(tuple(pressures)),
                                           controls=repr(tuple(controls))),
                     encoding="utf-8", newline="\n")
    return [*written, group, utils]
