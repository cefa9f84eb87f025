"""The LLM route through SGLang's router (docs/scaling.md, "The router"): gateway -> token tap ->
router -> two real llama-servers (xllamacpp, the bundled model), as the native stack runs it.

One module: the replicas, the router and the gateway are started once. It holds that a
conversation without the session header stays on its replica (the second turn evaluates only its
new tokens), that a box key's tokens are still counted per key through the tap, that a replica
killed between turns costs the next turn no error, that the router's state is the operator's
alone, that a full queue is the gateway's JSON 503 with Retry-After and that a router that is
down is the gateway's JSON 502 at once, served again when it is back on its address.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from openmono_keys import usage

from tests.support.keys import KeyedGateway, keyed_gateway
from tests.support.llama import LlamaServer, llama_server
from tests.support.procs import wait_until
from tests.support.router import Router, llm_router

pytestmark = pytest.mark.integration

KEY = "router-test-key"
CHAT = "/v1/chat/completions"


@dataclass
class Stack:
    replicas: list[LlamaServer]
    router: Router
    kg: KeyedGateway


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("router")
    with ExitStack() as es:
        replicas = [
            es.enter_context(llama_server(tmp / f"r{i}", api_key=KEY, ctx=2048, parallel=1))
            for i in range(2)
        ]
        router = es.enter_context(llm_router(tmp, KEY, [r.url for r in replicas]))
        upstreams = " ".join(r.url for r in replicas)
        kg = es.enter_context(
            keyed_gateway(tmp, api_key=KEY, llama_upstream=upstreams, router=router)
        )
        yield Stack(replicas, router, kg)


def _chat(client: httpx.Client, url: str, messages: list[dict[str, str]]) -> dict[str, object]:
    body = {"messages": messages, "max_tokens": 4, "temperature": 0}
    resp = client.post(f"{url}{CHAT}", json=body)
    assert resp.status_code == 200, resp.text
    answer: dict[str, object] = resp.json()
    return answer


def _evaluated(answer: dict[str, object]) -> int:
    timings = answer.get("timings")
    assert isinstance(timings, dict), answer
    return int(timings["prompt_n"])


def _served(replicas: list[LlamaServer]) -> list[int]:
    """Prompt tokens each replica has evaluated so far (its own /metrics)."""
    counts = []
    for r in replicas:
        auth = {"Authorization": f"Bearer {KEY}"}
        text = httpx.get(f"{r.url}/metrics", headers=auth, timeout=5).text
        total = next(x for x in text.splitlines() if x.startswith("llamacpp:prompt_tokens_total"))
        counts.append(int(float(total.split()[-1])))
    return counts


def test_a_conversation_without_the_header_stays_and_survives_its_replica(stack: Stack) -> None:
    box = stack.kg.backend.add("laptop-anna", None, None).key
    url = stack.kg.gw.url
    words = " ".join(["module function value return"] * 60)
    messages = [{"role": "system", "content": f"conversation {uuid.uuid4()} {words}"}]
    with httpx.Client(timeout=120, headers={"Authorization": f"Bearer {box}"}) as client:
        before = _served(stack.replicas)
        messages.append({"role": "user", "content": "step one " + words[:200]})
        first = _chat(client, url, messages)
        messages += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "two"}]
        second = _chat(client, url, messages)
        # the second turn found its prompt cached: only the new tokens were evaluated
        assert _evaluated(first) > 200
        assert _evaluated(second) < 50, second
        after = _served(stack.replicas)
        home = next(i for i, (a, b) in enumerate(zip(before, after, strict=True)) if b > a)
        assert after[1 - home] == before[1 - home]  # both turns on one replica

        # the replica that holds the conversation dies between turns: the next turn is served
        os.killpg(stack.replicas[home].proc.pid, signal.SIGKILL)
        stack.replicas[home].proc.popen.wait(10)
        messages += [{"role": "assistant", "content": "ok"}, {"role": "user", "content": "three"}]
        started = time.monotonic()
        third = _chat(client, url, messages)
        assert _evaluated(third) > 200  # evaluated again on the other replica
        assert time.monotonic() - started < 30

    # tokens still counted per key through the tap (the route now ends at the router)
    def counted() -> bool:
        rows = {(r.key, r.route): r for r in usage.usage(stack.kg.usage_dir).rows}
        row = rows.get(("laptop-anna", CHAT))
        return row is not None and row.requests == 3 and row.prompt_tokens > 0

    wait_until(counted, 10, "usage of laptop-anna")

    # the router's view, the operator's key only: the dead replica is seen as unhealthy
    operator = {"Authorization": f"Bearer {KEY}"}
    dead = stack.replicas[home].url

    def seen_dead() -> bool:
        resp = httpx.get(f"{url}/router/workers", headers=operator, timeout=5)
        return {w["url"]: w["is_healthy"] for w in resp.json()["workers"]}.get(dead) is False

    wait_until(seen_dead, 15, "the router marks the dead replica unhealthy")
    metrics = httpx.get(f"{url}/router/metrics", headers=operator, timeout=5)
    assert metrics.status_code == 200 and "smg_" in metrics.text
    for path in ("/router/metrics", "/router/workers"):
        refused = httpx.get(f"{url}{path}", headers={"Authorization": f"Bearer {box}"}, timeout=5)
        assert refused.status_code == 403, refused.text
        assert httpx.get(f"{url}{path}", timeout=5).status_code == 401


def _timed(client: httpx.Client, url: str, body: dict[str, object]) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    resp = client.post(f"{url}{CHAT}", json=body)
    return resp, time.monotonic() - started


def test_a_full_queue_is_the_gateways_json_503(stack: Stack, tmp_path: Path) -> None:
    alive = [r for r in stack.replicas if r.proc.alive()]
    # one request admitted at once (one more a second), one more may wait for 1 s
    with (
        llm_router(
            tmp_path, KEY, [alive[0].url], max_concurrent="1", queue_size="1", queue_timeout_s="1"
        ) as router,
        keyed_gateway(tmp_path, api_key=KEY, llama_upstream=alive[0].url, router=router) as kg,
    ):
        operator = {"Authorization": f"Bearer {KEY}"}
        short = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1}
        # Each holds its place for many tokens (EOS ignored): on an idle machine a 16-token answer
        # ended before the next requests came, and every one of them was admitted (CI).
        long = {
            "messages": [{"role": "user", "content": "a story"}],
            "max_tokens": 128,
            "ignore_eos": True,
            "stream": True,
        }
        busy = {**short, "max_tokens": 32, "ignore_eos": True}
        with (
            httpx.Client(timeout=60, headers=operator) as client,
            client.stream("POST", f"{kg.gw.url}{CHAT}", json=long) as held,
        ):
            assert held.status_code == 200
            lines = held.iter_lines()
            next(line for line in lines if line.startswith("data: "))  # in flight now
            # three more at once: one may wait in the queue, the others are refused at once
            with ThreadPoolExecutor(3) as pool:
                answers = list(pool.map(lambda _: _timed(client, kg.gw.url, busy), range(3)))
            refused = [(resp, took) for resp, took in answers if resp.status_code == 503]
            assert refused, [(r.status_code, r.text) for r, _ in answers]
            assert all(r.status_code in (200, 503) for r, _ in answers)
            for resp, took in refused:
                assert took < 3, took
                assert resp.headers["Retry-After"] == "2"
                assert resp.headers["Content-Type"].startswith("application/json")
                assert resp.json()["error"] == "upstream_unavailable"
            assert any("[DONE]" in line for line in lines)  # the held stream ends whole
        # its place is free again
        assert (
            httpx.post(f"{kg.gw.url}{CHAT}", json=short, headers=operator, timeout=60).status_code
            == 200
        )


def test_a_router_down_is_the_gateways_json_at_once_and_served_again_when_back(
    stack: Stack, tmp_path: Path
) -> None:
    alive = [r for r in stack.replicas if r.proc.alive()]
    operator = {"Authorization": f"Bearer {KEY}"}
    short = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1}
    with (
        llm_router(tmp_path / "first", KEY, [alive[0].url]) as router,
        keyed_gateway(tmp_path, api_key=KEY, llama_upstream=alive[0].url, router=router) as kg,
    ):
        url = f"{kg.gw.url}{CHAT}"
        assert httpx.post(url, json=short, headers=operator, timeout=60).status_code == 200

        # the router is down: the gateway's JSON error within its retry window, never a hang
        router.proc.stop()
        started = time.monotonic()
        down = httpx.post(url, json=short, headers=operator, timeout=30)
        took = time.monotonic() - started
        assert down.status_code == 502, down.text
        assert down.headers["Content-Type"].startswith("application/json")
        assert down.json()["error"] == "upstream_unavailable"
        assert took < 5, took

        # back on its address, as its keeper starts it again: the same gateway (no restart of
        # its own, nor of the tap) serves again
        port, metrics = (int(a.rsplit(":", 1)[1]) for a in (router.address, router.metrics_address))
        with llm_router(tmp_path / "again", KEY, [alive[0].url], port=port, metrics_port=metrics):
            again = httpx.post(url, json=short, headers=operator, timeout=60)
            assert again.status_code == 200, again.text
            assert again.json()["choices"][0]["message"]["role"] == "assistant"
