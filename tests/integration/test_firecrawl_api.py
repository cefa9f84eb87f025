"""The Firecrawl-compatible API through the real gateway, driven by the real firecrawl-py SDK.

Stack: the fixture site, a SearXNG-shaped server whose results point at it, the real scrape
service and the real Caddy gateway (tests/support/web_stack.py). The SDK is given the base URL
`{gateway}/firecrawl` and the gateway key, as a user would configure it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from firecrawl import AsyncFirecrawl, Firecrawl
from firecrawl.v1 import V1FirecrawlApp
from firecrawl.v2.types import ScrapeOptions
from firecrawl.v2.utils.error_handler import (
    BadRequestError,
    RequestTimeoutError,
    UnauthorizedError,
)

from tests.support import fixture_web as fw
from tests.support.fixture_web import scrape_services
from tests.support.gateway import closed_upstream
from tests.support.web_stack import WebStack, web_stack

pytestmark = pytest.mark.integration

KEY = "firecrawl-test-key-5d1e"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory, web: str) -> Iterator[WebStack]:
    results = [f"{web}/article", f"{web}/code", f"{web}/image"]
    with web_stack(tmp_path_factory.mktemp("fc"), KEY, results) as s:
        yield s


@pytest.fixture
def fc(stack: WebStack) -> Firecrawl:
    return Firecrawl(api_key=KEY, api_url=stack.firecrawl)


def test_sdk_v2_scrape_gives_every_format_and_the_metadata(fc: Firecrawl, web: str) -> None:
    doc = fc.scrape(f"{web}/article", formats=["markdown", "html", "rawHtml", "links"], max_age=0)
    assert doc.markdown is not None and fw.ARTICLE_SENTINEL in doc.markdown
    assert doc.html is not None and fw.ARTICLE_SENTINEL in doc.html
    assert doc.raw_html is not None and "<html" in doc.raw_html.lower()
    assert doc.links is not None and all(u.startswith("http") for u in doc.links)
    md = doc.metadata_typed
    assert md.title == fw.ARTICLE_TITLE
    assert md.status_code == 200
    assert md.source_url == f"{web}/article" and md.url == f"{web}/article"
    assert doc.metadata_dict["cache_state"] == "miss"


# the SDK's own v1 search still calls pydantic's deprecated `.dict()`
@pytest.mark.filterwarnings("ignore::pydantic.warnings.PydanticDeprecatedSince20")
def test_sdk_v1_scrape_and_search(stack: WebStack, web: str) -> None:
    app = V1FirecrawlApp(api_key=KEY, api_url=stack.firecrawl)
    doc = app.scrape_url(f"{web}/article", formats=["markdown"], only_main_content=True)
    assert doc.markdown is not None and fw.ARTICLE_SENTINEL in doc.markdown
    found = app.search("hello", limit=2)
    assert found.success
    assert [r["url"] for r in found.data] == [f"{web}/article", f"{web}/code"]


def test_sdk_v2_search_scrapes_the_results(fc: Firecrawl, stack: WebStack, web: str) -> None:
    before = len(stack.searxng.searches())
    found = fc.search("hello", limit=3, scrape_options=ScrapeOptions(formats=["markdown"]))
    assert len(stack.searxng.searches()) == before + 1
    assert found.web is not None and len(found.web) == 3
    article, code, image = found.web
    assert getattr(article, "markdown", None) and fw.ARTICLE_SENTINEL in article.markdown
    assert getattr(code, "markdown", None) and "def tide" in code.markdown
    # the image cannot be read as text: it stays a result, without text
    assert getattr(image, "url", None) == f"{web}/image"
    assert getattr(image, "markdown", None) is None


def test_sdk_v2_search_without_scrape_options_lists_results(fc: Firecrawl, web: str) -> None:
    found = fc.search("hello", limit=2)
    assert found.web is not None
    assert [r.url for r in found.web] == [f"{web}/article", f"{web}/code"]
    assert found.web[0].title == "Result 1 for hello (page 1)"


def test_max_age_hit_never_touches_the_origin(stack: WebStack) -> None:
    from tests.support.httpfake import Reply, serve

    body = b"<html><head><title>Counted</title></head><body><p>Counted page.</p></body></html>"
    with serve(lambda req: Reply(200, body, "text/html")) as origin:
        fc = Firecrawl(api_key=KEY, api_url=stack.firecrawl)
        url = f"{origin.url}/counted"
        first = fc.scrape(url, formats=["markdown"], max_age=60_000)
        second = fc.scrape(url, formats=["markdown"], max_age=60_000)
        # the native /scrape shares the cache
        native = httpx.post(
            f"{stack.gateway.url}/scrape",
            json={"url": url, "max_age_s": 60},
            headers=stack.gateway.auth,
            timeout=30,
        )
        fresh = fc.scrape(url, formats=["markdown"], max_age=0)
        assert len(origin.requests) == 2  # the first and the max_age=0 one
    assert first.metadata_dict["cache_state"] == "miss"
    assert second.metadata_dict["cache_state"] == "hit"
    assert second.metadata_dict["cached_at"].endswith("Z")
    assert second.markdown == first.markdown
    assert native.status_code == 200 and native.json()["cache"] == "hit"
    assert fresh.metadata_dict["cache_state"] == "miss"


def test_errors_come_in_firecrawl_shape_with_real_codes(fc: Firecrawl, web: str) -> None:
    with pytest.raises(BadRequestError):
        fc.scrape(f"{web}/redirect?to=http://169.254.169.254/", formats=["markdown"])
    with pytest.raises(RequestTimeoutError):
        fc.scrape(f"{web}/slow?s=5", formats=["markdown"], timeout=1000, max_age=0)


def test_raw_error_bodies(stack: WebStack, web: str) -> None:
    base, auth = stack.firecrawl, stack.gateway.auth
    invalid = httpx.post(f"{base}/v1/scrape", json={"formats": ["markdown"]}, headers=auth)
    assert invalid.status_code == 400
    body = invalid.json()
    assert body["success"] is False and "url" in body["error"] and "Traceback" not in invalid.text
    not_json = httpx.post(f"{base}/v1/scrape", content=b"{", headers=auth)
    assert not_json.status_code == 400 and not_json.json()["success"] is False
    image = httpx.post(f"{base}/v1/scrape", json={"url": f"{web}/image"}, headers=auth, timeout=30)
    assert image.status_code == 415 and image.json()["success"] is False
    empty = httpx.post(f"{base}/v2/search", json={"query": ""}, headers=auth)
    assert empty.status_code == 400 and empty.json()["success"] is False


def test_auth_is_refused_without_the_key(stack: WebStack, web: str) -> None:
    for path in ("/firecrawl/v1/scrape", "/firecrawl/v2/search", "/v2/scrape"):
        resp = httpx.post(f"{stack.gateway.url}{path}", json={"url": f"{web}/article"})
        assert resp.status_code == 401
        assert resp.json() == {"success": False, "error": "unauthorized"}
        assert resp.headers["www-authenticate"] == "Bearer"
    with pytest.raises(UnauthorizedError):
        Firecrawl(api_key="not-the-key", api_url=stack.firecrawl).scrape(f"{web}/article")


def test_switched_off_scrape_switches_firecrawl_off(tmp_path: Path, web: str) -> None:
    with web_stack(tmp_path, KEY, [f"{web}/article"], scrape_enabled="false") as s:
        resp = httpx.post(
            f"{s.firecrawl}/v1/scrape", json={"url": f"{web}/article"}, headers=s.gateway.auth
        )
        refused = httpx.post(f"{s.firecrawl}/v1/scrape", json={"url": f"{web}/article"})
    assert resp.status_code == 503
    assert resp.json() == {"success": False, "error": "service_disabled", "service": "scrape"}
    assert refused.status_code == 401  # the key is checked first


def test_search_without_searxng_is_503_and_searxng_down_is_502(tmp_path: Path) -> None:
    body = {"query": "tides"}
    unset_env = {"SCRAPE_BROWSER_PATH": ""}
    down_env = {"SCRAPE_BROWSER_PATH": "", "SCRAPE_SEARXNG_URL": f"http://{closed_upstream()}"}
    with scrape_services(tmp_path, unset_env, down_env) as (unset_svc, down_svc):
        unset = httpx.post(f"{unset_svc}/firecrawl/v2/search", json=body, timeout=30)
        down = httpx.post(f"{down_svc}/firecrawl/v1/search", json=body, timeout=30)
    assert unset.status_code == 503 and "SCRAPE_SEARXNG_URL" in unset.json()["error"]
    assert down.status_code == 502 and down.json()["success"] is False


async def test_sdk_async_client_scrapes_too(stack: WebStack, web: str) -> None:
    # the async client keeps the base URL's path (/firecrawl/v2/...), unlike the sync one
    fc = AsyncFirecrawl(api_key=KEY, api_url=stack.firecrawl)
    doc = await fc.scrape(f"{web}/article", formats=["markdown"], max_age=0)
    assert doc.markdown is not None and fw.ARTICLE_SENTINEL in doc.markdown


def test_json_format_without_a_model_on_the_box_is_503(stack: WebStack, web: str) -> None:
    # this stack's gateway has no LLM upstream: its /services says llm false; no page is fetched
    def hits() -> int:
        return int(httpx.get(f"{web}/hits", params={"path": "/article"}).json()["hits"])

    before = hits()
    body = {"url": f"{web}/article", "formats": [{"type": "json", "prompt": "the title"}]}
    resp = httpx.post(f"{stack.firecrawl}/v2/scrape", json=body, headers=stack.gateway.auth)
    assert resp.status_code == 503
    error = resp.json()
    assert error["success"] is False and "llm: false" in error["error"]
    assert hits() == before


def test_change_tracking_compares_with_the_keys_last_scrape(stack: WebStack) -> None:
    from firecrawl.v2.types import ChangeTrackingFormat

    from tests.support.httpfake import Reply, serve

    page = {"price": "£10", "status": 200}

    def answer(req: object) -> Reply:
        body = f"<html><body><article><h1>Clock</h1><p>Price: {page['price']}</p>"
        body += "<p>A wall clock with a quiet sweep movement.</p></article></body></html>"
        return Reply(int(page["status"]), body.encode(), "text/html")

    fc = Firecrawl(api_key=KEY, api_url=stack.firecrawl)
    tracked = ["markdown", ChangeTrackingFormat(modes=["git-diff"])]
    with serve(answer) as origin:
        url = f"{origin.url}/clock"
        first = fc.scrape(url, formats=tracked, max_age=0)
        again = fc.scrape(url, formats=tracked, max_age=60_000)  # a cache hit: compared as well
        page["price"] = "£12"
        changed = fc.scrape(url, formats=tracked, max_age=0)
        page["status"] = 404
        removed = fc.scrape(url, formats=tracked, max_age=0)
    assert first.change_tracking == {"changeStatus": "new", "visibility": "visible"}
    assert again.change_tracking is not None and again.change_tracking["changeStatus"] == "same"
    assert again.change_tracking["previousScrapeAt"].endswith("Z")
    assert again.metadata_dict["cache_state"] == "hit"
    ct = changed.change_tracking
    assert ct is not None and ct["changeStatus"] == "changed"
    assert "-Price: £10" in ct["diff"]["text"] and "+Price: £12" in ct["diff"]["text"]
    assert ct["diff"]["json"]["files"][0]["additions"] == 1
    assert removed.change_tracking is not None
    assert removed.change_tracking["changeStatus"] == "removed"
