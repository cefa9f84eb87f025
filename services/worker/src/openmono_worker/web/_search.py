"""One web search: the gateway's SearXNG when it is offered, DuckDuckGo when it is not or fails.

Steps: 1. resolve the route (explicit switch, gateway URL, `/services`)  2. gateway path  3. on any
gateway failure, forget the cached probe and take the fallback  4. say which path answered and why.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

from openmono_contracts import WebAccess, gateway

from openmono_worker.settings import WebToolSettings
from openmono_worker.web import _ddg, _http, _probe, _searxng
from openmono_worker.web._capability import resolve
from openmono_worker.web._errors import FallbackError, GatewayError
from openmono_worker.web._results import SearchPage


@dataclass(frozen=True)
class SearchAnswer:
    """Who answered (`path`), the page if any, why the fallback was used, and how it failed."""

    path: Literal["gateway", "fallback"]
    source: str
    page: SearchPage | None
    reason: str
    failure: FallbackError | None = None


async def web_search(
    query: str,
    max_results: int,
    web: WebAccess,
    settings: WebToolSettings,
    time_limit_s: float | None = None,
) -> SearchAnswer:
    """Search; `time_limit_s` (the call's timeout) caps the gateway path so DuckDuckGo fits."""
    start = time.monotonic()
    async with gateway.async_client(anchor=web.ca) as gw, _http.client() as client:
        route = await resolve(gw, "search", web, settings)
        reason = route.reason
        if route.gateway is not None:
            left = None if time_limit_s is None else time_limit_s - (time.monotonic() - start)
            timeout = _http.gateway_budget(settings.search_timeout_s, left, settings.ddg_timeout_s)
            try:
                page = await _searxng.search(
                    gw,
                    route.gateway,
                    web.api_key,
                    query,
                    max_results,
                    timeout,
                )
            except GatewayError as exc:
                _probe.forget(route.gateway)
                reason = exc.reason
            else:
                return SearchAnswer("gateway", f"SearXNG via {route.gateway}", page, reason)
        source = f"DuckDuckGo ({settings.ddg_url})"
        try:
            page = await _ddg.search(
                client,
                settings.ddg_url,
                query,
                max_results,
                settings.ddg_timeout_s,
                settings.user_agent,
            )
        except FallbackError as exc:
            return SearchAnswer("fallback", source, None, reason, exc)
        return SearchAnswer("fallback", source, page, reason)
