"""Everything under `/firecrawl` that this server does not serve, answered in Firecrawl's shape.

Nothing of that space goes elsewhere (the gateway sends all of `/firecrawl/*` and `/v2/*` here):
- a path this server serves, with another method: 405;
- an endpoint of Firecrawl's API this server does not implement (extract, deep research, agent,
  llms.txt, the team's historical usage, ...): 501, naming what is supported (the team's
  credit and token usage are the key service's, which the gateway sends them to);
- anything else: 404, naming the same.
"""

from __future__ import annotations

import re

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from openmono_scrape import statuses
from openmono_scrape.errors import (
    MethodNotAllowed,
    NotImplementedHere,
    NotServed,
)

SUPPORTED = (
    "supported here: scrape, search, map, crawl (start, status, cancel, errors, active, "
    "ongoing, params-preview), batch/scrape (start, status, cancel, errors), extract (start, "
    "status), team (credit-usage, token-usage, queue-status), under /firecrawl/v1 and "
    "/firecrawl/v2"
)
# Firecrawl endpoints (first path segment after the version, or the whole rest) not served here.
_FIRECRAWL_ONLY = frozenset(
    {
        "deep-research",
        "llmstxt",
        "generate-llmstxt",
        "agent",
        "agents",
        "browser",
        "parse",
        "monitor",
        "monitors",
        "team",
        "research",
        "x402",
        "usage",
        "credit-usage",
        "token-usage",
        "queue-status",
        "concurrency-check",
        "apirequest",
        "exchange",
        "feedback",
        "developer",
        "gov",
        "batch/scrape/ongoing",
        "scrape/browser",
        "search/papers",
    }
)
_OURS = {
    "extract": "POST",
    "crawl/active": "GET",
    "crawl/ongoing": "GET",
    "crawl/params-preview": "POST",
    "team/queue-status": "GET",
    "team/credit-usage": "GET",
    "team/token-usage": "GET",
    "scrape": "POST",
    "search": "POST",
    "map": "POST",
    "crawl": "POST",
    "batch/scrape": "POST",
}
_JOB_PATH = re.compile(r"^(crawl|batch/scrape|extract)/[^/]+(/errors)?$")


def not_served(method: str, rest: str) -> NotServed:
    """Why `method /firecrawl/<rest>` has no answer here (`rest` starts with the version)."""
    version, _, sub = rest.strip("/").partition("/")
    if version not in ("v1", "v2"):
        return NotServed(f"no such endpoint: /firecrawl/{rest.strip('/')} ({SUPPORTED})")
    first = sub.split("/", 1)[0]
    if sub not in _OURS and (sub in _FIRECRAWL_ONLY or first in _FIRECRAWL_ONLY):
        return NotImplementedHere(
            f"Firecrawl's /{version}/{sub} is not implemented by this server ({SUPPORTED})"
        )
    if sub in _OURS or _JOB_PATH.match(sub):
        one = sub.endswith("/errors") or sub.startswith("extract/")
        allowed = _OURS.get(sub, "GET" if one else "GET, DELETE")
        return MethodNotAllowed(f"{method} is not allowed on /{version}/{sub} (use {allowed})")
    return NotServed(f"no such endpoint: /{version}/{sub} ({SUPPORTED})")


def add_fallback(router: APIRouter) -> None:
    """Register last: every method on every path under the router's prefix."""

    async def fallback(rest: str, request: Request) -> JSONResponse:
        return statuses.answer(not_served(request.method, rest), "firecrawl")

    async def root(request: Request) -> JSONResponse:
        return statuses.answer(not_served(request.method, ""), "firecrawl")

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
    router.add_api_route("", root, methods=methods, include_in_schema=False)
    router.add_api_route("/{rest:path}", fallback, methods=methods, include_in_schema=False)
