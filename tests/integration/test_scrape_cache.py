"""The scrape cache and the per-host limit in the running service, and the cache in a real Redis.

The origins here count what reaches them: a cache hit must never be one of those requests.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from openmono_scrape.cache import CachedPage, ScrapeCache, cache_key
from openmono_scrape.page import FetchedPage

from tests.support.fixture_web import scrape_service
from tests.support.httpfake import FakeServer, Reply, Seen, serve
from tests.support.redis import RedisServer, start_redis

pytestmark = pytest.mark.integration

PAGE = b"<html><head><title>Harbour</title></head><body><p>Harbour page text.</p></body></html>"


@pytest.fixture
def origin() -> Iterator[FakeServer]:
    with serve(lambda req: Reply(200, PAGE, "text/html")) as server:
        yield server


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = start_redis(tmp_path_factory.mktemp("redis"))
    try:
        yield server
    finally:
        server.proc.stop()


@pytest.fixture(scope="module")
def cached(tmp_path_factory: pytest.TempPathFactory, redis_server: RedisServer) -> Iterator[str]:
    """A scrape service that caches in the module's Redis. Each test asks its own origin (a port of
    its own), so no test finds another's pages in the cache."""
    env = {"SCRAPE_CACHE_REDIS_URL": redis_server.url}
    with scrape_service(tmp_path_factory.mktemp("cached"), env) as svc:
        yield svc


def _post(svc: str, **body: object) -> httpx.Response:
    return httpx.post(f"{svc}/scrape", json=body, timeout=60)


def test_native_scrape_serves_a_young_copy_without_asking_the_origin(
    origin: FakeServer, cached: str
) -> None:
    url = f"{origin.url}/page"
    svc = cached
    plain = _post(svc, url=url)  # no max_age_s: fetched, and stored
    hit = _post(svc, url=url, max_age_s=300, format="text")
    other_format = _post(svc, url=url, max_age_s=300, format="html")
    assert len(origin.requests) == 1
    time.sleep(1.1)
    too_old = _post(svc, url=url, max_age_s=1)
    assert len(origin.requests) == 2
    health = httpx.get(f"{svc}/health", timeout=10).json()
    assert plain.json()["cache"] == "miss" and plain.json()["cached_at"] is None
    body = hit.json()
    assert body["cache"] == "hit" and body["cached_at"].endswith("Z")
    assert "Harbour page text." in body["content"] and body["format"] == "text"
    assert other_format.json()["cache"] == "hit" and "<p>" in other_format.json()["content"]
    assert too_old.json()["cache"] == "miss"
    assert health["cache"]["backend"] == "redis"


def test_the_cache_is_shared_by_processes_through_redis(
    tmp_path: Path, origin: FakeServer, redis_server: RedisServer, cached: str
) -> None:
    url = f"{origin.url}/shared"
    env = {"SCRAPE_CACHE_REDIS_URL": redis_server.url}
    with scrape_service(tmp_path, env) as two:  # a second process on the same Redis
        assert _post(cached, url=url).json()["cache"] == "miss"
        assert _post(two, url=url, max_age_s=60).json()["cache"] == "hit"
    assert len(origin.requests) == 1


async def test_redis_store_stays_under_its_byte_bound_lru_first(redis_server: RedisServer) -> None:
    # a namespace of its own on the Redis the service tests share
    cache = ScrapeCache(max_bytes=40_000, redis_url=redis_server.url, redis_prefix="test-lru:")
    keys = [cache_key(f"https://example.org/{i}", render=False) for i in range(8)]

    def entry(i: int) -> CachedPage:
        page = FetchedPage(f"https://example.org/{i}", 200, {}, bytes(9_000), "fetcher")
        return CachedPage(page, None, time.time())

    for i in range(4):
        await cache.put(keys[i], entry(i))
    assert await cache.get(keys[0], max_age_s=60) is not None  # 0 is now recently used
    for i in range(4, 6):
        await cache.put(keys[i], entry(i))
    with redis_server.client() as r:
        total = int(r.get("test-lru:bytes") or 0)
        members = r.zcard("test-lru:lru")
    assert total <= 40_000 and members == 4
    assert await cache.get(keys[1], max_age_s=60) is None  # least recently used: gone
    assert await cache.get(keys[0], max_age_s=60) is not None
    assert await cache.get(keys[5], max_age_s=60) is not None
    assert cache.backend == "redis"
    await cache.close()


def test_a_burst_to_one_host_is_held_to_the_per_host_limit(tmp_path: Path) -> None:
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def slow(req: Seen) -> Reply:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.3)
        with lock:
            state["now"] -= 1
        return Reply(200, PAGE, "text/html")

    async def burst(svc: str, origin: str) -> list[int]:
        async with httpx.AsyncClient(timeout=60) as client:
            replies = await asyncio.gather(
                *(client.post(f"{svc}/scrape", json={"url": f"{origin}/p{i}"}) for i in range(6))
            )
        return [r.status_code for r in replies]

    with (
        serve(slow) as origin,
        scrape_service(tmp_path, {"SCRAPE_PER_HOST_CONCURRENCY": "2"}) as svc,
    ):
        codes = asyncio.run(burst(svc, origin.url))
    assert codes == [200] * 6
    assert state["peak"] == 2
