"""``python -m scoring.run RELEASE --llm-model NAME [--llm-base-url URL]``: a vision model answers every item.

Any OpenAI-compatible ``/chat/completions`` endpoint (vLLM, ollama, llama.cpp server, OpenAI) gets one request
per item: a single user message whose content is, in order, ``"Image 1:"`` and the first image as a base64 data
URL, ``"Image 2:"`` and the second ..., then the text lmms-eval is given too
(:func:`builders.semantics.prompt.prompt_text`: context, question, lettered options, answer instruction),
so both routes ask the same question. Temperature 0.

The requests go through :mod:`builders.llm` (bounded concurrency, retries with backoff, ``Retry-After``, the key
from ``OPENAI_API_KEY`` only), whose on-disk cache makes an interrupted run resume: answered items are not asked
again. Predictions (``{"id", "output", "model", "params"}``, :mod:`scoring.predictions`) are written atomically
at the end; a permanent endpoint failure stops the run with one line, keeping what was cached.

RELEASE: a release dir, a build dir, an items.jsonl, or a Hub repo ``owner/name@vX.Y.Z``
(:func:`scoring.releases.load_items`).
"""

from __future__ import annotations

import argparse
import base64
import mimetypes
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Sequence

from builders.cli import ArgumentParser, exit_on_error, progress_bar, stdout, table
from builders.items import Item
from builders.llm import LLMConfig, LLMError, add_llm_arguments, make_client, redact_url
from builders.semantics.prompt import prompt_text
from commandline.options import add_options, config_of, option
from commandline.parsing import prog
from scoring.options import CacheDirOption
from scoring.predictions import Prediction, write_predictions
from scoring.releases import load_items
from sources.demo import default_cache_dir
from sources.errors import ConfigError

PROMPT_VERSION = 1
"""Bumped when the request layout changes, so cached answers to an older layout are not reused."""

_SIGNATURES = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF8", "image/gif"),
               (b"BM", "image/bmp"))


def data_url(path: str | Path) -> str:
    """A ``data:<mime>;base64,...`` URL of an image file (the bytes as they are: no re-encoding)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read image ({exc.strerror or exc})") from None
    mime = next((m for sig, m in _SIGNATURES if data.startswith(sig)), None)
    if mime is None and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        mime = "image/webp"
    mime = mime or mimetypes.guess_type(str(path))[0] or "application/octet-stream"
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def messages_for(item: Item) -> list[dict[str, Any]]:
    """The chat request for one item (see the module docstring)."""
    content: list[dict[str, Any]] = []
    for k, image in enumerate(item.images, 1):
        content.append({"type": "text", "text": f"Image {k}:"})
        content.append({"type": "image_url", "image_url": {"url": data_url(image)}})
    content.append({"type": "text", "text": prompt_text(item)})
    return [{"role": "user", "content": content}]


def answer_items(items: Sequence[Item], client: Any, progress: bool = True) -> tuple[list[Prediction], dict[str, Any]]:
    """Ask ``client`` about every item, at most ``max_concurrency`` at a time; predictions in item order.

    The first permanent failure cancels what has not started and is raised (answers so far stay cached)."""
    params = {"temperature": 0, "max_tokens": client.config.max_tokens, "prompt_version": PROMPT_VERSION,
              "endpoint": _endpoint(client)}
    model = client.config.model or ""
    outputs: dict[str, str] = {}
    started = time.perf_counter()
    workers = max(1, client.config.max_concurrency)
    with progress_bar(progress) as bar, ThreadPoolExecutor(max_workers=workers, thread_name_prefix="mirage-run") as pool:
        update = bar("asking " + (model or "the model"), len(items))
        futures = {pool.submit(lambda it=it: client.complete(messages_for(it)).text): it for it in items}
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in done:
                if f.exception() is not None:
                    for p in pending:
                        p.cancel()
                    raise f.exception()  # type: ignore[misc]
                outputs[futures[f].id] = f.result()
            update(len(outputs), len(items))
    seconds = time.perf_counter() - started
    predictions = [Prediction(it.id, outputs[it.id], model, params) for it in items]
    return predictions, {"items": len(items), "seconds": round(seconds, 3), **client.usage()}


def _endpoint(client: Any) -> str | None:
    return redact_url(client.config.base_url)


@dataclass(kw_only=True)
class PredictOptions(CacheDirOption):
    """What ``mirage predict`` asks and where its answers go (the model's options are :class:`LLMOptions`)."""

    OPTION_HELP: ClassVar[dict[str, str]] = {"cached": "responses, release images"}

    release: str = option(metavar="RELEASE", positional=True,
                          help="release dir, build dir, items.jsonl, or a Hub repo owner/name@vX.Y.Z")
    revision: str | None = option(None, metavar="TAG", help="Hub revision when RELEASE is a repo id (default the "
                                                            "@tag)")
    out: str | None = option(None, metavar="FILE",
                             help="predictions file (default predictions/<model>-<release name>.jsonl)")
    benchmark: str | None = option(None, metavar="NAME", help="only the items of this benchmark (default all)")
    limit: int | None = option(None, metavar="N", help="only the first N items, sorted by id (default all)")
    progress: bool = option(True, flag="--no-progress", help="no progress bar (default shown on stderr)")


def parser() -> argparse.ArgumentParser:
    p = ArgumentParser(
        prog=prog("python -m scoring.run"),
        description="Ask an OpenAI-compatible vision model every item of a release and write its predictions "
                    "(JSONL: id, output, model, params) for mirage score.",
    )
    add_options(p, PredictOptions)
    add_llm_arguments(p, title="the model (any OpenAI-compatible vision endpoint)",
                      model_help="the model the endpoint serves (required)")
    return p


def _default_out(release: str, model: str) -> Path:
    name = Path(release.split("@")[0]).name if not Path(release).is_file() else Path(release).parent.name
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in f"{model}-{name}")
    return Path("predictions") / f"{safe}.jsonl"


@exit_on_error
def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m scoring.run``."""
    namespace = parser().parse_args(argv)
    args = config_of(PredictOptions, namespace)
    if not namespace.llm_model:
        raise ConfigError("--llm-model NAME is required: the model the endpoint serves")
    if args.limit is not None and args.limit < 1:
        raise ConfigError(f"--limit must be at least 1, not {args.limit}")
    cache_dir = Path(args.cache_dir or default_cache_dir())
    items = sorted(load_items(args.release, args.revision, cache_dir), key=lambda it: it.id)
    if args.benchmark:
        items = [it for it in items if it.benchmark == args.benchmark]
    items = items[: args.limit] if args.limit else items
    if not items:
        raise ConfigError(f"{args.release}: no items to ask" + (f" of benchmark {args.benchmark}" if args.benchmark
                                                                 else ""))
    client = make_client(LLMConfig.from_args(namespace, cache_dir=cache_dir))
    try:
        predictions, usage = answer_items(items, client, progress=args.progress)
    except LLMError as exc:
        raise LLMError(f"{exc}; answers so far are cached: rerun the same command to resume") from None
    out = write_predictions(args.out or _default_out(args.release, namespace.llm_model), predictions)
    stdout.print(table(f"scoring.run - {namespace.llm_model}", ["", "value"], [
        ["items", usage["items"]], ["asked the endpoint", usage["requests"]], ["from the cache", usage["cache_hits"]],
        ["retries", usage["retries"]], ["seconds", usage["seconds"]], ["tokens", usage["total_tokens"]],
    ]))
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
