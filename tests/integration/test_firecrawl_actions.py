"""Firecrawl `screenshot` and `actions` on the real browser engine (Debian's Chromium through
Scrapling) in one real scrape service, on real local pages; one browser start for the module.

The service allow-lists only 127.0.0.1/32: the canary on 127.0.0.3 (and `rebind.test`, a name
that resolves to it) is a refused address, so a click, a script or a screenshot that reached it
would show up as a connection it counts.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from firecrawl.v1 import V1FirecrawlApp
from openmono_scrape.settings import ScrapeSettings

from tests.support import fixture_web as fw
from tests.support.fixture_web import Canary, scrape_service

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        ScrapeSettings().browser_path is None,
        reason="no Chromium installed (apt-get install chromium)",
    ),
]


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    env = {
        "SCRAPE_ALLOW_CIDRS": "127.0.0.1/32",
        "SCRAPE_STATIC_HOSTS": "rebind.test=127.0.0.3",
        "SCRAPE_SCREENSHOT_MAX_FULL_PAGE_HEIGHT": "1500",
        "SCRAPE_ACTIONS_STEP_TIMEOUT_S": "1.5",
    }
    with scrape_service(tmp_path_factory.mktemp("fcshot"), env) as url:
        yield url


def _post(svc: str, **body: Any) -> httpx.Response:
    return httpx.post(f"{svc}/firecrawl/v2/scrape", json=body, timeout=90)


def _ok(resp: httpx.Response) -> dict[str, Any]:
    assert resp.status_code == 200, resp.text
    data: dict[str, Any] = resp.json()["data"]
    return data


def _image(url: str) -> tuple[str, bytes]:
    head, _, b64 = url.partition(",")
    assert head.startswith("data:") and head.endswith(";base64"), head[:40]
    return head[5:-7], base64.b64decode(b64)


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_screenshot_formats_are_data_urls_bounded_in_pixels(svc: str, web: str) -> None:
    v2 = {"type": "screenshot", "viewport": {"width": 800, "height": 600}}
    doc = _ok(_post(svc, url=f"{web}/interactive", formats=["markdown", v2]))
    mime, png = _image(doc["screenshot"])
    assert mime == "image/png" and _png_size(png) == (800, 600)
    assert "Ask the harbour desk" in doc["markdown"]
    # v1's whole page, cut at the service's full-page cap (1500 px here) with a warning
    resp = _post(svc, url=f"{web}/interactive?tall=5000", formats=["screenshot@fullPage"])
    mime, png = _image(_ok(resp)["screenshot"])
    assert _png_size(png) == (1920, 1500)
    assert "cut at 1500 px" in resp.json()["warning"]
    assert "markdown" not in resp.json()["data"]
    jpeg = {"type": "screenshot", "quality": 40}
    mime, data = _image(_ok(_post(svc, url=f"{web}/article", formats=[jpeg]))["screenshot"])
    assert mime == "image/jpeg" and data[:3] == b"\xff\xd8\xff"


def test_actions_run_in_order_and_their_results_come_back(svc: str, web: str) -> None:
    actions = [
        {"type": "click", "selector": "#reveal"},
        {"type": "scrape"},
        {"type": "click", "selector": "#q"},
        {"type": "write", "text": "neap tides"},
        {"type": "press", "key": "ENTER"},
        {"type": "wait", "selector": "#echo:not(:empty)"},
        {"type": "executeJavascript", "script": "return window.harbour"},
        {"type": "executeJavascript", "script": "document.title"},
        {"type": "scroll", "direction": "down"},
    ]
    doc = _ok(_post(svc, url=f"{web}/interactive", formats=["markdown"], actions=actions))
    assert fw.CLICK_SENTINEL in doc["markdown"] and "You asked: neap tides" in doc["markdown"]
    got = doc["actions"]
    [scrape] = got["scrapes"]
    assert scrape["url"] == f"{web}/interactive" and fw.CLICK_SENTINEL in scrape["html"]
    assert "You asked: neap" not in scrape["html"]  # taken before the typing
    assert got["javascriptReturns"] == [
        {"type": "object", "value": {"port": "Brest", "range_m": 6.1}},  # the page's own world
        {"type": "string", "value": "Harbour desk"},
    ]
    assert got["screenshots"] == got["pdfs"] == []


def test_sdk_v1_screenshot_and_pdf_actions(svc: str, web: str) -> None:
    # the real SDK (v1: v2's client drops the base URL's path, which only the gateway mends)
    app = V1FirecrawlApp(api_key="unused-here", api_url=f"{svc}/firecrawl")
    actions = [
        {"type": "screenshot", "viewport": {"width": 640, "height": 480}},
        {"type": "pdf", "format": "A4"},
    ]
    doc = app.scrape_url(f"{web}/article", formats=["screenshot"], actions=actions)
    assert doc.screenshot is not None and _png_size(_image(doc.screenshot)[1]) == (1920, 1080)
    assert doc.actions is not None
    [shot] = doc.actions.screenshots
    assert _png_size(_image(shot)[1]) == (640, 480)
    [pdf] = doc.actions.pdfs
    mime, data = _image(pdf)
    assert mime == "application/pdf" and data.startswith(b"%PDF-")


def test_a_failing_action_names_its_index(svc: str, web: str) -> None:
    url = f"{web}/interactive"
    for actions, at in (
        ([{"type": "click", "selector": "#reveal"}, {"type": "click", "selector": "##"}], 1),
        ([{"type": "executeJavascript", "script": "throw new Error('no tide table')"}], 0),
        ([{"type": "scroll"}, {"type": "scroll", "selector": "#nowhere"}], 1),
        ([{"type": "press", "key": "NoSuchKey"}], 0),
        # bounded in time: a selector nobody matches fails its step (1.5 s here), not the budget
        ([{"type": "scroll"}, {"type": "wait", "selector": "#never"}], 1),
    ):
        resp = _post(svc, url=url, actions=actions)
        assert resp.status_code == 422, resp.text
        body = resp.json()
        assert body["code"] == "SCRAPE_ACTION_ERROR" and body["details"]["index"] == at
        assert body["error"].startswith(f"Action {at} ({actions[at]['type']}) failed: ")
        assert "Traceback" not in resp.text
    big = "return 'x'.repeat(100000)"
    resp = _post(svc, url=url, actions=[{"type": "executeJavascript", "script": big}])
    assert resp.status_code == 422 and "over the limit of 65536" in resp.json()["error"]


def test_actions_are_neither_served_from_nor_stored_in_the_cache(svc: str, web: str) -> None:
    url = f"{web}/interactive?cache=1"
    plain = _ok(_post(svc, url=url, maxAge=600_000))
    assert fw.CLICK_SENTINEL not in plain["markdown"]
    clicked = _ok(_post(svc, url=url, maxAge=600_000, actions=[{"type": "click", "selector": "#reveal"}]))  # fmt: skip  # noqa: E501
    assert fw.CLICK_SENTINEL in clicked["markdown"]
    assert clicked["metadata"]["cacheState"] == "miss"
    again = _ok(_post(svc, url=url, maxAge=600_000))
    assert again["metadata"]["cacheState"] == "hit"
    assert fw.CLICK_SENTINEL not in again["markdown"]


def test_what_actions_cause_never_reaches_a_refused_address(svc: str, web: str) -> None:
    canary = Canary()
    try:
        click = [{"type": "click", "selector": "#away"}]
        # the same click to an allowed page really navigates
        moved = _ok(_post(svc, url=f"{web}/interactive?to=/article", actions=click))
        assert moved["metadata"]["url"] == f"{web}/article"
        assert fw.ARTICLE_SENTINEL in moved["markdown"]
        for target in (f"{canary.url}/", f"http://rebind.test:{canary.port}/"):
            resp = _post(svc, url=f"{web}/interactive?to={target}", actions=click)
            assert resp.status_code == 400, resp.text
        # a link that opens a new tab: the tab is another page of the same guarded context
        tab = [{"type": "click", "selector": "#popup"}, {"type": "wait", "milliseconds": 300}]
        _ok(_post(svc, url=f"{web}/interactive?to={canary.url}/tab", actions=tab))
        # and it is closed (the pool does not know it): it would live until the next recycle
        before = httpx.get(f"{svc}/health", timeout=10).json()["browser_pages"]
        _ok(_post(svc, url=f"{web}/interactive?to=/article", actions=tab))
        assert httpx.get(f"{svc}/health", timeout=10).json()["browser_pages"] == before
        script = (
            f"fetch('{canary.url}/xhr').catch(() => 0);"
            f"document.body.insertAdjacentHTML('beforeend', '<img src=\"{canary.url}/i.png\">');"
            "return 1"
        )
        doc = _ok(_post(svc, url=f"{web}/interactive", actions=[
            {"type": "executeJavascript", "script": script}, {"type": "wait", "milliseconds": 300},
            {"type": "screenshot"},
        ]))  # fmt: skip
        assert doc["actions"]["javascriptReturns"] == [{"type": "number", "value": 1}]
        away = "location.href = 'http://169.254.169.254/latest/meta-data/'"
        resp = _post(svc, url=f"{web}/interactive", actions=[
            {"type": "executeJavascript", "script": away}, {"type": "wait", "milliseconds": 300},
        ])  # fmt: skip
        assert resp.status_code == 400, resp.text
        assert canary.connections == 0
    finally:
        canary.close()
