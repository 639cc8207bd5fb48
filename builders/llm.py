"""One client for any OpenAI-compatible chat endpoint, with an offline template backend as the default.

Builders write prompts; this module makes asking them cheap, reproducible and safe:

* **Offline by default.** Without ``--llm-model`` (and an endpoint) :func:`make_client` returns the
  :class:`TemplateBackend`, which returns the caller's already-rendered template (``fallback``) unchanged, so a
  build without an LLM is deterministic and needs no network.
* **Reproducible.** Temperature 0, and every answer is stored on disk under a sha256 of (model, messages,
  parameters) - not of the endpoint URL, so the same model behind vLLM on another port still hits the cache.
  A rerun is free and yields the same items. Writes are atomic (temp file + rename): a crash never leaves a
  half-written answer that a later run would trust.
* **Structured output, tolerant of servers.** With a JSON schema the client asks for ``response_format``
  ``json_schema``; if the server rejects that (400/422) it steps down to ``json_object`` and then plain text with
  the schema in the system prompt, remembers the step for later requests, and always parses with
  :func:`parse_json_loose` (code fences, prose around the object).
* **Polite under load.** Retries 408/409/429/5xx, timeouts and dropped connections (tenacity) with
  exponential backoff and jitter that is seeded per request (reproducible timing in tests), honours
  ``Retry-After``, and never has more than ``max_concurrency`` requests in flight, whatever the number of
  calling threads.
* **The key stays secret.** It is read from ``OPENAI_API_KEY`` when the client is made, handed to the
  ``openai`` client and nowhere else: it is not a config field, and errors and logs are scrubbed of it.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import logging
import os
import random
import re
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, Mapping, Sequence
from urllib.parse import urlsplit, urlunsplit

import tenacity

from commandline.options import add_options, option
from sources.errors import ConfigError, MirageError

log = logging.getLogger("mirage.llm")

Message = Mapping[str, Any]
"""A chat message: ``{"role": "system"|"user"|"assistant", "content": str}``."""

CACHE_VERSION = 1
_RETRY_STATUS = frozenset({408, 409, 429})
_FORMATS = ("json_schema", "json_object", "text")


class LLMError(MirageError):
    """The endpoint failed for good (retries exhausted, authentication, unknown model) or a request cannot be
    answered offline. One line; never contains the key."""


@dataclass(frozen=True)
class LLMRequest:
    """One completion to ask for (see :meth:`LLMClient.complete`)."""

    messages: Sequence[Message]
    json_schema: Mapping[str, Any] | None = None
    fallback: str | None = None


@dataclass(frozen=True)
class LLMResult:
    text: str
    parsed_json: Any
    """The JSON value found in ``text`` when a schema was given (``None`` if none could be parsed or asked)."""
    cached: bool
    backend: Literal["openai", "template"]


@dataclass
class LLMConfig:
    """Where and how to ask. The API key is deliberately not here: it comes from ``OPENAI_API_KEY`` only."""

    base_url: str | None = None
    model: str | None = None
    cache_dir: str | None = None
    """Mirage's cache dir; answers go to ``<cache_dir>/llm/``. ``None``: no cache."""
    max_concurrency: int = 4
    timeout: float = 60.0
    max_retries: int = 5
    backoff_base: float = 1.0
    backoff_max: float = 30.0
    max_tokens: int | None = None
    seed: int = 0
    """Seeds the retry jitter (and nothing else: temperature is 0)."""

    @property
    def enabled(self) -> bool:
        """True when an LLM model was asked for; otherwise the template backend answers."""
        return bool(self.model)

    def to_dict(self) -> dict[str, Any]:
        """For build.json: everything but secrets (the URL loses any user:password, query and fragment)."""
        d = asdict(self)
        d["base_url"] = redact_url(self.base_url)
        return d

    @classmethod
    def from_args(
        cls,
        ns: argparse.Namespace,
        cache_dir: str | os.PathLike[str] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> "LLMConfig":
        """The config :func:`add_llm_arguments` parsed; ``OPENAI_BASE_URL`` fills in a missing ``--llm-base-url``."""
        env = os.environ if environ is None else environ
        if ns.llm_base_url and not ns.llm_model:
            raise ConfigError("--llm-base-url needs --llm-model (the model name the endpoint serves)")
        return cls(
            base_url=ns.llm_base_url or env.get("OPENAI_BASE_URL") or None,
            model=ns.llm_model or None,
            cache_dir=None if cache_dir is None else os.fspath(cache_dir),
            max_concurrency=ns.llm_concurrency,
            timeout=ns.llm_timeout,
            max_retries=ns.llm_retries,
            max_tokens=ns.llm_max_tokens,
        )


LLM_GROUP = "LLM (optional; default offline templates)"


@dataclass
class LLMOptions:
    """The ``--llm-*`` options, declared once as fields (:mod:`commandline.options`), for a builder's config to
    inherit; commands that are not builders add them with :func:`add_llm_arguments`."""

    llm_base_url: str | None = option(
        None, metavar="URL", group=LLM_GROUP,
        help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 (default $OPENAI_BASE_URL); the key, if "
             "any, is read from $OPENAI_API_KEY")
    llm_model: str | None = option(None, metavar="NAME", group=LLM_GROUP,
                                   help="model name; without it templates are used")
    llm_concurrency: int = option(LLMConfig.max_concurrency, metavar="N", group=LLM_GROUP,
                                  help="requests in flight at most (default {default})")
    llm_timeout: float = option(LLMConfig.timeout, metavar="X", group=LLM_GROUP,
                                help="seconds per request (default {default})")
    llm_retries: int = option(LLMConfig.max_retries, metavar="N", group=LLM_GROUP,
                              help="retries per request (default {default})")
    llm_max_tokens: int | None = option(None, metavar="N", group=LLM_GROUP,
                                        help="completion length cap (default the server's)")

    def llm_config(self, cache_dir: str | os.PathLike[str] | None) -> LLMConfig:
        names = [f.name for f in fields(LLMOptions)]
        return LLMConfig.from_args(argparse.Namespace(**{n: getattr(self, n) for n in names}), cache_dir=cache_dir)


LLM_OPTIONS = tuple(f.name for f in fields(LLMOptions))
"""The ``llm_*`` options, which a builder that writes no text with an LLM leaves out (``NO_OPTIONS``)."""


def add_llm_arguments(
    parser: argparse.ArgumentParser,
    title: str = LLM_GROUP,
    model_help: str = "model name; without it templates are used",
) -> None:
    """The ``--llm-*`` options of :class:`LLMOptions` on a command that is not a builder (``title`` and
    ``model_help`` for commands where the model is what is evaluated, e.g. ``scoring.run``)."""
    add_options(parser, LLMOptions, title=title, helps={"llm_model": model_help})


def redact_url(url: str | None) -> str | None:
    """``scheme://host[:port]/path`` of a URL: credentials, query and fragment dropped."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def parse_json_loose(text: str | None) -> Any:
    """The JSON value a model meant, or ``None``: the whole text, else a fenced block, else the first decodable
    object (then array) inside prose. Models wrap JSON in fences and chatter even when asked not to."""
    if not text:
        return None
    s = text.strip()
    try:
        return json.loads(s)
    except ValueError:
        pass
    for m in re.finditer(r"```[a-zA-Z]*\s*(.*?)```", s, re.S):
        try:
            return json.loads(m.group(1).strip())
        except ValueError:
            continue
    decoder = json.JSONDecoder()
    for opener in "{[":
        start = s.find(opener)
        while start != -1:
            try:
                return decoder.raw_decode(s, start)[0]
            except ValueError:
                start = s.find(opener, start + 1)
    return None


_DATA_URL = re.compile(r"^data:([\w.+/-]+);base64,(.*)$", re.S)


def compact_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The messages with every image data URL replaced by ``data:<mime>;sha256=<digest>``.

    Vision requests (``scoring.run``) carry images as base64 data URLs in ``image_url`` content parts; the cache
    key and the stored entry use this form, so an entry names its images without holding megabytes of base64
    (text-only messages are unchanged, and so are their keys)."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            parts = []
            for part in content:
                url = (part.get("image_url") or {}).get("url") if isinstance(part, Mapping) else None
                found = _DATA_URL.match(url) if isinstance(url, str) else None
                if found:
                    digest = hashlib.sha256(found.group(2).encode("ascii", "replace")).hexdigest()
                    part = {**part, "image_url": {**part["image_url"], "url": f"data:{found.group(1)};sha256={digest}"}}
                parts.append(part)
            m = {**m, "content": parts}
        out.append(dict(m))
    return out


def request_key(model: str, messages: Sequence[Message], params: Mapping[str, Any]) -> str:
    """Cache key: sha256 of the canonical JSON of (model, messages, parameters); the endpoint is not part of it.
    Images in data URLs enter by their digest (:func:`compact_messages`)."""
    blob = json.dumps(
        {"v": CACHE_VERSION, "model": model, "messages": compact_messages(messages), "params": dict(params)},
        sort_keys=True, separators=(",", ":"), ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass
class _Usage:
    requests: int = 0
    attempts: int = 0
    retries: int = 0
    cache_hits: int = 0
    template_renders: int = 0
    format_downgrades: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    seconds: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, **counts: float) -> None:
        with self.lock:
            for k, v in counts.items():
                setattr(self, k, getattr(self, k) + v)

    def as_dict(self) -> dict[str, Any]:
        with self.lock:
            d = {k: v for k, v in vars(self).items() if k != "lock"}
        d["seconds"] = round(d["seconds"], 3)
        return d


class LLMClient:
    """What builders call. ``complete`` one request, ``complete_many`` several (input order kept)."""

    backend: Literal["openai", "template"]

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self._usage = _Usage()

    def complete(
        self, messages: Sequence[Message], *, json_schema: Mapping[str, Any] | None = None, fallback: str | None = None
    ) -> LLMResult:
        raise NotImplementedError

    def complete_many(self, requests: Sequence[LLMRequest]) -> list[LLMResult]:
        """All answers in input order; at most ``max_concurrency`` in flight."""
        def one(r: LLMRequest) -> LLMResult:
            return self.complete(r.messages, json_schema=r.json_schema, fallback=r.fallback)

        if self.backend == "template" or len(requests) <= 1 or self.config.max_concurrency <= 1:
            return [one(r) for r in requests]
        with ThreadPoolExecutor(max_workers=self.config.max_concurrency, thread_name_prefix="mirage-llm") as pool:
            return list(pool.map(one, requests))

    def usage(self) -> dict[str, Any]:
        """Request, token and cache counts for build.json (no key, no credentials)."""
        return {"backend": self.backend, "model": self.config.model, "endpoint": redact_url(self.config.base_url),
                **self._usage.as_dict()}


class TemplateBackend(LLMClient):
    """The offline backend: the answer is the caller's rendered template, as is. Deterministic and free."""

    backend: Literal["openai", "template"] = "template"

    def complete(
        self, messages: Sequence[Message], *, json_schema: Mapping[str, Any] | None = None, fallback: str | None = None
    ) -> LLMResult:
        if fallback is None:
            raise LLMError("no LLM is configured (--llm-model, --llm-base-url) and this request has no template")
        self._usage.add(template_renders=1)
        return LLMResult(fallback, parse_json_loose(fallback) if json_schema else None, False, "template")


class OpenAIBackend(LLMClient):
    """Any OpenAI-compatible ``/chat/completions`` endpoint (OpenAI, vLLM, ollama, llama.cpp server, ...)."""

    backend: Literal["openai", "template"] = "openai"

    def __init__(self, config: LLMConfig, api_key: str | None) -> None:
        super().__init__(config)
        if config.max_concurrency < 1:
            raise ConfigError(f"--llm-concurrency must be at least 1, got {config.max_concurrency}")
        try:
            import openai
        except ImportError as e:
            raise ConfigError("--llm-model needs the openai package: pip install 'mirage-bench[llm]'") from e
        self._openai = openai
        # tenacity retries (counted, seeded jitter; see _send), so the library's are off
        self._client = openai.OpenAI(api_key=api_key or "EMPTY", base_url=config.base_url,
                                     timeout=config.timeout, max_retries=0)
        secret = api_key or ""
        self._scrub = (lambda s: s.replace(secret, "***")) if len(secret) >= 4 else (lambda s: s)
        self._slots = threading.BoundedSemaphore(config.max_concurrency)
        self._format = 0  # index in _FORMATS the endpoint is known to accept
        self._format_lock = threading.Lock()
        self._cache = None if config.cache_dir is None else Path(config.cache_dir) / "llm"

    # -- cache -------------------------------------------------------------------------------------------------
    def _cache_path(self, key: str) -> Path | None:
        return None if self._cache is None else self._cache / key[:2] / f"{key}.json"

    def _cache_get(self, key: str) -> dict[str, Any] | None:
        path = self._cache_path(key)
        if path is None or not path.is_file():
            return None
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None  # unreadable: ask again and overwrite
        return entry if isinstance(entry, dict) and entry.get("key") == key else None

    def _cache_put(self, key: str, entry: dict[str, Any]) -> None:
        path = self._cache_path(key)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(entry, f, ensure_ascii=False, sort_keys=True, indent=1)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    # -- requests ----------------------------------------------------------------------------------------------
    def complete(
        self, messages: Sequence[Message], *, json_schema: Mapping[str, Any] | None = None, fallback: str | None = None
    ) -> LLMResult:
        """The model's answer at temperature 0 (from the cache when it was asked before).

        ``fallback`` is ignored here (it is the template backend's answer); on a permanent failure this raises
        :class:`LLMError`, so a build never mixes LLM and template text without saying so.
        """
        model = self.config.model
        assert model, "OpenAIBackend needs a model"
        messages = [dict(m) for m in messages]
        params: dict[str, Any] = {"temperature": 0, "max_tokens": self.config.max_tokens,
                                  "json_schema": dict(json_schema) if json_schema is not None else None}
        key = request_key(model, messages, params)
        entry = self._cache_get(key)
        if entry is not None:
            self._usage.add(cache_hits=1)
            return LLMResult(entry["text"], parse_json_loose(entry["text"]) if json_schema else None, True, "openai")

        text, usage, fmt = self._ask(key, messages, json_schema)
        self._cache_put(key, {"key": key, "model": model, "messages": compact_messages(messages), "params": params,
                              "text": text, "usage": usage, "response_format": fmt})
        return LLMResult(text, parse_json_loose(text) if json_schema else None, False, "openai")

    def _ask(
        self, key: str, messages: list[dict[str, Any]], schema: Mapping[str, Any] | None
    ) -> tuple[str, dict[str, int], str]:
        """Ask, stepping down the structured-output ladder when the server rejects a format."""
        start = self._format if schema is not None else _FORMATS.index("text")
        first_error: Exception | None = None
        for level in range(start, len(_FORMATS)):
            fmt = _FORMATS[level]
            try:
                text, usage = self._send(key, _with_format(messages, schema, fmt))
            except (self._openai.BadRequestError, self._openai.UnprocessableEntityError) as e:
                if schema is None or level == len(_FORMATS) - 1:
                    raise LLMError(self._describe_failure(e, 1)) from e
                first_error = first_error or e
                log.info("endpoint rejected response_format %s (%s); trying %s", fmt,
                         self._scrub(_status_text(e)), _FORMATS[level + 1])
                continue
            if level > self._format and schema is not None:
                with self._format_lock:
                    if level > self._format:
                        self._format = level
                        self._usage.add(format_downgrades=1)
            return text, usage, fmt
        raise AssertionError("unreachable")  # pragma: no cover

    def _send(self, key: str, body: dict[str, Any]) -> tuple[str, dict[str, int]]:
        """One logical request with retries (tenacity; the openai client's own are off so that every attempt
        and retry is counted and the jitter is seeded); returns the text and token usage."""
        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self.config.max_retries + 1),
            retry=tenacity.retry_if_exception(self._retryable),
            wait=lambda state: backoff_delay(self.config, key, state.attempt_number - 1, state.outcome.exception()),
            before_sleep=lambda state: self._count_retry(key, state),
            reraise=True,
        )
        try:
            return retrying(self._attempt, body)
        except (self._openai.BadRequestError, self._openai.UnprocessableEntityError):
            raise  # the format ladder decides
        except self._openai.APIError as e:
            raise LLMError(self._describe_failure(e, retrying.statistics["attempt_number"])) from e

    def _attempt(self, body: dict[str, Any]) -> tuple[str, dict[str, int]]:
        t0 = time.perf_counter()
        try:
            with self._slots:
                self._usage.add(attempts=1)
                response = self._client.chat.completions.create(
                    model=self.config.model, temperature=0, **body,
                    **({"max_tokens": self.config.max_tokens} if self.config.max_tokens else {}),
                )
        finally:
            self._usage.add(seconds=time.perf_counter() - t0)
        return self._unpack(response)

    def _retryable(self, error: BaseException) -> bool:
        """Timeouts, dropped connections, 408/409/429 and 5xx; anything else says the request or the
        configuration is wrong, and asking again would not help."""
        openai = self._openai
        if isinstance(error, (openai.APITimeoutError, openai.APIConnectionError, openai.RateLimitError,
                              openai.InternalServerError)):
            return True
        return isinstance(error, openai.APIStatusError) and (
            error.status_code in _RETRY_STATUS or error.status_code >= 500)

    def _count_retry(self, key: str, state: tenacity.RetryCallState) -> None:
        self._usage.add(retries=1)
        error = state.outcome.exception() if state.outcome is not None else None
        delay = state.next_action.sleep if state.next_action is not None else 0.0
        log.warning("LLM request %s: %s; retry %d/%d in %.2fs", key[:12], self._scrub(_status_text(error)),
                    state.attempt_number, self.config.max_retries, delay)

    def _unpack(self, response: Any) -> tuple[str, dict[str, int]]:
        choice = response.choices[0] if response.choices else None
        text = (choice.message.content if choice is not None and choice.message is not None else None) or ""
        u = response.usage
        usage = {"prompt_tokens": int(getattr(u, "prompt_tokens", 0) or 0),
                 "completion_tokens": int(getattr(u, "completion_tokens", 0) or 0),
                 "total_tokens": int(getattr(u, "total_tokens", 0) or 0)}
        self._usage.add(requests=1, **usage)
        return text, usage

    def _describe_failure(self, error: Exception, attempts: int) -> str:
        where = redact_url(self.config.base_url) or "api.openai.com"
        tries = f" after {attempts} attempts" if attempts > 1 else ""
        return self._scrub(f"LLM endpoint {where} (model {self.config.model}) failed{tries}: {_status_text(error)}")


def backoff_delay(config: LLMConfig, key: str, attempt: int, error: BaseException | None) -> float:
    """Seconds to wait before retry ``attempt + 1`` of request ``key``: exponential backoff with equal jitter,
    seeded by (seed, request, attempt) so that a rerun waits the same; the server's ``Retry-After`` wins if
    longer (capped at ``backoff_max``)."""
    rng = random.Random(f"{config.seed}:{key}:{attempt}")
    base = min(config.backoff_max, config.backoff_base * 2**attempt)
    delay = base * (0.5 + 0.5 * rng.random())
    response = getattr(error, "response", None)
    retry_after = response.headers.get("retry-after") if response is not None else None
    if retry_after:
        try:
            delay = max(delay, min(float(retry_after), config.backoff_max))
        except ValueError:
            pass  # an HTTP date: the exponential delay will do
    return delay


def _status_text(error: BaseException | None) -> str:
    """A one-line description of an openai error: status and the server's message (first line, truncated)."""
    status = getattr(error, "status_code", None)
    message = getattr(error, "message", None) or str(error) or type(error).__name__
    line = message.splitlines()[0] if message else ""
    if len(line) > 200:
        line = line[:197] + "..."
    kind = f"HTTP {status}" if status else type(error).__name__
    return f"{kind}: {line}" if line and line != kind else kind


def _with_format(messages: list[dict[str, Any]], schema: Mapping[str, Any] | None, fmt: str) -> dict[str, Any]:
    """Request body fields for one rung of the structured-output ladder."""
    if schema is None:
        return {"messages": messages}
    if fmt == "json_schema":
        name = re.sub(r"[^A-Za-z0-9_-]", "_", str(schema.get("title") or "response"))[:64]
        return {"messages": messages,
                "response_format": {"type": "json_schema", "json_schema": {"name": name, "schema": dict(schema)}}}
    hint = ("Reply with one JSON object and nothing else, matching this JSON schema: "
            + json.dumps(schema, sort_keys=True, separators=(",", ":")))
    patched = [dict(m) for m in messages]
    if patched and patched[0].get("role") == "system" and isinstance(patched[0].get("content"), str):
        patched[0]["content"] = f"{patched[0]['content']}\n\n{hint}"
    else:  # some chat templates accept a single leading system message only
        patched.insert(0, {"role": "system", "content": hint})
    body: dict[str, Any] = {"messages": patched}
    if fmt == "json_object":
        body["response_format"] = {"type": "json_object"}
    return body


def make_client(config: LLMConfig, environ: Mapping[str, str] | None = None) -> LLMClient:
    """The OpenAI-compatible backend when a model is configured, else the offline :class:`TemplateBackend`.

    The key is read here from ``OPENAI_API_KEY`` (any value, or none, for vLLM/ollama-style servers).
    """
    env = os.environ if environ is None else environ
    if not config.enabled:
        return TemplateBackend(config)
    key = env.get("OPENAI_API_KEY") or None
    if not config.base_url and not key:
        raise ConfigError(f"--llm-model {config.model}: no endpoint; give --llm-base-url (or OPENAI_BASE_URL), "
                          "or set OPENAI_API_KEY for api.openai.com")
    return OpenAIBackend(config, key)
