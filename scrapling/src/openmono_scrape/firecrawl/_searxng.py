"""The search behind `/firecrawl/v*/search`: SearXNG's JSON API (DESIGN.md §5), asked directly.

Rows without a URL (typed results) and repeated URLs (fragment and trailing slash aside) are
dropped, SearXNG's order is kept. Anything but a JSON answer (403 HTML when JSON is not enabled,
an error status, a timeout, no SearXNG configured) is `SearchUnavailable`; an empty answer while
every engine failed is one too, since it is a broken search, not an absence of results.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urldefrag

import httpx

from openmono_scrape.errors import SearchFailed, SearchNotConfigured, SearchTimeout


@dataclass(frozen=True)
class Hit:
    url: str
    title: str
    description: str


def _text(value: Any) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""


def _key(url: str) -> str:
    bare, _ = urldefrag(url.strip())
    return bare.rstrip("/").lower()


def parse(body: Any, limit: int) -> list[Hit]:
    if not isinstance(body, dict) or not isinstance(body.get("results"), list):
        raise SearchFailed("the search engine answered something that is not a result")
    hits: list[Hit] = []
    seen: set[str] = set()
    for row in body["results"]:
        if not isinstance(row, dict):
            continue
        url = row.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            continue
        if _key(url) in seen:
            continue
        seen.add(_key(url))
        hits.append(Hit(url, _text(row.get("title")), _text(row.get("content"))))
        if len(hits) >= limit:
            break
    if not hits and body.get("unresponsive_engines"):
        raise SearchFailed("no search engine answered (all unresponsive)")
    return hits


async def search(base_url: str | None, query: str, limit: int, timeout_s: float) -> list[Hit]:
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
