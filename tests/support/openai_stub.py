"""A loopback OpenAI-compatible ``/v1/chat/completions`` server for tests of the LLM client.

Real HTTP on 127.0.0.1 (a free port), one thread per request, so the real ``openai`` package is exercised end
to end. The stub is scriptable (statuses to fail with, per-request delays, a responder) and observant (every
request body and Authorization header, attempt count, the most requests it ever had in flight).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


class StubHTTPError(Exception):
    """Raised by a responder: the stub answers this HTTP status instead (e.g. to fail one chosen request)."""

    def __init__(self, status: int, message: str = "scripted failure") -> None:
        super().__init__(message)
        self.status = status


def echo_responder(body: dict[str, Any]) -> str:
    """Default answer: JSON naming the last user message when JSON was asked for, else plain text."""
    last = body["messages"][-1]["content"]
    if body.get("response_format"):
        return json.dumps({"answer": last})
    return f"echo: {last}"


class StubOpenAI:
    """Use as a context manager; ``base_url`` is what the client should be given."""

    def __init__(
        self,
        responder: Callable[[dict[str, Any]], str] = echo_responder,
        fail_with: list[int] | None = None,
        delays: list[float] | None = None,
        delay: float = 0.0,
        json_schema_supported: bool = True,
        model: str = "stub-model",
        retry_after: str = "0",
    ) -> None:
        self.responder = responder
        self.fail_with = list(fail_with or [])
        """HTTP statuses returned by the first requests, one each, before answering normally."""
        self.delays = list(delays or [])
        """Seconds to stall the first requests, one each (then ``delay``)."""
        self.delay = delay
        self.json_schema_supported = json_schema_supported
        self.model = model
        self.retry_after = retry_after
        """The ``Retry-After`` header of a scripted 429."""
        self.bodies: list[dict[str, Any]] = []
        self.auth_headers: list[str | None] = []
        self.attempts = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "start the stub first"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> "StubOpenAI":
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                stub._handle(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    # -- request handling --------------------------------------------------------------------------------------
    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        body = json.loads(h.rfile.read(length) or b"{}")
        with self._lock:
            self.attempts += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.bodies.append(body)
            self.auth_headers.append(h.headers.get("Authorization"))
            status = self.fail_with.pop(0) if self.fail_with else None
            delay = self.delays.pop(0) if self.delays else self.delay
        try:
            if delay:
                time.sleep(delay)
            if h.path.rstrip("/") != "/v1/chat/completions":
                return self._send(h, 404, {"error": {"message": f"no route {h.path}", "type": "not_found"}})
            if status is not None:
                headers = {"Retry-After": self.retry_after} if status == 429 else {}
                return self._send(h, status, {"error": {"message": f"scripted {status}", "type": "stub"}}, headers)
            fmt = (body.get("response_format") or {}).get("type")
            if fmt == "json_schema" and not self.json_schema_supported:
                return self._send(h, 400, {"error": {"message": "response_format json_schema is not supported",
                                                     "type": "invalid_request_error"}})
            try:
                content = self.responder(body)
            except StubHTTPError as e:
                return self._send(h, e.status, {"error": {"message": str(e), "type": "stub"}})
            prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in body["messages"])
            completion_tokens = len(content.split())
            self._send(h, 200, {
                "id": f"chatcmpl-{self.attempts}", "object": "chat.completion", "created": 0,
                "model": body.get("model", self.model),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                             "finish_reason": "stop"}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                          "total_tokens": prompt_tokens + completion_tokens},
            })
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test): nothing to answer
        finally:
            with self._lock:
                self.in_flight -= 1

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
              ) -> None:
        data = json.dumps(payload).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.end_headers()
        h.wfile.write(data)


# ------------------------------------------------------------------------------------------------ vision answers

VISION_PATTERNS = ("truth", "yes", "A", "truth_except", "verbose", "text", "mumble")
"""How :class:`VisionAnswers` answers: ``truth`` the right letter / "Yes." / "No."; ``yes`` always "yes";
``A`` always "A"; ``truth_except`` right except under one pressure (then a wrong letter: the next one, cyclic,
or the other of yes/no); ``verbose`` reasoning first, then "Therefore, the correct answer is (X)." or "So the
answer is yes."; ``text`` the right option's text instead of its letter; ``mumble`` no answer at all."""


class VisionAnswers:
    """A responder for :class:`StubOpenAI` that answers Mirage items the way a chosen stand-in model would.

    It knows the truth by looking the request up: the sha256 of every image it was sent (data URLs decoded) and
    the question text must match one item. ``items`` are read by the test itself (a build's ``items.jsonl``,
    images resolved against ``image_root``), not by the code under test. ``asked`` counts requests per item id.
    """

    def __init__(self, items: list[Any], image_root: Any, pattern: str = "truth", pressure: str | None = None,
                 fail_once: tuple[str, ...] = ()) -> None:
        import hashlib
        from pathlib import Path

        if pattern not in VISION_PATTERNS:
            raise ValueError(f"unknown pattern {pattern!r}; known: {', '.join(VISION_PATTERNS)}")
        self.pattern, self.pressure = pattern, pressure
        self.by_images: dict[tuple[str, ...], list[Any]] = {}
        for item in items:
            digests = tuple(hashlib.sha256((Path(image_root) / p).read_bytes()).hexdigest() for p in item.images)
            self.by_images.setdefault(digests, []).append(item)
        self.asked: dict[str, int] = {}
        self.fail_once = set(fail_once)
        """Item ids whose first request gets HTTP 503 (an endpoint falling over mid-run)."""
        self._lock = threading.Lock()

    def item_for(self, body: dict[str, Any]) -> Any:
        import base64
        import hashlib

        content = body["messages"][-1]["content"]
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        digests, texts = [], []
        for part in parts:
            if part.get("type") == "image_url":
                data = part["image_url"]["url"].split(";base64,", 1)[1]
                digests.append(hashlib.sha256(base64.b64decode(data)).hexdigest())
            elif part.get("type") == "text":
                texts.append(part["text"])
        text = "\n".join(texts)
        matches = [it for it in self.by_images.get(tuple(digests), [])
                   if it.question in text and (it.context or "") in text
                   and all(f"{'ABCDEFGH'[i]}. {o}" in text for i, o in enumerate(it.options))]
        if len(matches) != 1:
            raise LookupError(f"the stub cannot tell which item was asked ({len(matches)} candidates)")
        return matches[0]

    def __call__(self, body: dict[str, Any]) -> str:
        item = self.item_for(body)
        with self._lock:
            self.asked[item.id] = self.asked.get(item.id, 0) + 1
            if item.id in self.fail_once:
                self.fail_once.discard(item.id)
                raise StubHTTPError(503, "the stub fell over")
        return self.answer(item)

    def answer(self, item: Any) -> str:
        yes_no = item.answer.lower() in ("yes", "no")
        truth = item.answer.lower() if yes_no else item.answer
        if self.pattern == "yes":
            return "yes"
        if self.pattern == "A":
            return "A"
        if self.pattern == "mumble":
            return "These are some shapes on a plain background."
        if self.pattern == "truth_except" and item.pressure == self.pressure:
            if yes_no:
                truth = "no" if truth == "yes" else "yes"
            else:
                letters = "ABCDEFGH"[: len(item.options)]
                truth = letters[(letters.index(truth) + 1) % len(letters)]
        if self.pattern == "verbose":
            if yes_no:
                return f"Let me look at the image carefully. I check every region for the object. So the answer is {truth}."
            return ("Let me look at each image in turn. Image 1 has several shapes; the others differ. "
                    f"Comparing them with the options, the correct answer is ({truth}).")
        if self.pattern == "text" and not yes_no:
            return item.options["ABCDEFGH".index(truth)]
        return {"yes": "Yes.", "no": "No."}.get(truth, truth)
