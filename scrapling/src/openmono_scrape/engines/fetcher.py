"""The `fetcher` engine: Scrapling's HTTP client (curl_cffi, Chrome TLS fingerprint), SSRF-pinned.

How the pin works, and why this way:

- Scrapling's `AsyncFetcher.get` forwards unknown keyword arguments to curl_cffi's
  `AsyncSession.request`, but that method takes no per-request `curl_options`, and `AsyncFetcher`
  builds a fresh, option-less curl session for every call: a resolve pin cannot go through it.
- Scrapling's `FetcherSession` is the same engine with a session we own for the length of one hop.
  Once entered, its curl_cffi `AsyncSession` is live and its session-level `curl_options` apply to
  every request it makes, so we set there:
    * `CURLOPT_RESOLVE = ["host:port:checked-address"]`: curl connects to the address the guard
      checked and does no DNS lookup of its own, while the URL, the `Host` header, TLS SNI and
      certificate checks keep the real name (connecting to a bare IP with a `Host` header would
      break HTTPS);
    * `CURLOPT_MAXFILESIZE_LARGE = max_download_bytes`: curl stops a body over the limit while it
      arrives (error 63), instead of buffering it;
    * `trust_env = False`: a proxy from the environment would make the pin meaningless.
  Reaching the live curl session goes through one private attribute of Scrapling 0.5
  (`_async_curl_session`); `_pin` fails loudly (ENGINE_UNAVAILABLE) if a Scrapling upgrade moves it,
  and a test proves the pin by fetching a name that only the pin can resolve.
- Redirects are never followed by curl (`follow_redirects=False`): we follow at most
  `max_redirects` hops ourselves and run the guard on each `Location` before connecting to it, so
  a public page redirecting to 169.254.169.254 is refused before any packet leaves.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

from curl_cffi import CurlOpt
from curl_cffi.curl import CurlError
from openmono_contracts import CheckedTarget, NetGuard
from scrapling.fetchers import FetcherSession

from openmono_scrape.engines._target import check_url
from openmono_scrape.errors import (
    EngineUnavailable,
    FetchFailed,
    FetchTimeout,
    ScrapeError,
    TooLarge,
)
from openmono_scrape.page import Budget, FetchedPage

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_CURLE_TIMEOUT = 28
_CURLE_FILESIZE_EXCEEDED = 63

# Headers a caller may not set: they belong to the connection, the pin or the body.
_FORBIDDEN_HEADERS = frozenset(
    {"host", "content-length", "transfer-encoding", "connection", "upgrade", "te", "trailer"}
)

# Scrapling logs every fetch at INFO; the service logs its own summary instead.
logging.getLogger("scrapling").setLevel(logging.WARNING)


def _pin(client: Any, target: CheckedTarget, max_bytes: int) -> None:
    curl_session = getattr(client, "_async_curl_session", None)
    if curl_session is None or not hasattr(curl_session, "curl_options"):
        raise EngineUnavailable(
            "this Scrapling version hides its curl session; the fetch cannot be pinned",
            engine="fetcher",
        )
    options: dict[CurlOpt, Any] = {CurlOpt.MAXFILESIZE_LARGE: max_bytes}
    if not target.is_ip_literal:
        options[CurlOpt.RESOLVE] = [target.curl_resolve]
    curl_session.curl_options = options
    curl_session.trust_env = False


def _caller_headers(headers: Mapping[str, str] | None) -> dict[str, str] | None:
    if not headers:
        return None
    kept = {k: v for k, v in headers.items() if k.lower() not in _FORBIDDEN_HEADERS}
    return kept or None


async def _one_hop(
    target: CheckedTarget,
    budget: Budget,
    max_bytes: int,
    headers: Mapping[str, str] | None = None,
) -> FetchedPage:
    timeout = budget.require(target.url, "fetcher")
    session = FetcherSession(
        impersonate="chrome",
        stealthy_headers=True,
        timeout=timeout,
        retries=1,
        follow_redirects=False,
        max_redirects=0,
    )
    try:
        async with session as client:
            _pin(client, target, max_bytes)
            response = await asyncio.wait_for(
                client.get(
                    target.url,
                    timeout=timeout,
                    retries=1,
                    follow_redirects=False,
                    headers=_caller_headers(headers),
                ),
                timeout + 1.0,
            )
    except ScrapeError:
        raise
    except TimeoutError as exc:
        raise FetchTimeout("the site did not answer in time", url=target.url) from exc
    except CurlError as exc:
        code = int(getattr(exc, "code", 0) or 0)
        if code == _CURLE_TIMEOUT:
            raise FetchTimeout(
                "the site did not answer in time", url=target.url, engine="fetcher"
            ) from exc
        if code == _CURLE_FILESIZE_EXCEEDED:
            raise TooLarge(
                f"the body is larger than {max_bytes} bytes", url=target.url, engine="fetcher"
            ) from exc
        raise FetchFailed(
            f"the fetch failed (curl error {code})", url=target.url, engine="fetcher"
        ) from exc
    body = bytes(response.body or b"")
    if len(body) > max_bytes:  # a compressed body can inflate past the limit
        raise TooLarge(
            f"the body is larger than {max_bytes} bytes", url=target.url, engine="fetcher"
        )
    headers = {str(k).lower(): str(v) for k, v in dict(response.headers).items()}
    return FetchedPage(
        url=target.url, status=int(response.status), headers=headers, body=body, engine="fetcher"
    )


async def fetch(
    url: str,
    guard: NetGuard,
    budget: Budget,
    *,
    max_bytes: int,
    max_redirects: int,
    headers: Mapping[str, str] | None = None,
) -> FetchedPage:
    """GET `url`, following up to `max_redirects` redirects, each hop checked and pinned.

    `headers` (the caller's, e.g. a Firecrawl `headers` option) go on top of the browser-like
    ones, on hops to the first URL's host only (a redirect elsewhere must not carry a caller's
    cookie or token); connection-level names (Host, Content-Length, ...) are dropped.
    """
    first_host = urlsplit(url).hostname
    current = url
    for _ in range(max_redirects + 1):
        target = await check_url(guard, current)
        same_host = urlsplit(current).hostname == first_host
        page = await _one_hop(target, budget, max_bytes, headers if same_host else None)
        location = page.header("location")
        if page.status not in REDIRECT_STATUSES or not location:
            return page
        current = urljoin(current, location.strip())
    raise FetchFailed(f"more than {max_redirects} redirects", url=url, engine="fetcher")
