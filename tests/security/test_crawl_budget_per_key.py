"""Finding 7: one key's crawls held the whole shared job budget, so every other key got 429.

All jobs shared one byte budget (`SCRAPE_CRAWL_MAX_TOTAL_BYTES`), each job reserving its whole
bound when it started: one key starting two crawls took all of it, and every other key's crawl
or batch scrape was refused with 429 until they ended. Now the jobs of one key hold at most
`SCRAPE_CRAWL_MAX_KEY_BYTES` (what they stored, at least 1 MiB a running job), the total stays
the ceiling over all keys, and without a broker a key runs at most
`SCRAPE_CRAWL_MAX_KEY_LOCAL_JOBS` jobs at once.

Through the real gateway (two box keys, the real key service) and the real scrape service, with
jobs in the worker tier's Redis (no worker takes them, so they keep running) and in the service
itself (a crawl with a long delay between pages keeps running): the key's name is the one the
gateway sets, a forged `X-OpenMono-Key` changing nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.crawl_site import CrawlSite, crawl_site
from tests.support.crawl_stack import CrawlStack, crawl_stack

pytestmark = pytest.mark.integration

KEY = "budget-key-3f9e"
ANNA, BEN, CARL = "laptop-anna", "laptop-ben", "laptop-carl"
MiB = 1024 * 1024
BOUNDS = {
    # each running job holds 1 MiB at least (and what it stored past that): two of a key's fill
    # its 2.5 MiB, five fill the 5.5 MiB of all keys
    "SCRAPE_CRAWL_MAX_BYTES": str(MiB),
    "SCRAPE_CRAWL_MAX_KEY_BYTES": str(5 * MiB // 2),
    "SCRAPE_CRAWL_MAX_TOTAL_BYTES": str(11 * MiB // 2),
}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CrawlSite]:
    with crawl_site(tmp_path_factory.mktemp("site")) as s:
        yield s


def _start(stack: CrawlStack, site: CrawlSite, who: str, **headers: str) -> httpx.Response:
    return httpx.post(
        f"{stack.gateway.url}/firecrawl/v2/crawl",
        json={"url": site.url, "delay": 60},
        headers={**stack.auth(who), **headers},
        timeout=30,
    )


@pytest.mark.parametrize("durable", [True, False], ids=["worker tier", "in the service"])
def test_one_keys_jobs_leave_room_for_the_others(
    tmp_path: Path, site: CrawlSite, durable: bool
) -> None:
    keys = [ANNA, BEN, CARL]
    with crawl_stack(
        tmp_path, KEY, durable=durable, workers=0, scrape_env=BOUNDS, box_keys=keys
    ) as stack:
        started = [_start(stack, site, ANNA) for _ in range(2)]
        assert [r.status_code for r in started] == [200, 200], [r.text for r in started]
        third = _start(stack, site, ANNA)
        assert third.status_code == 429, third.text
        assert "SCRAPE_CRAWL_MAX_KEY_BYTES" in third.json()["error"]
        # claiming to be another key is not another key: the gateway sets the header
        forged = _start(stack, site, ANNA, **{"X-OpenMono-Key": BEN})
        assert forged.status_code == 429 and "KEY_BYTES" in forged.json()["error"]
        # the others are not held back by anna's jobs (before: 429 for everyone)
        others = [_start(stack, site, who) for who in (BEN, BEN, CARL)]
        assert [r.status_code for r in others] == [200, 200, 200], [r.text for r in others]
        # the total is the ceiling over all keys
        full = _start(stack, site, "operator")
        assert full.status_code == 429 and "SCRAPE_CRAWL_MAX_TOTAL_BYTES" in full.json()["error"]
        # a cancelled job holds only what it stored: its key has room again
        job = started[0].json()["id"]
        cancel = httpx.delete(
            f"{stack.gateway.url}/firecrawl/v2/crawl/{job}", headers=stack.auth(ANNA), timeout=30
        )
        assert cancel.status_code == 200, cancel.text
        assert _start(stack, site, ANNA).status_code == 200


def test_without_a_broker_one_key_runs_at_most_its_share_of_the_jobs(
    tmp_path: Path, site: CrawlSite
) -> None:
    env = {
        "SCRAPE_CRAWL_MAX_BYTES": str(MiB),
        "SCRAPE_CRAWL_MAX_LOCAL_JOBS": "3",
        "SCRAPE_CRAWL_MAX_KEY_LOCAL_JOBS": "2",
    }
    with crawl_stack(tmp_path, KEY, durable=False, scrape_env=env, box_keys=[ANNA, BEN]) as stack:
        assert [_start(stack, site, ANNA).status_code for _ in range(2)] == [200, 200]
        third = _start(stack, site, ANNA)
        assert third.status_code == 429 and "SCRAPE_CRAWL_MAX_KEY_LOCAL_JOBS" in third.text
        assert _start(stack, site, BEN).status_code == 200
        assert _start(stack, site, BEN).status_code == 429  # all 3 of the service's run
