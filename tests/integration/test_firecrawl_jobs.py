"""Firecrawl's map, crawl and batch scrape through the real gateway, with jobs in the worker tier.

Stack (tests/support/crawl_stack.py): Redis, the scrape service with the broker set, two real
Celery workers consuming the crawl queue, the real Caddy gateway; the site is
tests/support/crawl_site.py (250+ pages: nested links, a sitemap index with a gzipped sitemap,
robots.txt disallowing /private/, a redirect loop, a slow page, and a link to a private address
whose listener counts connections). Clients: the real firecrawl-py SDK, v2 (default) and v1,
given the base URL `{gateway}/firecrawl` and the gateway key as a user configures them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest
from firecrawl import Firecrawl
from firecrawl.v1 import V1FirecrawlApp
from firecrawl.v2.types import PaginationConfig, ScrapeOptions, WebhookConfig
from firecrawl.v2.utils.error_handler import BadRequestError, FirecrawlError

from tests.support.crawl_site import CrawlSite, crawl_site, expected_pages
from tests.support.crawl_stack import CrawlStack, crawl_stack
from tests.support.fixture_web import Canary
from tests.support.httpfake import Reply, Seen, serve

pytestmark = pytest.mark.integration

KEY = "firecrawl-jobs-key-8c2a"


@pytest.fixture(scope="module")
def canary() -> Iterator[Canary]:
    c = Canary()
    yield c
    c.close()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, canary: Canary) -> Iterator[CrawlSite]:
    with crawl_site(tmp_path_factory.mktemp("site"), canary=canary.url + "/secret") as s:
        yield s


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CrawlStack]:
    with crawl_stack(tmp_path_factory.mktemp("jobs"), KEY) as s:
        yield s


@pytest.fixture
def fc(stack: CrawlStack) -> Firecrawl:
    return Firecrawl(api_key=KEY, api_url=stack.firecrawl)


def _paths(docs: list[object]) -> list[str]:
    out = []
    for doc in docs:
        meta = doc.metadata_typed  # type: ignore[attr-defined]
        out.append(urlsplit(meta.source_url or meta.url).path)
    return out


def test_v2_crawl_reads_the_whole_site_once_and_honours_robots_and_the_guard(
    fc: Firecrawl, site: CrawlSite, canary: Canary
) -> None:
    job = fc.crawl(site.url, allow_external_links=True, poll_interval=1, timeout=300)
    assert job.status == "completed"
    paths = _paths(job.data)
    assert len(paths) == len(set(paths)), "a page came twice"
    assert set(paths) == expected_pages()
    assert job.completed == len(paths)
    hits = site.hits()
    assert not [p for p in hits if p.startswith("/private")], "robots.txt was not honoured"
    assert hits["/sitemap-orphans.xml.gz"] >= 1
    assert canary.connections == 0, "a private address was contacted"
    # the per-host limit (SCRAPE_PER_HOST_CONCURRENCY, 4) held over two drivers
    assert 1 < hits["_max_inflight"] <= 4
    errors = fc.get_crawl_errors(job.id)  # type: ignore[arg-type]
    by_url = {e.url: e for e in errors.errors}
    assert by_url[canary.url + "/secret"].code == "BLOCKED_URL"
    assert "redirects" in by_url[site.url + "/loop/a"].error
    assert site.url + "/private/" in errors.robots_blocked


def test_v2_map_finds_the_sitemap_index_the_gzipped_sitemap_and_the_links(
    fc: Firecrawl, site: CrawlSite
) -> None:
    found = [link.url for link in fc.map(site.url).links]
    assert len(found) == len(set(found))
    paths = {urlsplit(u).path for u in found}
    assert {f"/orphan/{j}" for j in range(1, 11)} <= paths  # only in the gzipped sitemap
    assert {"/docs/", "/blog/", "/guides/", "/slow"} <= paths  # the start page's links
    assert all(urlsplit(u).netloc == urlsplit(site.url).netloc for u in found)
    skip = {urlsplit(link.url).path for link in fc.map(site.url, sitemap="skip").links}
    assert not any(p.startswith("/orphan/") for p in skip) and "/docs/" in skip
    only = {urlsplit(link.url).path for link in fc.map(site.url, sitemap="only").links}
    assert "/orphan/3" in only and "/private/" not in only
    searched = [link.url for link in fc.map(site.url, search="orphan", limit=4).links]
    assert len(searched) == 4 and all("/orphan/" in u for u in searched)


def test_v2_async_crawl_pages_through_results_with_next(fc: Firecrawl, site: CrawlSite) -> None:
    started = fc.start_crawl(site.url + "/docs/", limit=30, max_discovery_depth=3)
    assert started.url.endswith(f"/firecrawl/v2/crawl/{started.id}")
    job = fc.get_crawl_status(started.id, pagination_config=PaginationConfig(auto_paginate=False))
    deadline = time.monotonic() + 120
    while job.status == "scraping":
        assert time.monotonic() < deadline, "the crawl did not end"
        time.sleep(0.5)
        job = fc.get_crawl_status(
            started.id, pagination_config=PaginationConfig(auto_paginate=False)
        )
    assert job.status == "completed" and job.total == 30
    expires = job.expires_at
    assert expires is not None and 23 * 3600 < expires.timestamp() - time.time() <= 24 * 3600
    docs = list(job.data)
    # small pages: read them 7 at a time, following `next` as a client does
    page = fc.get_crawl_status_page(f"{fc_base(fc)}/v2/crawl/{started.id}?skip=0&limit=7")
    docs_paged = list(page.data)
    while page.next:
        page = fc.get_crawl_status_page(page.next)
        docs_paged += page.data
    paths = _paths(docs_paged)
    assert len(paths) == len(set(paths)) == job.completed
    assert sorted(paths) == sorted(_paths(docs))
    assert all(p == "/docs/" or p.startswith("/docs/") for p in paths)


def fc_base(fc: Firecrawl) -> str:
    return fc._v2_client.http_client.api_url.removesuffix("/firecrawl")  # type: ignore[attr-defined]


def test_v2_batch_scrape_gives_a_document_per_url(fc: Firecrawl, site: CrawlSite) -> None:
    urls = [f"{site.url}/blog/{i}" for i in range(1, 6)]
    job = fc.batch_scrape(urls, formats=["markdown", "links"], poll_interval=1, timeout=120)
    assert job.status == "completed" and job.completed == 5 and job.total == 5
    by_url = {d.metadata_typed.source_url: d for d in job.data}
    assert set(by_url) == set(urls)
    assert all(d.markdown and "Harbour tides" in d.markdown for d in job.data)
    assert all(d.links for d in job.data)


def test_cancel_crawl_stops_it_and_a_finished_crawl_cannot_be_cancelled(
    fc: Firecrawl, site: CrawlSite
) -> None:
    started = fc.start_crawl(site.url, delay=1, limit=50)
    assert fc.cancel_crawl(started.id) is True
    job = fc.get_crawl_status(started.id)
    assert job.status == "cancelled"
    assert fc.cancel_crawl(started.id) is True  # cancelling again changes nothing
    time.sleep(1.5)
    assert fc.get_crawl_status(started.id).completed == job.completed  # nothing more came
    done = fc.crawl(site.url + "/slow", limit=1, poll_interval=1, timeout=60)
    assert done.status == "completed"
    assert fc.cancel_crawl(done.id) is False  # 409: already completed  # type: ignore[arg-type]


# the SDK's own v1 client still calls pydantic's deprecated `.dict()`
@pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince20")
def test_v1_sdk_maps_crawls_pages_batches_and_cancels(stack: CrawlStack, site: CrawlSite) -> None:
    app = V1FirecrawlApp(api_key=KEY, api_url=stack.firecrawl)
    mapped = app.map_url(site.url, sitemap_only=True)
    assert mapped.links is not None and f"{site.url}/orphan/4" in mapped.links
    shallow = app.crawl_url(site.url, max_depth=1, poll_interval=1)
    assert shallow.status == "completed"
    got = {urlsplit(d.metadata["sourceURL"]).path for d in shallow.data}
    assert got == {"/", "/docs/", "/blog/", "/guides/", "/slow"}  # maxDepth: one segment
    big = app.crawl_url(site.url, limit=130, poll_interval=1)
    # more than one page of documents (100 a page): the SDK followed `next`
    assert big.completed > 100 and len(big.data) == big.completed
    batch = app.batch_scrape_urls([f"{site.url}/docs/{i}" for i in (1, 2, 3)], poll_interval=1)
    assert batch.status == "completed" and len(batch.data) == 3
    started = app.async_crawl_url(site.url, delay=1)
    assert started.success and started.id
    assert app.cancel_crawl(started.id)["status"] == "cancelled"
    assert app.check_crawl_status(started.id).status == "cancelled"
    assert app.check_crawl_errors(started.id).robotsBlocked is not None


def test_v1_names_on_v2_are_applied_and_an_idempotency_key_gives_the_same_job(
    stack: CrawlStack, site: CrawlSite
) -> None:
    # the body Dify's plugin sends to v2 (v1 names); maxDepth was silently ignored on v2 before
    body = {"url": site.url, "maxDepth": 1, "ignoreSitemap": False, "allowBackwardLinks": False}
    start = f"{stack.firecrawl}/v2/crawl"
    headers = {**stack.gateway.auth, "x-idempotency-key": "dify-7d1e"}
    first = httpx.post(start, json=body, headers=headers, timeout=30)
    assert first.status_code == 200, first.text
    warning = first.json()["warning"]
    assert all(f"{n} is Firecrawl v1's name" in warning for n in ("maxDepth", "ignoreSitemap"))
    again = httpx.post(start, json=body, headers=headers, timeout=30)
    assert again.json()["id"] == first.json()["id"]  # the same job, not a second one
    other = httpx.post(start, json={**body, "limit": 3}, headers=headers, timeout=30)
    assert other.status_code == 409 and "x-idempotency-key" in other.json()["error"]
    deadline = time.monotonic() + 120
    while True:
        status = httpx.get(first.json()["url"], headers=stack.gateway.auth, timeout=30).json()
        if status["status"] != "scraping" or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert status["status"] == "completed"
    got = {urlsplit(d["metadata"]["sourceURL"]).path for d in status["data"]}
    assert got == {"/", "/docs/", "/blog/", "/guides/", "/slow"}  # as v1's maxDepth: 1


def test_sdk_sees_firecrawls_errors(fc: Firecrawl, site: CrawlSite) -> None:
    with pytest.raises(BadRequestError):
        fc.start_crawl("http://169.254.169.254/latest/", limit=1)  # the guard, before any packet
    with pytest.raises(BadRequestError):
        fc.map("http://169.254.169.254/")
    with pytest.raises(BadRequestError):
        fc.start_crawl(site.url, include_paths=["(unclosed"])
    with pytest.raises(BadRequestError):
        fc.start_crawl(site.url, prompt="only the docs")
    with pytest.raises(BadRequestError):
        fc.start_crawl(site.url, scrape_options=ScrapeOptions(formats=["screenshot"]))
    with pytest.raises(FirecrawlError) as missing:
        fc.get_crawl_status("0" * 32)
    assert missing.value.status_code == 404


def test_everything_else_under_firecrawl_and_v2_answers_firecrawls_shape(
    stack: CrawlStack,
) -> None:
    cases = [
        ("POST", "/v2/deep-research", 501),
        ("POST", "/firecrawl/v1/generate-llmstxt", 501),
        ("POST", "/firecrawl/v1/deep-research", 501),
        ("POST", "/v2/llmstxt", 501),
        ("GET", "/v2/team/credit-usage/historical", 501),
        ("POST", "/v2/crawl/active", 405),
        ("POST", "/v2/agent", 501),
        ("POST", "/v2/nothing-here", 404),
        ("GET", "/firecrawl/v3/scrape", 404),
        ("GET", "/firecrawl", 404),
        ("GET", "/v2", 404),
        ("GET", f"/v2/crawl/{'0' * 32}", 404),
        ("DELETE", f"/firecrawl/v1/batch/scrape/{'0' * 32}", 404),
        ("GET", "/v2/scrape", 405),
    ]
    for method, path, status in cases:
        body = {} if method == "POST" else None
        r = httpx.request(
            method, stack.gateway.url + path, json=body, headers=stack.gateway.auth, timeout=30
        )
        assert r.status_code == status, (path, r.text)
        answer = r.json()
        assert answer["success"] is False and answer["error"], (path, answer)
        if status in (404, 501) and "crawl/" not in path and "batch/" not in path:
            assert "supported here: scrape, search, map, crawl" in answer["error"], path
    # nothing of that space reached llama-server (its upstream is closed: that would be a 502)


def test_services_says_crawls_are_durable(stack: CrawlStack) -> None:
    services = httpx.get(f"{stack.gateway.url}/services", timeout=10).json()
    assert services["scrape"] is True and services["crawl_durable"] is True


def test_webhooks_post_every_event_through_the_guard_with_a_retry(
    fc: Firecrawl, site: CrawlSite, canary: Canary
) -> None:
    seen: list[dict[str, object]] = []
    failed: list[str] = []

    def handle(req: Seen) -> Reply:
        event = json.loads(req.body)
        if event["type"] == "crawl.page" and not failed:
            failed.append(event["webhookId"])
            return Reply(500, b"try again")
        headers = {k.lower(): v for k, v in req.headers.items()}
        seen.append({**event, "token": headers.get("x-token")})
        return Reply(200, b"ok")

    with serve(handle) as hook:
        config = WebhookConfig(
            url=f"{hook.url}/hook", headers={"X-Token": "t1"}, metadata={"run": "7"}
        )
        job = fc.crawl(site.url + "/guides/", limit=5, webhook=config, poll_interval=1)
        deadline = time.monotonic() + 30
        while sum(e["type"] == "crawl.page" for e in seen) < 5 or not any(
            e["type"] == "crawl.completed" for e in seen
        ):
            assert time.monotonic() < deadline, seen
            time.sleep(0.1)
    types = [e["type"] for e in seen]
    assert types.count("crawl.started") == 1 and types.count("crawl.completed") == 1
    pages = [e for e in seen if e["type"] == "crawl.page"]
    assert len(pages) == 5 and failed[0] in {e["webhookId"] for e in pages}  # retried
    assert all(e["id"] == job.id and e["metadata"] == {"run": "7"} for e in seen)
    assert all(e["token"] == "t1" for e in seen)
    assert {urlsplit(e["data"][0]["metadata"]["sourceURL"]).path for e in pages} == {  # type: ignore[index]
        urlsplit(d.metadata_typed.source_url or "").path for d in job.data
    }
    # a webhook at a private address is refused by the guard when the job is made (400, no job):
    # never contacted
    with pytest.raises(BadRequestError, match=r"webhook\.url"):
        fc.crawl(site.url + "/slow", limit=1, webhook=canary.url + "/hook", poll_interval=1)
    assert canary.connections == 0


def test_langchain_firecrawl_loader_crawls_and_maps(stack: CrawlStack, site: CrawlSite) -> None:
    from langchain_firecrawl import FireCrawlLoader

    crawled = FireCrawlLoader(
        url=site.url + "/blog/",
        api_key=KEY,
        api_url=stack.firecrawl,
        mode="crawl",
        params={"limit": 10, "poll_interval": 1},
    ).load()
    assert len(crawled) == 10
    assert all("Harbour tides" in d.page_content for d in crawled)
    assert all(d.metadata["source_url"].startswith(site.url + "/blog/") for d in crawled)
    mapped = FireCrawlLoader(
        url=site.url,
        api_key=KEY,
        api_url=stack.firecrawl,
        mode="map",
        params={"sitemap": "only"},
    ).load()
    assert f"{site.url}/orphan/7" in {d.page_content for d in mapped}
