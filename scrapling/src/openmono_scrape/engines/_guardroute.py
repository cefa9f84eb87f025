"""The SSRF guard inside a browser: one route on the whole browser context.

Why on the context: Scrapling pools pages and clears each page's routes before every fetch
(`page.unroute_all`), so a page route would vanish; a context route covers every page, popup and
frame the context opens. Why documents are fetched here: Playwright routes see the first request
of a navigation but not its redirect hops (Chromium follows them internally), so for every
document request this handler follows redirects itself with `route.fetch(max_redirects=0)`,
runs the guard on each `Location` before requesting it, and fulfills the navigation with the final
answer. Other requests are checked and continued; images, media and fonts are dropped (the text is
all we keep). Service workers are blocked at context creation (their fetches bypass routes) and
WebSockets get the same check through `route_web_socket`.

Scrapling's own `disable_resources`/`blocked_domains` must stay off: they install a page route whose
`route.continue_()` would send requests to the network without passing through this one.

Pinning is not done here: routes cannot choose the address a request connects to, and some
connections (preconnects, beacons, keepalive requests) never reach a route. The browser's guard
proxy (`egress`) does both, so this route is the first line, and the proxy the one that cannot be
walked around.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin, urlsplit

from openmono_contracts import NetGuard, NetGuardError, ScrapeEngine

from openmono_scrape.errors import BlockedURL, FetchFailed, FetchTimeout, ScrapeError, TooLarge

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_DROPPED_TYPES = frozenset(
    {"image", "media", "font", "imageset", "texttrack", "object", "beacon", "csp_report"}
)
_LOCAL_SCHEMES = frozenset({"data", "blob", "about"})
# Headers of a fetched answer that no longer describe the (decoded) body we fulfill with.
_STALE_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})


@dataclass
class NavState:
    """What the route learned about one fetch's main document (keyed by its page)."""

    deadline: float
    max_bytes: int
    max_redirects: int
    final_url: str | None = None
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    blocked: str | None = None
    too_large: bool = False
    error: str | None = None


class GuardRoute:
    """Installs the guard on a browser context and tracks each page's navigation."""

    def __init__(self, guard: NetGuard, max_bytes: int, max_redirects: int) -> None:
        self.guard = guard
        self.max_bytes = max_bytes
        self.max_redirects = max_redirects
        self.states: dict[Any, NavState] = {}
        self.refused = 0  # requests refused since start (tests and /health read it)

    async def install(self, context: Any) -> None:
        await context.route("**/*", self._handle)
        if hasattr(context, "route_web_socket"):
            await context.route_web_socket("**/*", self._handle_ws)

    async def _allowed(self, url: str) -> str | None:
        """None when the guard passes `url`, else the safe reason."""
        try:
            await self.guard.check(url)
        except NetGuardError as exc:
            self.refused += 1
            return exc.reason
        return None

    async def _handle_ws(self, ws: Any) -> None:
        http_url = "http" + ws.url[2:] if ws.url.startswith("ws") else ws.url
        if await self._allowed(http_url) is not None:
            await ws.close(code=1008, reason="blocked")
            return
        ws.connect_to_server()

    def _state_for(self, request: Any) -> NavState | None:
        try:
            frame = request.frame
            if frame.parent_frame is not None:
                return None
            return self.states.get(frame.page)
        except Exception:  # service-worker requests have no frame
            return None

    async def _handle(self, route: Any, request: Any) -> None:
        url = request.url
        scheme = urlsplit(url).scheme.lower()
        if scheme in _LOCAL_SCHEMES:
            await route.continue_()
            return
        if request.resource_type in _DROPPED_TYPES:
            await route.abort("blockedbyclient")
            return
        if request.resource_type == "document":
            await self._document(route, request, self._state_for(request))
            return
        if await self._allowed(url) is not None:
            await route.abort("blockedbyclient")
            return
        await route.continue_()

    async def _document(self, route: Any, request: Any, state: NavState | None) -> None:
        deadline = state.deadline if state else time.monotonic() + 30.0
        current = request.url
        method = request.method
        post_data = request.post_data_buffer
        for _ in range(self.max_redirects + 1):
            reason = await self._allowed(current)
            if reason is not None:
                if state:
                    state.blocked = reason
                await route.abort("blockedbyclient")
                return
            left_ms = max(100.0, (deadline - time.monotonic()) * 1000.0)
            try:
                response = await route.fetch(
                    url=current,
                    method=method,
                    post_data=post_data,
                    max_redirects=0,
                    timeout=left_ms,
                )
            except Exception as exc:
                if state:
                    state.error = type(exc).__name__
                await route.abort("failed")
                return
            location = response.headers.get("location")
            if response.status in REDIRECT_STATUSES and location:
                current = urljoin(current, location.strip())
                if response.status in (301, 302, 303):
                    method, post_data = "GET", None
                continue
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > self.max_bytes:
                if state:
                    state.too_large = True
                await route.abort("blockedbyclient")
                return
            try:
                body = await asyncio.wait_for(
                    response.body(), max(0.1, deadline - time.monotonic())
                )
            except Exception as exc:
                if state:
                    state.error = type(exc).__name__
                await route.abort("failed")
                return
            if len(body) > self.max_bytes:
                if state:
                    state.too_large = True
                await route.abort("blockedbyclient")
                return
            headers = {k: v for k, v in response.headers.items() if k.lower() not in _STALE_HEADERS}
            if state:
                state.final_url, state.status = current, response.status
                state.headers = {k.lower(): v for k, v in headers.items()}
            await route.fulfill(status=response.status, headers=headers, body=body)
            return
        if state:
            state.error = "too many redirects"
        await route.abort("failed")


def nav_failure(
    state: NavState, url: str, exc: BaseException | None, engine: ScrapeEngine
) -> ScrapeError:
    """The error a failed navigation stands for, from what the route saw."""
    if state.blocked:
        return BlockedURL(state.blocked, url=url, engine=engine)
    if state.too_large:
        return TooLarge("the body is larger than the download limit", url=url, engine=engine)
    if exc is not None and "Timeout" in type(exc).__name__:
        return FetchTimeout("the page did not load in time", url=url, engine=engine)
    detail = state.error or (type(exc).__name__ if exc else "no document response")
    message = f"the browser could not load the page ({detail})"
    if exc is not None and "closed" in str(exc).lower():
        message = "the browser closed during the fetch"
    return FetchFailed(message, url=url, engine=engine)
