"""One page fetch: the gateway's scrape service when offered, a guarded direct fetch otherwise.

Steps: 1. resolve the route  2. gateway `POST /scrape`  3. on any gateway failure, forget the
cached probe and fetch directly (same SSRF guard as the scrape service)  4. say who answered.
Page text and title from either path go through `clean_text` (zero-width and bidi controls out).

The direct fetch does not read PDFs: the scrape service's converter (pdfplumber, with pdfminer.six,
pypdfium2 and Pillow, ~55 MB installed) would be a heavy dependency of every worker, and the
worker is the process that holds the user's workspace, the wrong place to parse hostile files.
A PDF on the fallback path gets an error that says to use the scrape service.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

from openmono_contracts import NetGuard, ScrapeRequest, WebAccess, gateway
from openmono_contracts.texthygiene import clean_text

from openmono_worker.settings import WebToolSettings
from openmono_worker.web import _direct, _http, _probe, _scrape
from openmono_worker.web._capability import resolve
from openmono_worker.web._convert import HTML_TYPES, html_to_markdown, looks_like_html, title_of
from openmono_worker.web._errors import OPT_IN, FallbackError, FallbackOff, GatewayError

_TEXT_TYPES = frozenset({"application/json", "application/xml", "application/javascript", ""})
_PDF_TYPES = frozenset({"application/pdf", "application/x-pdf"})


@dataclass(frozen=True)
class FetchedPage:
    """A page as the model reads it, and who fetched it."""

    path: Literal["gateway", "fallback"]
    source: str
    reason: str
    url: str
    status: int
    title: str | None
    content: str
    truncated: bool
    notes: tuple[str, ...] = ()


def _cut(text: str, max_length: int | None) -> tuple[str, bool]:
    if max_length is not None and len(text) > max_length:
        return text[:max_length], True
    return text, False


async def _direct_page(url: str, settings: WebToolSettings) -> tuple[str, int, str | None, str]:
    """Final URL, status, title and text of a guarded direct fetch."""
    raw = await _direct.fetch(
        url,
        NetGuard(settings.allow_cidrs),
        timeout_s=settings.fetch_timeout_s,
        max_bytes=settings.fetch_max_bytes,
        max_redirects=settings.fetch_max_redirects,
        user_agent=settings.user_agent,
    )
    sniffed = raw.content_type in ("", "application/octet-stream") and raw.text.startswith("%PDF-")
    if raw.content_type in _PDF_TYPES or sniffed:
        raise FallbackError(
            "the page is a PDF, which only the gateway's scrape service reads (the direct "
            "fetch does not)"
        )
    if raw.content_type in HTML_TYPES or (not raw.content_type and looks_like_html(raw.text)):
        return raw.url, raw.status, title_of(raw.text), html_to_markdown(raw.text, raw.url)
    if raw.content_type.startswith("text/") or raw.content_type in _TEXT_TYPES:
        return raw.url, raw.status, None, raw.text
    raise FallbackError(f"the page is {raw.content_type}, which WebFetch cannot show as text")


async def web_fetch(
    request: ScrapeRequest,
    web: WebAccess,
    settings: WebToolSettings,
    time_limit_s: float | None = None,
    *,
    direct: bool = True,
) -> FetchedPage:
    """Fetch `request.url`; raises `FallbackError` when the fallback cannot get it either.

    `time_limit_s` (the call's timeout) caps the gateway path so the direct fetch still fits.
    `direct=False`: no direct fetch (`FallbackOff` instead), for URLs nobody approved.
    """
    start = time.monotonic()
    async with gateway.async_client(anchor=web.ca) as client:
        route = await resolve(client, "scrape", web, settings)
    reason = route.reason
    if route.gateway is not None:
        left = None if time_limit_s is None else time_limit_s - (time.monotonic() - start)
        timeout = _http.gateway_budget(settings.scrape_timeout_s, left, settings.fetch_timeout_s)
        # The scrape service stops itself a little earlier and answers TIMEOUT, not a cut line.
        request = request.model_copy(update={"timeout_s": min(120.0, max(1.0, timeout - 2.0))})
        # Scrapes run long (a browser may start); a client of their own keeps the timeout clear.
        async with gateway.async_client(anchor=web.ca) as client:
            try:
                page = await _scrape.scrape(client, route.gateway, web.api_key, request, timeout)
            except GatewayError as exc:
                _probe.forget(route.gateway)
                reason = exc.reason
            else:
                used = [f"engine: {page.engine}"]
                if page.escalated_from:
                    used.append(f"escalated from {page.escalated_from}")
                return FetchedPage(
                    "gateway",
                    f"scrape service via {route.gateway}",
                    reason,
                    page.url,
                    page.status,
                    clean_text(page.title) if page.title else None,
                    clean_text(page.content),
                    page.truncated,
                    tuple(used),
                )
    if not direct:
        raise FallbackOff(
            f"no scrape service through the gateway ({reason}), and the public fallback is "
            f"off: the page was not asked for; {OPT_IN}"
        )
    try:
        final, status, title, text = await _direct_page(request.url, settings)
    except FallbackError as exc:
        raise FallbackError(f"{exc.reason} (gateway not used: {reason})") from exc
    content, truncated = _cut(clean_text(text), request.max_length)
    title = clean_text(title) if title else None
    notes: tuple[str, ...] = ()
    if request.render:
        notes = ("render=true needs the scrape service's browser; fetched without one",)
    return FetchedPage(
        "fallback", "direct fetch", reason, final, status, title, content, truncated, notes
    )
