"""Ports a room's server can keep: found outside the range the kernel hands to clients, and found again when
another program takes one before the server binds it (CI saw a room fail that way)."""

from __future__ import annotations

import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from annotation import serve
from annotation.serve import PORT_BAND_START, PortTaken, Room, Server, ServerSpec, ephemeral_ports_start, free_port
from tests.conftest import have, require


def test_free_ports_are_free_never_repeated_and_below_the_range_clients_are_given():
    ports = [free_port() for _ in range(5)]
    assert len(set(ports)) == 5
    if ephemeral_ports_start() - PORT_BAND_START >= 1000:
        assert all(PORT_BAND_START <= p < ephemeral_ports_start() for p in ports), ports
    for p in ports:
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as servers bind (a closed one's TIME_WAIT)
            s.bind(("127.0.0.1", p))


def test_a_port_something_listens_on_is_passed_over(monkeypatch):
    with socket.socket() as held:
        held.bind(("127.0.0.1", free_port()))
        held.listen()
        taken = held.getsockname()[1]
        monkeypatch.setattr(serve, "_next_port", taken)
        assert free_port() != taken


def _fake_label_studio(tmp_path: Path, says: str) -> Path:
    """An executable that prints what Label Studio prints when its port was taken, then keeps running."""
    exe = tmp_path / "label-studio"
    exe.write_text(f"#!{sys.executable}\nimport sys, time\nprint({says!r}, flush=True)\ntime.sleep(60)\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


def test_label_studio_moving_to_the_next_port_is_a_taken_port_not_a_five_minute_wait(tmp_path):
    require(have("requests"), "requests (the annotation extra)", "pip install -e '.[annotation]'")
    port = free_port()
    spec = ServerSpec(bin=_fake_label_studio(tmp_path, f"* Port {port} is in use.\n* Trying to start at {port + 1}"),
                      data_dir=tmp_path / "data", port=port, username="a@b.c", password="pw")
    log = tmp_path / "ls.log"
    log.write_text(f"* Port {port} is in use.\n")  # an earlier start's warning, in the same log: not this start's
    server = Server(spec, log_path=log)
    server.launch()
    assert not server.moved_off_its_port()
    with pytest.raises(PortTaken, match=f"port {port} .* was taken while Label Studio started"):
        server.wait_ready(timeout=30)
    assert server.process.poll() is not None  # stopped, not left running on another port


class _Front:
    def __init__(self) -> None:
        self.backends: list[tuple[str, int]] = []

    def serve_from(self, backend: tuple[str, int]) -> None:
        self.backends.append(backend)

    def down(self, reason: str, coming_back: bool = True) -> None:
        pass


def _room_whose_first_ports_are_taken(monkeypatch, tmp_path: Path, taken: int) -> tuple[Room, _Front, list[int]]:
    tried: list[int] = []

    class FakeServer(Server):
        def start(self, timeout: float = 300.0, stop: threading.Event | None = None) -> "Server":
            tried.append(self.spec.port)
            if len(tried) <= taken:
                raise PortTaken(f"port {self.spec.port} was taken")
            self.process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                                            start_new_session=True)  # as the real one: stopped by its group
            return self

    monkeypatch.setattr(serve, "Server", FakeServer)
    front, stop = _Front(), threading.Event()
    room = Room(1, ServerSpec(bin=Path("label-studio"), data_dir=tmp_path, port=1), front, stop, print, "Room 1")
    room.start()
    assert room.ready.wait(30)
    stop.set()
    room.join(30)
    return room, front, tried


def test_a_room_whose_internal_port_is_taken_starts_on_another(monkeypatch, tmp_path):
    room, front, tried = _room_whose_first_ports_are_taken(monkeypatch, tmp_path, taken=2)
    assert room.error is None and len(set(tried)) == 3
    assert front.backends == [("127.0.0.1", tried[-1])]


def test_a_room_gives_up_when_every_port_it_tries_is_taken(monkeypatch, tmp_path):
    room, front, tried = _room_whose_first_ports_are_taken(monkeypatch, tmp_path, taken=100)
    assert isinstance(room.error, PortTaken) and len(tried) == serve.PORT_TRIES + 1
    assert front.backends == []
