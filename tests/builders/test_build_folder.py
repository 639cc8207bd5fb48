"""One build per folder and name, whole or not at all, and never over a review (:func:`builders.run.open_build`).

The kill tests run real processes and ``kill -9`` them at points drawn from a seeded generator: a writer that
rebuilds one name again and again (so a kill lands while writing, linting, swapping or retiring), and the MM-SAP
builder itself. After every kill the folder at the build's name is the old build or a new one, whole.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from builders.run import REVIEW_STATE, open_build
from sources.atomic import folder_lock
from sources.errors import MirageError
from tests.conftest import require_release_extra

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


MMSAP = [sys.executable, "-m", "builders.mmsap", "--name", "b", "--no-progress", "--n-basic", "2", "--n-beyond", "2"]
"""The MM-SAP demo build (the fastest builder), small, named ``b``."""


def mmsap(out: Path, *args: str) -> subprocess.CompletedProcess:
    """:data:`MMSAP` under ``out``, as a user runs it."""
    return subprocess.run(MMSAP + ["--out", str(out), *args], capture_output=True, text=True, timeout=120, env=ENV,
                          cwd=ROOT)


def whole(folder: Path) -> bytes:
    """items.jsonl of a finished build, after checking it is whole (as many lines as build.json says)."""
    items = (folder / "items.jsonl").read_bytes()
    assert json.loads((folder / "build.json").read_text())["items"] == items.count(b"\n")
    return items


@pytest.mark.parametrize("state", REVIEW_STATE)
def test_each_kind_of_review_state_stops_a_rebuild(tmp_path, state):
    with open_build(tmp_path, "b") as out:
        (out.path / "items.jsonl").write_text("old\n")
    (tmp_path / "b" / state).mkdir() if state == "reviews" else (tmp_path / "b" / state).write_text("{}\n")
    with pytest.raises(MirageError, match=f"holds a review \\({state}\\) that a rebuild would delete"):
        with open_build(tmp_path, "b") as out:
            pytest.fail("a build began")
    assert (tmp_path / "b" / "items.jsonl").read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]


def test_a_rebuild_never_deletes_a_review(tmp_path):
    """As a user meets it: the builder's command run again after review."""
    first = mmsap(tmp_path)
    assert first.returncode == 0, first.stderr
    build = tmp_path / "b"
    (build / "reviews").mkdir()
    for name in ("review.json", "adjudications.json", "reviewed.jsonl"):
        (build / name).write_text('{"maintainer": "kept"}\n')
    before = {p.name: p.read_bytes() for p in build.iterdir() if p.is_file()}

    again = mmsap(tmp_path, "--seed", "1")
    assert again.returncode == 2
    assert again.stderr.strip() == (f"error: {build}: holds a review (review.json, reviews, adjudications.json) "
                                    "that a rebuild would delete; choose another --name, or pass --replace to move "
                                    "the old folder aside")
    assert {p.name: p.read_bytes() for p in build.iterdir() if p.is_file()} == before  # nothing touched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]

    replaced = mmsap(tmp_path, "--seed", "1", "--replace")
    assert replaced.returncode == 0, replaced.stderr
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("b.replaced-")]
    assert len(aside) == 1 and f"moved to {aside[0]}" in replaced.stderr
    assert {p.name: p.read_bytes() for p in aside[0].iterdir() if p.is_file()} == before  # the reviewed folder
    assert not [n for n in REVIEW_STATE if (build / n).exists()]
    assert json.loads((build / "build.json").read_text())["seed"] == 1


def test_a_second_build_of_a_locked_name_exits_2_with_one_line(tmp_path):
    holder = hold_lock(tmp_path / "b")
    try:
        second = mmsap(tmp_path)
        assert second.returncode == 2
        assert second.stderr.strip() == (f"error: {tmp_path / 'b'}: another build of this folder and name is running "
                                         f"(pid {holder.pid}); wait for it to finish, or choose another --name")
        assert not (tmp_path / "b").exists()
    finally:
        holder.kill()
        holder.wait()
    assert mmsap(tmp_path).returncode == 0  # the kernel dropped the dead holder's lock


def test_two_builds_started_together_never_tear_the_folder(tmp_path):
    runs = [subprocess.Popen(MMSAP + ["--out", str(tmp_path), "--seed", str(seed)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV, cwd=ROOT)
            for seed in (0, 1)]
    results = [(r.wait(timeout=120), r.stderr.read()) for r in runs]
    for code, err in results:
        assert code in (0, 2) and "Traceback" not in err, err
        assert code == 0 or "another build of this folder and name is running" in err
    assert any(code == 0 for code, _ in results)
    whole(tmp_path / "b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]


def test_the_lock_is_free_within_its_process_and_released(tmp_path):
    with folder_lock(tmp_path / "b"):
        with open_build(tmp_path, "b") as out:
            (out.path / "x").write_text("1")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]


WRITER = textwrap.dedent("""
    import sys
    from builders.run import open_build
    out, files = sys.argv[1], int(sys.argv[2])
    generation = 0
    while True:
        generation += 1
        with open_build(out, "b") as build:
            for i in range(files):
                (build.path / f"f{i:04d}").write_text(f"{generation}\\n")
            (build.path / "done").write_text(f"{generation} {files}\\n")
        print(generation, flush=True)
""")


def check_whole(build: Path, files: int) -> int:
    """The generation of a writer's build, after checking every file of it is there and of that generation."""
    generation, count = (build / "done").read_text().split()
    names = sorted(p.name for p in build.iterdir())
    assert int(count) == files and names == sorted([f"f{i:04d}" for i in range(files)] + ["done"])
    assert {(build / n).read_text() for n in names if n != "done"} == {f"{generation}\n"}
    return int(generation)


def test_kill_9_at_random_points_leaves_the_old_build_or_the_new_one_whole(tmp_path):
    files, kills = 300, 10
    draw = np.random.default_rng(51)  # the kill points: seeded, so a failure can be replayed
    last, torn = 0, 0
    for _ in range(kills):
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), str(files)],
                                  stdout=subprocess.PIPE, text=True, env=ENV, cwd=ROOT, start_new_session=True)
        assert writer.stdout.readline()  # one whole build done: from here on there is an old build to keep
        time.sleep(float(draw.uniform(0.0, 1.0)))
        os.killpg(writer.pid, signal.SIGKILL)
        writer.wait()
        finished = [int(line) for line in writer.stdout.read().split()]
        generation = check_whole(tmp_path / "b", files)
        assert generation in (max(finished, default=1), max(finished, default=1) + 1)
        last = generation
        torn += any(p.name.startswith("b.partial") for p in tmp_path.iterdir())  # killed mid-build
    assert last >= 1 and torn >= kills // 2  # most kills landed while a build was being written
    with open_build(tmp_path, "b") as build:  # the next build clears what the killed ones left beside it
        (build.path / "done").write_text("x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b"]


def test_kill_9_of_a_real_builder_leaves_a_whole_build(tmp_path):
    out, reference = tmp_path / "out", tmp_path / "reference"
    assert mmsap(out).returncode == 0
    old = whole(out / "b")
    start = time.monotonic()
    assert mmsap(reference, "--seed", "1").returncode == 0
    duration = time.monotonic() - start
    new = whole(reference / "b")
    draw = np.random.default_rng(50)  # seeded kill points, spread over the second half of a build's time
    for point in draw.uniform(0.5 * duration, 1.1 * duration, size=3):
        run = subprocess.Popen(MMSAP + ["--out", str(out), "--seed", "1"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, env=ENV, cwd=ROOT, start_new_session=True)
        time.sleep(float(point))
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()
        assert whole(out / "b") in (old, new)
    assert mmsap(out, "--seed", "1").returncode == 0
    assert whole(out / "b") == new and sorted(p.name for p in out.iterdir()) == ["b"]


def hold_lock(folder: Path) -> subprocess.Popen:
    """Another process holding :func:`sources.atomic.folder_lock` of ``folder`` (it prints ``held`` first)."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path; from sources.atomic import folder_lock\n"
         f"with folder_lock(Path({str(folder)!r})):\n    print('held', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True, env=ENV, cwd=ROOT)
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_a_release_version_is_written_by_one_run_at_a_time(tmp_path):
    require_release_extra()
    from data_cards.release import _release_lock

    final = tmp_path / "mioh" / "1.0.0"
    final.parent.mkdir(parents=True)
    (final.parent / "1.0.0.partial.k1ll3d00").mkdir()  # left by a killed release
    holder = hold_lock(final)
    try:
        with pytest.raises(MirageError, match=rf"another release of this name and version is running \(pid "
                                              rf"{holder.pid}\)"):
            with _release_lock(final):
                pytest.fail("a release began")
    finally:
        holder.kill()
        holder.wait()
    with _release_lock(final):
        assert sorted(p.name for p in final.parent.iterdir()) == [".1.0.0.lock"]
        final.mkdir()
    with pytest.raises(MirageError, match="already exists; releases are never overwritten"):
        with _release_lock(final):
            pytest.fail("a release began")
