"""Predictive reasoning: 1,000 pattern entries generated and rendered, and judge throughput against the stub.

1. **Patterns** (target: under 60 s on one core, ``time.process_time``): the paper's scale of 1,000 generated
   entries (3-5 images each), drawn and PNG-encoded in memory.
   * **ours** - :func:`builders.predictive.patterns.generate`, icons rasterised once per category
     (:class:`IconSet` cache), PNG at zlib level 1 (flat colours compress well at any level);
   * **naive** - the same entries, but every icon rasterised afresh for every sprite and PNG at Pillow's
     default level (what a first script would do).
2. **Judges** (target: limited by the stub's latency): SGAE judgements of N items through :mod:`builders.llm`
   (no cache hits: a fresh cache dir per run) against the loopback stub answering after ``--latency`` seconds,
   at several ``--llm-concurrency`` values; the ideal is ``N * latency / concurrency``.

    python benchmarks/bench_predictive.py [--patterns 1000] [--judged 120] [--latency 0.05]
"""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from rich.console import Console
from rich.table import Table

from builders.items import make_item
from builders.llm import LLMConfig, make_client
from builders.predictive.canvas import draw, png_bytes
from builders.predictive.icons import builtin_icons
from builders.predictive.patterns import generate
from scoring.predictive.judges import judge_outputs
from tests.support.openai_stub import StubOpenAI

TARGET_S = 60.0


def ours(count: int) -> tuple[float, int, int]:
    start = time.process_time()
    icons = builtin_icons()
    images = size = 0
    for e in generate(0, count, icons):
        for frame in e.frames:
            size += len(png_bytes(draw(e.width, e.height, frame, icons)))
            images += 1
    return time.process_time() - start, images, size


def naive(count: int) -> tuple[float, int, int]:
    start = time.process_time()
    images = size = 0
    for e in generate(0, count, builtin_icons()):
        for frame in e.frames:
            icons = builtin_icons()  # a fresh set: every icon rasterised again
            from builders.predictive import icons as icon_module

            icon_module._builtin_icon.cache_clear()
            buf = io.BytesIO()
            draw(e.width, e.height, frame, icons).save(buf, format="PNG")
            size += len(buf.getvalue())
            images += 1
    return time.process_time() - start, images, size


def stub_reply(body: dict) -> str:
    return ("1. LogicalConsistency: score: [3]. reason: [ok].\n2. Accuracy: score: [2]. reason: [ok].\n"
            "3. Specificity: score: [4]. reason: [ok].")


def judge_throughput(n: int, latency: float, concurrency: int) -> float:
    entries = list(generate(0, n, builtin_icons()))
    items = [make_item(benchmark="predictive", task="abstract_pattern", question_type="prediction", pressure="easy",
                       images=[f"images/{k}-{j}.png" for j in range(e.n_images)], question="q", options=(),
                       answer=e.pred, provenance={"pattern": e.pattern}) for k, e in enumerate(entries)]
    with StubOpenAI(responder=stub_reply, delay=latency) as stub, tempfile.TemporaryDirectory() as cache:
        client = make_client(LLMConfig(base_url=stub.base_url, model="judge", cache_dir=cache,
                                       max_concurrency=concurrency))
        start = time.perf_counter()
        results = judge_outputs(client, [(it, "The icon turns.") for it in items])
        elapsed = time.perf_counter() - start
        assert all(r.scores for r in results) and stub.max_in_flight <= concurrency
    return elapsed


def bare_request_seconds(latency: float, n: int = 30) -> float:
    """One request of the bare ``openai`` client to the stub, sequentially: the floor a judge call cannot beat."""
    import openai

    with StubOpenAI(responder=stub_reply, delay=latency) as stub:
        client = openai.OpenAI(api_key="EMPTY", base_url=stub.base_url, max_retries=0)
        start = time.perf_counter()
        for _ in range(n):
            client.chat.completions.create(model="judge", temperature=0, messages=[{"role": "user", "content": "x"}])
        return (time.perf_counter() - start) / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--patterns", type=int, default=1000, metavar="N", help="entries to generate (default 1000)")
    ap.add_argument("--judged", type=int, default=120, metavar="N", help="items judged per run (default 120)")
    ap.add_argument("--latency", type=float, default=0.05, metavar="S", help="stub latency in seconds (default 0.05)")
    args = ap.parse_args()
    console = Console()

    t_ours, n_img, bytes_ours = ours(args.patterns)
    t_naive, _, bytes_naive = naive(args.patterns)
    table = Table(title=f"{args.patterns} pattern entries ({n_img} images), CPU seconds on one core")
    for col in ("", "ours", "naive", "target"):
        table.add_column(col, justify="right" if col else "left")
    table.add_row("generate + draw + PNG", f"{t_ours:.1f} s", f"{t_naive:.1f} s", f"< {TARGET_S:.0f} s")
    table.add_row("PNG bytes", f"{bytes_ours / 1e6:.1f} MB", f"{bytes_naive / 1e6:.1f} MB", "")
    console.print(table)

    bare = bare_request_seconds(args.latency)
    table = Table(title=f"SGAE judgements of {args.judged} items, stub latency {args.latency * 1000:.0f} ms "
                        f"(bare openai client: {bare * 1000:.0f} ms a request)")
    for col in ("concurrency", "wall", "N x latency / c", "N x bare request / c", "judgements/s"):
        table.add_column(col, justify="right")
    for c in (1, 4, 8):
        wall = judge_throughput(args.judged, args.latency, c)
        table.add_row(str(c), f"{wall:.2f} s", f"{args.judged * args.latency / c:.2f} s",
                      f"{args.judged * bare / c:.2f} s", f"{args.judged / wall:.0f}")
    console.print(table)
    verdict = "meets" if t_ours < TARGET_S else "MISSES"
    console.print(f"patterns: {t_ours:.1f} s {verdict} the {TARGET_S:.0f} s target")


if __name__ == "__main__":
    main()
