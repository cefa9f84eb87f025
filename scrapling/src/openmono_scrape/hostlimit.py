"""At most N fetches at once to one host, so a burst (a search scraping ten results, an agent
reading one site's pages in parallel) queues here instead of hammering that site.

Slots are per host name (lower-cased, port ignored: one site behind several ports is one site);
a host's semaphore exists only while someone holds or waits for it. A request that cannot get a
slot within its own time budget ends as a timeout, like any other wait. Cache hits never take a
slot: they do not touch the origin.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

from openmono_scrape.errors import FetchTimeout


def host_of(url: str) -> str:
    return (urlsplit(url).hostname or "").lower().rstrip(".")


class HostLimiter:
    def __init__(self, per_host: int) -> None:
        self.per_host = per_host
        self._slots: dict[str, tuple[asyncio.Semaphore, int]] = {}

    def in_use(self, host: str) -> int:
        """Fetches running now against `host` (for tests and /health)."""
        entry = self._slots.get(host)
        if entry is None:
            return 0
        sem, _ = entry
        return self.per_host - sem._value

    @asynccontextmanager
    async def slot(self, url: str, timeout_s: float) -> AsyncIterator[None]:
        host = host_of(url)
        sem, users = self._slots.get(host, (asyncio.Semaphore(self.per_host), 0))
        self._slots[host] = (sem, users + 1)
        try:
            try:
                await asyncio.wait_for(sem.acquire(), max(0.001, timeout_s))
            except TimeoutError as exc:
                raise FetchTimeout(
                    f"{self.per_host} fetches to {host} were already running and none ended "
                    "within the time budget",
                    url=url,
                    retryable=True,
                ) from exc
            try:
                yield
            finally:
                sem.release()
        finally:
            sem_now, left = self._slots[host]
            if left <= 1:
                del self._slots[host]
            else:
                self._slots[host] = (sem_now, left - 1)
