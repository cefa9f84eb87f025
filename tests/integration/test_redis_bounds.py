"""Redis's memory bound: the stack's Redis never evicts the broker's keys (a real redis-server).

The native stack's Redis (and compose's) runs with `maxmemory` and `noeviction`
(`openmono.stack.services.REDIS_BOUNDS`). Filled up to that bound (here made small), it refuses
the next write with an error, and every broker key stays: a queued call, a stored result, a call's
claim. Under a `volatile-*` policy the same filling silently drops the result and the claim, both
of which carry a TTL: why the policy is what it is. At the bound the agent's executor answers a
call with an error at once (no hang, nothing half-sent), and the scrape cache steps aside: the
scrape is still answered.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
import redis
from openmono.executor.celery import CeleryExecutor
from openmono.stack.services import REDIS_BOUNDS
from openmono_contracts import ToolRequest
from openmono_worker import WorkerSettings
from openmono_worker.callstate import claim, claim_key
from openmono_worker.celery_app import TASK_NAME, create_app

from tests.support.fixture_web import scrape_service
from tests.support.redis import RedisServer, redis_server
from tests.support.scrape_fixtures import ok, scrape

pytestmark = pytest.mark.integration

CHUNK = b"x" * 4096


def _broker_keys(server: RedisServer) -> tuple[str, str]:
    """A call queued on a queue nobody consumes, a stored result and a claim; (result, task) ids."""
    app = create_app(WorkerSettings(broker_url=server.url))
    try:
        app.send_task(TASK_NAME, args=[{"tool": "Bash"}], queue="openmono.tools.bounds-test")
        # as the result backend stores one: its key, with the results' expiry
        result_key = app.backend.get_key_for_task("result-id")
        expires = int(app.conf.result_expires)
    finally:
        app.close()
    with server.client() as c:
        c.set(result_key, b'{"status": "SUCCESS", "result": {"ok": true}}', ex=expires)
        assert claim(c, "task-id", read_only=False) == "first"
    return "result-id", "task-id"


def _fill(server: RedisServer) -> bool:
    """Write to database 1 (the scrape cache's) until Redis refuses; True if it ever did."""
    c = server.client(db=1)
    try:
        for i in range(20_000):
            c.set(f"junk:{i}", CHUNK, ex=3600)
    except redis.exceptions.OutOfMemoryError:
        return True
    finally:
        c.close()
    return False


def _small(server: RedisServer, policy: str | None = None) -> None:
    with server.client() as c:
        used = int(c.info("memory")["used_memory"])
        c.config_set("maxmemory", used + 4 * 1024 * 1024)
        if policy:
            c.config_set("maxmemory-policy", policy)


def test_the_stacks_redis_has_a_memory_bound_and_never_evicts(tmp_path: Path) -> None:
    assert REDIS_BOUNDS == ("--maxmemory", "256mb", "--maxmemory-policy", "noeviction")
    with redis_server(tmp_path) as server, server.client() as c:
        assert c.config_get("maxmemory")["maxmemory"] == str(256 * 1024 * 1024)
        assert c.config_get("maxmemory-policy")["maxmemory-policy"] == "noeviction"


def test_at_the_bound_writes_are_refused_and_broker_keys_stay(tmp_path: Path) -> None:
    with redis_server(tmp_path) as server:
        result_id, task_id = _broker_keys(server)
        _small(server)
        assert _fill(server), "Redis never reached its bound"
        with server.client() as c:
            assert c.llen("openmono.tools.bounds-test") == 1
            assert c.exists(f"celery-task-meta-{result_id}") == 1
            assert c.exists(claim_key(task_id)) == 1


def test_an_evicting_policy_would_lose_results_and_claims(tmp_path: Path) -> None:
    with redis_server(tmp_path) as server:
        result_id, task_id = _broker_keys(server)
        _small(server, "volatile-lru")
        assert not _fill(server)  # nothing refused: room was made instead
        with server.client() as c:
            lost = c.exists(f"celery-task-meta-{result_id}") + c.exists(claim_key(task_id))
        assert lost < 2


async def test_at_the_bound_a_tool_call_is_an_error_at_once(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with redis_server(tmp_path) as server:
        _small(server)
        assert _fill(server)
        ex = CeleryExecutor(server.url, pickup_timeout_s=0.5, queue_timeout_s=5)
        try:
            req = ToolRequest(
                tool="Bash",
                params={"command": "echo hi"},
                call_id="full",
                session_id="bounds",
                workspace=str(ws),
            )
            result = await ex.run(req)
        finally:
            await ex.aclose()
    assert not result.ok and "maxmemory" in (result.error or ""), result


def test_at_the_bound_the_scrape_cache_steps_aside(tmp_path: Path, web: str) -> None:
    with redis_server(tmp_path) as server:
        _small(server)
        assert _fill(server)
        env = {"SCRAPE_CACHE_REDIS_URL": f"redis://127.0.0.1:{server.port}/1"}
        with scrape_service(tmp_path, env) as svc:
            assert httpx.get(f"{svc}/health", timeout=10).json()["cache"]["backend"] == "redis"
            first = ok(scrape(svc, url=f"{web}/article"))
            assert first.cache == "miss"
            # Redis refused the entry: the cache moved to memory for a while, the scrape is fine
            cache = httpx.get(f"{svc}/health", timeout=10).json()["cache"]
            assert cache["backend"] == "memory" and cache["memory_entries"] == 1
