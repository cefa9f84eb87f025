"""Admission: at most `max_concurrency` pages read at once by one process (the service, or the
scrape worker), one more waiting up to `queue_wait_s`, else `EngineUnavailable` (503 with
`Retry-After` at the HTTP layer; a crawl driver tries the page later)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager

from openmono_scrape.errors import EngineUnavailable
from openmono_scrape.firecrawl import Admit
from openmono_scrape.settings import ScrapeSettings


def admission(cfg: ScrapeSettings) -> Admit:
    """The process's admission; its slots are made here, so call it once per process."""
    slots = asyncio.Semaphore(cfg.max_concurrency)

    @asynccontextmanager
    async def _admitted(url: str | None) -> AsyncIterator[None]:
        try:
            await asyncio.wait_for(slots.acquire(), cfg.queue_wait_s or 0.001)
        except TimeoutError as exc:
            raise EngineUnavailable(
                f"the scrape service is busy ({cfg.max_concurrency} requests in flight)",
                url=url,
                retryable=True,
                retry_after_s=1.0,
            ) from exc
        try:
            yield
        finally:
            slots.release()

    def admit(url: str | None) -> AbstractAsyncContextManager[None]:
        return _admitted(url)

    return admit
