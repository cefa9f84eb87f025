"""`docker compose --profile server up` with `LLAMA_REPLICAS=3` (what `--scale llama-server=3`
does, from the env file): generation goes gateway -> the
`llm-router` service (SGLang's router, run by openmono.stack.router) -> the replicas.

The router finds the replicas on Docker's DNS (`llama-server`), so the user's one command is all it
takes. One stack for the module (CI's time is short), 3 -> 2 -> 1 -> 0 replicas: requests sent at
once reach every replica (each replica's own /metrics counts what it generated), a replica stopped
costs none of the requests sent right after the stop, a conversation whose replica is killed
between turns gets its next turn answered, the router's worker list (through the gateway, the
operator's key) and `/services` follow within seconds, and with no replica left generation is the
gateway's JSON 503 with Retry-After.

Not here, because other tests check it: a replica that starts later is added once it answers
(tests/integration/test_router_sync.py, against the real router; the same sync pass adds the three
replicas here), the router's queue and a router that is down (test_gateway_router.py). A failure
keeps the stack's logs and the router's state under the test's tmp dir (tests/containers/diagnose).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.containers.conftest import Project, ProjectFactory, engine_client
from tests.containers.diagnose import kept_on_failure

pytestmark = [pytest.mark.containers, pytest.mark.slow, pytest.mark.timeout(600)]

# "Say hi." and 4 tokens: ~30 prompt tokens (the chat template's) and 4 generated. The replicas
# have one slot each, so concurrent requests queue on a replica; READ_TIMEOUT_S bounds a whole
# streamed answer's waiting, queue included (measured per request and printed: see _timed_chat).
BODY = {"messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 4, "stream": True}
READ_TIMEOUT_S = 60


def _replicas(p: Project) -> list[str]:
    return sorted(p.containers("llama-server"))


def _metrics(container: str) -> dict[str, float]:
    """The replica's own llama.cpp counters (its /metrics, asked inside the container)."""
    code, out = engine_client().containers.get(container).exec_run(
        ["sh", "-c",
         'curl -fsS -m 20 -H "Authorization: Bearer $LLAMA_API_KEY" http://127.0.0.1:8080/metrics'],
    )  # fmt: skip
    text = out.decode(errors="replace")
    assert code == 0, text[:500]
    found = dict(re.findall(r"^llamacpp:(\w+)\s+(\S+)$", text, re.M))
    assert "tokens_predicted_total" in found, text[:500]
    return {name: float(value) for name, value in found.items()}


def _threads(container: str) -> str:
    """The thread count the replica's llama-server was started with (LLAMA_ARG_THREADS)."""
    code, out = engine_client().containers.get(container).exec_run(["cat", "/proc/1/environ"])
    assert code == 0, out[:300]
    found = dict(v.split("=", 1) for v in out.decode().split("\0") if "=" in v)
    return found.get("LLAMA_ARG_THREADS", "unset")


def _predicted(container: str) -> float:
    """Tokens this replica generated so far."""
    return _metrics(container)["tokens_predicted_total"]


def _address(container: str) -> str:
    """The replica's URL as the router holds it (its address on the compose network)."""
    networks = engine_client().api.inspect_container(container)["NetworkSettings"]["Networks"]
    (net,) = networks.values()
    return f"http://{net['IPAddress']}:8080"


def _chat(p: Project, body: dict[str, object] = BODY) -> int:
    """One streamed request's status. A request the router sent to a vanished replica without the
    router container's SYN bound would wait 71 s for its first byte: past the read timeout."""
    with httpx.stream(
        "POST", f"{p.gateway}/v1/chat/completions", json=body, headers=p.auth,
        timeout=READ_TIMEOUT_S,
    ) as resp:  # fmt: skip
        for _ in resp.iter_lines():
            pass
        return resp.status_code


def _burst(p: Project, requests: int, at_once: int) -> tuple[list[int], str]:
    """`requests` chats, `at_once` at a time: their statuses, and their seconds as a line."""

    def timed(_: int) -> tuple[int, float]:
        start = time.monotonic()
        return _chat(p), time.monotonic() - start

    with ThreadPoolExecutor(at_once) as pool:
        done = list(pool.map(timed, range(requests)))
    return [s for s, _ in done], " ".join(f"{t:.1f}" for _, t in done)


def _held(p: Project) -> dict[str, bool]:
    """url -> healthy of every replica the router holds, as the operator sees it."""
    resp = httpx.get(f"{p.gateway}/router/workers", headers=p.auth, timeout=10)
    assert resp.status_code == 200, resp.text
    return {w["url"]: w["is_healthy"] for w in resp.json()["workers"]}


def _llm_replicas(p: Project) -> list[dict[str, object]] | None:
    replicas: list[dict[str, object]] | None = httpx.get(
        f"{p.gateway}/services", timeout=10
    ).json()["llm_replicas"]
    return replicas


def _within(seconds: float, what: str, check: Callable[[], bool]) -> float:
    """Seconds until `check` holds (polled every 0.1 s); fails past `seconds`."""
    start = time.monotonic()
    while not check():
        assert time.monotonic() - start < seconds, f"{what}: not within {seconds} s"
        time.sleep(0.1)
    return time.monotonic() - start


def _follows(p: Project, addresses: list[str]) -> float:
    """The router holds exactly `addresses` within 10 s and `/services` lists as many within 5 s
    more; returns the router's seconds."""
    n = len(addresses)
    took = _within(10, f"the router holds {n}", lambda: _held(p) == dict.fromkeys(addresses, True))
    _within(5, f"/services lists {n}", lambda: len(_llm_replicas(p) or []) == n)
    return took


def test_replicas_come_and_go_behind_the_router(project: ProjectFactory, tmp_path: Path) -> None:
    # LLAMA_REPLICAS of the env file, as natively; no LLAMA_THREADS: each replica takes its share
    # of the cores (three replicas of two threads on CI's two cores only take turns, spinning:
    # docs/scaling.md, "Compose")
    p = project(LLAMA_PARALLEL="1", LLAMA_REPLICAS="3")
    with kept_on_failure(p, tmp_path / "stack"):
        _scale_down_to_zero(p)
    p.down()
    assert p.leftovers() == {"containers": [], "networks": [], "volumes": []}


def _scale_down_to_zero(p: Project) -> None:
    started = time.monotonic()
    p.run("--profile", "server", "up", "-d")
    replicas = _replicas(p)
    assert len(replicas) == 3
    share = max(1, len(os.sched_getaffinity(0)) // 3)
    assert [_threads(c) for c in replicas] == [str(share)] * 3
    p.wait_healthy("caddy")  # waits for every replica and the router to be healthy first
    print(f"\n3 replicas + router + gateway healthy in {time.monotonic() - started:.1f} s")
    addresses = {c: _address(c) for c in replicas}
    # the router adds a replica once it answers its health path: the three, within seconds
    _follows(p, list(addresses.values()))
    assert _llm_replicas(p) == [{"name": f"llama-{i}", "healthy": True} for i in (1, 2, 3)]
    before = {c: _metrics(c) for c in replicas}

    # six at once on three one-slot replicas: the router spreads them (any imbalance: the least
    # loaded replica), so each replica has about two to answer in turn
    statuses, took = _burst(p, 6, 6)
    after = {c: _metrics(c) for c in replicas}
    kinds = ("prompt_seconds_total", "tokens_predicted_seconds_total", "tokens_predicted_total")
    compute = [after[c][k] - before[c][k] for c in replicas for k in kinds]
    print(f"6 at once: seconds each {took}; per replica (prompt s, generation s, tokens): "
          + " ".join(f"{x:.2f}" for x in compute))  # fmt: skip
    assert statuses == [200] * 6, took
    grown = [c for c in replicas if after[c]["tokens_predicted_total"] > before[c][
        "tokens_predicted_total"]]  # fmt: skip
    # in flight at once, so the router's least-loaded choice gives each replica some (its
    # measured prompt and generation seconds were about equal on the three in every run so far);
    # one left out would be the prefix tree's choice winning over the load
    assert len(grown) == 3, f"only {len(grown)} replica(s) answered"

    # 3 -> 2: a replica stopped (what `--scale llama-server=2` does to one) costs none of the
    # requests sent right after the stop, which land in the window where the router may still
    # dial its address (docs/scaling.md, "Where a stopped replica's time went")
    stopped = replicas[0]
    engine_client().containers.get(stopped).stop(timeout=5)
    live = replicas[1:]
    statuses, took = _burst(p, 4, 2)
    print(f"4 right after the stop, 2 at a time: seconds each {took}")
    assert statuses == [200] * 4, took
    gone_s = _follows(p, [addresses[c] for c in live])
    print(f"router without the stopped replica {gone_s:.1f} s after the requests")

    # 2 -> 1: a conversation's replica is killed between turns; the next turn is answered by the
    # other one
    convo = [
        {"role": "system", "content": f"You are terse. Conversation {time.time_ns()}."},
        {"role": "user", "content": "Say hi."},
    ]
    counts = {c: _predicted(c) for c in live}
    assert _chat(p, {**BODY, "messages": convo}) == 200
    (victim,) = [c for c in live if _predicted(c) > counts[c]]
    engine_client().containers.get(victim).kill()
    killed_at = time.monotonic()
    convo += [{"role": "assistant", "content": "Hi."}, {"role": "user", "content": "Again."}]
    assert _chat(p, {**BODY, "messages": convo}) == 200
    turn_s = time.monotonic() - killed_at
    (last,) = [c for c in live if c != victim]
    gone_s = _follows(p, [addresses[last]])
    print(f"turn after the kill: 200 in {turn_s:.1f} s; router without it {gone_s:.1f} s after")

    # 1 -> 0: the gateway's JSON 503 with when to try again, never a hang
    engine_client().containers.get(last).stop(timeout=5)
    _within(10, "the router holds no replica", lambda: _held(p) == {})
    resp = httpx.post(f"{p.gateway}/v1/chat/completions", json=BODY, headers=p.auth, timeout=30)
    assert resp.status_code == 503, resp.text
    assert resp.headers["Retry-After"] == "2"
    assert resp.json()["error"] == "upstream_unavailable"
    assert _llm_replicas(p) == []
