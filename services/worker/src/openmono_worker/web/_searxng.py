"""WebSearch through the gateway: `GET {gateway}/search?q=..&format=json` (SearXNG behind it).

The answer is read and normalised by `openmono_contracts.searxng` (the same rules as the scrape
service's Firecrawl search: SearXNG's order, http(s) URLs only, repeated URLs dropped, engine
names of the failures). Anything that is not a JSON search answer is a `GatewayError`: an HTTP
error, the 403 HTML page SearXNG sends when JSON is not enabled, a JSON `{"error": ..}` body, or a
timeout. So is an empty answer while engines failed: that is a broken search, not an absence of
results.
"""

from __future__ import annotations

from typing import Any

import httpx
from openmono_contracts.gateway import bearer
from openmono_contracts.searxng import SearchPage, SearxngError
from openmono_contracts.searxng import normalise as normalise_answer

from openmono_worker.web._errors import GatewayError
from openmono_worker.web._http import request


def normalise(body: Any, max_results: int | None = None) -> SearchPage:
    """A SearXNG JSON answer as a `SearchPage` (raises `GatewayError` if it is not one)."""
    try:
        return normalise_answer(body, max_results)
    except SearxngError as exc:
        raise GatewayError(str(exc)) from exc


async def search(
    client: httpx.AsyncClient,
    gateway: str,
    api_key: str | None,
    query: str,
    max_results: int,
    timeout_s: float,
) -> SearchPage:
    """Ask the gateway's SearXNG; any failure is a `GatewayError` (the caller falls back)."""
    resp = await request(
        client,
        "GET",
        f"{gateway}/search",
        who="gateway search",
        error=GatewayError,
        timeout_s=timeout_s,
        params={"q": query, "format": "json"},
        headers={**bearer(api_key), "Accept": "application/json"},
    )
    if resp.status_code != 200:
        kind = resp.headers.get("content-type", "").split(";")[0] or "no content type"
        hint = " (SearXNG has JSON output disabled?)" if resp.status_code == 403 else ""
        raise GatewayError(f"gateway search answered HTTP {resp.status_code} ({kind}){hint}")
    try:
        body = resp.json()
    except ValueError as exc:
        raise GatewayError("gateway search answered something that is not JSON") from exc
    page = normalise(body, max_results)
    if page.broken:
        names = ", ".join(page.unresponsive_engines)
        raise GatewayError(f"SearXNG found nothing because its engines failed ({names})")
    return page
