"""The gateway in front of the REAL llama.cpp server (xllamacpp + SmolLM2): SSE passes unbuffered
and with the same shape as the direct stream, and /props, /v1/models, /v1/health answer as direct.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.gateway import Gateway, gateway
from tests.support.llama import LlamaServer

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# ignore_eos + max_tokens: exactly 64 tokens, a stream long enough to see any buffering.
COMPLETION: dict[str, Any] = {
    "messages": [{"role": "user", "content": "Count from 1 to 100, one number per line."}],
    "stream": True,
    "max_tokens": 64,
    "temperature": 0,
    "seed": 7,
    "ignore_eos": True,
    "stream_options": {"include_usage": True},
}


@pytest.fixture(scope="module")
def gw(llama: LlamaServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    # llama-server checks the same key itself, as in compose and the native stack.
    with gateway(
        tmp_path_factory.mktemp("gateway-llama"), api_key=llama.api_key, llama_upstream=llama.url
    ) as g:
        yield g


def _auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@dataclass
class Stream:
    started: float
    events: list[tuple[float, str]]  # (arrival time, data payload)

    @property
    def first(self) -> float:
        return self.events[0][0] - self.started

    @property
    def last(self) -> float:
        return self.events[-1][0] - self.started

    def chunks(self) -> list[dict[str, Any]]:
        return [json.loads(data) for _, data in self.events if data != "[DONE]"]


def _stream(base_url: str, key: str, max_tokens: int = 64) -> Stream:
    events: list[tuple[float, str]] = []
    started = time.monotonic()
    with httpx.stream(
        "POST",
        f"{base_url}/v1/chat/completions",
        headers=_auth(key),
        json={**COMPLETION, "max_tokens": max_tokens},
        timeout=httpx.Timeout(120.0, connect=10.0),
    ) as resp:
        assert resp.status_code == 200, resp.read()
        assert resp.headers["content-type"].startswith("text/event-stream")
        for line in resp.iter_lines():
            if line.startswith("data: "):
                events.append((time.monotonic(), line[len("data: ") :]))
    return Stream(started, events)


def _shape(value: Any) -> Any:
    """Keys and value types, recursively: what a client's parser depends on."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [_shape(v) for v in value]
    return type(value).__name__


def test_sse_through_the_gateway_is_not_buffered(gw: Gateway, llama: LlamaServer) -> None:
    via = _stream(gw.url, gw.api_key)
    assert via.events[-1][1] == "[DONE]"
    arrivals = [t for t, _ in via.events]
    gaps = [b - a for a, b in itertools.pairwise(arrivals)]
    # A buffering proxy delivers the whole stream in one burst at the end (gaps of microseconds).
    # Unbuffered, tokens arrive as the model makes them (~10 ms apart here): spread out, with many
    # separate gaps, the first one early. Thresholds leave room for a machine several times faster.
    assert len(via.events) >= 60
    assert via.last - via.first >= 0.05, (via.first, via.last)
    assert via.first < 0.5 * via.last, (via.first, via.last)
    assert sum(1 for g in gaps if g > 0.001) >= 20, gaps


def test_sse_shape_matches_the_direct_stream(gw: Gateway, llama: LlamaServer) -> None:
    direct = _stream(llama.url, llama.api_key, max_tokens=16)
    via = _stream(gw.url, gw.api_key, max_tokens=16)
    d_chunks, v_chunks = direct.chunks(), via.chunks()
    assert len(v_chunks) == len(d_chunks)
    assert [_shape(c) for c in v_chunks] == [_shape(c) for c in d_chunks]
    assert [c["object"] for c in v_chunks] == [c["object"] for c in d_chunks]
    finish = [[ch.get("finish_reason") for ch in c["choices"]] for c in v_chunks]
    assert finish == [[ch.get("finish_reason") for ch in c["choices"]] for c in d_chunks]
    assert v_chunks[-1]["usage"]["completion_tokens"] == 16
    assert d_chunks[-1]["usage"]["completion_tokens"] == 16
    assert via.events[-1][1] == direct.events[-1][1] == "[DONE]"


def _get(url: str, key: str) -> httpx.Response:
    return httpx.get(url, headers=_auth(key), timeout=30)


def _stable(direct_a: Any, direct_b: Any) -> Any:
    """The parts of a JSON value that did not change between two direct calls."""
    if isinstance(direct_a, dict) and isinstance(direct_b, dict):
        return {
            k: _stable(v, direct_b[k])
            for k, v in direct_a.items()
            if k in direct_b and (v == direct_b[k] or isinstance(v, (dict, list)))
        }
    if isinstance(direct_a, list) and isinstance(direct_b, list) and len(direct_a) == len(direct_b):
        return [_stable(a, b) for a, b in zip(direct_a, direct_b, strict=True)]
    return direct_a


@pytest.mark.parametrize("path", ["/props", "/v1/models", "/v1/health"])
def test_json_endpoints_equal_direct(gw: Gateway, llama: LlamaServer, path: str) -> None:
    first = _get(f"{llama.url}{path}", llama.api_key)
    via = _get(f"{gw.url}{path}", gw.api_key)
    second = _get(f"{llama.url}{path}", llama.api_key)
    assert first.status_code == via.status_code == second.status_code == 200
    assert via.headers["content-type"] == first.headers["content-type"]
    stable = _stable(first.json(), second.json())
    assert _stable(via.json(), stable) == stable
    if path == "/v1/models":
        assert via.json()["data"][0]["id"] == first.json()["data"][0]["id"]


def test_llama_errors_pass_through_unchanged(gw: Gateway, llama: LlamaServer) -> None:
    """An error of llama-server itself (a prompt over the context) is not a gateway error."""
    body = {"messages": [{"role": "user", "content": "word " * 5000}], "max_tokens": 1}
    direct = httpx.post(
        f"{llama.url}/v1/chat/completions", headers=_auth(llama.api_key), json=body, timeout=120
    )
    via = httpx.post(
        f"{gw.url}/v1/chat/completions", headers=_auth(gw.api_key), json=body, timeout=120
    )
    assert via.status_code == direct.status_code == 400
    assert via.json()["error"]["type"] == direct.json()["error"]["type"]


def test_metrics_and_slots_pass(gw: Gateway, llama: LlamaServer) -> None:
    metrics = _get(f"{gw.url}/metrics", gw.api_key)
    assert metrics.status_code == 200
    assert "llamacpp:" in metrics.text
    slots = _get(f"{gw.url}/slots", gw.api_key)
    assert slots.status_code == 200
    assert isinstance(slots.json(), list)


def test_wrong_key_is_answered_by_the_gateway(gw: Gateway) -> None:
    resp = httpx.get(f"{gw.url}/props", headers=_auth("wrong"), timeout=10)
    assert resp.status_code == 401
    # The gateway's own answer, not llama-server's (whose 401 body has a different shape).
    assert resp.json() == {"error": "unauthorized"}


def test_pooled_health_checks_leave_llama_server_threads_free(
    gw: Gateway, llama: LlamaServer, tmp_path: Path
) -> None:
    """llama.cpp's server gives each open connection one of its few HTTP threads, and the gateway's
    health checks use its pooled connections: with more checking handlers than the server has
    threads, for a few intervals, it still answers others at once."""
    with ExitStack() as stack:
        for i in range(3):  # with `gw`: 8 handlers checking every 2 s, twice the server's threads
            stack.enter_context(
                gateway(tmp_path / f"gw{i}", api_key=llama.api_key, llama_upstream=llama.url)
            )
        time.sleep(5)  # two health-check intervals: long enough for pooled checks to pile up
        started = time.monotonic()
        assert httpx.get(f"{llama.url}/health", timeout=10).status_code == 200
        assert time.monotonic() - started < 3
        via = _stream(gw.url, gw.api_key, max_tokens=4)
        assert via.events[-1][1] == "[DONE]"
