"""What integrators poll (issue 41 item 5), per gateway key, through the real gateway: the real
key service answers team credit and token usage from its usage records, the real scrape service
(jobs in the service, no broker) the running crawls and the queue; the real firecrawl-py SDK
(v2 and v1) reads them. One key never sees or counts another's."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from firecrawl import Firecrawl
from firecrawl.v1 import V1FirecrawlApp

from tests.support.crawl_site import CrawlSite, crawl_site
from tests.support.crawl_stack import CrawlStack, crawl_stack

pytestmark = pytest.mark.integration

KEY = "firecrawl-team-key-41c5"
ANNA = "laptop-anna"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CrawlSite]:
    with crawl_site(tmp_path_factory.mktemp("site")) as s:
        yield s


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CrawlStack]:
    with crawl_stack(tmp_path_factory.mktemp("team"), KEY, durable=False, box_keys=[ANNA]) as s:
        yield s


def _get(stack: CrawlStack, path: str, who: str = "operator") -> httpx.Response:
    return httpx.get(f"{stack.gateway.url}{path}", headers=stack.auth(who), timeout=30)


def _until(check: object, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not check() and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.2)


def test_active_crawls_queue_and_usage_per_key(stack: CrawlStack, site: CrawlSite) -> None:
    fc = Firecrawl(api_key=KEY, api_url=stack.firecrawl)
    scraped = fc.scrape(f"{site.url}/docs/1", formats=["markdown"])
    assert scraped.markdown
    # a long delay between pages keeps each crawl running while the endpoints are asked
    mine = fc.start_crawl(site.url, delay=30, limit=5)
    hers = httpx.post(
        f"{stack.firecrawl}/v2/crawl",
        json={"url": site.url, "delay": 30, "limit": 3},
        headers=stack.auth(ANNA),
        timeout=30,
    ).json()["id"]
    try:
        active = fc.get_active_crawls()
        assert [(c.id, c.team_id, c.url) for c in active.crawls] == [
            (mine.id, "operator", site.url + "/")  # the start URL as normalised
        ]
        assert active.crawls[0].options is not None and active.crawls[0].options["limit"] == 5
        ongoing = _get(stack, "/firecrawl/v1/crawl/ongoing", ANNA).json()
        assert [c["id"] for c in ongoing["crawls"]] == [hers] and ongoing["success"] is True
        assert ongoing["crawls"][0]["teamId"] == ANNA
        queue = fc.get_queue_status()
        assert queue.jobs_in_queue >= 1 and queue.max_concurrency >= 1
        assert queue.active_jobs_in_queue + queue.waiting_jobs_in_queue == queue.jobs_in_queue

        # usage, from the gateway's records (written once each answer is sent)
        _until(lambda: _get(stack, "/v2/team/credit-usage").json()["data"]["creditsUsed"] >= 2)
        assert fc.get_credit_usage().remaining_credits > 0
        v2 = _get(stack, "/v2/team/credit-usage").json()
        assert v2["success"] is True and v2["data"]["creditsUsed"] == 2  # the scrape, the crawl
        assert v2["data"]["planCredits"] is None and v2["data"]["remainingCredits"] > 0
        assert v2["data"]["billingPeriodStart"].endswith("-01T00:00:00Z")
        anna = _get(stack, "/firecrawl/v1/team/credit-usage", ANNA).json()["data"]
        assert anna["credits_used"] == 1  # her crawl alone: not the operator's requests
        v1 = V1FirecrawlApp(api_key=KEY, api_url=stack.firecrawl)
        assert v1.get_credit_usage().data.remaining_credits > 0
        tokens = v1.get_token_usage().data
        assert tokens.remaining_tokens > 0 and tokens.billing_period_end is not None
        assert _get(stack, "/v2/team/token-usage").json()["data"]["tokensUsed"] == 0
        forged = httpx.get(
            f"{stack.gateway.url}/v2/team/credit-usage",
            headers={**stack.auth(ANNA), "X-OpenMono-Key": "operator"},
            timeout=30,
        ).json()["data"]
        assert forged["creditsUsed"] == 1  # anna's: the gateway names the key, not the client
    finally:
        fc.cancel_crawl(mine.id)
        httpx.delete(f"{stack.firecrawl}/v2/crawl/{hers}", headers=stack.auth(ANNA), timeout=30)
    assert fc.get_active_crawls().crawls == []
    batch = fc.batch_scrape([f"{site.url}/docs/2"], poll_interval=1, timeout=60)
    assert batch.status == "completed"
    started = httpx.post(
        f"{stack.firecrawl}/v2/batch/scrape",
        json={"urls": [f"{site.url}/docs/3", "http://10.0.0.1/"]},  # refused before any packet
        headers=stack.auth(),
        timeout=30,
    ).json()["id"]
    _until(lambda: fc.get_batch_scrape_status(started).status != "scraping")
    errors = _get(stack, f"/v2/batch/scrape/{started}/errors").json()
    assert [e["url"] for e in errors["errors"]] == ["http://10.0.0.1/"] and errors[
        "robotsBlocked"
    ] == []


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "firecrawl_clients"


def _replay(stack: CrawlStack, site: CrawlSite, client: str) -> dict[str, httpx.Response]:
    """Each recorded request of `client` as it sends it (tests/fixtures/firecrawl_clients)."""
    out = {}
    for req in json.loads((FIXTURES / f"{client}.json").read_text()):
        body = json.loads(json.dumps(req["body"]).replace("{site}", site.url))
        out[req["name"]] = httpx.request(
            req["method"],
            f"{stack.gateway.url}{req['path']}",
            json=body,
            headers={**stack.auth(), **req.get("headers", {})},
            timeout=30,
        )
    return out


def test_n8n_and_dify_requests_are_answered(stack: CrawlStack, site: CrawlSite) -> None:
    n8n = _replay(stack, site, "n8n")
    for name in ("team credit usage", "team token usage", "team queue status", "active crawls"):
        assert n8n[name].status_code == 200 and n8n[name].json()["success"] is True, name
    # no model on this stack: the preview is Firecrawl's 503, naming why
    preview = n8n["crawl params preview"]
    assert preview.status_code == 503 and preview.json()["success"] is False
    crawl = n8n["crawl"]
    assert crawl.status_code == 200, crawl.text
    assert "ignoreSitemap is Firecrawl v1's name" in crawl.json()["warning"]
    dify = _replay(stack, site, "dify")["crawl"]
    assert dify.status_code == 200, dify.text
    assert all(w in dify.json()["warning"] for w in ("maxDepth", "allowBackwardLinks"))
    again = _replay(stack, site, "dify")["crawl"]  # its Idempotency-Key: the same job
    assert again.json()["id"] == dify.json()["id"]
    for job in (crawl.json()["id"], dify.json()["id"]):
        httpx.delete(f"{stack.firecrawl}/v2/crawl/{job}", headers=stack.auth(), timeout=30)
