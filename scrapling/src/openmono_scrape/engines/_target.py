"""The SSRF guard as every engine calls it: a refusal becomes an error that names the engine."""

from __future__ import annotations

from openmono_contracts import (
    CheckedTarget,
    NetGuard,
    NetGuardError,
    ScrapeEngine,
    UnresolvableHostError,
)

from openmono_scrape.errors import BlockedURL, FetchFailed


async def check_url(guard: NetGuard, url: str, engine: ScrapeEngine = "fetcher") -> CheckedTarget:
    """Run the guard, mapping its refusals to the service's errors (no resolved address leaks)."""
    try:
        return await guard.check(url)
    except UnresolvableHostError as exc:
        raise FetchFailed(exc.reason, url=url, engine=engine, retryable=False) from exc
    except NetGuardError as exc:
        raise BlockedURL(exc.reason, url=url, engine=engine) from exc
