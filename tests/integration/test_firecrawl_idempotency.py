"""`x-idempotency-key`'s records (issue 41 item 6), the in-memory store and the Redis one (a real
redis-server): one record per gateway key and idempotency key, another gateway key's record out
of reach, a pending claim held only a while, a kept one until its job expires, memory bounded."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator

import pytest
from openmono_scrape.errors import BadRequest
from openmono_scrape.firecrawl import IdempotencyStore, MemoryIdempotency, RedisIdempotency
from openmono_scrape.firecrawl._idempotency import Record, checked_key, fingerprint

from tests.support.redis import RedisServer, redis_server

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    with redis_server(tmp_path_factory.mktemp("idem")) as s:
        yield s


@pytest.fixture(params=["memory", "redis"])
async def once(
    request: pytest.FixtureRequest, server: RedisServer
) -> AsyncIterator[IdempotencyStore]:
    with server.client() as c:
        c.flushdb()
    made: IdempotencyStore = (
        MemoryIdempotency() if request.param == "memory" else RedisIdempotency.from_url(server.url)
    )
    yield made
    await made.close()


async def test_one_record_per_gateway_key(once: IdempotencyStore) -> None:
    first = Record("a" * 32, fingerprint("crawl", "v2", {"url": "https://ex.com/"}))
    assert await once.claim("anna", "k1", first) is None  # free: anna's now
    await once.keep("anna", "k1", first, time.time() + 60)
    again = Record("b" * 32, first.fingerprint)
    assert await once.claim("anna", "k1", again) == first  # the same job, not a new one
    # ben's "k1" is ben's own: anna's job is out of his reach
    assert await once.claim("ben", "k1", again) is None
    assert await once.claim("ben", "k1", first) == again
    await once.forget("anna", "k1")  # a start that failed frees its key
    assert await once.claim("anna", "k1", again) is None


async def test_a_kept_record_expires_with_its_job(once: IdempotencyStore) -> None:
    rec = Record("c" * 32, "fp")
    assert await once.claim("anna", "k2", rec) is None
    await once.keep("anna", "k2", rec, time.time() + 0.3)
    assert await once.claim("anna", "k2", Record("d" * 32, "fp")) == rec
    time.sleep(0.4)
    assert await once.claim("anna", "k2", Record("d" * 32, "fp")) is None


async def test_memory_records_are_bounded_per_key_and_in_all() -> None:
    once = MemoryIdempotency(max_records=5, per_owner=3)
    for i in range(4):
        assert await once.claim("anna", f"k{i}", Record(f"{i}", "fp")) is None
    # anna's oldest gave way to her fourth; nobody else's did
    assert await once.claim("anna", "k0", Record("x", "fp")) is None
    for i in range(3):
        assert await once.claim("ben", f"k{i}", Record(f"b{i}", "fp")) is None
    assert len(once._records) == 5


def test_a_key_that_cannot_be_one_is_a_400() -> None:
    assert checked_key(None) is None
    assert checked_key("3f2b9c1e-0000-4000-8000-000000000000")
    for bad in ("", "a b", "é", "x" * 257):
        with pytest.raises(BadRequest, match="x-idempotency-key"):
            checked_key(bad)
