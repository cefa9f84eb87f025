"""The job store's rules, the same for the in-memory store and the Redis one (real redis-server).

These are what make a crawl lose and repeat no page whatever its drivers do: leases that run
out come back (and are given up after `max_attempts`), a page finished twice is stored once, the
job ends exactly once, limits and the byte bound hold, and everything in Redis expires.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from openmono_contracts.crawl import CrawlRules, JobSpec
from openmono_scrape.crawl import Finished, Item, JobStore, MemoryJobStore, RedisJobStore, StoreFull

from tests.support.redis import RedisServer, redis_server

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    with redis_server(tmp_path_factory.mktemp("store")) as s:
        yield s


@pytest.fixture(params=["memory", "redis"])
async def store(request: pytest.FixtureRequest, server: RedisServer) -> AsyncIterator[JobStore]:
    with server.client() as c:  # each test starts with no reservation
        c.delete(
            "openmono:crawl:reserved",
            "openmono:crawl:reserved-bytes",
            "openmono:crawl:reserved-owner",
        )
    made: JobStore = (
        MemoryJobStore(TOTAL, PER_KEY)
        if request.param == "memory"
        else RedisJobStore.from_url(server.url, TOTAL, PER_KEY)
    )
    yield made
    await made.close()


_n = iter(range(10**6))
MiB = 1024 * 1024
TOTAL, PER_KEY = 10 * MiB, 6 * MiB  # what the fixture's stores allow in all and per key


def _spec(**kw: object) -> JobSpec:
    now = time.time()
    base: dict[str, object] = {
        "id": f"{next(_n):032x}",
        "kind": "crawl",
        "version": "v2",
        "created_at": now,
        "expires_at": now + 600,
        "seeds": ["https://ex.com/"],
        "rules": CrawlRules(limit=5),
        "concurrency": 2,
        "lease_s": 5.0,
        "max_bytes": 1024 * 1024,
    }
    base.update(kw)
    return JobSpec.model_validate(base)


def _item(n: int, depth: int = 0) -> Item:
    return Item(f"https://ex.com/{n}", depth, f"ex.com/{n}")


def _doc(n: int) -> str:
    return json.dumps({"markdown": f"page {n}", "metadata": {"sourceURL": f"https://ex.com/{n}"}})


async def test_claims_keep_to_the_concurrency_and_a_second_finish_changes_nothing(
    store: JobStore,
) -> None:
    spec = _spec()
    await store.create(spec, [_item(0), _item(1), _item(2), _item(0)])
    state = await store.state(spec.id)
    assert state is not None and state.total == 3  # the repeated seed counts once
    now = time.time()
    first = await store.claim(spec.id, 10, now)
    assert len(first) == 2  # concurrency 2
    assert await store.claim(spec.id, 10, now) == []
    done = await store.finish(spec.id, first[0], Finished(document=_doc(0)), now)
    assert done.verdict == "stored" and done.ended is None
    again = await store.finish(spec.id, first[0], Finished(document=_doc(0)), now)
    assert again.verdict == "duplicate"
    found = Finished(
        document=_doc(1), discovered=[_item(5, 1), _item(6, 1), _item(7, 1), _item(0, 1)]
    )
    await store.finish(spec.id, first[1], found, now)
    state = await store.state(spec.id)
    assert state is not None and state.total == 5  # limit 5: 7 and the seen 0 are not taken
    ends = []
    while True:
        items = await store.claim(spec.id, 10, time.time())
        if not items:
            break
        for item in items:
            result = await store.finish(spec.id, item, Finished(document=_doc(9)), time.time())
            ends.append(result.ended)
    assert [e for e in ends if e] == ["completed"]  # exactly one finish ends the job
    docs = await store.documents(spec.id, 0, 100)
    assert len(docs) == 5
    assert await store.documents(spec.id, 3, 100) == docs[3:]


async def test_a_lease_that_runs_out_comes_back_then_is_given_up(store: JobStore) -> None:
    spec = _spec(concurrency=1, lease_s=1.0, max_attempts=2, rules=CrawlRules(limit=5))
    await store.create(spec, [_item(1)])
    now = time.time()
    (taken,) = await store.claim(spec.id, 1, now)
    (again,) = await store.claim(spec.id, 1, now + 1.5)  # its driver died: handed out again
    assert again.url == taken.url and again.attempts == 1
    assert await store.claim(spec.id, 1, now + 3.0) == []  # died twice: given up
    errors, _ = await store.errors(spec.id)
    assert len(errors) == 1 and json.loads(errors[0])["code"] == "WORKER_LOST"
    state = await store.state(spec.id)
    assert state is not None and state.status == "failed" and state.failed == 1
    # the first driver was only slow: its late finish changes nothing
    late = await store.finish(spec.id, taken, Finished(document=_doc(1)), now + 4)
    assert late.verdict == "dropped"


async def test_renewed_leases_stay_and_released_items_return(store: JobStore) -> None:
    spec = _spec(concurrency=2, lease_s=1.0)
    await store.create(spec, [_item(1), _item(2)])
    now = time.time()
    a, b = await store.claim(spec.id, 2, now)
    await store.renew(spec.id, [a], now + 0.9)
    await store.release(spec.id, b)
    back = await store.claim(spec.id, 2, now + 1.2)
    assert [i.url for i in back] == [b.url]  # a is still leased, b came back


async def test_redirect_onto_a_known_page_robots_refusals_and_errors(store: JobStore) -> None:
    spec = _spec(concurrency=3)
    await store.create(spec, [_item(1), _item(2), _item(3)])
    one, two, three = await store.claim(spec.id, 3, time.time())
    await store.finish(spec.id, one, Finished(document=_doc(1)), time.time())
    dup = Finished(document=_doc(1), alias_key=one.key)  # /2 redirected to /1
    assert (await store.finish(spec.id, two, dup, time.time())).verdict == "duplicate"
    refused = Finished(
        error={"id": "e", "timestamp": "t", "url": three.url, "code": "X", "error": "no"},
        blocked=[("ex.com/private", "https://ex.com/private")],
    )
    result = await store.finish(spec.id, three, refused, time.time())
    assert result.verdict == "error" and result.ended == "completed"
    errors, blocked = await store.errors(spec.id)
    assert len(errors) == 1 and blocked == ["https://ex.com/private"]


async def test_the_byte_bound_stops_the_job_with_a_warning(store: JobStore) -> None:
    spec = _spec(concurrency=1, max_bytes=1024)
    await store.create(spec, [_item(1), _item(2), _item(3)])
    big = json.dumps({"markdown": "x" * 700})
    (first,) = await store.claim(spec.id, 1, time.time())
    await store.finish(spec.id, first, Finished(document=big), time.time())
    (second,) = await store.claim(spec.id, 1, time.time())
    result = await store.finish(spec.id, second, Finished(document=big), time.time())
    assert result.ended == "completed"
    state = await store.state(spec.id)
    assert state is not None and state.completed == 1 and state.bytes <= 1024
    assert state.warning and "byte bound" in state.warning


async def test_cancel_drivers_and_flags(store: JobStore) -> None:
    spec = _spec(max_drivers=1)
    await store.create(spec, [_item(1)])
    now = time.time()
    assert await store.beat(spec.id, "a", now + 5, now)
    assert not await store.beat(spec.id, "b", now + 5, now)  # one driver at a time
    assert await store.beat(spec.id, "b", now + 10, now + 6)  # a's heartbeat ran out
    assert await store.live_drivers(spec.id, now + 6) == 1
    assert await store.mark_once(spec.id, "started") and not await store.mark_once(
        spec.id, "started"
    )
    assert await store.cancel(spec.id, now) == "cancelled"
    assert await store.cancel(spec.id, now) == "cancelled"
    assert await store.claim(spec.id, 1, now) == []
    assert await store.cancel("f" * 32, now) == "missing"


async def test_redis_keys_expire_with_the_job(server: RedisServer) -> None:
    store = RedisJobStore.from_url(server.url)
    try:
        spec = _spec(expires_at=time.time() + 30)
        await store.create(spec, [_item(1)])
        (item,) = await store.claim(spec.id, 1, time.time())
        await store.finish(spec.id, item, Finished(document=_doc(1)), time.time())
        with server.client() as c:
            keys = c.keys(f"openmono:crawl:{spec.id}:*")
            assert len(keys) >= 5
            assert all(0 < c.pttl(k) <= 30_000 for k in keys)
    finally:
        await store.close()


async def test_memory_store_drops_expired_jobs(tmp_path: Path) -> None:
    store = MemoryJobStore()
    spec = _spec(expires_at=time.time() - 1)
    await store.create(spec, [_item(1)])
    assert await store.spec(spec.id) is None


async def test_a_key_holds_at_most_its_bound_and_all_keys_the_total(store: JobStore) -> None:
    # each running job holds at least 1 MiB: six of anna's fill her 6 MiB, four of ben's the rest
    annas = [_spec(owner="anna", max_bytes=4 * MiB, rules=CrawlRules(limit=1)) for _ in range(6)]
    for spec in annas:
        await store.create(spec, [_item(1)])
    with pytest.raises(StoreFull) as refused:
        await store.create(_spec(owner="anna"), [_item(1)])
    assert refused.value.per_key and "SCRAPE_CRAWL_MAX_KEY_BYTES" in str(refused.value)
    for _ in range(4):
        await store.create(_spec(owner="ben"), [_item(1)])
    with pytest.raises(StoreFull) as full:
        await store.create(_spec(owner="carl"), [_item(1)])
    assert not full.value.per_key and "SCRAPE_CRAWL_MAX_TOTAL_BYTES" in str(full.value)
    # once one of anna's jobs ended it holds only what it stored (nothing), so carl's fits
    (item,) = await store.claim(annas[0].id, 1, time.time())
    assert (await store.finish(annas[0].id, item, Finished(), time.time())).ended == "completed"
    await store.create(_spec(owner="carl"), [_item(1)])


async def test_a_document_past_the_keys_bound_stops_its_job(store: JobStore) -> None:
    for _ in range(5):
        await store.create(_spec(owner="anna"), [_item(1)])
    spec = _spec(owner="anna", max_bytes=4 * MiB, concurrency=3)
    await store.create(spec, [_item(1), _item(2), _item(3)])
    first, second, third = await store.claim(spec.id, 3, time.time())
    small = json.dumps({"markdown": "x" * (MiB // 2)})  # within the job's 1 MiB floor: no growth
    assert (await store.finish(spec.id, first, Finished(document=small), time.time())).verdict == (
        "stored"
    )
    big = json.dumps({"markdown": "x" * MiB})  # 1.5 MiB held: past anna's 6 MiB
    result = await store.finish(spec.id, second, Finished(document=big), time.time())
    assert result.verdict == "skipped"
    state = await store.state(spec.id)
    assert state is not None and state.completed == 1
    assert state.warning is not None and "SCRAPE_CRAWL_MAX_KEY_BYTES" in state.warning
    # another key is not held back by anna's bound
    other = _spec(owner="ben", max_bytes=4 * MiB)
    await store.create(other, [_item(1)])
    (item,) = await store.claim(other.id, 1, time.time())
    assert (await store.finish(other.id, item, Finished(document=big), time.time())).verdict == (
        "stored"
    )
    await store.finish(spec.id, third, Finished(), time.time())


async def test_a_document_past_the_total_stops_its_job(store: JobStore) -> None:
    for owner in ("a", "b", "c", "d"):
        for _ in range(2):
            await store.create(_spec(owner=owner), [_item(1)])
    spec = _spec(owner="e", max_bytes=4 * MiB)
    await store.create(spec, [_item(1), _item(2)])  # 9 MiB held: 1 MiB left in all
    (item,) = await store.claim(spec.id, 1, time.time())
    big = json.dumps({"markdown": "x" * (5 * MiB // 2)})  # 2.5 MiB held: 0.5 MiB too many
    assert (await store.finish(spec.id, item, Finished(document=big), time.time())).verdict == (
        "skipped"
    )
    state = await store.state(spec.id)
    assert state is not None and state.warning is not None
    assert "SCRAPE_CRAWL_MAX_TOTAL_BYTES" in state.warning


async def test_owned_lists_a_keys_live_jobs_only(store: JobStore) -> None:
    mine = [_spec(owner="owned-anna") for _ in range(2)]
    for spec in mine:
        await store.create(spec, [_item(1)])
    await store.create(_spec(owner="owned-ben"), [_item(1)])
    gone = _spec(owner="owned-anna", expires_at=time.time() + 0.2)
    await store.create(gone, [_item(1)])
    time.sleep(0.3)
    assert sorted(await store.owned("owned-anna")) == sorted(s.id for s in mine)
    assert len(await store.owned("owned-ben")) == 1 and await store.owned("nobody") == []
