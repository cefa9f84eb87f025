"""Firecrawl `screenshot` and `actions`: every refusal that comes before any fetch (the app in
process, no browser started), and the action error's answer. The browser side runs in
tests/integration/test_firecrawl_actions.py."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from openmono_scrape import ScrapeSettings, create_app, statuses
from openmono_scrape import errors as e

# a file that is executable is all `available` asks; nothing here gets as far as starting it
_FAKE_BROWSER = "/bin/true"


def _client(browser: str | None) -> httpx.AsyncClient:
    app = create_app(ScrapeSettings(system_dns=False, browser_path=browser, actions_max=5))
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    return httpx.AsyncClient(transport=transport, base_url="http://scrape.test")


async def _scrape(browser: str | None, path: str = "/firecrawl/v2/scrape", **body: Any) -> Any:
    async with _client(browser) as c:
        resp = await c.post(path, json={"url": "http://127.0.0.1:9/", **body})
    assert resp.status_code == 400, resp.text
    out = resp.json()
    assert out["success"] is False and "Traceback" not in resp.text
    return out["error"]


@pytest.mark.parametrize(
    "body",
    [
        {"formats": ["screenshot"]},
        {"formats": ["screenshot@fullPage"]},
        {"formats": ["markdown"], "actions": [{"type": "click", "selector": "#a"}]},
    ],
)
async def test_without_a_browser_actions_and_screenshots_are_400(body: dict[str, Any]) -> None:
    assert "need the browser engine" in await _scrape(None, **body)


async def test_bounds_are_400_naming_the_field_and_the_limit() -> None:
    wide = {"type": "screenshot", "viewport": {"width": 5000, "height": 600}}
    why = await _scrape(_FAKE_BROWSER, formats=[wide])
    assert why.startswith("Bad Request: formats.0.viewport.width") and "3840" in why
    # before the box's model is asked (none here: that would be a 503)
    why = await _scrape(_FAKE_BROWSER, formats=[{"type": "json", "prompt": "tides"}, wide])
    assert "formats.1.viewport.width" in why
    tall = {"type": "screenshot", "viewport": {"width": 800, "height": 3000}}
    why = await _scrape(_FAKE_BROWSER, formats=["markdown"], actions=[tall])
    assert "actions.0.viewport.height" in why and "2160" in why
    many = [{"type": "scroll"}] * 6
    assert "at most 5 actions" in await _scrape(_FAKE_BROWSER, actions=many)
    waits = [{"type": "wait", "milliseconds": 3000}] * 2
    why = await _scrape(_FAKE_BROWSER, actions=waits, waitFor=500, timeout=5000)
    assert "6500 ms" in why and "5000 ms" in why
    # Firecrawl's own schema: one of milliseconds or selector, and 8K at most
    both = {"type": "wait", "milliseconds": 5, "selector": "#a"}
    assert "not both" in await _scrape(_FAKE_BROWSER, actions=[both])
    assert "actions.0" in await _scrape(_FAKE_BROWSER, actions=[{"type": "hover"}])
    huge = {"type": "screenshot", "viewport": {"width": 9000, "height": 600}}
    assert "formats.0.viewport.width" in await _scrape(_FAKE_BROWSER, formats=[huge])


async def test_crawl_batch_and_search_refuse_them() -> None:
    shot = {"formats": ["screenshot"]}
    acts = {"actions": [{"type": "scrape"}]}
    for path, body in (
        ("/firecrawl/v2/batch/scrape", {"urls": ["http://127.0.0.1:9/"], **shot}),
        ("/firecrawl/v2/batch/scrape", {"urls": ["http://127.0.0.1:9/"], **acts}),
        ("/firecrawl/v2/crawl", {"scrapeOptions": acts}),
        ("/firecrawl/v2/search", {"query": "tides", "scrapeOptions": shot}),
    ):
        why = await _scrape(_FAKE_BROWSER, path, **body)
        assert "on scrape only" in why, (path, why)


def test_a_failed_action_is_422_with_firecrawl_code_and_its_index() -> None:
    exc = e.ActionFailed(3, "click", "no element matches '#x'")
    resp = statuses.answer(exc, "firecrawl")
    assert resp.status_code == 422
    assert bytes(resp.body).decode() == (
        '{"success":false,"error":"Action 3 (click) failed: no element matches \'#x\'",'
        '"code":"SCRAPE_ACTION_ERROR","details":{"index":3,"type":"click"}}'
    )
