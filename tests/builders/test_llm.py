"""The LLM client against a loopback OpenAI-compatible stub (real HTTP, the real ``openai`` package), and offline."""

from __future__ import annotations

import importlib.util

import argparse
import json
import logging
import time
from pathlib import Path

import pytest

from builders.llm import (
    LLMConfig,
    LLMError,
    LLMRequest,
    OpenAIBackend,
    TemplateBackend,
    add_llm_arguments,
    backoff_delay,
    make_client,
    parse_json_loose,
    redact_url,
)
from sources.errors import ConfigError
from tests.conftest import require
from tests.support.openai_stub import StubOpenAI

require(importlib.util.find_spec("openai") is not None, "openai")

KEY = "sk-mirage-test-SECRET-0123456789"
SCHEMA = {"title": "answer", "type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


def ask(text: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": "You write test contexts."}, {"role": "user", "content": text}]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch):
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_LOG"):
        monkeypatch.delenv(var, raising=False)


def client_for(stub: StubOpenAI, cache: Path | None, **kw) -> OpenAIBackend:
    kw = {"backoff_base": 0.001, "backoff_max": 0.01, **kw}
    config = LLMConfig(base_url=stub.base_url, model="stub-model", cache_dir=None if cache is None else str(cache),
                       **kw)
    client = make_client(config, environ={"OPENAI_API_KEY": KEY})
    assert isinstance(client, OpenAIBackend)
    return client


# ---- offline ---------------------------------------------------------------------------------------------------


def test_nothing_configured_means_the_template_backend():
    client = make_client(LLMConfig(), environ={"OPENAI_BASE_URL": "http://localhost:1/v1"})
    assert isinstance(client, TemplateBackend)
    r = client.complete(ask("anything"), fallback="I don't see a dog.")
    assert (r.text, r.parsed_json, r.cached, r.backend) == ("I don't see a dog.", None, False, "template")
    r = client.complete(ask("x"), json_schema=SCHEMA, fallback='{"answer": "no"}')
    assert r.parsed_json == {"answer": "no"}
    assert [x.text for x in client.complete_many([LLMRequest(ask("a"), fallback="A"),
                                                  LLMRequest(ask("b"), fallback="B")])] == ["A", "B"]
    with pytest.raises(LLMError, match="no LLM is configured"):
        client.complete(ask("no template"))
    assert client.usage()["template_renders"] == 4 and client.usage()["backend"] == "template"


def test_options_and_environment():
    parser = argparse.ArgumentParser()
    add_llm_arguments(parser)
    config = LLMConfig.from_args(parser.parse_args([]), environ={"OPENAI_BASE_URL": "http://h:8000/v1"})
    assert not config.enabled and config.base_url == "http://h:8000/v1"  # an env URL alone does not opt in
    config = LLMConfig.from_args(parser.parse_args(["--llm-model", "qwen", "--llm-concurrency", "2"]),
                                 cache_dir="/c", environ={"OPENAI_BASE_URL": "http://h:8000/v1"})
    assert (config.model, config.base_url, config.max_concurrency, config.cache_dir) == (
        "qwen", "http://h:8000/v1", 2, "/c")
    with pytest.raises(ConfigError, match="--llm-base-url needs --llm-model"):
        LLMConfig.from_args(parser.parse_args(["--llm-base-url", "http://h/v1"]), environ={})
    with pytest.raises(ConfigError, match="no endpoint"):
        make_client(LLMConfig(model="gpt-x"), environ={})
    assert isinstance(make_client(LLMConfig(model="gpt-x"), environ={"OPENAI_API_KEY": KEY}), OpenAIBackend)
    assert redact_url("https://user:pw@host:8000/v1?token=abc#x") == "https://host:8000/v1"


def test_tolerant_json_parser():
    assert parse_json_loose('{"a": 1}') == {"a": 1}
    assert parse_json_loose('Sure!\n```json\n{"a": [1, 2]}\n```\nAnything else?') == {"a": [1, 2]}
    assert parse_json_loose('The answer is {"a": "}"} as requested {"b": 2}') == {"a": "}"}
    assert parse_json_loose("Options [1, 2] then {oops} and {\"ok\": true}") == {"ok": True}
    assert parse_json_loose("[1, 2]") == [1, 2]
    assert parse_json_loose("{not json") is None and parse_json_loose("") is None


# ---- against the stub ------------------------------------------------------------------------------------------


def test_answers_are_cached_and_reruns_send_nothing(tmp_path):
    with StubOpenAI() as stub:
        first = client_for(stub, tmp_path)
        r = first.complete(ask("dog?"))
        assert (r.text, r.cached, r.backend) == ("echo: dog?", False, "openai")
        sent = stub.bodies[0]
        assert sent["temperature"] == 0 and sent["model"] == "stub-model" and "response_format" not in sent

        rerun = client_for(stub, tmp_path)  # a new process, same cache dir
        r2 = rerun.complete(ask("dog?"))
        assert (r2.text, r2.cached) == ("echo: dog?", True)
        assert stub.attempts == 1
        assert rerun.usage()["cache_hits"] == 1 and rerun.usage()["requests"] == 0

        # what is asked is the key: other messages or another schema are new requests
        rerun.complete(ask("cat?"))
        rerun.complete(ask("dog?"), json_schema=SCHEMA)
        assert stub.attempts == 3

    with StubOpenAI() as elsewhere:  # the same model served from another URL: still a hit
        r3 = client_for(elsewhere, tmp_path).complete(ask("dog?"))
        assert r3.cached and elsewhere.attempts == 0


def test_retries_on_429_and_5xx_with_backoff(tmp_path):
    with StubOpenAI(fail_with=[429, 500, 503]) as stub:
        client = client_for(stub, tmp_path, max_retries=5)
        r = client.complete(ask("hello"))
        assert r.text == "echo: hello"
        assert stub.attempts == 4
        u = client.usage()
        assert (u["attempts"], u["retries"], u["requests"]) == (4, 3, 1)

    with StubOpenAI(fail_with=[500] * 10) as stub:
        client = client_for(stub, tmp_path, max_retries=2)
        with pytest.raises(LLMError) as err:
            client.complete(ask("doomed"))
        assert stub.attempts == 3
        msg = str(err.value)
        assert "\n" not in msg and "after 3 attempts" in msg and "HTTP 500" in msg

    with StubOpenAI(fail_with=[401]) as stub:  # not retryable: the configuration is wrong
        with pytest.raises(LLMError, match="HTTP 401"):
            client_for(stub, tmp_path).complete(ask("who am I"))
        assert stub.attempts == 1


def test_a_timeout_is_retried(tmp_path):
    with StubOpenAI(delays=[2.0]) as stub:
        client = client_for(stub, tmp_path, timeout=0.3)
        t0 = time.perf_counter()
        assert client.complete(ask("slow")).text == "echo: slow"
        assert time.perf_counter() - t0 < 1.9  # the stalled attempt was abandoned, not waited out
        retries = client.usage()["retries"]
        assert retries >= 1 and stub.attempts == retries + 1  # >= 1: a loaded machine may time out twice


def test_retry_jitter_is_seeded():
    config = LLMConfig(base_url="http://127.0.0.1:9/v1", model="m", backoff_base=1.0, backoff_max=30.0)
    delays = [backoff_delay(config, "k" * 64, n, RuntimeError()) for n in range(6)]
    assert delays == [backoff_delay(LLMConfig(**vars(config)), "k" * 64, n, RuntimeError()) for n in range(6)]
    assert all(0.5 * min(30, 2**n) <= d <= min(30, 2**n) for n, d in enumerate(delays))
    assert delays != [backoff_delay(config, "j" * 64, n, RuntimeError()) for n in range(6)]


def test_retry_after_is_honoured(tmp_path, caplog):
    """The server's ``Retry-After`` (seconds) outweighs a shorter backoff, up to ``backoff_max``; the wait is
    logged with the retry."""
    caplog.set_level(logging.WARNING, logger="mirage.llm")
    with StubOpenAI(fail_with=[429], retry_after="0.2") as stub:
        client = client_for(stub, tmp_path, backoff_max=0.5)
        assert client.complete(ask("wait")).text == "echo: wait"
        assert stub.attempts == 2 and client.usage()["retries"] == 1
    assert "retry 1/5 in 0.20s" in caplog.text


def test_malformed_json_from_the_server_is_parsed_tolerantly(tmp_path):
    replies = iter(['Sure! Here it is:\n```json\n{"answer": "yes"}\n```\nHope that helps.', "{not json at all"])
    with StubOpenAI(responder=lambda body: next(replies)) as stub:
        client = client_for(stub, tmp_path)
        r = client.complete(ask("fenced"), json_schema=SCHEMA)
        assert r.parsed_json == {"answer": "yes"}
        bad = client.complete(ask("garbage"), json_schema=SCHEMA)
        assert bad.parsed_json is None and bad.text == "{not json at all"  # the caller decides (e.g. a template)
        assert stub.bodies[0]["response_format"]["type"] == "json_schema"
        assert stub.bodies[0]["response_format"]["json_schema"]["schema"] == SCHEMA
        # cached answers are parsed the same way
        assert client_for(stub, tmp_path).complete(ask("fenced"), json_schema=SCHEMA).parsed_json == {"answer": "yes"}


def test_a_server_without_json_schema_gets_json_object(tmp_path):
    with StubOpenAI(json_schema_supported=False) as stub:
        client = client_for(stub, tmp_path)
        r = client.complete(ask("first"), json_schema=SCHEMA)
        assert r.parsed_json == {"answer": "first"}
        client.complete(ask("second"), json_schema=SCHEMA)
        formats = [b.get("response_format", {}).get("type") for b in stub.bodies]
        assert formats == ["json_schema", "json_object", "json_object"]  # the step down is remembered
        assert '"required":["answer"]' in stub.bodies[1]["messages"][0]["content"]  # schema told in the prompt
        assert stub.bodies[1]["messages"][0]["role"] == "system" and len(stub.bodies[1]["messages"]) == 2
        assert client.usage()["format_downgrades"] == 1


def test_concurrency_is_bounded_and_order_kept(tmp_path):
    with StubOpenAI(delay=0.15) as stub:
        client = client_for(stub, tmp_path, max_concurrency=3)
        requests = [LLMRequest(ask(f"q{i}")) for i in range(10)]
        results = client.complete_many(requests)
        assert [r.text for r in results] == [f"echo: q{i}" for i in range(10)]
        assert stub.max_in_flight == 3
        # the bound holds for callers' own threads too
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda i: client.complete(ask(f"t{i}")), range(8)))
        assert stub.max_in_flight == 3


def test_the_key_never_leaves_the_client(tmp_path, caplog, capsys):
    caplog.set_level(logging.DEBUG)  # the openai and httpx loggers included
    with StubOpenAI(fail_with=[429, 500, 401]) as stub:
        config = LLMConfig(base_url=stub.base_url, model="stub-model", cache_dir=str(tmp_path / "cache"),
                           backoff_base=0.001, max_retries=3)
        client = make_client(config, environ={"OPENAI_API_KEY": KEY})
        with pytest.raises(LLMError) as err:
            client.complete(ask("one"))
        results = [client.complete(ask("two"), json_schema=SCHEMA), client.complete(ask("two"), json_schema=SCHEMA)]
        assert stub.auth_headers[-1] == f"Bearer {KEY}"  # the key was used...
    out = capsys.readouterr()
    outputs = {
        "error": str(err.value),
        "usage": json.dumps(client.usage()),
        "config": json.dumps(config.to_dict()),
        "results": repr(results),
        "logs": caplog.text,
        "stdout": out.out + out.err,
    }
    for name, text in outputs.items():  # ...and appears nowhere else
        assert KEY not in text and "SECRET" not in text, name
    files = [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert files and all(KEY.encode() not in p.read_bytes() for p in files)
    assert "retry 1/3" in caplog.text  # the logs were captured, so the check above means something
