"""The search behind `/firecrawl/v*/search`: SearXNG's JSON API (docs/architecture.md §5), asked
directly.

The answer is read and normalised by `openmono_contracts.searxng`, the same rules as the agent's
WebSearch: SearXNG's order, http(s) URLs only, repeated URLs dropped. Anything but a JSON answer
(403 HTML when JSON is not enabled, an error status, a timeout, no SearXNG configured) is
`SearchUnavailable`; an empty answer while every engine failed is one too, since it is a broken
search, not an absence of results.
"""

from __future__ import annotations

from typing import Any

import httpx
from openmono_contracts.searxng import SearchHit, SearxngError, normalise

from openmono_scrape.errors import SearchFailed, SearchNotConfigured, SearchTimeout


def parse(body: Any, limit: int) -> list[SearchHit]:
    try:
        page = normalise(body, limit)
    except SearxngError as exc:
        raise SearchFailed("the search engine answered something that is not a result") from exc
    if page.broken:
        raise SearchFailed("no search engine answered (all unresponsive)")
    return page.hits


async def search(base_url: str | None, query: str, limit: int, timeout_s: float) -> list[SearchHit]:
    if not base_url:
        raise SearchNotConfigured(
            "search is not configured on this server (SCRAPE_SEARXNG_URL is unset)"
        )
    try:
        async with httpx.AsyncClient(timeout=timeout_s, trust_env=False) as client:
            resp = await client.get(
                f"{base_url.rstrip('/')}/search", params={"q": query, "format": "json"}
            )
    except httpx.TimeoutException as exc:
        raise SearchTimeout(f"the search engine did not answer within {timeout_s:g}s") from exc
    except httpx.HTTPError as exc:
        raise SearchFailed(f"the search engine is unreachable ({type(exc).__name__})") from exc
    if resp.status_code != 200:
        raise SearchFailed(f"the search engine answered HTTP {resp.status_code}")
    try:
        body = resp.json()
    except ValueError as exc:
        raise SearchFailed("the search engine answered something that is not JSON") from exc
    return parse(body, limit)
