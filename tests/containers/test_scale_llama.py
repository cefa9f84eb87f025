"""`docker compose --profile server up --scale llama-server=3`: generation goes gateway -> the
`llm-router` service (SGLang's router, run by openmono.stack.router) -> the replicas.

The router finds the replicas on Docker's DNS (`llama-server`), so the user's one command is all it
takes. One stack for the module (CI's time is short), scaled 3 -> 2 -> 3 -> 0: requests reach more
than one replica (each replica's own /metrics counts what it generated), the router's worker list
(through the gateway, the operator's key) and `/services` follow the replicas within seconds, a
conversation whose replica is killed between turns gets its next turn answered, a stopped replica
costs none of the requests after it, and with no replica left generation is the gateway's JSON 503
with Retry-After.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.containers.conftest import Project, ProjectFactory, engine_client, health

pytestmark = [pytest.mark.containers, pytest.mark.slow, pytest.mark.timeout(900)]

BODY = {"messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 4, "stream": True}


def _replicas(p: Project) -> list[str]:
    return sorted(p.containers("llama-server"))


def _predicted(container: str) -> float:
    """Tokens this replica generated so far (its own /metrics, asked inside the container)."""
    code, out = engine_client().containers.get(container).exec_run(
        ["sh", "-c",
         'curl -fsS -m 20 -H "Authorization: Bearer $LLAMA_API_KEY" http://127.0.0.1:8080/metrics'],
    )  # fmt: skip
    text = out.decode(errors="replace")
    assert code == 0, text[:500]
    match = re.search(r"^llamacpp:tokens_predicted_total\s+(\S+)$", text, re.M)
    assert match, text[:500]
    return float(match.group(1))


def _address(container: str) -> str:
    """The replica's URL as the router holds it (its address on the compose network)."""
    networks = engine_client().api.inspect_container(container)["NetworkSettings"]["Networks"]
    (net,) = networks.values()
    return f"http://{net['IPAddress']}:8080"


def _chat(p: Project, body: dict[str, object] = BODY) -> int:
    """One streamed request's status. A request the router sent to a vanished replica without the
    router container's SYN bound would wait 71 s for its first byte: past the 60 s read timeout."""
    with httpx.stream(
        "POST", f"{p.gateway}/v1/chat/completions", json=body, headers=p.auth, timeout=60
    ) as resp:
        for _ in resp.iter_lines():
            pass
        return resp.status_code


def _timed_chat(p: Project) -> tuple[int, float]:
    start = time.monotonic()
    return _chat(p), time.monotonic() - start


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


def test_replicas_come_and_go_behind_the_router(project: ProjectFactory) -> None:
    p = project(LLAMA_PARALLEL="1")
    started = time.monotonic()
    p.run("--profile", "server", "up", "-d", "--scale", "llama-server=3")
    replicas = _replicas(p)
    assert len(replicas) == 3
    p.wait_healthy("caddy")  # waits for every replica and the router to be healthy first
    print(f"\n3 replicas + router + gateway healthy in {time.monotonic() - started:.1f} s")
    addresses = {c: _address(c) for c in replicas}
    # the router adds a replica once it answers its health path: the three, within seconds
    _within(10, "the router holds the 3 replicas", lambda: _held(p) == dict.fromkeys(
        addresses.values(), True))  # fmt: skip
    assert _llm_replicas(p) == [{"name": f"llama-{i}", "healthy": True} for i in (1, 2, 3)]
    before = {c: _predicted(c) for c in replicas}

    with ThreadPoolExecutor(6) as pool:
        statuses = list(pool.map(lambda _: _chat(p), range(12)))
    assert statuses == [200] * 12
    grown = {c for c in replicas if _predicted(c) > before[c]}
    assert len(grown) >= 2, f"only {len(grown)} replica(s) answered"

    # a conversation: its replica is killed between turns; the next turn is answered elsewhere
    convo = [
        {"role": "system", "content": f"You are terse. Conversation {time.time_ns()}."},
        {"role": "user", "content": "Say hi."},
    ]
    counts = {c: _predicted(c) for c in replicas}
    assert _chat(p, {**BODY, "messages": convo}) == 200
    (victim,) = [c for c in replicas if _predicted(c) > counts[c]]
    engine_client().containers.get(victim).kill()
    killed_at = time.monotonic()
    convo += [{"role": "assistant", "content": "Hi."}, {"role": "user", "content": "Again."}]
    assert _chat(p, {**BODY, "messages": convo}) == 200
    turn_s = time.monotonic() - killed_at
    live = [c for c in replicas if c != victim]
    gone_s = _within(10, "the killed replica leaves the router", lambda: set(_held(p)) == {
        addresses[c] for c in live})  # fmt: skip
    print(f"turn after the kill: 200 in {turn_s:.1f} s; router without it {gone_s:.1f} s after")
    _within(5, "/services lists 2 replicas", lambda: len(_llm_replicas(p) or []) == 2)

    # back to 3 (compose starts the killed container again): held once it answers its health path
    p.run("--profile", "server", "up", "-d", "--scale", "llama-server=3")
    (third,) = set(_replicas(p)) - set(live)
    seen: dict[str, float] = {}

    def back() -> bool:
        now = time.monotonic()
        if health(third) == "healthy":
            seen.setdefault("healthy", now)
        if _held(p).get(_address(third)) is True:
            seen.setdefault("held", now)
        return len(seen) == 2

    _within(240, "the replica started again is healthy and held", back)
    lag = seen["held"] - seen["healthy"]
    print(f"replica back: held by the router {lag:+.1f} s after Docker called it healthy")
    assert lag < 5, "the router took more than 5 s to hold a healthy replica"

    # a stopped replica costs none of the requests sent right after the stop
    engine_client().containers.get(third).stop(timeout=5)
    stopped_at = time.monotonic()
    with ThreadPoolExecutor(3) as pool:
        timed = list(pool.map(lambda _: _timed_chat(p), range(9)))
    assert [status for status, _ in timed] == [200] * 9
    # not a bound on the total: two one-slot replicas at load 25 took 62 s for the nine
    print(
        f"9 requests after the stop: {time.monotonic() - stopped_at:.1f} s, "
        f"slowest {max(s for _, s in timed):.1f} s"
    )
    assert sum(_predicted(c) for c in live) > sum(counts[c] for c in live)

    # no replica left: the gateway's JSON 503 with when to try again, never a hang
    with ThreadPoolExecutor(3) as pool:
        list(pool.map(lambda c: engine_client().containers.get(c).stop(timeout=5), _replicas(p)))
    _within(10, "the router holds no replica", lambda: _held(p) == {})
    resp = httpx.post(f"{p.gateway}/v1/chat/completions", json=BODY, headers=p.auth, timeout=30)
    assert resp.status_code == 503, resp.text
    assert resp.headers["Retry-After"] == "2"
    assert resp.json()["error"] == "upstream_unavailable"
    assert _llm_replicas(p) == []
    p.down()
    assert p.leftovers() == {"containers": [], "networks": [], "volumes": []}
