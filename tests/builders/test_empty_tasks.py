"""A task the build was asked for that ends with no items is never dropped quietly (issue 51): build.json records
every task's items and skip reasons, the summary shows them, and the command exits 1 with one line per empty task
unless ``--allow-empty-tasks`` is given."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from builders.run import empty_tasks, record_tasks

ROOT = Path(__file__).resolve().parents[2]


def predictive(out: Path, *args: str) -> subprocess.CompletedProcess:
    """The demo predictive build with one video: the video stages no physical interaction."""
    return subprocess.run(
        [sys.executable, "-m", "builders.predictive", "--demo-videos", "1", "--patterns", "2", "--out", str(out),
         "--name", "p", "--no-progress", *args],
        capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT)


def test_a_task_with_no_items_exits_1_naming_it_and_why(tmp_path):
    run = predictive(tmp_path)
    assert run.returncode == 1, run.stderr
    assert run.stderr.strip().splitlines()[-1] == (
        "error: task physical_interaction made no items: no interaction staged in the video (1) (the build is "
        f"in {tmp_path / 'p'}; --allow-empty-tasks accepts it)")
    tasks = json.loads((tmp_path / "p" / "build.json").read_text())["tasks"]
    assert tasks == {"abstract_pattern": {"items": 2, "skipped": {}},
                     "human_activity": {"items": 1, "skipped": {}},
                     "physical_interaction": {"items": 0, "skipped": {"no interaction staged in the video": 1}}}
    assert "physical_interaction │ 0" in run.stdout.replace("  ", " ").replace("  ", " ")  # the summary's table

    allowed = predictive(tmp_path, "--allow-empty-tasks")
    assert allowed.returncode == 0, allowed.stderr
    assert "note: task physical_interaction made no items" in allowed.stderr


def write_build(folder: Path, build: dict, tasks: list[str]) -> None:
    folder.mkdir()
    (folder / "build.json").write_text(json.dumps(build))
    (folder / "items.jsonl").write_text("".join(json.dumps({"id": str(i), "task": t}) + "\n"
                                                for i, t in enumerate(tasks)))


def test_asked_tasks_come_from_the_config_or_the_sources_domains(tmp_path):
    write_build(tmp_path / "mementos", {
        "config": {}, "stats": {"sources": {"nextqa": {"domain": "daily_life"}, "robot": {"domain": "robotics"}}},
        "skipped": [{"source": "robot", "video": "r1", "reason": "cannot open video"},
                    {"source": "robot", "video": "r2", "reason": "cannot open video"},
                    {"source": "nextqa", "video": "n1", "reason": "too short"}]}, ["daily_life"])
    assert record_tasks(tmp_path / "mementos") == {
        "daily_life": {"items": 1, "skipped": {"too short": 1}},
        "robotics": {"items": 0, "skipped": {"cannot open video": 2}}}
    build = json.loads((tmp_path / "mementos" / "build.json").read_text())
    assert empty_tasks(build) == ["task robotics made no items: cannot open video (2)"]

    write_build(tmp_path / "mioh", {
        "config": {"tasks": ["existence", "attribute", "counting", "position"]},
        "skipped": [{"task": "attribute", "reason": "no paco data given (--paco)"},
                    {"cell": {"task": "counting", "wanted": 5, "made": 0, "reasons": {"no image pair": 4}}}]}, ["existence"])
    record_tasks(tmp_path / "mioh")
    build = json.loads((tmp_path / "mioh" / "build.json").read_text())
    assert build["tasks"]["attribute"]["not_given"] is True  # the user gave no PACO: not a loss
    assert build["tasks"]["position"] == {"items": 0, "skipped": {}, "not_given": True}  # nothing given for it
    assert empty_tasks(build) == ["task counting made no items: no image pair (4)"]


def test_skip_reasons_group_by_kind_and_the_table_stays_short():
    """Issue 51: Charades' skip table ran to 1,743 rows with digits masked ("step N", "cN")."""
    from builders.cli import REASON_ROWS, print_reason_counts
    from builders.run import reason_kind

    assert reason_kind("charades step 2: 'pick book' matches no action (best c012 at 0.33)") == \
        "charades step 2: … matches no action"
    assert reason_kind("charades step 2: 'lift cup' matches no action (best c004 at 0.41)") == \
        "charades step 2: … matches no action"
    assert reason_kind("charades step 3: the action starts at 12.5 s, past the video's length 10 s") == \
        "charades step 3: the action starts at … s, past the video's length … s"
    from rich.console import Console

    console = Console(width=80, file=None)
    counts = {f"reason {chr(97 + k)}": 100 - k for k in range(40)}
    with console.capture() as captured:
        print_reason_counts("Skipped", counts, console)
    rows = [line for line in captured.get().splitlines() if line.startswith("│")]
    assert len(rows) == REASON_ROWS and rows[0].startswith("│ reason a ")
    assert f"{40 - REASON_ROWS + 1} other reasons (build.json lists each)" in rows[-1]
