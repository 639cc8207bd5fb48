"""A stand-in for the ``label-studio`` executable, for testing the rooms' supervision and fronts in seconds.

``fake_label_studio.py start --port N --data-dir D ...`` serves, on 127.0.0.1:N:

- ``/health``: 200; ``/pid``: its process id (also written to ``D/fake.pid``);
- ``/api/current-user/whoami``: the owner for ``Authorization: Token owner-token`` or the cookie
  ``sessionid=owner``, a member for any other credential, 401 without one;
- ``/login``: sets Django's ``sessionid`` and ``csrftoken`` cookies; ``/boom``: a 500 naming an absolute path;
- a file ``D/fail-to-start`` makes it exit with status 3 at once, ``D/slow-start`` makes it wait 3 s first;
- a vote (``POST /api/tasks/T/annotations/``, ``PATCH`` or ``DELETE /api/annotations/A/``): the annotation
  as the server answers it (id 41 for a new one, its task and result), the request echoed;
- ``/stream``: a body without a length (sent chunked through the front); anything else: the request echoed as JSON
  (method, path, cookie and body), so a test sees what the front forwarded.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OWNER = {"id": 1, "email": "owner@mirage.test", "active_organization_meta": {"email": "owner@mirage.test"}}
MEMBER = {"id": 2, "email": "member@mirage.test", "active_organization_meta": {"email": "owner@mirage.test"}}
OTHER = {"id": 3, "email": "other@mirage.test", "active_organization_meta": {"email": "owner@mirage.test"}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: list[tuple[str, str]] = []  # (method, target) of every request but whoami, for in-process tests

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _send(self, status: int, body: bytes, ctype: str = "application/json", extra: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n).decode() if n else ""
        path = self.path.split("?")[0]
        cookie = self.headers.get("Cookie") or ""
        auth = self.headers.get("Authorization") or ""
        if path != "/api/current-user/whoami":
            self.seen.append((self.command, self.path))
        if path == "/health":
            self._send(200, b'{"status": "UP"}')
        elif path == "/pid":
            self._send(200, str(os.getpid()).encode(), "text/plain")
        elif path == "/api/current-user/whoami":
            if auth == "Token owner-token" or "sessionid=owner" in cookie:
                self._send(200, json.dumps(OWNER).encode())
            elif "sessionid=other" in cookie:
                self._send(200, json.dumps(OTHER).encode())
            elif auth or "sessionid=" in cookie:
                self._send(200, json.dumps(MEMBER).encode())
            else:
                self._send(401, b'{"detail": "Authentication credentials were not provided."}')
        elif path == "/login":
            self.send_response(302)
            self.send_header("Location", "/projects/")
            self.send_header("Set-Cookie", "csrftoken=c1; Path=/; SameSite=Lax")
            self.send_header("Set-Cookie", "sessionid=member; HttpOnly; Path=/; SameSite=Lax")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif path == "/boom":
            self._send(500, b'{"detail": "The joined path (/etc/passwd) is outside (/srv/secret/files)"}')
        elif path == "/stream":
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"x" * 100_000)
            self.close_connection = True
        elif re.fullmatch(r"/api/tasks/\d+/annotations/?|/api/annotations/\d+/?", path) and self.command != "GET":
            # a vote: the annotation as Label Studio answers it, with the request echoed
            number = int(re.findall(r"\d+", path)[0])
            task, ann = (number, 41) if path.startswith("/api/tasks/") else (7, number)
            saved = {"id": ann, "task": task, "result": (json.loads(body) if body else {}).get("result"),
                     "method": self.command, "path": self.path, "body": body}
            self._send(201 if self.command == "POST" else 200, json.dumps(saved).encode())
        else:
            echo = {"method": self.command, "path": self.path, "cookie": cookie, "body": body,
                    "host": self.headers.get("Host")}
            self._send(200, json.dumps(echo).encode())

    do_POST = do_PATCH = do_PUT = do_DELETE = do_GET


def main(argv: list[str]) -> int:
    port = int(argv[argv.index("--port") + 1])
    data = argv[argv.index("--data-dir") + 1]
    os.makedirs(data, exist_ok=True)
    with open(os.path.join(data, "fake.pid"), "w") as fh:
        fh.write(str(os.getpid()))
    if os.path.exists(os.path.join(data, "fail-to-start")):
        print("fake: told to fail", flush=True)
        return 3
    if os.path.exists(os.path.join(data, "slow-start")):
        time.sleep(3)
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"fake Label Studio on {port}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
