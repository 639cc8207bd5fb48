"""A real ``python -m annotation serve`` (two rooms) guarding its data dir, used as a maintainer would:

- a second serve on the same data dir exits 2 with one line naming the first one's pid;
- a room whose server keeps failing (its database replaced by garbage) is given up with the server's own error
  as the reason; ``restart-room`` brings it back alone, room 1 answering all along, and the reviewer logged in
  before is still logged in (the room's secret key, letters and digits, persisted, survived the restarts);
- ``kill -9`` of serve leaves no Label Studio running, and the next serve on the data dir starts cleanly.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.conftest import require_annotation_extra

require_annotation_extra()

import requests  # noqa: E402 - checked above

from annotation.client import LabelStudioClient  # noqa: E402
from annotation.serve import port_is_free  # noqa: E402
from tests.annotation.conftest import ADMIN_EMAIL, ADMIN_PASSWORD  # noqa: E402
from tests.annotation.lshelpers import REVIEWER_PASSWORD, signup, stop_serve, three_free_ports  # noqa: E402

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
REVIEWER = "room2@mirage.test"


def _label_studios(data_dir: Path) -> list[int]:
    """Live processes with ``--data-dir <data_dir>`` on their command line (read here from /proc, independently of
    annotation.guard; a zombie left to an init that does not reap is not live)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != "Z" and any(a == b"--data-dir" and b == str(data_dir).encode() for a, b in zip(argv, argv[1:])):
            found.append(int(entry.name))
    return found


def _wait_for(what: str, check, timeout: float, every: float = 0.2):
    deadline = time.monotonic() + timeout
    while not (got := check()):
        assert time.monotonic() < deadline, f"{what} within {timeout:.0f} s"
        time.sleep(every)
    return got


class Serve:
    """``python -m annotation serve --rooms 2`` on ``data``, its stderr in a file; ready once it says how to join."""

    def __init__(self, data: Path, port: int, env: dict[str, str], err: Path) -> None:
        self.err_path = err
        self.err = open(err, "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "annotation", "serve", "--data-dir", str(data), "--port", str(port), "--rooms", "2"],
            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=self.err, text=True,
        )
        lines = []
        for line in self.proc.stdout:
            lines.append(line)
            if line.startswith("Press Ctrl-C"):
                break
        self.text = "".join(lines)
        assert "Press Ctrl-C" in self.text, err.read_text()

    def stderr(self) -> str:
        return self.err_path.read_text()

    def close(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                stop_serve(self.proc, 90)
        self.err.close()


def test_serve_guards_its_data_dir(ls_template, label_studio_bin, tmp_path):
    data = tmp_path / "data"
    for k in (1, 2):
        shutil.copytree(ls_template, data / f"room-{k}")
        (data / f"room-{k}" / "secret-key").unlink(missing_ok=True)  # each room makes its own
    port = three_free_ports()
    urls = [f"http://127.0.0.1:{port + k}" for k in range(2)]
    env = dict(os.environ, LABEL_STUDIO_USERNAME=ADMIN_EMAIL, LABEL_STUDIO_PASSWORD=ADMIN_PASSWORD,
               MIRAGE_LABEL_STUDIO_BIN=str(label_studio_bin), PYTHONPATH=str(REPO))
    serve = Serve(data, port, env, tmp_path / "serve-1.err")
    try:
        keys = [(data / f"room-{k}" / "secret-key").read_text() for k in (1, 2)]
        assert all(re.fullmatch(r"[A-Za-z0-9]{64}\n", key) for key in keys) and keys[0] != keys[1]

        # a second serve on the same data dir: one line naming the first one's pid, exit 2
        second = subprocess.run(
            [sys.executable, "-m", "annotation", "serve", "--data-dir", str(data), "--port", str(port + 5)],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=60,
        )
        assert second.returncode == 2
        assert second.stderr.splitlines() == [f"error: {data} is already served by `python -m annotation serve` (pid "
                                              f"{serve.proc.pid}): stop it first (Ctrl-C there, or kill -INT that pid) "
                                              "or pass another --data-dir"]

        # a reviewer of room 2, logged in
        invite = re.search(r"Reviewer slot 2 joins through the invite link: \S+?(/user/\S+)", serve.text).group(1)
        signup(urls[1], invite, REVIEWER)
        reviewer = LabelStudioClient.login(urls[1], REVIEWER, REVIEWER_PASSWORD)
        assert reviewer.whoami()["email"] == REVIEWER

        # room 2 breaks for good: its server is killed and cannot start again; room 1 answers all along
        failures: list[str] = []
        done = threading.Event()

        def watch() -> None:
            while not done.is_set():
                try:
                    if requests.get(urls[0] + "/health", timeout=10).status_code != 200:
                        failures.append("room 1 answered non-200")
                except requests.RequestException as exc:
                    failures.append(f"room 1: {exc}")
                time.sleep(0.5)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        database = data / "room-2" / "label_studio.sqlite3"
        database.rename(database.with_name("kept.sqlite3"))
        database.write_bytes(b"not a database " * 100)
        [pid] = _label_studios(data / "room-2")
        os.kill(pid, signal.SIGKILL)
        given_up = _wait_for("room 2 given up", lambda: re.search(r"Room 2 \(port \d+\): .*given up.*", serve.stderr()),
                             180).group(0)
        assert "Label Studio stopped with status -9: killed by SIGKILL; restarting it" in serve.stderr()
        # the reason is the server's error, not the access log's last line
        assert "django.db.utils.DatabaseError: file is not a database" in given_up, given_up
        assert "GET /health" not in serve.stderr()
        assert f"restart it alone with: python -m annotation restart-room 2 --data-dir {data}" in given_up
        r = requests.get(urls[1] + "/api/projects/", timeout=10)
        assert r.status_code == 503 and "was not restarted" in r.text

        # repaired, room 2 comes back alone
        database.with_name("kept.sqlite3").replace(database)
        restart = subprocess.run([sys.executable, "-m", "annotation", "restart-room", "2", "--data-dir", str(data)],
                                 cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
        assert restart.returncode == 0, restart.stderr
        assert re.fullmatch(r"Room 2 \(port \d+\) is serving again\n", restart.stdout), restart.stdout
        done.set()
        watcher.join(10)
        assert failures == []
        assert re.search(r"Room 2 \(port \d+\): restarting Label Studio at the maintainer's request", serve.stderr())
        # the reviewer's session lived through four starts of the room's server: the key stayed
        assert reviewer.whoami()["email"] == REVIEWER
        assert [(data / f"room-{k}" / "secret-key").read_text() for k in (1, 2)] == keys
        assert not (data / "room-2" / ".env").exists() or "SECRET_KEY" not in (data / "room-2" / ".env").read_text()

        # kill -9 of serve: its servers end with it
        servers = {k: _label_studios(data / f"room-{k}") for k in (1, 2)}
        assert all(len(pids) == 1 for pids in servers.values()), servers
        serve.proc.kill()
        serve.proc.wait(30)
        _wait_for("no Label Studio left on the data dir",
                  lambda: not any(_label_studios(data / f"room-{k}") for k in (1, 2)), 30)
    finally:
        serve.close()

    # the next serve starts cleanly: no stray to stop, the same ports, the reviewer still logged in
    _wait_for("the rooms' ports freed", lambda: all(port_is_free("127.0.0.1", port + k) for k in range(2)), 30)
    again = Serve(data, port, env, tmp_path / "serve-2.err")
    try:
        assert "was still running there" not in again.stderr()
        assert "Label Studio is running in 2 rooms" in again.text and ", ".join(urls) in again.text
        assert reviewer.whoami()["email"] == REVIEWER
    finally:
        again.close()
    assert again.proc.returncode == 0
    assert not any(_label_studios(data / f"room-{k}") for k in (1, 2))
