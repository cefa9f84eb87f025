"""Crawl jobs without a broker: the scrape service runs them itself, with the same API.

The stack is the scrape service and the gateway only (no Redis, no worker); `/services` must say
that crawls are not durable, and the same SDK calls as with the worker tier must work.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
from firecrawl import Firecrawl

from tests.support.crawl_site import CrawlSite, crawl_site, expected_pages
from tests.support.crawl_stack import CrawlStack, crawl_stack

pytestmark = pytest.mark.integration

KEY = "firecrawl-local-key-77e1"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CrawlStack]:
    with crawl_stack(tmp_path_factory.mktemp("local"), KEY, durable=False) as s:
        yield s


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CrawlSite]:
    with crawl_site(tmp_path_factory.mktemp("site")) as s:
        yield s


def test_services_says_crawls_are_not_durable(stack: CrawlStack) -> None:
    services = httpx.get(f"{stack.gateway.url}/services", timeout=10).json()
    assert services["scrape"] is True and services["crawl_durable"] is False
    health = httpx.get(f"{stack.scrape}/health", timeout=10).json()
    assert health["crawl"]["durable"] is False and health["crawl"]["runner"] == "in-process"


def test_in_process_crawl_map_and_batch_with_the_sdk(stack: CrawlStack, site: CrawlSite) -> None:
    fc = Firecrawl(api_key=KEY, api_url=stack.firecrawl)
    job = fc.crawl(site.url, poll_interval=1, timeout=300)
    assert job.status == "completed"
    paths = [urlsplit(d.metadata_typed.source_url or "").path for d in job.data]
    assert len(paths) == len(set(paths)) and set(paths) == expected_pages()
    assert f"{site.url}/orphan/2" in {link.url for link in fc.map(site.url).links}
    batch = fc.batch_scrape([f"{site.url}/docs/{i}" for i in (1, 2)], poll_interval=1, timeout=60)
    assert batch.status == "completed" and len(batch.data) == 2
    started = fc.start_crawl(site.url, delay=1)
    assert fc.cancel_crawl(started.id) is True
    assert fc.get_crawl_status(started.id).status == "cancelled"


def test_jobs_end_with_the_service_without_a_broker(tmp_path: Path, site: CrawlSite) -> None:
    with crawl_stack(tmp_path, KEY, durable=False) as stack:
        fc = Firecrawl(api_key=KEY, api_url=stack.firecrawl)
        started = fc.start_crawl(site.url, delay=1)
        stack.restart_scrape()
        r = httpx.get(
            f"{stack.scrape}/firecrawl/v2/crawl/{started.id}", timeout=30
        )  # the service itself: the gateway may hold it out a moment after the restart
        assert r.status_code == 404 and r.json() == {"success": False, "error": "Job not found"}
