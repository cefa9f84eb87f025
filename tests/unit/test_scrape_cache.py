"""The scrape cache's parts without a network: URL normalisation, keys, the entry format, the
memory store's byte bound and LRU order, max-age, and the per-host limiter."""

from __future__ import annotations

import asyncio
import time

import pytest
from openmono_scrape.cache import (
    CachedPage,
    MemoryStore,
    ScrapeCache,
    cache_key,
    normalise_url,
)
from openmono_scrape.errors import FetchTimeout
from openmono_scrape.hostlimit import HostLimiter
from openmono_scrape.page import FetchedPage


def _entry(body: bytes = b"<p>x</p>", rendered: str | None = None, age_s: float = 0) -> CachedPage:
    page = FetchedPage(
        url="https://example.org/a",
        status=200,
        headers={"content-type": "text/html; charset=utf-8"},
        body=body,
        engine="browser" if rendered is not None else "fetcher",
        rendered_html=rendered,
    )
    return CachedPage(page, "fetcher" if rendered else None, time.time() - age_s)


@pytest.mark.parametrize(
    ("raw", "norm"),
    [
        ("HTTPS://Example.ORG", "https://example.org/"),
        ("https://example.org:443/a?b=1#frag", "https://example.org/a?b=1"),
        ("http://example.org:80/a", "http://example.org/a"),
        ("http://example.org:8080/a", "http://example.org:8080/a"),
        ("https://example.org./a?z=1&a=2", "https://example.org/a?z=1&a=2"),
        ("http://[::1]:5000/x", "http://[::1]:5000/x"),
    ],
)
def test_normalise_url(raw: str, norm: str) -> None:
    assert normalise_url(raw) == norm


def test_the_key_holds_what_changes_the_page() -> None:
    base = cache_key("https://example.org/a", render=False)
    assert cache_key("HTTPS://EXAMPLE.org:443/a#x", render=False) == base
    assert cache_key("https://example.org/a", render=True) != base
    assert cache_key("https://example.org/a", render=False, headers={"Cookie": "a"}) != base
    assert cache_key("https://example.org/a", render=False, headers={"cookie": "a"}) == (
        cache_key("https://example.org/a", render=False, headers={"Cookie": "a"})
    )
    assert cache_key("https://example.org/a?x=1", render=False) != base


@pytest.mark.parametrize("rendered", [None, "<html><body>DOM é</body></html>"])
def test_an_entry_survives_encoding(rendered: str | None) -> None:
    entry = _entry(b"\x00\x01 raw \xff bytes\n", rendered)
    back = CachedPage.decode(entry.encode())
    assert back == entry
    assert back.stored_at_iso.endswith("Z")


async def test_memory_store_is_bounded_in_bytes_least_recently_used_first() -> None:
    store = MemoryStore(max_bytes=300)
    for name in "abc":
        await store.put(name, bytes(100))
    assert store.bytes == 300 and len(store) == 3
    assert await store.get("a") is not None  # a is now the most recent
    await store.put("d", bytes(100))
    assert await store.get("b") is None  # b was the least recently used
    assert [await store.get(k) is not None for k in "acd"] == [True, True, True]
    await store.put("a", bytes(250))  # replacing counts the new size only
    assert store.bytes <= 300
    assert await store.get("a") is not None


async def test_max_age_decides_hits() -> None:
    cache = ScrapeCache(max_bytes=1 << 20)
    key = cache_key("https://example.org/a", render=False)
    await cache.put(key, _entry(age_s=30))
    assert await cache.get(key, max_age_s=None) is None  # no age allowed: never read
    assert await cache.get(key, max_age_s=0) is None
    assert await cache.get(key, max_age_s=10) is None  # too old for this caller
    hit = await cache.get(key, max_age_s=60)
    assert hit is not None and hit.page.body == b"<p>x</p>"
    assert (cache.hits, cache.misses) == (1, 1)


async def test_one_page_cannot_flush_the_cache() -> None:
    cache = ScrapeCache(max_bytes=4000)
    small = cache_key("https://example.org/small", render=False)
    await cache.put(small, _entry(b"s" * 100))
    await cache.put(cache_key("https://example.org/big", render=False), _entry(b"b" * 3000))
    assert await cache.get(small, max_age_s=60) is not None
    assert cache.memory.bytes < 1000


async def test_cache_off_stores_nothing() -> None:
    cache = ScrapeCache(max_bytes=0)
    key = cache_key("https://example.org/a", render=False)
    await cache.put(key, _entry())
    assert await cache.get(key, max_age_s=60) is None and cache.memory.bytes == 0


async def test_a_redis_that_does_not_answer_falls_back_to_memory() -> None:
    # port 9 on loopback: nothing listens, the connection is refused at once
    cache = ScrapeCache(max_bytes=1 << 20, redis_url="redis://127.0.0.1:9/1")
    key = cache_key("https://example.org/a", render=False)
    await cache.put(key, _entry())
    assert cache.backend == "memory"
    assert await cache.get(key, max_age_s=60) is not None
    await cache.close()


async def test_host_limiter_caps_concurrency_per_host() -> None:
    limiter = HostLimiter(per_host=2)
    peak = {"a": 0, "b": 0}
    running = {"a": 0, "b": 0}

    async def fetch(host: str) -> None:
        async with limiter.slot(f"http://{host}.example/x", 5.0):
            running[host] += 1
            peak[host] = max(peak[host], running[host])
            await asyncio.sleep(0.02)
            running[host] -= 1

    await asyncio.gather(*(fetch(h) for h in "aaaaabbb"))
    assert peak == {"a": 2, "b": 2}
    assert limiter.in_use("a.example") == 0 and not limiter._slots


async def test_host_limiter_wait_ends_with_the_budget() -> None:
    limiter = HostLimiter(per_host=1)
    async with limiter.slot("http://a.example/", 1.0):
        with pytest.raises(FetchTimeout):
            async with limiter.slot("http://a.example/other", 0.05):
                pass
    assert not limiter._slots
