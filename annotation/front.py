"""The door of a room: a reverse proxy on the room's public port, in front of its Label Studio server.

``serve`` starts Label Studio on an internal port of 127.0.0.1 and this front on the port reviewers use. It adds
what Label Studio 1.23.2 cannot be configured to do:

- **deny by default.** Each request is read once, the way the server will route it, and what could be read two
  ways is refused (:func:`annotation.routes.canonical`); then the caller's role (maintainer, member, anonymous, from
  the server's ``whoami`` for the caller's session or token) must allow it (:func:`annotation.routes.allowed`).
  Anything else is answered 403 with one line. The front forwards its own reading of the request target, so what
  it decided on is what the server serves;
- **votes nobody can forge.** ``completed_by`` in a vote's body is refused (the server would credit the vote to that
  user); each vote the server accepts is appended to the room's ledger (:mod:`annotation.ledger`) with the voter
  from the session; a member may change or delete only the annotations the ledger says they created;
- **bounded bodies.** A body may be :data:`BODY_CAP` bytes (:data:`ANONYMOUS_CAP` without a session,
  :data:`UPLOAD_CAP` on the maintainer's import routes);
  a larger ``Content-Length`` is refused before a byte of the body is read, and a chunked body is counted as it
  arrives. A body must arrive whole within ``body_timeout`` seconds before the server sees the request (so a slow
  client holds none of Label Studio's few worker threads); only the maintainer's imports stream to the server;
- **a room that is down says why.** While its server starts, restarts after a crash, or was given up, the front
  answers 503 and one sentence (JSON ``{"detail": ...}`` for the API, which Label Studio's web app shows in its
  "Server error" dialog; a page that reloads itself for a browser);
- **one cookie scope per room.** Browsers keep cookies per host name, not per port, so rooms on one host logged
  each other out. The front renames the session and CSRF cookies to ``<name>_<port>`` and gives them back to the
  server under their own names;
- **no paths in errors.** A ``..`` in a local-files request is answered 404 (the server answers 500 with both
  absolute paths), and the body of any 5xx answer is replaced by a sentence pointing to the room's log.

Why aiohttp (server and client): the front used to be ``http.server``, whose documentation says it is not for
production: one thread per connection, whole bodies read into memory, no limits on lines, headers or idle
connections. aiohttp is maintained, asynchronous (a slow or huge client holds one coroutine and one socket, never a
thread of the supervisor or another room's capacity), streams bodies both ways, caps request lines and headers in
its parser, and one package gives both the server and the pooled client (the ASGI alternative needs uvicorn,
starlette and httpx). Each front runs its own event loop in a thread of ``serve``, so one room's load never
blocks another's. ``benchmarks/bench_front.py`` measures it.
"""

from __future__ import annotations

import asyncio
import html
import json
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator, Mapping

from aiohttp import ClientError, ClientSession, ClientTimeout, DummyCookieJar, TCPConnector, web
from multidict import CIMultiDict
from yarl import URL

from annotation.ledger import LEDGER_ROUTE, Ledger
from annotation.routes import (
    VOTE_CHANGE, VOTE_CREATE, Refused, Role, Target, allowed, canonical, local_files_escape,
)

HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "trailers",
    "transfer-encoding", "upgrade", "content-length", "expect",
})
RENAMED_COOKIES = ("sessionid", "csrftoken")
"""Label Studio's (Django's) session and CSRF cookies: the two a second room on the same host would overwrite."""

BODY_CAP = 1 << 20
"""Bytes a request body may have: a vote, a view, a login form are a few KiB."""
ANONYMOUS_CAP = 64 << 10
"""Bytes a caller without a session may send (the login and signup forms): bounds what unknown clients hold."""
UPLOAD_CAP = 256 << 20
"""Bytes the maintainer may send to the import routes (``push`` imports every task of a build in one request)."""
UPLOAD_ROUTES = ("/api/projects/", "/import", "/reimport")

WHO_TTL = 60.0
"""Seconds a credential's owner is remembered (a member cannot become the owner in Label Studio's community
edition; the cache only spares the server one question per request)."""
MAX_UPSTREAM = 64
"""Requests a front sends to its server at once; more wait their turn (Label Studio serves a handful at a time)."""


@dataclass
class RoomState:
    """What the front says about its room: ``up`` with the server's address, or why it is not."""

    up: bool = False
    backend: tuple[str, int] | None = None
    reason: str = "is starting"
    coming_back: bool = True  # False: given up, nobody should wait for it


@dataclass(frozen=True)
class Caller:
    """Who makes a request, as the server's ``whoami`` says: the role, and the user's id and e-mail."""

    role: Role
    user: int = 0
    email: str = ""


ANONYMOUS = Caller("anonymous")


def cookie_name(name: str, port: int) -> str:
    """The name a room's cookie gets in the browser: ``sessionid_8081``."""
    return f"{name}_{port}"


def _neutral_5xx(status: int, room: str) -> str:
    return (f"Label Studio failed on this request (HTTP {status}); the maintainer finds the cause in {room}'s "
            "server log.")


def inbound_cookies(header: str, port: int) -> str:
    """The browser's cookies as the server knows them: this room's renamed ones under their own names; the bare
    names (another server's, or from before the front) and other rooms' are left out."""
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


class _TooLarge(Exception):
    pass


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("a key given twice")
    return dict(pairs)


def vote_body_problem(body: bytes, content_type: str) -> str | None:
    """Why a vote's body is refused (``None``: it is not): it must be one JSON object, each key once, without
    ``completed_by`` (the server would credit the vote to that user instead of the one who sends it)."""
    if not body:
        return None
    if not content_type.split(";")[0].strip().lower() == "application/json":
        return "a vote must be sent as JSON"
    try:
        data = json.loads(body, object_pairs_hook=_no_duplicate_keys)
    except ValueError:
        return "a vote must be one JSON object, each key once"
    if not isinstance(data, dict):
        return "a vote must be one JSON object"
    if "completed_by" in data:
        return "completed_by is set by the room, not by the request"
    return None


class RoomFront:
    """The reverse proxy of one room; ``start()`` binds the public port at once, ``state`` says where to send.

    ``ledger``: the room's vote ledger file (:mod:`annotation.ledger`); ``None`` records no votes, and then no
    member may change or delete an annotation.
    """

    def __init__(self, host: str, port: int, room: str = "this room", upstream_timeout: float = 900.0,
                 ledger: Path | None = None, body_timeout: float = 60.0) -> None:
        self.host, self.port, self.room = host, port, room
        self.state = RoomState()
        self.upstream_timeout = upstream_timeout
        self.body_timeout = body_timeout
        self.ledger = Ledger(ledger) if ledger is not None else None
        self._who: dict[tuple[str, str], tuple[float, Caller]] = {}
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.ServerRunner | None = None
        self._client: ClientSession | None = None

    # ------------------------------------------------------------------ life
    def start(self) -> "RoomFront":
        """Listen on the public port (raises ``OSError`` when it cannot) and serve from a thread of its own."""
        ready: Future[None] = Future()
        loop = asyncio.new_event_loop()
        self._loop = loop

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._open())
            except BaseException as exc:  # the bind failed: start() raises it
                ready.set_exception(exc)
                loop.close()
                return
            ready.set_result(None)
            loop.run_forever()
            loop.run_until_complete(self._close())
            loop.close()

        self._thread = threading.Thread(target=run, name=f"front-{self.port}", daemon=True)
        self._thread.start()
        ready.result()
        return self

    async def _open(self) -> None:
        self._client = ClientSession(
            connector=TCPConnector(limit=MAX_UPSTREAM, force_close=False),
            timeout=ClientTimeout(total=None, connect=30, sock_read=self.upstream_timeout),
            auto_decompress=False, cookie_jar=DummyCookieJar(),  # each caller's cookies pass; none are kept
        )
        server = web.Server(self._handle, keepalive_timeout=75, auto_decompress=False, max_line_size=8190,
                            max_field_size=8190, max_headers=100, access_log=None)
        self._runner = web.ServerRunner(server, handle_signals=False, shutdown_timeout=1.0)
        await self._runner.setup()
        try:
            await web.TCPSite(self._runner, self.host or "0.0.0.0", self.port, reuse_address=True).start()
        except OSError:
            await self._close()
            raise

    async def _close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._client is not None:
            await self._client.close()
            self._client = None

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None and self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(30)
        self._loop = None

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
    async def caller(self, headers: Mapping[str, str], backend: tuple[str, int]) -> Caller:
        """Who holds the credentials in ``headers`` (the server-side cookie header or an API token), as the server's
        ``whoami`` tells: the owner of the organisation (its ``active_organization_meta`` names the owner's e-mail)
        is the maintainer, any other user a member, no valid credential anonymous. A server that does not answer
        raises the client's error."""
        cookies = dict(p.strip().partition("=")[::2] for p in (headers.get("cookie") or "").split(";") if "=" in p)
        key = (headers.get("authorization") or "", cookies.get("sessionid", ""))
        if not any(key):
            return ANONYMOUS
        now = time.monotonic()
        with self._lock:
            hit = self._who.get(key)
        if hit and now - hit[0] < WHO_TTL:
            return hit[1]
        who = ANONYMOUS
        ask = {k: v for k, v in headers.items() if k in ("authorization", "cookie", "host")}
        assert self._client is not None
        try:
            async with self._client.get(f"http://{backend[0]}:{backend[1]}/api/current-user/whoami", headers=ask,
                                        allow_redirects=False, timeout=ClientTimeout(total=30)) as r:
                if r.status == 200:
                    me = json.loads(await r.read())
                    email = str(me.get("email") or "").lower()
                    owner = str((me.get("active_organization_meta") or {}).get("email") or "").lower()
                    who = Caller("maintainer" if email and email == owner else "member", int(me["id"]), email)
        except (ValueError, KeyError, TypeError):
            who = ANONYMOUS
        with self._lock:
            if len(self._who) > 10000:
                self._who.clear()
            self._who[key] = (now, who)
        return who

    # ------------------------------------------------------------------ answers of the front itself
    def _answer(self, request: web.BaseRequest, status: int, message: str, retry: bool = False,
                as_json: bool | None = None) -> web.Response:
        path = request.raw_path
        if as_json is None:
            as_json = path.lower().lstrip("/").startswith(("api", "mirage")) or "application/json" in request.headers.get("Accept", "")
        if as_json:
            body = json.dumps({"detail": message, "status_code": status}).encode()
            ctype = "application/json"
        else:
            refresh = '<meta http-equiv="refresh" content="15">' if retry else ""
            body = (f"<!doctype html><html><head><meta charset=utf-8>{refresh}<title>Mirage review room</title></head>"
                    f"<body style='font:16px sans-serif;margin:3em'><h2>{html.escape(self.room)}</h2>"
                    f"<p>{html.escape(message)}</p></body></html>").encode()
            ctype = "text/html; charset=utf-8"
        headers = {"Content-Type": ctype, "Cache-Control": "no-store", "X-Mirage-Front": str(status)}
        if retry:
            headers["Retry-After"] = "15"
        if status in (400, 408, 413):
            headers["Connection"] = "close"  # what is left of the body is not read
        return web.Response(status=status, body=body, headers=headers)

    def _refuse(self, request: web.BaseRequest, why: str) -> web.Response:
        return self._answer(request, 403, f"Refused by {self.room}'s front: {why}.")

    # ------------------------------------------------------------------ the request
    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        try:
            target = canonical(request.method, request.raw_path)
        except Refused as exc:
            return self._refuse(request, str(exc))
        if request.headers.get("Content-Encoding", "identity").lower() != "identity":
            return self._refuse(request, "a request body must not be compressed")
        if target.path.startswith("/data/local-files") and local_files_escape(target.query):
            return self._answer(request, 404, "Not found.")
        state = self.state
        if not state.up or state.backend is None:
            later = "; try again in a minute." if state.coming_back else "."
            return self._answer(request, 503, f"{self.room}'s Label Studio server {state.reason}. What you submitted "
                                f"before is saved{later}", retry=state.coming_back)
        headers = self._request_headers(request)
        try:
            who = await self.caller(headers, state.backend)
        except (ClientError, ConnectionError, asyncio.TimeoutError):
            return self._unreachable(request)
        if target.path == LEDGER_ROUTE and target.method == "GET":
            if who.role != "maintainer":
                return self._refuse(request, "only the maintainer reads the vote ledger")
            data = self.ledger.read() if self.ledger is not None else b""
            return web.Response(body=data, content_type="application/x-ndjson",
                                status=200 if self.ledger is not None else 404)
        if not allowed(who.role, target):
            what = "sign in first" if who.role == "anonymous" else "a reviewer's session may not make this request"
            return self._refuse(request, f"{what} ({target.method} {target.path[:80]})")
        cap = (UPLOAD_CAP if who.role == "maintainer" and _is_upload(target.path)
               else ANONYMOUS_CAP if who.role == "anonymous" else BODY_CAP)
        length = request.content_length
        if length is not None and length > cap:
            return self._answer(request, 413, f"Refused by {self.room}'s front: a body of {length} bytes is over the "
                                f"{cap} bytes this route accepts.")
        create, change = VOTE_CREATE.fullmatch(target.path), VOTE_CHANGE.fullmatch(target.path)
        vote = (create and target.method == "POST") or (change and target.method in ("PATCH", "PUT", "DELETE"))
        try:
            if vote:
                return await self._vote(request, target, headers, who, cap, state.backend)
            if cap == UPLOAD_CAP and length is not None:  # the maintainer's import: streamed to the server
                headers["content-length"] = str(length)
                return await self._forward(request, target, headers, self._stream_body(request, cap), state.backend)
            # anything else whole before the server sees it: a slow client holds no server thread
            return await self._forward(request, target, headers, await self._read_body(request, cap), state.backend)
        except _TooLarge:
            return self._answer(request, 413, f"Refused by {self.room}'s front: the body is over the {cap} bytes "
                                "this route accepts.")
        except asyncio.TimeoutError:
            return self._answer(request, 408, f"{self.room}'s front: the request body did not arrive in time.")

    def _request_headers(self, request: web.BaseRequest) -> CIMultiDict[str]:
        out: CIMultiDict[str] = CIMultiDict()
        cookies = []
        for k, v in request.headers.items():
            lk = k.lower()
            if lk in HOP_BY_HOP:
                continue
            if lk == "cookie":
                cookies.append(inbound_cookies(v, self.port))
                continue
            out.add(lk, v)
        cookie = "; ".join(c for c in cookies if c)
        if cookie:
            out["cookie"] = cookie
        return out

    async def _stream_body(self, request: web.BaseRequest, cap: int) -> AsyncIterator[bytes]:
        """The body in blocks, counted (over ``cap``: :class:`_TooLarge`) and timed (``body_timeout`` in all)."""
        deadline = time.monotonic() + self.body_timeout
        seen = 0
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise asyncio.TimeoutError
            block = await asyncio.wait_for(request.content.readany(), left)
            if not block:
                return
            seen += len(block)
            if seen > cap:
                raise _TooLarge
            yield block

    async def _read_body(self, request: web.BaseRequest, cap: int) -> bytes:
        return b"".join([block async for block in self._stream_body(request, cap)])

    async def _vote(self, request: web.BaseRequest, target: Target, headers: CIMultiDict[str], who: Caller,
                    cap: int, backend: tuple[str, int]) -> web.StreamResponse:
        """A vote created, changed or deleted: checked, forwarded, and recorded in the ledger when the server took
        it."""
        body = await self._read_body(request, cap)
        problem = vote_body_problem(body, request.headers.get("Content-Type", ""))
        if problem:
            return self._refuse(request, problem)
        created = VOTE_CREATE.fullmatch(target.path)
        changed = VOTE_CHANGE.fullmatch(target.path)
        annotation = int(changed.group(1)) if changed else 0
        if changed and who.role != "maintainer":
            holder = self.ledger.owner(annotation) if self.ledger is not None else None
            if holder != who.user:
                return self._refuse(request, "this annotation is another reviewer's vote (or was not submitted "
                                    "through this room)")
        assert self._client is not None
        try:
            async with self._client.request(target.method, self._upstream(backend, target), headers=headers,
                                            data=body if body or target.method != "DELETE" else None,
                                            allow_redirects=False) as up:
                data = await up.read()
                if 200 <= up.status < 300 and self.ledger is not None:
                    await asyncio.to_thread(self._record, target, who, created, annotation, data)
                return self._relay_whole(request, up, data)
        except (ClientError, ConnectionError, asyncio.TimeoutError):
            return self._unreachable(request)

    def _record(self, target: Target, who: Caller, created: Any, annotation: int, data: bytes) -> None:
        assert self.ledger is not None
        if target.method == "DELETE":
            self.ledger.append("delete", annotation, self.ledger.task(annotation), who.user, who.email)
            return
        try:
            saved = json.loads(data)
            aid, task, result = int(saved["id"]), int(saved.get("task") or 0), saved.get("result")
        except (ValueError, KeyError, TypeError):
            return  # nothing recorded: pull will not vouch for it
        if created:
            task = task or int(created.group(1))
        self.ledger.append("create" if created else "update", aid, task, who.user, who.email, result)

    @staticmethod
    def _upstream(backend: tuple[str, int], target: Target) -> URL:
        return URL(f"http://{backend[0]}:{backend[1]}{target.forward}", encoded=True)

    def _unreachable(self, request: web.BaseRequest) -> web.Response:
        return self._answer(request, 503, f"{self.room}'s Label Studio server does not answer (it stopped, or is "
                            "restarting). What you submitted before is saved; try again in a minute.", retry=True)

    async def _forward(self, request: web.BaseRequest, target: Target, headers: CIMultiDict[str],
                       body: AsyncIterator[bytes] | bytes, backend: tuple[str, int]) -> web.StreamResponse:
        assert self._client is not None
        has_body = request.body_exists and (bool(body) if isinstance(body, bytes) else True)
        try:
            async with self._client.request(target.method, self._upstream(backend, target), headers=headers,
                                            data=body if has_body else None, allow_redirects=False) as up:
                if up.status >= 500:
                    await up.read()
                    return self._answer(request, up.status, _neutral_5xx(up.status, self.room),
                                        as_json="json" in up.headers.get("Content-Type", ""))
                out = web.StreamResponse(status=up.status, reason=up.reason)
                self._copy_headers(up.headers, out)
                length = up.headers.get("Content-Length")
                if length is not None and length.isdigit():
                    out.content_length = int(length)
                await out.prepare(request)
                if request.method != "HEAD":
                    async for block in up.content.iter_chunked(64 * 1024):
                        await out.write(block)
                await out.write_eof()
                return out
        except (_TooLarge, asyncio.TimeoutError):
            raise
        except (ClientError, ConnectionError) as exc:
            if isinstance(getattr(exc, "__cause__", None), (_TooLarge, asyncio.TimeoutError)):
                raise exc.__cause__  # type: ignore[misc]
            return self._unreachable(request)

    def _relay_whole(self, request: web.BaseRequest, up: Any, data: bytes) -> web.Response:
        if up.status >= 500:
            return self._answer(request, up.status, _neutral_5xx(up.status, self.room),
                                as_json="json" in up.headers.get("Content-Type", ""))
        out = web.Response(status=up.status, reason=up.reason, body=data if up.status not in (204, 304) else None)
        self._copy_headers(up.headers, out)
        return out

    def _copy_headers(self, upstream: Mapping[str, str], out: web.StreamResponse) -> None:
        for k, v in upstream.items():  # a multidict: every Set-Cookie
            lk = k.lower()
            if lk in HOP_BY_HOP or lk in ("date", "server"):
                continue
            if lk == "set-cookie":
                name, sep, rest = v.partition("=")
                if sep and name.strip() in RENAMED_COOKIES:
                    v = f"{cookie_name(name.strip(), self.port)}={rest}"
            out.headers.add(k, v)


def _is_upload(path: str) -> bool:
    return path.startswith(UPLOAD_ROUTES[0]) and path.rstrip("/").endswith(UPLOAD_ROUTES[1:])


