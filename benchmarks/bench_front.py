"""Load on a room's front (annotation/front.py): requests per second, latency percentiles and the front's memory.

    python benchmarks/bench_front.py [--sessions 200] [--seconds 60]

Three processes on loopback, so each is measured alone: a stand-in Label Studio (aiohttp, answers ``whoami`` for
every session and echoes everything else at once: the front is timed, not Django), the front (a ``RoomFront`` with
its vote ledger, as ``serve`` starts it) and this driver, which runs ``--sessions`` reviewer sessions, each its own
cookie and connection, each making requests one after the other for ``--seconds``:

- 70 % reads the labeling stream makes (``GET /api/projects/1/``, ``/api/tasks/N/``), forwarded;
- 10 % votes (``POST /api/tasks/N/annotations/``), checked, forwarded and appended to the ledger (fsync);
- 20 % refused by the front (owner-only routes in encoded spellings, repeated keys, ``completed_by``).

Then, with the load over, one client claims a 400 MB body and another sends a 4 MB one to a member route: both are
refused (413), and the front's resident memory before and after is printed. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise RuntimeError(f"nothing listens on {port}")


def run_backend(port: int) -> None:
    """The stand-in server: ``whoami`` (the owner for ``Token owner``, member N for ``sessionid=sN``), votes
    answered as Label Studio answers them, anything else echoed."""
    from aiohttp import web

    async def handle(request: web.BaseRequest) -> web.Response:
        body = await request.read()
        if request.path == "/api/current-user/whoami":
            cookie = request.headers.get("Cookie", "")
            sid = cookie.split("sessionid=")[-1].split(";")[0] if "sessionid=" in cookie else ""
            if not sid:
                return web.json_response({"detail": "no"}, status=401)
            return web.json_response({"id": 100 + int(sid[1:]), "email": f"{sid}@bench",
                                      "active_organization_meta": {"email": "owner@bench"}})
        if request.method == "POST" and request.path.endswith("/annotations/"):
            task = int(request.path.split("/")[3])
            return web.json_response({"id": random.randrange(1 << 30), "task": task,
                                      "result": json.loads(body).get("result")}, status=201)
        return web.json_response({"path": request.path_qs, "n": len(body)})

    async def main() -> None:
        runner = web.ServerRunner(web.Server(handle), access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        await asyncio.Event().wait()

    asyncio.run(main())


def run_front(port: int, backend: int, ledger: Path) -> None:
    from annotation.front import RoomFront

    front = RoomFront("127.0.0.1", port, room="Room 1", ledger=ledger).start()
    front.serve_from(("127.0.0.1", backend))
    while True:
        time.sleep(3600)


def rss_mb(pid: int) -> tuple[float, float]:
    """Resident memory now and at its peak, in MB."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


REFUSED = ["/api/%73torages/localfiles?project=1", "/api/%69nvite", "/api//webhooks/",
           "/api/dm/actions?id=next_task&id=delete_tasks&project=1", "/api/organizations/1"]


async def session(port: int, k: int, until: float, latencies: list[float], statuses: dict[int, int]) -> None:
    import aiohttp

    rng = random.Random(k)
    headers = {"Cookie": f"sessionid_{port}=s{k}", "Content-Type": "application/json"}
    async with aiohttp.ClientSession(f"http://127.0.0.1:{port}", headers=headers,
                                     connector=aiohttp.TCPConnector(limit=1),
                                     cookie_jar=aiohttp.DummyCookieJar()) as s:
        while time.monotonic() < until:
            r = rng.random()
            if r < 0.7:
                method, path, body = "GET", rng.choice(["/api/projects/1/", f"/api/tasks/{rng.randrange(500)}/"]), None
            elif r < 0.8:
                method, path = "POST", f"/api/tasks/{rng.randrange(500)}/annotations/"
                body = json.dumps({"result": [{"from_name": "verdict", "value": {"choices": ["accept"]}}]})
            elif r < 0.9:
                method, path, body = "POST", f"/api/tasks/{rng.randrange(500)}/annotations/", '{"completed_by": 1}'
            else:
                method, path, body = "GET", rng.choice(REFUSED), None
            started = time.perf_counter()
            async with s.request(method, aiohttp.client.URL(path, encoded=True), data=body) as resp:
                await resp.read()
            latencies.append(time.perf_counter() - started)
            statuses[resp.status] = statuses.get(resp.status, 0) + 1


async def drive(port: int, sessions: int, seconds: float) -> tuple[list[float], dict[int, int], float]:
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    started = time.monotonic()
    await asyncio.gather(*(session(port, k, started + seconds, latencies, statuses) for k in range(sessions)))
    return latencies, statuses, time.monotonic() - started


def huge(port: int) -> list[int]:
    """A claimed 400 MB body and a real 4 MB one, each on its own connection: the statuses."""
    from tests.annotation.rawhttp import send

    cookie = {"Cookie": f"sessionid_{port}=s1"}
    return [send(port, "POST", "/api/dm/views/", cookie, length=400 << 20).status,
            send(port, "POST", "/api/dm/views/", cookie, b"x" * (4 << 20)).status]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=200, help="concurrent reviewer sessions (default 200)")
    ap.add_argument("--seconds", type=float, default=60.0, help="how long the load lasts (default 60)")
    ap.add_argument("--role", choices=("backend", "front"), help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--backend", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--ledger", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.role == "backend":
        run_backend(args.port)
        return 0
    if args.role == "front":
        run_front(args.port, args.backend, args.ledger)
        return 0
    backend, port = _free_port(), _free_port()
    env = dict(os.environ, PYTHONPATH=str(REPO))
    with tempfile.TemporaryDirectory() as tmp:
        me = [sys.executable, __file__]
        procs = [subprocess.Popen(me + ["--role", "backend", "--port", str(backend)], env=env),
                 subprocess.Popen(me + ["--role", "front", "--port", str(port), "--backend", str(backend),
                                        "--ledger", str(Path(tmp) / "votes.jsonl")], env=env)]
        try:
            _wait_port(backend)
            _wait_port(port)
            front = procs[1].pid
            idle = rss_mb(front)[0]
            latencies, statuses, wall = asyncio.run(drive(port, args.sessions, args.seconds))
            loaded, peak = rss_mb(front)
            refused = huge(port)
            after, peak2 = rss_mb(front)
            votes = sum(1 for _ in open(Path(tmp) / "votes.jsonl"))
        finally:
            for p in procs:
                p.terminate()
                p.wait(10)
    latencies.sort()
    pct = lambda q: 1000 * latencies[min(len(latencies) - 1, int(q * len(latencies)))]  # noqa: E731
    print(f"{args.sessions} sessions for {wall:.0f} s: {len(latencies)} requests, {len(latencies) / wall:.0f} per second")
    print(f"latency ms: p50 {pct(0.5):.1f}, p90 {pct(0.9):.1f}, p99 {pct(0.99):.1f}, max {1000 * latencies[-1]:.1f}")
    print("statuses: " + ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items())) + f"; {votes} votes in the ledger")
    print(f"front memory MB: idle {idle:.0f}, after the load {loaded:.0f} (peak {peak:.0f})")
    print(f"400 MB claimed and 4 MB sent: {refused}; front memory after {after:.0f} MB (peak {peak2:.0f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
