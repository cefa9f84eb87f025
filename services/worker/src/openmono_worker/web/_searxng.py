"""WebSearch through the gateway: `GET {gateway}/search?q=..&format=json` (SearXNG behind it).

Normalisation (DESIGN.md §5): keep SearXNG's order (it is already sorted by score), drop rows
without a URL (typed results such as key/value tables have `url: null`), drop repeated URLs (the
first, best-scored, wins), accept a missing `number_of_results`, and report the names of the
unresponsive engines (their messages are translated, so only the name is reliable).

Anything that is not a JSON search answer is a `GatewayError`: an HTTP error, the 403 HTML page
SearXNG sends when JSON is not enabled, a JSON `{"error": ..}` body, or a timeout. So is an empty
answer while engines failed: that is a broken search, not an absence of results.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urldefrag

import httpx
from openmono_contracts.gateway import bearer

from openmono_worker.web._errors import GatewayError
from openmono_worker.web._results import SearchHit, SearchPage


def _text(value: Any) -> str:
    return " ".join(value.split()) if isinstance(value, str) else ""


def _key(url: str) -> str:
    """Dedupe key: the URL without fragment and trailing slash, scheme and host lower-cased."""
    bare, _ = urldefrag(url.strip())
    scheme, sep, rest = bare.partition("://")
    host, slash, path = rest.partition("/")
    return f"{scheme.lower()}{sep}{host.lower()}{slash}{path}".rstrip("/")


def _engine_names(raw: Any) -> list[str]:
    names: list[str] = []
    if isinstance(raw, list):
        for row in raw:
            name = row[0] if isinstance(row, list | tuple) and row else row
            if isinstance(name, str) and name and name not in names:
                names.append(name)
    return names


def _strings(raw: Any) -> list[str]:
    out: list[str] = []
    if isinstance(raw, list):
        for item in raw:
            text = _text(item) if isinstance(item, str) else ""
            if not text and isinstance(item, dict):
                text = _text(item.get("answer") or item.get("content") or "")
            if text:
                out.append(text)
    return out


def normalise(body: Any, max_results: int | None = None) -> SearchPage:
    """A SearXNG JSON answer as a `SearchPage` (raises `GatewayError` if it is not one)."""
    if not isinstance(body, dict):
        raise GatewayError("SearXNG answered JSON that is not an object")
    if "error" in body and "results" not in body:
        raise GatewayError(f"SearXNG answered an error: {_text(str(body['error']))[:200]}")
    rows = body.get("results")
    if not isinstance(rows, list):
        raise GatewayError("SearXNG's answer has no results list")
    hits: list[SearchHit] = []
    seen: set[str] = set()
    for row in rows:
        if not isinstance(row, dict):
            continue
        url = row.get("url")
        if not isinstance(url, str) or not url.strip():
            continue
        key = _key(url)
        if key in seen:
            continue
        seen.add(key)
        engines = row.get("engines")
        names = tuple(e for e in engines if isinstance(e, str)) if isinstance(engines, list) else ()
        if not names and isinstance(row.get("engine"), str):
            names = (row["engine"],)
        hits.append(
            SearchHit(
                title=_text(row.get("title")) or url.strip(),
                url=url.strip(),
                snippet=_text(row.get("content")),
                engines=names,
            )
        )
    if max_results is not None:
        hits = hits[:max_results]
    return SearchPage(
        hits=hits,
        unresponsive_engines=_engine_names(body.get("unresponsive_engines")),
        suggestions=_strings(body.get("suggestions")),
        answers=_strings(body.get("answers")),
    )


async def search(
    client: httpx.AsyncClient,
    gateway: str,
    api_key: str | None,
    query: str,
    max_results: int,
    timeout_s: float,
) -> SearchPage:
    """Ask the gateway's SearXNG; any failure is a `GatewayError` (the caller falls back)."""
    try:
        resp = await client.get(
            f"{gateway}/search",
            params={"q": query, "format": "json"},
            headers={**bearer(api_key), "Accept": "application/json"},
            timeout=timeout_s,
        )
    except httpx.TimeoutException as exc:
        raise GatewayError(f"gateway search did not answer within {timeout_s:g} s") from exc
    except httpx.HTTPError as exc:
        raise GatewayError(f"gateway search unreachable ({type(exc).__name__})") from exc
    if resp.status_code != 200:
        kind = resp.headers.get("content-type", "").split(";")[0] or "no content type"
        hint = " (SearXNG has JSON output disabled?)" if resp.status_code == 403 else ""
        raise GatewayError(f"gateway search answered HTTP {resp.status_code} ({kind}){hint}")
    try:
        body = resp.json()
    except ValueError as exc:
        raise GatewayError("gateway search answered something that is not JSON") from exc
    page = normalise(body, max_results)
    if not page.hits and page.unresponsive_engines:
        names = ", ".join(page.unresponsive_engines)
        raise GatewayError(f"SearXNG found nothing because its engines failed ({names})")
    return page
