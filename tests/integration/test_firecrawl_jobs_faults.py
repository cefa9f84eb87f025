"""Crawl jobs survive their processes: a worker killed mid-crawl, a scrape service restarted, the
job store (Redis) out of reach for a while.

Each test has its own stack (tests/support/crawl_stack.py) and site (every page answers after
40 ms, so the crawl is still running when the fault comes). What must hold afterwards: the job
completes, and its documents are exactly the site's pages, each once.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.support.crawl_site import CrawlSite, crawl_site, expected_pages
from tests.support.crawl_stack import CrawlStack, crawl_stack

pytestmark = [pytest.mark.integration, pytest.mark.slow]

KEY = "firecrawl-faults-key-41d0"


@pytest.fixture
def site(tmp_path: Path) -> Iterator[CrawlSite]:
    with crawl_site(tmp_path, latency_ms=40, slow_s=0.5) as s:
        yield s


def _start(stack: CrawlStack, site: CrawlSite) -> str:
    r = httpx.post(
        f"{stack.firecrawl}/v2/crawl",
        json={"url": site.url, "scrapeOptions": {"maxAge": 0}},
        headers=stack.gateway.auth,
        timeout=30,
    )
    assert r.status_code == 200, r.text
    return str(r.json()["id"])


def _status(stack: CrawlStack, job_id: str) -> dict[str, object]:
    deadline = time.monotonic() + 30
    while True:
        r = httpx.get(
            f"{stack.firecrawl}/v2/crawl/{job_id}", headers=stack.gateway.auth, timeout=30
        )
        # right after a restart the gateway's health checks may hold the service out a moment
        if r.status_code not in (502, 503) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert r.status_code == 200, r.text
    return dict(r.json())


def _wait_done(stack: CrawlStack, job_id: str, timeout_s: float = 180) -> dict[str, object]:
    deadline = time.monotonic() + timeout_s
    while True:
        status = _status(stack, job_id)
        if status["status"] != "scraping":
            return status
        assert time.monotonic() < deadline, f"the job did not end: {status['completed']}"
        time.sleep(0.5)


def _all_paths(stack: CrawlStack, job_id: str) -> list[str]:
    url: str | None = f"{stack.firecrawl}/v2/crawl/{job_id}"
    paths: list[str] = []
    while url:
        page = httpx.get(url, headers=stack.gateway.auth, timeout=30).json()
        paths += [urlsplit(d["metadata"]["sourceURL"]).path for d in page["data"]]
        url = page.get("next")
    return paths


def _wait_progress(stack: CrawlStack, job_id: str, pages: int) -> None:
    deadline = time.monotonic() + 120
    while int(_status(stack, job_id)["completed"]) < pages:  # type: ignore[call-overload]
        assert time.monotonic() < deadline
        time.sleep(0.1)


def test_a_worker_killed_mid_crawl_loses_and_repeats_no_page(
    tmp_path: Path, site: CrawlSite
) -> None:
    with crawl_stack(tmp_path, KEY, workers=2, worker_concurrency=1, slice_s=2.0) as stack:
        job_id = _start(stack, site)
        _wait_progress(stack, job_id, 40)
        victim = stack.workers[0]
        os.killpg(victim.proc.pid, signal.SIGKILL)  # no warm shutdown: leases and message orphaned
        victim.proc.popen.wait(10)
        killed_at = int(_status(stack, job_id)["completed"])  # type: ignore[call-overload]
        status = _wait_done(stack, job_id)
        assert status["status"] == "completed"
        assert killed_at < int(status["completed"])  # type: ignore[call-overload]
        paths = _all_paths(stack, job_id)
        assert len(paths) == len(set(paths)), "a page was stored twice"
        assert set(paths) == expected_pages(), "a page was lost"
        survivor = stack.workers[1].proc.output()
        assert "slice ended" in survivor


def test_a_crawl_outlives_a_restart_of_the_scrape_service(tmp_path: Path, site: CrawlSite) -> None:
    with crawl_stack(tmp_path, KEY, workers=1, worker_concurrency=2, slice_s=2.0) as stack:
        job_id = _start(stack, site)
        _wait_progress(stack, job_id, 30)
        stack.restart_scrape()
        status = _wait_done(stack, job_id)
        assert status["status"] == "completed"
        paths = _all_paths(stack, job_id)
        assert len(paths) == len(set(paths))
        assert set(paths) == expected_pages()


def test_a_job_store_out_of_reach_is_a_503_with_retry_after(
    tmp_path: Path, site: CrawlSite
) -> None:
    with crawl_stack(tmp_path, KEY, workers=0) as stack:
        job_id = _start(stack, site)
        assert stack.redis is not None
        stack.redis.proc.stop()
        for method, path in (
            ("GET", f"/v2/crawl/{job_id}"),
            ("DELETE", f"/v2/crawl/{job_id}"),
            ("POST", "/v2/crawl"),
        ):
            body = {"url": site.url} if method == "POST" else None
            r = httpx.request(method, stack.scrape + "/firecrawl" + path, json=body, timeout=60)
            assert r.status_code == 503, (path, r.text)
            assert r.json()["success"] is False and "Redis" in r.json()["error"]
            assert r.headers["retry-after"] == "5"
