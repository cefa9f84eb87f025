"""`docker compose --profile server up --scale llama-server=3`: the gateway finds the replicas.

Caddy discovers the replicas by the service name (`dynamic a`, refreshed every second), so the
user's one command is all it takes. Requests through the gateway reach more than one replica (each
replica's own /metrics counts what it generated), and a stopped replica drops out without a failed
request.
"""

from __future__ import annotations

import re
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tests.containers.conftest import Project, ProjectFactory, engine_client

pytestmark = [pytest.mark.containers, pytest.mark.slow, pytest.mark.timeout(600)]

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


def _chat(p: Project) -> int:
    with httpx.stream(
        "POST", f"{p.gateway}/v1/chat/completions", json=BODY, headers=p.auth, timeout=60
    ) as resp:
        for _ in resp.iter_lines():
            pass
        return resp.status_code


def test_three_replicas_share_the_load_and_a_stopped_one_drops_out(
    project: ProjectFactory,
) -> None:
    p = project(LLAMA_PARALLEL="1")
    started = time.monotonic()
    p.run("--profile", "server", "up", "-d", "--scale", "llama-server=3")
    replicas = _replicas(p)
    assert len(replicas) == 3
    p.wait_healthy("caddy")  # waits for every llama-server replica to be healthy first
    print(f"\n3 replicas + gateway healthy in {time.monotonic() - started:.1f} s")
    before = {c: _predicted(c) for c in replicas}

    with ThreadPoolExecutor(6) as pool:
        statuses = list(pool.map(lambda _: _chat(p), range(12)))
    assert statuses == [200] * 12
    grown = {c for c in replicas if _predicted(c) > before[c]}
    assert len(grown) >= 2, f"only {len(grown)} replica(s) answered"

    # stop one replica: its address leaves the service's DNS answer; nothing fails meanwhile
    victim = replicas[0]
    engine_client().containers.get(victim).stop(timeout=5)
    stopped_at = time.monotonic()
    with ThreadPoolExecutor(3) as pool:
        statuses = list(pool.map(lambda _: _chat(p), range(9)))
    assert statuses == [200] * 9
    assert time.monotonic() - stopped_at < 60
    live = [c for c in replicas if c != victim]
    assert sum(_predicted(c) for c in live) > sum(before[c] for c in live)
    p.down()
    assert p.leftovers() == {"containers": [], "networks": [], "volumes": []}
