"""What keeps a data dir to one ``serve`` and its rooms' sessions alive across restarts.

- **One supervisor per data dir.** ``serve`` holds an exclusive ``flock`` on ``<data dir>/serve.lock`` (and on each
  room's) for as long as it runs and writes its pid there: two supervisors on the same SQLite files would start two
  servers each writing the same votes. The kernel drops the lock when the process ends, however it ends, so a
  ``kill -9`` leaves no stale lock to clean up by hand.
- **No orphans.** Each Label Studio server is started in its own process group with a parent-death signal
  (``prctl(PR_SET_PDEATHSIG, SIGKILL)``, Linux): the kernel kills it when the supervisor dies, ``kill -9``
  included. A server left running anyway (another platform, or a supervisor of an older Mirage) is found at the
  next start by its command line (``start ... --data-dir <room dir>``) and stopped, and ``serve`` says so.
- **A secret key that stays.** Label Studio makes its Django ``SECRET_KEY`` from Django's alphabet, which holds
  ``$``, writes it to ``<data dir>/.env`` and reads it back through django-environ, which takes a value starting
  with ``$`` for a reference to another variable: about one room in 50 got a new key at every start, which logs
  every reviewer out. ``serve`` keeps each room's key in ``<room dir>/secret-key`` (letters and digits only, mode
  0600) and hands it to the server as ``SECRET_KEY``, which Label Studio reads before its ``.env``.
- **Restarting one room.** ``python -m annotation restart-room K`` leaves a request in ``<data dir>/control/``;
  the ``serve`` holding the lock picks it up within half a second, restarts that room alone and writes the
  outcome beside it, which the command prints. A file, not a signal: the answer needs a place to go, and only
  someone who can write to the data dir (the maintainer) can ask.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import fcntl
import json
import os
import secrets
import signal
import string
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TextIO

from annotation.errors import AnnotationError

LOCK_FILE = "serve.lock"
SECRET_KEY_FILE = "secret-key"
SECRET_KEY_ALPHABET = string.ascii_letters + string.digits
"""No ``$`` (django-environ's reference prefix), no quote, ``#`` or space (``.env`` syntax): nothing any reader
of the key can take for anything but the key."""
SECRET_KEY_LENGTH = 64
CONTROL_DIR = "control"


# ---------------------------------------------------------------------------------------------- the lock
def _read_pid(path: Path) -> str:
    """The pid written in a lock file ("?" when it cannot be read: a holder between its lock and its write)."""
    for _ in range(20):
        try:
            text = path.read_text().strip()
        except OSError:
            text = ""
        if text:
            return text
        time.sleep(0.05)
    return "?"


def lock_data_dir(data_dir: Path) -> TextIO:
    """Take ``data_dir``'s lock for this process (kept while the returned file is open) and write our pid in it.

    Raises :class:`AnnotationError` naming the pid of the ``serve`` that holds it."""
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / LOCK_FILE
    handle = open(path, "a+", encoding="utf-8")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise AnnotationError(
            f"{data_dir} is already served by `python -m annotation serve` (pid {_read_pid(path)}): stop it "
            "first (Ctrl-C there, or kill -INT that pid) or pass another --data-dir"
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    return handle


def serving_pid(data_dir: Path) -> int | None:
    """The pid of the ``serve`` that holds ``data_dir``'s lock; ``None`` when none does."""
    path = Path(data_dir) / LOCK_FILE
    try:
        handle = open(path, encoding="utf-8")
    except FileNotFoundError:
        return None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _read_pid(path)
            return int(pid) if pid.isdigit() else -1
        fcntl.flock(handle, fcntl.LOCK_UN)
    return None


# ---------------------------------------------------------------------------------------------- orphans
def _libc_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _libc_prctl()  # resolved here, never in the forked child
PR_SET_PDEATHSIG = 1


def die_with(parent: int) -> Callable[[], None]:
    """A ``preexec_fn`` that has the kernel SIGKILL the child when the thread that started it ends (Linux).

    The signal follows the starting *thread*: a server must be started by a thread that outlives it (a
    :class:`~annotation.serve.Room`'s, which stops its server before it ends). If ``parent`` died between the
    fork and the ``prctl``, the child ends at once."""

    def preexec() -> None:
        if _PRCTL is None:
            return
        _PRCTL(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return preexec


def _cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie nobody reaps, as in a container without an init, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[-1].split()[:1] != ["Z"]


def strays(data_dir: Path) -> list[int]:
    """Label Studio servers running on ``data_dir`` (``start ... --data-dir <data_dir>`` on their command line).

    Read from ``/proc``; elsewhere none are found (and the parent-death signal is not there to need it)."""
    target = str(Path(data_dir).resolve())
    found = []
    proc = Path("/proc")
    if not proc.is_dir():
        return []
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        argv = _cmdline(int(entry.name))
        if "start" in argv and any(a == "--data-dir" and b == target for a, b in zip(argv, argv[1:])):
            if _alive(int(entry.name)):
                found.append(int(entry.name))
    return sorted(found)


def stop_strays(data_dir: Path, say: Callable[[str], None], grace: float = 10.0) -> list[int]:
    """Stop every server :func:`strays` finds on ``data_dir`` (its process group: SIGTERM, then SIGKILL) and say so.

    Only ever called by the holder of the data dir's lock: a server on it is then nobody's."""
    pids = strays(data_dir)
    for pid in pids:
        say(f"{data_dir}: Label Studio (pid {pid}) was still running there (left by a `serve` that did not end "
            "cleanly, or started by hand); stopping it: two servers must not share one database")
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                if os.getpgid(pid) == pid:  # started in its own group, as serve starts them
                    os.killpg(pid, sig)
                else:
                    os.kill(pid, sig)
            except ProcessLookupError:
                break
            except PermissionError:
                raise AnnotationError(f"{data_dir}: a Label Studio of another user (pid {pid}) runs on this data "
                                      "dir: stop it first") from None
            deadline = time.monotonic() + grace
            while _alive(pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            if not _alive(pid):
                break
    return pids


# ---------------------------------------------------------------------------------------------- secret key
def room_secret_key(data_dir: Path) -> str:
    """The room's Django ``SECRET_KEY``: read from ``<data dir>/secret-key``, made there once (mode 0600).

    A file that holds anything but a key of :data:`SECRET_KEY_ALPHABET` is an error naming it (never replaced:
    a new key would log every reviewer out)."""
    path = Path(data_dir) / SECRET_KEY_FILE
    try:
        key = path.read_text(encoding="ascii").strip()
    except FileNotFoundError:
        key = ""
    except (OSError, UnicodeDecodeError) as exc:
        raise AnnotationError(f"{path}: cannot read the room's secret key ({exc})") from None
    else:
        if len(key) < 32 or not set(key) <= set(SECRET_KEY_ALPHABET):
            raise AnnotationError(
                f"{path}: not a secret key (at least 32 letters and digits): restore it, or delete it to make a "
                "new one (which logs every reviewer of that room out)"
            )
        return key
    key = "".join(secrets.choice(SECRET_KEY_ALPHABET) for _ in range(SECRET_KEY_LENGTH))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(key + "\n")
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)
    return key


# ---------------------------------------------------------------------------------------------- restart requests
@dataclass(frozen=True)
class Answer:
    """What ``serve`` did with a restart request: ``ok`` and the line it reported."""

    ok: bool
    line: str


def _request_path(data_dir: Path, room: int) -> Path:
    return Path(data_dir) / CONTROL_DIR / f"restart-room-{room}.request"


def _answer_path(data_dir: Path, room: int) -> Path:
    return Path(data_dir) / CONTROL_DIR / f"restart-room-{room}.answer"


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def restart_requests(data_dir: Path) -> list[int]:
    """The rooms whose restart was asked for (each request is taken: removed)."""
    rooms = []
    for path in sorted((Path(data_dir) / CONTROL_DIR).glob("restart-room-*.request")):
        number = path.name[len("restart-room-"):-len(".request")]
        path.unlink(missing_ok=True)
        rooms.append(int(number) if number.isdigit() else 0)
    return rooms


def answer_restart(data_dir: Path, room: int, ok: bool, line: str) -> None:
    """Leave ``serve``'s answer to a restart request where :func:`request_restart` waits for it."""
    _write_atomic(_answer_path(data_dir, room), json.dumps({"ok": ok, "line": line}) + "\n")


def request_restart(data_dir: Path, room: int, timeout: float, poll: float = 0.5) -> Answer:
    """Ask the ``serve`` on ``data_dir`` to restart room ``room`` and wait for its answer.

    Raises :class:`AnnotationError` when no ``serve`` holds the data dir, when it ends before answering, or after
    ``timeout`` seconds."""
    data_dir = Path(data_dir)
    pid = serving_pid(data_dir)
    if pid is None:
        raise AnnotationError(f"no `python -m annotation serve` runs on {data_dir}: start it (it starts every room)")
    answer = _answer_path(data_dir, room)
    answer.unlink(missing_ok=True)
    request = _request_path(data_dir, room)
    _write_atomic(request, f"{os.getpid()}\n")
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                got = json.loads(answer.read_text(encoding="utf-8"))
            except FileNotFoundError:
                got = None
            if got is not None:
                answer.unlink(missing_ok=True)
                return Answer(bool(got["ok"]), str(got["line"]))
            if serving_pid(data_dir) is None:
                raise AnnotationError(f"serve (pid {pid}) ended before restarting room {room}")
            if time.monotonic() > deadline:
                raise AnnotationError(f"serve (pid {pid}) did not restart room {room} within {timeout:.0f} s: see "
                                      "its output and the room's label-studio.log")
            time.sleep(poll)
    finally:
        request.unlink(missing_ok=True)  # not taken (an error, Ctrl-C): no serve acts on it later
