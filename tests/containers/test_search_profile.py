"""`docker compose --profile search up -d` with the shipped defaults, then faults and `down -v`.

The user's literal commands from the repository root (the root compose.yaml): the gateway comes up
healthy, serves search and the model through the bearer, refuses without it, and recovers by
itself when a service's process dies (killed from the host: Docker treats `docker kill` as a
deliberate stop and would not restart it), serving again within 15 s of its process being back
with two CPU-bound processes beside it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime

import httpx
import pytest

from tests.containers.conftest import Project, ProjectFactory
from tests.containers.recovery import BOUND_S, cpu_hogs, crash_and_recover

pytestmark = [pytest.mark.containers, pytest.mark.slow, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def stack(project: ProjectFactory) -> Iterator[Project]:
    p = project()
    start = time.monotonic()
    p.up("search")
    p.wait_healthy("llama-server", "searxng", "caddy")
    print(f"\n--profile search healthy in {time.monotonic() - start:.1f} s")
    yield p
    p.down()
    assert p.leftovers() == {"containers": [], "networks": [], "volumes": []}


def test_services_say_search_is_on_with_the_shipped_defaults(stack: Project) -> None:
    r = httpx.get(f"{stack.gateway}/services", timeout=10)
    assert r.status_code == 200
    assert r.json()["llm"] is True
    assert r.json()["search"] is True


def test_the_gateway_does_not_log_checks_of_a_service_the_profile_lacks(stack: Project) -> None:
    # --profile search runs no scrape service: Caddy asking for it every 2 s filled the log.
    # More than one active-check interval since caddy started (usually long past: it is only
    # healthy after its first 5 s healthcheck interval).
    started = str(stack.inspect("caddy")["State"]["StartedAt"])  # type: ignore[index]
    up_s = time.time() - datetime.fromisoformat(started[:26].rstrip("Z") + "+00:00").timestamp()
    time.sleep(max(0.0, 3 - up_s))
    logs = stack.logs("caddy")
    assert "health_checker" not in logs, logs[-2000:]


def test_search_with_the_bearer_returns_results(stack: Project) -> None:
    r = httpx.get(
        f"{stack.gateway}/search", params={"q": "hello", "format": "json"}, headers=stack.auth,
        timeout=15,
    )  # fmt: skip
    assert r.status_code == 200, r.text
    assert r.json()["results"], r.text


def test_no_bearer_is_refused(stack: Project) -> None:
    for path in ("/search?q=x&format=json", "/v1/models"):
        r = httpx.get(f"{stack.gateway}{path}", timeout=10)
        assert r.status_code == 401, path
        assert r.json() == {"error": "unauthorized"}


def test_chat_streams_through_the_gateway(stack: Project) -> None:
    body = {"messages": [{"role": "user", "content": "Say hi."}], "max_tokens": 8, "stream": True}
    events = []
    with httpx.stream(
        "POST", f"{stack.gateway}/v1/chat/completions", json=body, headers=stack.auth, timeout=120
    ) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        for line in r.iter_lines():
            if line.startswith("data: "):
                events.append(line)
    assert len(events) >= 3 and events[-1] == "data: [DONE]"


def test_gateway_is_published_on_loopback_only(stack: Project) -> None:
    ports = stack.inspect("caddy")["NetworkSettings"]["Ports"]  # type: ignore[index]
    bound = {b["HostIp"] for binding in ports.values() if binding for b in binding}
    assert bound == {"127.0.0.1"}


def test_every_service_restarts_unless_stopped(stack: Project) -> None:
    for service in ("llama-server", "searxng", "caddy"):
        policy = stack.inspect(service)["HostConfig"]["RestartPolicy"]["Name"]  # type: ignore[index]
        assert policy == "unless-stopped", service


# (service, path, name in the 502 body). Neither outage is always visible to a client: the
# gateway retries a failed dial for up to 2 s (lb_try_duration, caddy/README.md "Several
# upstreams"), and both stand-ins are back within that, so a restart can pass as slightly slow
# 200s. What holds always: every answer comes within 5 s, an error is the JSON 502/503 (or the
# real llama-server's own 503 while it loads), and the restarted service is reached again without
# touching the gateway, within the bound (tests/containers/recovery.py) with two CPU-bound
# processes beside it. The JSON body of a longer outage is tested natively (test_gateway_config).
CRASHES = [
    ("searxng", "/search?q=hello&format=json", "search"),
    ("llama-server", "/v1/models", "llm"),
]


@pytest.mark.parametrize(("service", "path", "name"), CRASHES)
def test_a_crashed_service_gives_json_502_then_serves_within_the_bound(
    stack: Project, service: str, path: str, name: str
) -> None:
    url = f"{stack.gateway}{path}"
    assert httpx.get(url, headers=stack.auth, timeout=15).status_code == 200

    def attempt() -> bool:
        start = time.monotonic()
        r = httpx.get(url, headers=stack.auth, timeout=15)
        assert time.monotonic() - start < 5, "the gateway must answer at once, not hang"
        if r.status_code == 200:
            return True
        if r.status_code == 503 and name == "llm" and isinstance(r.json().get("error"), dict):
            return False  # the real llama-server's own 503 while it loads the model again
        # 502 for the failed dial, or 503 once the passive health check has taken the only
        # replica out (caddy/README.md, "Several upstreams")
        assert r.status_code in (502, 503), r.text
        assert r.json() == {
            "error": "upstream_unavailable",
            "service": name,
            "status": r.status_code,
        }
        return False

    with cpu_hogs(2):
        recovery = crash_and_recover(stack, service, attempt)
    print(f"\n{recovery}")
    assert recovery.served_after_s <= BOUND_S, recovery
    assert recovery.healthy_after_s <= BOUND_S, recovery
    assert stack.health("caddy") == "healthy"
