"""Client errors become one clear line: server down, HTTP 500, timeout, wrong token, not Label Studio."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.conftest import have, require

require(have("requests"), "requests (the annotation extra)", "pip install -e '.[annotation]'")
require(have("label_studio_sdk"), "label-studio-sdk (the annotation extra)", "bash .ci/install-annotation.sh")

from annotation.client import LabelStudioClient  # noqa: E402
from annotation.errors import ServerError  # noqa: E402
from annotation.serve import free_port  # noqa: E402

GOOD = "good-token"


class Stub(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def _send(self, status, body, ctype="application/json"):
        data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except BrokenPipeError:  # the client gave up (the timeout test)
            pass

    def do_GET(self):
        if self.headers.get("Authorization") != f"Token {GOOD}":
            return self._send(401, {"detail": "Invalid token."})
        if self.path.startswith("/api/current-user/whoami"):
            return self._send(200, {"id": 1, "email": "admin@x"})
        if self.path.startswith("/api/projects/"):
            return self._send(500, "<html><body>Server Error (500)\n\ntraceback...</body></html>", "text/html")
        if self.path.startswith("/api/users/"):
            time.sleep(2)
            return self._send(200, [])
        if self.path.startswith("/api/tasks/"):
            return self._send(200, "<html>not an API</html>", "text/html")
        return self._send(404, {"detail": "Not found."})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        return self._send(400, {"validation_errors": {"label_config": ["bad\nconfig"]}})


@pytest.fixture(scope="module")
def stub_url():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Stub)
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def message(exc_info) -> str:
    msg = str(exc_info.value)
    assert "\n" not in msg
    return msg


def test_server_down():
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(ServerError) as e:
        LabelStudioClient(url, GOOD).whoami()
    assert message(e).startswith(f"cannot reach Label Studio at {url}")
    assert e.value.status is None


def test_wrong_token(stub_url):
    with pytest.raises(ServerError) as e:
        LabelStudioClient(stub_url, "wrong").whoami()
    assert "rejected the request GET /api/current-user/whoami (HTTP 401)" in message(e)
    assert "LABEL_STUDIO_API_KEY" in message(e) and e.value.status == 401


def test_http_500(stub_url):
    with pytest.raises(ServerError) as e:
        LabelStudioClient(stub_url, GOOD).projects()
    assert message(e) == f"Label Studio at {stub_url} failed on GET /api/projects/ with HTTP 500; see the server log"


def test_timeout(stub_url):
    with pytest.raises(ServerError) as e:
        LabelStudioClient(stub_url, GOOD, timeout=0.5).users()
    assert message(e) == f"Label Studio did not answer within 0.5 s (GET {stub_url}/api/users/)"


def test_not_label_studio(stub_url):
    with pytest.raises(ServerError) as e:
        list(LabelStudioClient(stub_url, GOOD).iter_tasks(1))
    assert "is not JSON" in message(e) and "really Label Studio" in message(e)


def test_validation_error_detail_is_one_line(stub_url):
    with pytest.raises(ServerError) as e:
        LabelStudioClient(stub_url, GOOD).create_project({"title": "x"})
    assert "refused POST /api/projects/ (HTTP 400)" in message(e) and "bad" in message(e)


def test_bad_url():
    with pytest.raises(ServerError, match="must start with http"):
        LabelStudioClient("localhost:8080", GOOD)
