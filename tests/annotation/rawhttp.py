"""HTTP/1.1 over a raw socket: the request line and headers go out byte for byte as written.

python-requests (urllib3) normalises what it sends (``%73`` becomes ``s``, dot segments are resolved), so it cannot
send the requests a lenient front would misread; these helpers can.
"""

from __future__ import annotations

import json
import socket
import time
from dataclasses import dataclass


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self):
        return json.loads(self.body)

    @property
    def by_front(self) -> bool:
        """Whether the front answered itself (it marks its own answers)."""
        return "x-mirage-front" in self.headers


def _read_answer(sock: socket.socket, method: str) -> Answer:
    data = b""
    while b"\r\n\r\n" not in data:
        block = sock.recv(65536)
        if not block:
            break
        data += block
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines and len(lines[0].split()) > 1 else 0
    headers: dict[str, str] = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        headers[k.strip().lower()] = v.strip()
    if method == "HEAD" or status in (204, 304):
        return Answer(status, headers, b"")
    if "content-length" in headers:
        n = int(headers["content-length"])
        while len(rest) < n:
            block = sock.recv(65536)
            if not block:
                break
            rest += block
        return Answer(status, headers, rest[:n])
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = b""
        while True:
            while b"\r\n" not in rest:
                rest += sock.recv(65536)
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            while len(rest) < size + 2:
                rest += sock.recv(65536)
            body, rest = body + rest[:size], rest[size + 2:]
            if size == 0:
                return Answer(status, headers, body)
    while True:
        block = sock.recv(65536)
        if not block:
            return Answer(status, headers, rest)
        rest += block


def send(port: int, method: str, target: str, headers: dict[str, str] | None = None, body: bytes = b"",
         length: int | None = None, timeout: float = 30.0, host: str = "127.0.0.1", pause: float = 0.0) -> Answer:
    """Send one request exactly as written and read the answer. ``length``: the ``Content-Length`` to claim
    (``len(body)`` unless given; a lie when it differs). ``pause``: seconds to wait between the head and the body."""
    head = [f"{method} {target} HTTP/1.1", f"Host: {host}:{port}", "Connection: close"]
    for k, v in (headers or {}).items():
        head.append(f"{k}: {v}")
    if body or length is not None:
        head.append(f"Content-Length: {len(body) if length is None else length}")
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        if pause:
            time.sleep(pause)
        if body:
            try:
                sock.sendall(body)
            except (BrokenPipeError, ConnectionResetError):
                pass
        return _read_answer(sock, method)


def send_chunked(port: int, method: str, target: str, headers: dict[str, str], blocks: list[bytes],
                 timeout: float = 30.0) -> Answer:
    """Send a body in chunked transfer encoding (no ``Content-Length``), block by block."""
    head = [f"{method} {target} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close",
            "Transfer-Encoding: chunked"] + [f"{k}: {v}" for k, v in headers.items()]
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        try:
            for block in blocks:
                sock.sendall(f"{len(block):x}\r\n".encode() + block + b"\r\n")
            sock.sendall(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass
        return _read_answer(sock, method)
