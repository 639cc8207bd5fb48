"""The door of a room: a small reverse proxy on the room's public port, in front of its Label Studio server.

``serve`` starts Label Studio on an internal port and this front on the port reviewers use. It forwards every
request unchanged (the ``Host`` header too, so the links Label Studio writes stay right), and adds what Label Studio
1.23.2 cannot be configured to do:

- **a room that is down says why.** While its server starts, restarts after a crash, or was given up, the front
  answers with HTTP 503 and one sentence (JSON ``{"detail": ...}`` for the API, which Label Studio's web app shows
  in its "Server error" dialog; a page that reloads itself for a browser), instead of a refused connection the web
  app greys its buttons over without a word;
- **one cookie scope per room.** Browsers keep cookies per host name, not per port, so rooms on one host logged
  each other out (Label Studio reads no setting for its cookie names). The front renames the session and CSRF
  cookies it hands out to ``<name>_<port>`` and gives them back to the server under their own names;
- **what a member may not do.** The community edition lets every member change any project (label config,
  settings), read and connect storages (their absolute paths), read the invite token, run the Data Manager's
  bulk actions and edit task data. The front refuses those requests (HTTP 403) to anyone but the organisation's
  owner, the maintainer (whose ``push``, ``pull`` and ``serve`` keep working), asking the server who the caller is;
- **no paths in errors.** A ``..`` in a local-files request is answered 404 here (the server answers 500 with
  both absolute paths), and the body of any 5xx answer is replaced by a sentence pointing to the room's log.

Cookies and credentials pass through untouched otherwise; the front keeps no state but a short cache of who
holds which credential.
"""

from __future__ import annotations

import html
import http.client
import json
import posixpath
import re
import socket
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable
from urllib.parse import parse_qs, urlsplit

HOP_BY_HOP = {
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "trailers",
    "transfer-encoding", "upgrade",
}
RENAMED_COOKIES = ("sessionid", "csrftoken")
"""Label Studio's (Django's) session and CSRF cookies: the two a second room on the same host would overwrite."""

OWNER_ONLY: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (methods, re.compile(pattern))
    for methods, pattern in (
        ("POST", r"/api/projects/?"),  # a new project
        ("PATCH PUT DELETE", r"/api/projects/\d+/?"),  # label config, settings, the project itself
        ("POST DELETE", r"/api/projects/\d+/(import|reimport|tasks)(/.*)?"),
        ("*", r"/api/storages(/.*)?"),  # storages show absolute paths and could serve more files
        ("*", r"/api/invite(/.*)?"),  # the invite token
        ("POST", r"/api/dm/actions/?"),  # bulk actions: delete tasks, delete annotations, ... (not next_task)
        ("POST PATCH PUT DELETE", r"/api/tasks/\d+/?"),  # task data: what reviewers are shown
        ("POST", r"/api/tasks/?"),
        ("*", r"/api/webhooks(/.*)?"),  # a webhook would send every annotation elsewhere
        ("POST PATCH PUT DELETE", r"/api/ml(/.*)?"),
        ("POST PATCH PUT DELETE", r"/api/organizations/.*"),
    )
)
"""Requests only the organisation's owner may make: ``(methods or "*", path pattern)``."""

MEMBER_ACTIONS = ("next_task",)
"""Data Manager actions a reviewer's labeling stream runs (``POST /api/dm/actions?id=next_task``)."""


WHO_TTL = 60.0
"""Seconds a credential's owner is remembered (a member cannot become the owner in Label Studio's community
edition; the cache only spares the server one question per request)."""


@dataclass
class RoomState:
    """What the front says about its room: ``up`` with the server's address, or why it is not."""

    up: bool = False
    backend: tuple[str, int] | None = None
    reason: str = "is starting"
    coming_back: bool = True  # False: given up, nobody should wait for it


def cookie_name(name: str, port: int) -> str:
    """The name a room's cookie gets in the browser: ``sessionid_8081``."""
    return f"{name}_{port}"


def _neutral_5xx(status: int, room: str) -> str:
    return (f"Label Studio failed on this request (HTTP {status}); the maintainer finds the cause in {room}'s "
            "server log.")


def local_files_escape(query: str) -> bool:
    """Whether a ``/data/local-files/?d=...`` request reaches outside the files root (a ``..`` after the path is
    normalised as Label Studio does)."""
    for d in parse_qs(query, keep_blank_values=True).get("d", []):
        norm = posixpath.normpath(d).lstrip("/")
        if norm == ".." or norm.startswith("../"):
            return True
    return False


class RoomFront:
    """The reverse proxy of one room; ``start()`` binds the public port at once, ``state`` says where to send."""

    def __init__(self, host: str, port: int, room: str = "this room", upstream_timeout: float = 900.0) -> None:
        self.host, self.port, self.room = host, port, room
        self.state = RoomState()
        self.upstream_timeout = upstream_timeout
        self._who: dict[str, tuple[float, bool]] = {}
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ life
    def start(self) -> "RoomFront":
        front = self

        class Handler(_Handler):
            pass

        Handler.front = front
        server = ThreadingHTTPServer((self.host or "0.0.0.0", self.port), Handler)
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name=f"front-{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def serve_from(self, backend: tuple[str, int]) -> None:
        """Send requests to the server at ``backend`` from now on."""
        with self._lock:
            self.state = RoomState(True, backend, "")
            self._who.clear()

    def down(self, reason: str, coming_back: bool = True) -> None:
        """Answer every request with 503 and ``reason`` ("stopped with status -9 and is restarting")."""
        with self._lock:
            self.state = RoomState(False, None, reason, coming_back)

    # ------------------------------------------------------------------ who is asking
    def is_owner(self, headers: dict[str, str], backend: tuple[str, int]) -> bool:
        """Whether the credentials in ``headers`` (a session cookie or an API token) belong to the organisation's
        owner, as the server's ``whoami`` tells (its ``active_organization_meta`` names the owner's e-mail)."""
        key = headers.get("authorization") or headers.get("cookie") or ""
        if not key:
            return False
        now = time.monotonic()
        with self._lock:
            hit = self._who.get(key)
        if hit and now - hit[0] < WHO_TTL:
            return hit[1]
        owner = False
        conn = http.client.HTTPConnection(*backend, timeout=30)
        try:
            ask = {k: v for k, v in headers.items() if k in ("authorization", "cookie", "host")}
            conn.request("GET", "/api/current-user/whoami", headers=ask)
            r = conn.getresponse()
            body = r.read()
            if r.status == 200:
                me = json.loads(body)
                email = str(me.get("email") or "").lower()
                owner_email = str((me.get("active_organization_meta") or {}).get("email") or "").lower()
                owner = bool(email) and email == owner_email
        except (OSError, ValueError, http.client.HTTPException):
            owner = False
        finally:
            conn.close()
        with self._lock:
            if len(self._who) > 1000:
                self._who.clear()
            self._who[key] = (now, owner)
        return owner


def owner_only(method: str, path: str, query: str = "") -> bool:
    """Whether ``method path?query`` is one of :data:`OWNER_ONLY`."""
    if path.rstrip("/") == "/api/dm/actions" and parse_qs(query).get("id", [""])[0] in MEMBER_ACTIONS:
        return False
    for methods, pattern in OWNER_ONLY:
        if (methods == "*" or method in methods.split()) and pattern.fullmatch(path):
            return True
    return False


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    front: RoomFront
    server_version = "mirage-room"

    def log_message(self, format: str, *args: object) -> None:  # the server logs every request already
        pass

    def do_GET(self) -> None:
        self._forward()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = do_GET

    # ------------------------------------------------------------------ answers of the front itself
    def _wants_json(self, path: str) -> bool:
        return path.startswith("/api/") or "application/json" in (self.headers.get("Accept") or "")

    def _answer(self, status: int, message: str, path: str, retry: bool = False, as_json: bool = False) -> None:
        if as_json or self._wants_json(path):
            body = json.dumps({"detail": message, "status_code": status}).encode()
            ctype = "application/json"
        else:
            refresh = '<meta http-equiv="refresh" content="15">' if retry else ""
            body = (f"<!doctype html><html><head><meta charset=utf-8>{refresh}<title>Mirage review room</title></head>"
                    f"<body style='font:16px sans-serif;margin:3em'><h2>{html.escape(self.front.room)}</h2>"
                    f"<p>{html.escape(message)}</p></body></html>").encode()
            ctype = "text/html; charset=utf-8"
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        if retry:
            self.send_header("Retry-After", "15")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    # ------------------------------------------------------------------ forwarding
    def _request_headers(self) -> dict[str, str]:
        port = self.front.port
        out: dict[str, str] = {}
        for k, v in self.headers.items():
            lk = k.lower()
            if lk in HOP_BY_HOP or lk == "content-length":
                continue
            if lk == "cookie":
                v = self._inbound_cookies(v, port)
                if not v:
                    continue
                if "cookie" in out:
                    v = out["cookie"] + "; " + v
            out[lk] = v
        return out

    @staticmethod
    def _inbound_cookies(header: str, port: int) -> str:
        """The browser's cookies as the server knows them: this room's renamed ones under their own names; the
        bare names (another server's, or from before the front) and other rooms' are left out."""
        pairs = []
        for part in header.split(";"):
            name, sep, value = part.strip().partition("=")
            if not sep:
                continue
            base, _, suffix = name.rpartition("_")
            if name in RENAMED_COOKIES or (base in RENAMED_COOKIES and suffix != str(port)):
                continue
            if base in RENAMED_COOKIES:
                name = base
            pairs.append(f"{name}={value}")
        return "; ".join(pairs)

    def _outbound_cookie(self, value: str) -> str:
        name, sep, rest = value.partition("=")
        if sep and name.strip() in RENAMED_COOKIES:
            return f"{cookie_name(name.strip(), self.front.port)}={rest}"
        return value

    def _forward(self) -> None:
        front = self.front
        url = urlsplit(self.path)
        path = url.path
        body = self._read_body()
        state = front.state
        if path.startswith("/data/local-files") and local_files_escape(url.query):
            self._answer(404, "Not found.", path)
            return
        if not state.up or state.backend is None:
            later = "; try again in a minute." if state.coming_back else "."
            self._answer(503, f"{front.room}'s Label Studio server {state.reason}. What you submitted before is "
                         f"saved{later}", path, retry=state.coming_back)
            return
        headers = self._request_headers()
        if owner_only(self.command, path, url.query) and not front.is_owner(headers, state.backend):
            self._answer(403, f"Only the maintainer may do this in {front.room} (Mirage keeps reviewers from changing "
                         "the project, its storage, its tasks and the invite link).", path)
            return
        conn = http.client.HTTPConnection(*state.backend, timeout=front.upstream_timeout)
        try:
            try:
                conn.request(self.command, self.path, body=body if body or self.command in ("POST", "PUT", "PATCH")
                             else None, headers=headers)
                resp = conn.getresponse()
            except (ConnectionRefusedError, ConnectionResetError, socket.timeout, http.client.RemoteDisconnected):
                self._answer(503, f"{front.room}'s Label Studio server does not answer (it stopped, or is "
                             "restarting). What you submitted before is saved; try again in a minute.", path,
                             retry=True)
                return
            self._relay(resp, path)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        finally:
            conn.close()

    def _relay(self, resp: http.client.HTTPResponse, path: str) -> None:
        if resp.status >= 500:
            resp.read()
            as_json = "json" in (resp.getheader("Content-Type") or "")
            self._answer(resp.status, _neutral_5xx(resp.status, self.front.room), path, as_json=as_json)
            return
        self.send_response_only(resp.status, resp.reason)
        length = resp.getheader("Content-Length")
        no_body = self.command == "HEAD" or resp.status in (204, 304) or 100 <= resp.status < 200
        for k, v in resp.getheaders():
            lk = k.lower()
            if lk in HOP_BY_HOP or lk in ("content-length", "date", "server"):
                continue
            if lk == "set-cookie":
                v = self._outbound_cookie(v)
            self.send_header(k, v)
        self.send_header("Date", self.date_time_string())
        chunked = False
        if no_body:
            if length is not None:
                self.send_header("Content-Length", length)
        elif length is not None:
            self.send_header("Content-Length", length)
        else:
            chunked = True
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if no_body:
            return
        copy: Callable[[bytes], None] = self._write_chunk if chunked else self.wfile.write
        while True:
            block = resp.read(64 * 1024)
            if not block:
                break
            copy(block)
        if chunked:
            self.wfile.write(b"0\r\n\r\n")

    def _write_chunk(self, block: bytes) -> None:
        self.wfile.write(f"{len(block):x}\r\n".encode() + block + b"\r\n")
