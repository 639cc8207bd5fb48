"""The data dir's guards, without a server: the lock names its holder, the secret key is made once of a safe
alphabet, a stray server is found and stopped, a restart request reaches serve and its answer comes back, and a
crash's reason is the server's error, never an access-log line. (With real servers: ``test_guard_live.py``.)"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from annotation.errors import AnnotationError
from annotation.guard import (LOCK_FILE, SECRET_KEY_ALPHABET, answer_restart, lock_data_dir, request_restart,
                              restart_requests, room_secret_key, serving_pid, stop_strays, strays)
from annotation.serve import NO_ERROR, log_error, stop_reason

REPO = Path(__file__).resolve().parents[2]


def _hold_lock(data_dir: Path) -> subprocess.Popen:
    """Another process holding ``data_dir``'s lock, as a running serve does (it prints once it holds it)."""
    code = ("import sys, time; from annotation.guard import lock_data_dir; h = lock_data_dir(sys.argv[1]); "
            "print('held', flush=True); time.sleep(120)")
    proc = subprocess.Popen([sys.executable, "-c", code, str(data_dir)], cwd=REPO, stdout=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_holder_is_refused_with_the_first_one_s_pid_and_the_lock_ends_with_its_process(tmp_path):
    holder = _hold_lock(tmp_path)
    try:
        assert serving_pid(tmp_path) == holder.pid
        with pytest.raises(AnnotationError, match=rf"already served by .*\(pid {holder.pid}\)"):
            lock_data_dir(tmp_path)
    finally:
        holder.kill()  # as kill -9: the kernel drops the lock
        holder.wait(10)
    assert serving_pid(tmp_path) is None
    handle = lock_data_dir(tmp_path)
    assert (tmp_path / LOCK_FILE).read_text() == f"{os.getpid()}\n"
    handle.close()


def test_serve_on_a_held_data_dir_exits_2_with_one_line_naming_the_pid(tmp_path):
    holder = _hold_lock(tmp_path / "data")
    try:
        bin_path = tmp_path / "label-studio"  # never started: the lock comes first
        bin_path.write_text("#!/bin/sh\nexit 1\n")
        bin_path.chmod(0o755)
        run = subprocess.run(
            [sys.executable, "-m", "annotation", "serve", "--data-dir", str(tmp_path / "data"), "--port", "8080",
             "--label-studio-bin", str(bin_path)],
            cwd=REPO, capture_output=True, text=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(REPO)),
        )
    finally:
        holder.kill()
        holder.wait(10)
    assert run.returncode == 2, run.stderr
    assert run.stderr.splitlines() == [
        f"error: {tmp_path / 'data'} is already served by `python -m annotation serve` (pid {holder.pid}): stop it "
        "first (Ctrl-C there, or kill -INT that pid) or pass another --data-dir"
    ]


def test_the_secret_key_is_made_once_of_letters_and_digits_and_kept(tmp_path):
    keys = {room_secret_key(tmp_path / f"room-{k}") for k in range(200)}
    assert len(keys) == 200  # one per room
    assert all(set(key) <= set(SECRET_KEY_ALPHABET) and len(key) == 64 for key in keys)
    assert not set("$#'\" ") & set(SECRET_KEY_ALPHABET)
    path = tmp_path / "room-0" / "secret-key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    first = room_secret_key(tmp_path / "room-0")
    assert room_secret_key(tmp_path / "room-0") == first and path.read_text() == first + "\n"
    path.write_text("$abc")  # a key Label Studio would read as a variable reference: never used, never replaced
    with pytest.raises(AnnotationError, match="secret-key: not a secret key"):
        room_secret_key(tmp_path / "room-0")
    assert path.read_text() == "$abc"


def test_the_key_reaches_the_server_as_SECRET_KEY(tmp_path):
    from annotation.serve import ServerSpec

    env = ServerSpec(bin=Path("/bin/true"), data_dir=tmp_path, files_root=tmp_path).env(
        {"SECRET_KEY": "$inherited", "LABEL_STUDIO_SECRET_KEY": "x"})
    assert env["SECRET_KEY"] == (tmp_path / "secret-key").read_text().strip()
    assert "LABEL_STUDIO_SECRET_KEY" not in env


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="strays are found in /proc")
def test_a_stray_server_on_the_data_dir_is_found_and_stopped_and_said_so(tmp_path):
    data = tmp_path / "room-1"
    data.mkdir()
    # a process with a Label Studio server's command line, in its own group as serve starts them
    code = "import time; time.sleep(120)"
    stray = subprocess.Popen([sys.executable, "-c", code, "start", "--data-dir", str(data)], start_new_session=True)
    other = subprocess.Popen([sys.executable, "-c", code, "start", "--data-dir", str(tmp_path / "room-2")])
    try:
        deadline = time.monotonic() + 10
        while strays(data) != [stray.pid]:
            assert time.monotonic() < deadline, strays(data)
            time.sleep(0.05)
        said: list[str] = []
        assert stop_strays(data, said.append) == [stray.pid]
        assert stray.wait(10) is not None
        assert said == [f"{data}: Label Studio (pid {stray.pid}) was still running there (left by a `serve` that did "
                        "not end cleanly, or started by hand); stopping it: two servers must not share one database"]
        assert strays(data) == [] and other.poll() is None  # another data dir's server is left alone
    finally:
        for proc in (stray, other):
            proc.kill()
            proc.wait(10)


def test_a_restart_request_reaches_serve_and_its_answer_comes_back(tmp_path):
    with pytest.raises(AnnotationError, match="no `python -m annotation serve` runs on"):
        request_restart(tmp_path, 2, timeout=5)
    handle = lock_data_dir(tmp_path)  # this process plays serve
    try:
        def serve_side() -> None:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                asked = restart_requests(tmp_path)
                if asked:
                    assert asked == [2]
                    answer_restart(tmp_path, 2, True, "Room 2 (port 8081) is serving again")
                    return
                time.sleep(0.05)

        threading.Thread(target=serve_side, daemon=True).start()
        got = request_restart(tmp_path, 2, timeout=10, poll=0.05)
        assert (got.ok, got.line) == (True, "Room 2 (port 8081) is serving again")
        assert list((tmp_path / "control").iterdir()) == []  # request taken, answer read: nothing left
        with pytest.raises(AnnotationError, match="did not restart room 3 within 0 s"):
            request_restart(tmp_path, 3, timeout=0, poll=0.01)
    finally:
        handle.close()


ACCESS = '[2026-12-06 03:10:01,123] [django.server::log_message::213] [INFO] "GET /health HTTP/1.1" 200 17'


def test_the_reason_of_a_crash_is_the_server_s_error_never_an_access_line():
    traceback = "\n".join([
        "[2026-12-06 03:10:00,000] [core.middleware::__call__::34] [WARNING] slow request",
        "Traceback (most recent call last):",
        '  File "/x/manage.py", line 22, in <module>',
        "    main()",
        "django.db.utils.DatabaseError: file is not a database",
        "",
        ACCESS,
    ])
    assert log_error(traceback) == "django.db.utils.DatabaseError: file is not a database"
    chained = traceback.replace(ACCESS, "\n".join([
        "During handling of the above exception, another exception occurred:",
        "Traceback (most recent call last):",
        '  File "/x/y.py", line 1, in <module>',
        "OSError: [Errno 28] No space left on device",
        ACCESS]))
    assert log_error(chained) == "OSError: [Errno 28] No space left on device"
    logged = f"[2026-12-06 03:10:00,000] [core.utils::f::1] [ERROR] cannot open the media folder\n{ACCESS}"
    assert log_error(logged) == "[2026-12-06 03:10:00,000] [core.utils::f::1] [ERROR] cannot open the media folder"
    assert log_error(f"{ACCESS}\n{ACCESS.replace('200', '500')}") == NO_ERROR
    assert stop_reason(-9, NO_ERROR) == "killed by SIGKILL"
    assert stop_reason(1, "OSError: x") == "OSError: x"
    assert stop_reason(-15, "OSError: x") == "killed by SIGTERM"  # a request's traceback is not why


def test_a_serving_room_restarted_on_request_comes_back_without_counting_a_crash(monkeypatch, tmp_path):
    """``restart-room`` on a room that serves: its server is stopped and started again, and the answer says so."""
    from annotation import serve
    from annotation.serve import Room, Server, ServerSpec

    started: list[subprocess.Popen] = []

    class FakeServer(Server):
        def start(self, timeout: float = 300.0, stop: threading.Event | None = None) -> "Server":
            self.process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                                            start_new_session=True)
            started.append(self.process)
            return self

    class Front:
        def __init__(self) -> None:
            self.said: list[str] = []

        def serve_from(self, backend: tuple[str, int]) -> None:
            self.said.append("serving")

        def down(self, reason: str, coming_back: bool = True) -> None:
            self.said.append(reason)

    monkeypatch.setattr(serve, "Server", FakeServer)
    front, stop, reports, answers = Front(), threading.Event(), [], []
    room = Room(2, ServerSpec(bin=Path("label-studio"), data_dir=tmp_path, port=8081), front, stop, reports.append,
                "Room 2")
    room.start()
    try:
        assert room.ready.wait(30) and room.serving
        room.restart(lambda ok, line: answers.append((ok, line)))
        deadline = time.monotonic() + 30
        while not answers:
            assert time.monotonic() < deadline, reports
            time.sleep(0.05)
        assert answers == [(True, "Room 2 (port 8081) is serving again")]
        assert started[0].poll() is not None and started[1].poll() is None  # the old server stopped, a new one runs
        assert front.said == ["serving", "is restarting at the maintainer's request", "serving"]
        assert room.crashes == [] and not room.given_up
    finally:
        stop.set()
        room.join(30)
    assert all(p.poll() is not None for p in started)
