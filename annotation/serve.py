"""Start a local Label Studio for a review team: its rooms, started together and kept alive.

The server is a separate program installed in its own virtual environment (it pins Django and many libraries
that would clash with Mirage's own environment), so this module only finds the executable, prepares its
environment and supervises the processes:

- ``--rooms N`` (3 by default) starts one server per reviewer slot: the community edition has a single
  organisation in which every member can open every project, task and annotation (Data Manager, API, export),
  so the only way to keep reviewers from seeing each other's votes is to keep them on different servers;
- each room is a :class:`~annotation.front.RoomFront` on its public port (bound to 127.0.0.1 by default; the port
  must be free) and Label Studio on an internal port of 127.0.0.1; the rooms start together, and a :class:`Room`
  restarts a server that exits (reported on stderr; the other rooms go on) while its front tells reviewers why;
- version check, analytics and Sentry off, signup only through the organisation's invite link;
- local-files serving on, from a dedicated files root (``<data dir>/files`` by default, never ``/``) that holds
  only the links ``push`` makes to the images tasks show (same origin: no CORS, no second server; see
  ``docs/annotation.md``);
- the first admin from ``LABEL_STUDIO_USERNAME`` / ``LABEL_STUDIO_PASSWORD``; legacy API tokens enabled, so the
  admin's token from ``/api/current-user/token`` works for ``push`` and ``pull``.
- one ``serve`` per data dir, servers that end with it (``kill -9`` included), a persisted secret key per room
  and a room restarted alone on the maintainer's request: :mod:`annotation.guard`.

The first start of a data dir migrates its database (about a minute); later starts take seconds.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Sequence, TextIO

from annotation.errors import AnnotationError
from annotation.guard import (answer_restart, die_with, lock_data_dir, restart_requests, room_secret_key,
                              stop_strays)

if TYPE_CHECKING:
    from annotation.front import RoomFront

LABEL_STUDIO_VERSION = "1.23.2"
"""The Label Studio release Mirage is tested with (``pip install label-studio==1.23.2``)."""

BIN_ENV = "MIRAGE_LABEL_STUDIO_BIN"
DEFAULT_VENV = ".venv-labelstudio"
INSTALL_HINT = (
    f"python -m venv {DEFAULT_VENV} && {DEFAULT_VENV}/bin/pip install label-studio=={LABEL_STUDIO_VERSION}"
)
REPO_ROOT = Path(__file__).resolve().parents[1]


def find_label_studio_bin(explicit: str | os.PathLike | None = None) -> Path:
    """The ``label-studio`` executable: ``explicit``, ``$MIRAGE_LABEL_STUDIO_BIN``, PATH, ``.venv-labelstudio``.

    ``.venv-labelstudio`` is looked for in the current directory, then in the repository root.
    Raises :class:`AnnotationError` with one line that says how to install it when none is found.
    """
    if explicit:
        path = Path(explicit).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise AnnotationError(f"--label-studio-bin {explicit}: not an executable file")
        return path
    from_env = os.environ.get(BIN_ENV)
    if from_env:
        path = Path(from_env).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise AnnotationError(f"${BIN_ENV}={from_env}: not an executable file")
        return path
    on_path = shutil.which("label-studio")
    if on_path:
        return Path(on_path)
    for root in (Path.cwd(), REPO_ROOT):
        candidate = root / DEFAULT_VENV / "bin" / "label-studio"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise AnnotationError(
        f"Label Studio server not found: pass --label-studio-bin, set ${BIN_ENV}, or install it with: {INSTALL_HINT}"
    )


def installed_version(bin_path: Path) -> str | None:
    """The version of the ``label-studio`` distribution behind ``bin_path``, read without starting a server.

    (``label-studio --version`` would start one.) ``None`` when it cannot be told.
    """
    try:
        first = bin_path.read_bytes()[:400].split(b"\n", 1)[0].decode("utf-8", "replace")
    except OSError:
        return None
    if not first.startswith("#!"):
        return None
    python = first[2:].strip().split()[0] if first[2:].strip() else ""
    if not python:
        return None
    try:
        out = subprocess.run(
            [python, "-c", "import importlib.metadata as m; print(m.version('label-studio'))"],
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def port_is_free(host: str, port: int) -> bool:
    """Whether nothing listens on ``host:port`` and it can be bound."""
    probe_host = "127.0.0.1" if host in ("0.0.0.0", "") else host
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        if s.connect_ex((probe_host, port)) == 0:
            return False
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        # as the server's own socket does, so connections of a previous run in TIME_WAIT do not count
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host or "0.0.0.0", port))
        except OSError:
            return False
    return True


PORT_BAND_START = 20000
"""Free ports are looked for from here up to the kernel's ephemeral range (see :func:`free_port`)."""

_next_port: int | None = None
_port_lock = threading.Lock()


def ephemeral_ports_start() -> int:
    """The first port the kernel hands to outgoing connections (Linux's ``ip_local_port_range``; 32768 elsewhere)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port(host: str = "127.0.0.1") -> int:
    """A port free right now, never the same one twice in this process, below the kernel's ephemeral range.

    The kernel gives ports of the ephemeral range to every outgoing connection, so a free one found there (the
    usual ``bind(0)``) can be taken by any client between now and the server's bind: in CI a room's port was
    taken that way while the other rooms were being polled. Each process starts its scan at a place set by its
    id, so processes started together look in different places. A kernel whose ephemeral range leaves no band
    below it is asked for a port instead."""
    global _next_port
    low, high = PORT_BAND_START, ephemeral_ports_start()
    if high - low < 1000:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((host, 0))
            return s.getsockname()[1]
    span = high - low
    with _port_lock:
        if _next_port is None:
            _next_port = low + (os.getpid() * 613) % span
        for _ in range(span):
            port = _next_port
            _next_port = low + (port + 1 - low) % span
            if port_is_free(host, port):
                return port
    raise AnnotationError(f"no free port on {host} between {low} and {high}")


class PortTaken(AnnotationError):
    """A server's port was taken by another program: for an internal port, pick another and start again."""


def _force(env: dict[str, str], name: str, value: str) -> None:
    """Set ``name`` and drop the prefixed spellings Label Studio would read first."""
    for prefix in ("LABEL_STUDIO_", "HEARTEX_"):
        env.pop(prefix + name, None)
    env[name] = value


@dataclass
class ServerSpec:
    """Everything needed to start one Label Studio process."""

    bin: Path
    data_dir: Path
    host: str = "127.0.0.1"
    port: int = 8080
    files_root: Path = Path("/")
    username: str | None = None
    password: str | None = None
    extra_env: Mapping[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "") else self.host
        return f"http://{host}:{self.port}"

    def command(self) -> list[str]:
        return [
            str(self.bin),
            "start",
            "--no-browser",
            "--internal-host",
            self.host,
            "--port",
            str(self.port),
            "--data-dir",
            str(self.data_dir),
            "--enable-legacy-api-token",
            "--log-level",
            "WARNING",
        ]

    def env(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        env = dict(os.environ if base is None else base)
        # a virtualenv of the *project* on PATH or in PYTHONPATH must not leak into the server's interpreter
        for name in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "DJANGO_SETTINGS_MODULE"):
            env.pop(name, None)
        _force(env, "BASE_DATA_DIR", str(self.data_dir))
        env["LABEL_STUDIO_BASE_DATA_DIR"] = str(self.data_dir)
        _force(env, "LATEST_VERSION_CHECK", "false")
        _force(env, "COLLECT_ANALYTICS", "false")
        _force(env, "SENTRY_DSN", "")
        _force(env, "FRONTEND_SENTRY_DSN", "")
        _force(env, "DISABLE_SIGNUP_WITHOUT_LINK", "true")
        _force(env, "LOCAL_FILES_SERVING_ENABLED", "true")
        _force(env, "LOCAL_FILES_DOCUMENT_ROOT", str(self.files_root))
        # read by Label Studio before its own <data dir>/.env (see annotation.guard): one key per room, for good
        _force(env, "SECRET_KEY", room_secret_key(self.data_dir))
        env["LABEL_STUDIO_ENABLE_LEGACY_API_TOKEN"] = "true"
        for name in ("HOST", "PORT", "LABEL_STUDIO_HOST", "LABEL_STUDIO_PORT"):
            env.pop(name, None)
        env["PYTHONUNBUFFERED"] = "1"
        if self.username and self.password:
            env["LABEL_STUDIO_USERNAME"] = self.username
            env["LABEL_STUDIO_PASSWORD"] = self.password
        else:
            # half a pair would make Label Studio prompt for the other half on a terminal it does not have
            for name in ("USERNAME", "PASSWORD"):
                for prefix in ("LABEL_STUDIO_", "HEARTEX_"):
                    env.pop(prefix + name, None)
        env.update(self.extra_env)
        return env


def is_initialised(data_dir: Path) -> bool:
    """Whether ``data_dir`` already holds a Label Studio database."""
    return (Path(data_dir) / "label_studio.sqlite3").exists()


class Server:
    """A running Label Studio process (a context manager that stops it on exit)."""

    def __init__(self, spec: ServerSpec, log_path: Path | None = None) -> None:
        self.spec = spec
        self.log_path = Path(log_path) if log_path else Path(spec.data_dir) / "label-studio.log"
        self.process: subprocess.Popen | None = None
        self._log: TextIO | None = None
        self._log_start = 0

    @property
    def url(self) -> str:
        return self.spec.url

    def start(self, timeout: float = 300.0, stop: threading.Event | None = None) -> "Server":
        """Launch the server and wait until it answers (:meth:`launch` then :meth:`wait_ready`)."""
        self.launch()
        self.wait_ready(timeout, stop)
        return self

    def launch(self) -> "Server":
        """Start the process without waiting for it: rooms are launched together, then waited for."""
        spec = self.spec
        Path(spec.data_dir).mkdir(parents=True, exist_ok=True)
        if not port_is_free(spec.host, spec.port):
            raise PortTaken(f"port {spec.port} on {spec.host} is already in use: pass another --port")
        if not is_initialised(spec.data_dir) and not (spec.username and spec.password):
            raise AnnotationError(
                f"{spec.data_dir} is a new data dir: set LABEL_STUDIO_USERNAME (an e-mail) and "
                "LABEL_STUDIO_PASSWORD for the first admin"
            )
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = open(self.log_path, "a", encoding="utf-8")
        self._log_start = self._log.tell()
        self.process = subprocess.Popen(
            spec.command(),
            env=spec.env(),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, which stop() ends whole
            preexec_fn=die_with(os.getpid()),  # and the kernel ends it when the thread starting it ends
        )
        return self

    def wait_ready(self, timeout: float, stop: threading.Event | None = None) -> None:
        """Poll ``/health`` until the server answers; an exit, ``timeout`` or ``stop`` (set) raise."""
        import requests

        deadline = time.monotonic() + timeout
        while True:
            if self.process is not None and self.process.poll() is not None:
                raise AnnotationError(
                    f"Label Studio exited with status {self.process.returncode} while starting: "
                    f"{stop_reason(self.process.returncode, self.error())} (log: {self.log_path})"
                )
            try:
                r = requests.get(self.url + "/health", timeout=2)
                if r.status_code == 200:
                    return
            except requests.RequestException:
                pass
            if self.moved_off_its_port():
                self.stop()
                raise PortTaken(f"port {self.spec.port} on {self.spec.host} was taken while Label Studio started")
            if time.monotonic() > deadline or (stop is not None and stop.is_set()):
                self.stop()
                raise AnnotationError(
                    f"Label Studio did not answer at {self.url} within {timeout:.0f} s (log: {self.log_path})"
                    if not (stop is not None and stop.is_set()) else "stopped while starting"
                )
            time.sleep(0.5)

    def moved_off_its_port(self) -> bool:
        """Whether Label Studio found its port taken and went to the next one (it says so in its log and starts
        there): this server would never answer where it is polled."""
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as log:
                log.seek(self._log_start)
                return f"Port {self.spec.port} is in use" in log.read()
        except OSError:
            return False

    def error(self) -> str:
        """What the server said went wrong in this start's part of its log (:func:`log_error`)."""
        try:
            with open(self.log_path, encoding="utf-8", errors="replace") as log:
                log.seek(self._log_start)
                text = log.read()
        except OSError:
            return "no log"
        return log_error(text)

    def stop(self, grace: float = 15.0) -> None:
        proc = self.process
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                proc.wait(grace)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait(5)
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> "Server":
        if self.process is None:
            self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


ACCESS_LINE = re.compile(r'"[A-Z]+ \S* HTTP/[0-9.]+" \d{3}')
"""An access-log line of Django's server (``"GET /health HTTP/1.1" 200 ...``): never a reason for a crash."""
ERROR_LINE = re.compile(r"\[(ERROR|CRITICAL)\]|^[A-Za-z_][\w.]*(Error|Exception)\b")
"""A line of the server's own about a failure: a log record at ERROR or above, or an exception's line."""


def log_error(text: str) -> str:
    """The server's own error in ``text`` (a part of its log): the exception line of its last traceback, else its
    last ERROR / CRITICAL line; never an access-log line. Says so when the log holds no error (``kill -9``)."""
    lines = [ln.rstrip() for ln in text.splitlines() if ln.strip()]
    starts = [i for i, ln in enumerate(lines) if ln.startswith("Traceback (most recent call last)")]
    if starts:
        for line in lines[starts[-1] + 1:]:
            if not line[:1].isspace():
                return line.strip()
    for line in reversed(lines):
        if ERROR_LINE.search(line) and not ACCESS_LINE.search(line):
            return line.strip()
    return NO_ERROR


NO_ERROR = "no error in its log"


def stop_reason(code: int | None, error: str) -> str:
    """Why a server stopped: its log's ``error`` (:func:`log_error`); for a signal, only the signal
    (``killed by SIGKILL``): a signal comes from outside the server, and the last traceback of its log is then a
    request it answered earlier (Label Studio logs a traceback for every refused, unauthenticated call), not the
    cause."""
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return error


RESTARTS = 3
"""Restarts of a room allowed within :data:`RESTART_WINDOW` seconds; one more crash and the room is given up (its
front says so to reviewers; the other rooms go on)."""
RESTART_WINDOW = 600.0
START_TIMEOUT = 300.0


PORT_TRIES = 5
"""Internal ports a room tries in a row when another program takes each before its server binds it."""


class Room(threading.Thread):
    """One room kept alive: its front on the public port, its Label Studio on an internal one, restarted when it dies.

    The first start is all or nothing (``error`` is set and ``serve`` stops every room: a configuration problem);
    later, a server that exits is reported, restarted on the same data dir (SQLite keeps every committed vote) and
    its front answers 503 with the reason meanwhile. After :data:`RESTARTS` restarts within
    :data:`RESTART_WINDOW` seconds the room is given up and stays down with its reason; the other rooms go on.
    The maintainer restarts a room alone (``restart-room``): a given-up room gets a new ``Room(restarted=True)``
    on the same front, a serving one :meth:`restart`; either tells ``answer`` how it went.
    """

    def __init__(self, number: int, spec: ServerSpec, front: "RoomFront", stop: threading.Event,
                 report: Callable[[str], None], name: str, restarted: bool = False,
                 answer: Callable[[bool, str], None] | None = None) -> None:
        super().__init__(name=f"room-{number}", daemon=True)
        self.number, self.spec, self.front, self.stop_event, self.report = number, spec, front, stop, report
        self.label = name
        self.restarted = restarted
        self.answer = answer
        self.ready = threading.Event()
        self.error: AnnotationError | None = None
        self.given_up = False
        self.serving = False
        self.restart_asked = threading.Event()
        self.server: Server | None = None
        self.crashes: list[float] = []
        self.log_path = Path(spec.data_dir) / "label-studio.log"
        self.hint = ""
        """How the maintainer restarts this room once given up (``serve`` sets it)."""

    def _server(self) -> Server:
        internal = replace(self.spec, host="127.0.0.1", port=free_port())
        return Server(internal, log_path=self.log_path)

    def restart(self, answer: Callable[[bool, str], None]) -> None:
        """Stop the serving server and start a new one (not counted as a crash); ``answer`` hears how it went."""
        self.answer = answer
        self.restart_asked.set()

    def say_restarting(self) -> None:
        """Tell the room's reviewers (its front) and the maintainer that it restarts at the maintainer's request."""
        self.front.down("is restarting at the maintainer's request")
        self.report(f"{self.label} (port {self.spec.port}): restarting Label Studio at the maintainer's request; "
                    "the other rooms go on")

    def _tell(self, ok: bool, line: str) -> None:
        self.report(line)
        answer, self.answer = self.answer, None
        if answer is not None:
            answer(ok, line)

    def run(self) -> None:
        first = not self.restarted
        taken = 0
        while not self.stop_event.is_set():
            try:
                self.server = self._server()
                self.server.start(START_TIMEOUT, self.stop_event)
            except AnnotationError as exc:
                if self.server is not None:
                    self.server.stop()
                if isinstance(exc, PortTaken) and taken < PORT_TRIES:
                    taken += 1  # an internal port: the next server gets another
                    continue
                if first:
                    self.error = exc
                    self.ready.set()
                    return
                if self.stop_event.is_set() or not self._crashed(f"did not come back ({exc})"):
                    return
                continue
            taken = 0
            self.front.serve_from(("127.0.0.1", self.server.spec.port))
            self.serving = True
            if first:
                first = False
                self.ready.set()
            else:
                self._tell(True, f"{self.label} (port {self.spec.port}) is serving again")
            proc = self.server.process
            while (not self.stop_event.is_set() and proc is not None and proc.poll() is None
                   and not self.restart_asked.is_set()):
                self.stop_event.wait(0.5)
            if self.stop_event.is_set():
                break
            self.serving = False
            if self.restart_asked.is_set():
                self.restart_asked.clear()
                self.say_restarting()
                self.server.stop()
                continue
            status = proc.returncode if proc is not None else None
            self.front.down(f"stopped with status {status} and is restarting")
            self.server.stop()
            if not self._crashed(f"stopped with status {status}: {stop_reason(status, self.server.error())}"):
                return
        if self.server is not None:
            self.server.stop()

    def _crashed(self, what: str) -> bool:
        """Record a crash; whether to restart (else the room is given up and says so)."""
        now = time.monotonic()
        self.crashes = [t for t in self.crashes if now - t < RESTART_WINDOW] + [now]
        if len(self.crashes) > RESTARTS:
            self.given_up = True
            self.front.down(f"stopped {len(self.crashes)} times in {RESTART_WINDOW / 60:.0f} minutes and was not "
                            "restarted; the maintainer has been told", coming_back=False)
            self._tell(False, f"{self.label} (port {self.spec.port}): Label Studio {what}; it stopped "
                              f"{len(self.crashes)} times in {RESTART_WINDOW / 60:.0f} minutes: given up (log "
                              f"{self.log_path}); the other rooms go on{self.hint}")
            return False
        self.report(f"{self.label} (port {self.spec.port}): Label Studio {what}; restarting it "
                    f"(log {self.log_path}); the other rooms go on")
        return True


def restart_hint(data_dir: Path, number: int) -> str:
    """The sentence a given-up room's report ends with: the command that restarts it alone."""
    return f"; restart it alone with: python -m annotation restart-room {number} --data-dir {data_dir}"


def restart_room(keepers: list[Room], number: int, data_dir: Path) -> None:
    """Restart room ``number`` alone, as ``restart-room`` asked (its answer goes back through :mod:`annotation.guard`).

    A given-up room gets a new :class:`Room` on its front; a serving one restarts its server; one that is
    restarting by itself is left to it."""

    def answer(ok: bool, line: str) -> None:
        answer_restart(data_dir, number, ok, line)

    if not 1 <= number <= len(keepers):
        answer(False, f"no room {number}: this serve runs room(s) 1 to {len(keepers)}")
        return
    keeper = keepers[number - 1]
    if keeper.given_up:
        keeper.say_restarting()
        fresh = Room(number, keeper.spec, keeper.front, keeper.stop_event, keeper.report, keeper.label,
                     restarted=True, answer=answer)
        fresh.hint = keeper.hint
        keepers[number - 1] = fresh
        fresh.start()
    elif keeper.serving:
        keeper.restart(answer)
    else:
        answer(False, f"{keeper.label} (port {keeper.spec.port}) is already restarting by itself: wait for it")


def room_specs(spec: ServerSpec, rooms: int) -> list[ServerSpec]:
    """One server per room: ``<data dir>/room-<k>`` on port ``port + k - 1`` (just ``spec`` for one room)."""
    if rooms == 1:
        return [spec]
    return [
        replace(spec, data_dir=Path(spec.data_dir) / f"room-{k}", port=spec.port + k - 1) for k in range(1, rooms + 1)
    ]


def team_instructions(
    urls: Sequence[str],
    public_urls: Sequence[str] | None,
    username: str | None,
    password: str | None,
    files_root: Path,
) -> list[str]:
    """Lines telling the maintainer how reviewers join and how to push/pull (needs the admin's credentials)."""
    from annotation.client import LabelStudioClient

    shown = [(p or u).rstrip("/") for u, p in zip(urls, public_urls or [None] * len(urls))]
    several = len(urls) > 1
    if several:
        lines = [
            f"Label Studio is running in {len(urls)} rooms, one server per reviewer slot (a reviewer never sees "
            "another room's annotations): " + ", ".join(shown)
        ]
    else:
        lines = [f"Label Studio is running at {shown[0]}"]
    if not (username and password):
        lines.append(
            "Set LABEL_STUDIO_USERNAME and LABEL_STUDIO_PASSWORD to have the invite link and API token printed here;"
        )
        lines.append("otherwise find them in the web UI: Organization -> Add People, and Account & Settings.")
        return lines
    tokens = []
    for k, (url, public) in enumerate(zip(urls, shown), 1):
        client = LabelStudioClient.login(url, username, password)
        invite = client.invite_url()
        tokens.append(client.legacy_token())
        if several:
            lines.append(f"Reviewer slot {k} joins through the invite link: {public}{invite}")
        else:
            lines.append(f"Reviewers join through the invite link: {public}{invite}")
    lines.append(
        "  (each signs up with their own e-mail; signup without the link is disabled"
        + ("; give each reviewer one room only)" if several else ")")
    )
    lines.append("Maintainer, for push and pull:")
    lines.append(
        f"  export LABEL_STUDIO_URL={','.join(urls)} LABEL_STUDIO_API_KEY={','.join(tokens)} "
        f"LOCAL_FILES_DOCUMENT_ROOT={files_root}"
    )
    return lines


def serve(
    spec: ServerSpec, public_url: str | None = None, out: TextIO = sys.stdout, rooms: int = 1
) -> int:
    """Start the room(s) together, print how the team joins, keep them serving until interrupted. Returns a status.

    Each room is a :class:`~annotation.front.RoomFront` on its public port and a Label Studio server on an
    internal port of 127.0.0.1, kept alive by a :class:`Room`.
    """
    specs = room_specs(spec, rooms)
    publics = [u.strip() for u in public_url.split(",")] if public_url else None
    if publics is not None and len(publics) != len(specs):
        raise AnnotationError(f"--public-url: {len(publics)} URL(s) for {len(specs)} room(s); give one per room")
    with contextlib.ExitStack() as held:  # the data dir's lock and each room's, first: nothing else before it
        for data_dir in dict.fromkeys([Path(spec.data_dir)] + [Path(s.data_dir) for s in specs]):
            held.enter_context(lock_data_dir(data_dir))
        for s in specs:
            stop_strays(s.data_dir, lambda line: print(line, file=sys.stderr, flush=True))
        return _serve_locked(spec, specs, publics, out)


def _serve_locked(spec: ServerSpec, specs: list[ServerSpec], publics: list[str] | None, out: TextIO) -> int:
    """:func:`serve`, once the data dirs are this process's."""
    from annotation.front import RoomFront
    from annotation.ledger import LEDGER_FILE

    Path(spec.files_root).mkdir(parents=True, exist_ok=True)
    for s in specs:
        if not port_is_free(s.host, s.port):
            raise AnnotationError(f"port {s.port} on {s.host} is already in use: pass another --port")
        if not is_initialised(s.data_dir) and not (s.username and s.password):
            raise AnnotationError(
                f"{s.data_dir} is a new data dir: set LABEL_STUDIO_USERNAME (an e-mail) and "
                "LABEL_STUDIO_PASSWORD for the first admin"
            )
    version = installed_version(spec.bin)
    if version and version != LABEL_STUDIO_VERSION:
        print(
            f"warning: Label Studio {version} found at {spec.bin}; Mirage is tested with {LABEL_STUDIO_VERSION}",
            file=sys.stderr,
        )
    several = len(specs) > 1
    names = [f"Room {k}" if several else "The review room" for k in range(1, len(specs) + 1)]
    for name, s in zip(names, specs):
        first = not is_initialised(s.data_dir)
        print(
            f"Starting {name.lower() if not several else name}: Label Studio {version or '?'} from {s.bin} behind "
            f"port {s.port} (data dir {s.data_dir}, log {Path(s.data_dir) / 'label-studio.log'})"
            + (" - first start: migrating the database, about a minute..." if first else "..."),
            file=sys.stderr,
        )
    lock = threading.Lock()

    def report(line: str) -> None:
        with lock:
            print(line, file=sys.stderr, flush=True)

    stop = threading.Event()

    def _stop(signum: int, frame: object) -> None:
        stop.set()

    old_int = signal.signal(signal.SIGINT, _stop)
    old_term = signal.signal(signal.SIGTERM, _stop)
    fronts: list[RoomFront] = []
    keepers: list[Room] = []
    try:
        for name, s in zip(names, specs):
            try:
                fronts.append(RoomFront(s.host, s.port, room=name, ledger=Path(s.data_dir) / LEDGER_FILE).start())
            except OSError as exc:
                raise AnnotationError(f"port {s.port} on {s.host}: cannot listen ({exc.strerror}): pass another --port")
        keepers = [Room(k, s, f, stop, report, name) for k, (name, s, f) in enumerate(zip(names, specs, fronts), 1)]
        for keeper in keepers:
            keeper.hint = restart_hint(spec.data_dir, keeper.number)
        for keeper in keepers:  # together: each first start migrates or checks its database for a minute
            keeper.start()
        for keeper in keepers:
            while not keeper.ready.wait(0.5):
                if stop.is_set():
                    return 0
        for keeper in keepers:
            if keeper.error is not None:
                raise AnnotationError(f"{keeper.label} (port {keeper.spec.port}): {keeper.error}")
        lines = team_instructions(
            [s.url for s in specs], publics, spec.username, spec.password, Path(spec.files_root)
        )
        for line in lines:
            print(line, file=out)
        print("Press Ctrl-C to stop the server" + ("s." if several else "."), file=out)
        out.flush()
        while not stop.wait(0.5):
            for number in restart_requests(spec.data_dir):
                restart_room(keepers, number, spec.data_dir)
            if all(k.given_up for k in keepers):
                raise AnnotationError("every room has stopped for good; see the logs named above")
        print("Stopping Label Studio...", file=sys.stderr)
        return 0
    finally:
        stop.set()
        for keeper in keepers:
            keeper.join(60)
        for front in fronts:
            front.stop()
        signal.signal(signal.SIGINT, old_int)
        signal.signal(signal.SIGTERM, old_term)
