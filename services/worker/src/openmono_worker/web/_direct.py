"""The fetch fallback: fetch the page ourselves, behind the same SSRF guard as the scrape service.

Every hop goes through `openmono_contracts.netguard.NetGuard` (the shared guard, never a copy):
the URL is checked, its name resolved once, and the connection made to the checked address (the
URL's host is replaced by it; `Host` and TLS SNI keep the name, so certificates are still
verified against the name). Redirects are followed by hand so each hop is checked the same way.
No proxy from the environment is used: a proxy would resolve the name again, past the guard.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urljoin

import httpx
from openmono_contracts import NetGuard, NetGuardError

from openmono_worker.web import _http
from openmono_worker.web._errors import FallbackError

_REDIRECTS = frozenset({301, 302, 303, 307, 308})


@dataclass(frozen=True)
class RawPage:
    """What the site answered: final URL, status, content type, decoded text."""

    url: str
    status: int
    content_type: str
    text: str


async def _read_capped(resp: httpx.Response, max_bytes: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in resp.aiter_bytes():
        size += len(chunk)
        if size > max_bytes:
            raise FallbackError(f"the page is larger than {max_bytes} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def fetch(
    url: str,
    guard: NetGuard,
    *,
    timeout_s: float,
    max_bytes: int,
    max_redirects: int,
    user_agent: str,
) -> RawPage:
    """GET `url` (following checked redirects); raise `FallbackError` when no page can be had."""
    current = url
    async with _http.client(trust_env=False, follow_redirects=False) as client:
        for _hop in range(max_redirects + 1):
            try:
                target = await guard.check(current)
            except NetGuardError as exc:
                raise FallbackError(f"refused by the network guard: {exc.reason}") from exc
            extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
            headers = {
                "Host": target.host_header,
                "User-Agent": user_agent,
                "Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5",
            }
            request = client.build_request(
                "GET",
                target.pinned_url(),
                headers=headers,
                timeout=timeout_s,
                extensions=extensions,
            )
            try:
                resp = await client.send(request, stream=True)
            except httpx.TimeoutException as exc:
                raise FallbackError(f"the site did not answer within {timeout_s:g} s") from exc
            except httpx.HTTPError as exc:
                raise FallbackError(f"the fetch failed ({type(exc).__name__})") from exc
            try:
                location = resp.headers.get("location")
                if resp.status_code in _REDIRECTS and location:
                    current = urljoin(current, location)
                    continue
                body = await _read_capped(resp, max_bytes)
            except httpx.HTTPError as exc:
                raise FallbackError(f"reading the page failed ({type(exc).__name__})") from exc
            finally:
                await resp.aclose()
            kind = resp.headers.get("content-type", "").split(";")[0].strip().lower()
            encoding = resp.charset_encoding or "utf-8"
            try:
                text = body.decode(encoding, errors="replace")
            except LookupError:
                text = body.decode("utf-8", errors="replace")
            return RawPage(current, resp.status_code, kind, text)
    raise FallbackError(f"more than {max_redirects} redirects")
