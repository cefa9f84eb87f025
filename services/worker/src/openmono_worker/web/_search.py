"""One web search: the gateway's SearXNG when it is offered, DuckDuckGo when it is not or fails.

Steps: 1. resolve the route (explicit switch, gateway URL, `/services`)  2. gateway path  3. on any
gateway failure, forget the cached probe and take the fallback  4. say which path answered and why.

Search-and-read (`search_and_read`): the same search, then the top k hits are read in parallel on
WebFetch's path (`web_fetch`: the gateway's scrape service, else the guarded direct fetch, each
page on its own), each cut to a character budget, within what is left of the call's time.

WebSearch runs without asking, so what it sends off this box without the gateway (the query to
DuckDuckGo, the hits' URLs to their sites) needs the user's opt-in, `WebAccess.public_fallback`;
without it the answer says how to turn it on (`FallbackOff`).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Literal

from openmono_contracts import ScrapeRequest, WebAccess, gateway
from openmono_contracts.searxng import SearchPage

from openmono_worker.settings import WebToolSettings
from openmono_worker.web import _ddg, _http, _probe, _searxng
from openmono_worker.web._capability import resolve
from openmono_worker.web._errors import OPT_IN, FallbackError, FallbackOff, GatewayError
from openmono_worker.web._fetch import FetchedPage, web_fetch

# Reads end this long before the call's limit, so the answer (with what was read) gets out.
_READ_MARGIN_S = 2.0


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
        if not web.public_fallback:
            off = FallbackOff(
                f"no search through the gateway ({reason}), and the public fallback is off: "
                f"the query was not sent; {OPT_IN}"
            )
            return SearchAnswer("fallback", source, None, reason, off)
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


@dataclass(frozen=True)
class PageRead:
    """One hit read in full: the page, or why it could not be had."""

    url: str
    page: FetchedPage | None = None
    error: str | None = None


async def read_pages(
    urls: list[str],
    max_length: int,
    web: WebAccess,
    settings: WebToolSettings,
    time_limit_s: float | None = None,
) -> list[PageRead]:
    """Fetch `urls` at once, each as WebFetch would; one failing never holds the others back."""
    limit = None if time_limit_s is None else max(1.0, time_limit_s - _READ_MARGIN_S)

    async def one(url: str) -> PageRead:
        request = ScrapeRequest(url=url, max_length=max_length)
        try:
            # nobody approved these URLs (WebFetch asks): off the box only through the gateway,
            # unless the user opted in to the public fallback
            fetch = web_fetch(request, web, settings, limit, direct=web.public_fallback)
            page = await (fetch if limit is None else asyncio.wait_for(fetch, limit))
        except FallbackError as exc:
            return PageRead(url, error=exc.reason)
        except TimeoutError:
            return PageRead(url, error=f"not read within the call's time ({limit:g} s)")
        return PageRead(url, page)

    return list(await asyncio.gather(*(one(u) for u in urls)))


async def search_and_read(
    query: str,
    max_results: int,
    read_top: int,
    read_max_length: int,
    web: WebAccess,
    settings: WebToolSettings,
    time_limit_s: float | None = None,
) -> tuple[SearchAnswer, list[PageRead]]:
    """`web_search`, then the first `read_top` hits read in parallel (none when it failed)."""
    start = time.monotonic()
    answer = await web_search(query, max_results, web, settings, time_limit_s)
    if answer.page is None or read_top <= 0:
        return answer, []
    urls = [hit.url for hit in answer.page.hits[:read_top]]
    left = None if time_limit_s is None else time_limit_s - (time.monotonic() - start)
    return answer, await read_pages(urls, read_max_length, web, settings, left)
