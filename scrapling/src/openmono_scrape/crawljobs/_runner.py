"""Who runs a job's drivers: the scrape worker through Celery (durable), or this process.

- `CeleryRunner` (`SCRAPE_CRAWL_BROKER_URL` set): the job goes into the broker's Redis
  (`RedisJobStore`) and `crawl_drivers` slice tasks go onto the crawl queue, which the scrape
  workers serve (`openmono_scrape.worker`); each slice sends the next one of its chain itself.
  A status request that finds a running job without a live driver (its workers died, their
  messages not yet handed out again) starts a new chain at once.
- `LocalRunner` (no broker): the job lives in memory (`MemoryJobStore`) and one driver loop per
  job runs on this service's event loop; jobs end with the process. At most `local_jobs` run at
  once, `key_local_jobs` of them for one key.
Both create the job the same way (`create`) and answer the same questions (`store`); their stores
hold the byte bounds of `JobBounds` (in all and per key: `openmono_scrape.crawl.store`).
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import dataclass
from typing import Any

from openmono_contracts.crawl import CRAWL_QUEUE, CRAWL_TASK, JobSpec, SliceTask

from openmono_scrape.crawl import (
    Item,
    JobStore,
    MemoryJobStore,
    PageSource,
    RedisJobStore,
    SliceLimits,
    run_slice,
)
from openmono_scrape.crawljobs._celery import crawl_celery
from openmono_scrape.errors import TooManyJobs
from openmono_scrape.settings import ScrapeSettings

log = logging.getLogger("openmono_scrape")

# A running job with no live driver gets a new chain, at most this often.
_KICK_EVERY_S = 15.0


@dataclass(frozen=True)
class JobBounds:
    """What jobs may hold: bytes in all and per key (both stores), and jobs running at once in
    this process, in all and per key (without a broker)."""

    total_bytes: int
    key_bytes: int
    local_jobs: int
    key_local_jobs: int

    @classmethod
    def of(cls, cfg: ScrapeSettings) -> JobBounds:
        return cls(
            cfg.crawl_max_total_bytes,
            cfg.crawl_max_key_bytes,
            cfg.crawl_max_local_jobs,
            cfg.crawl_max_key_local_jobs,
        )


class LocalRunner:
    durable = False

    def __init__(self, source: PageSource, limits: SliceLimits, bounds: JobBounds) -> None:
        self.memory = MemoryJobStore(bounds.total_bytes, bounds.key_bytes)
        self.store: JobStore = self.memory
        self.source = source
        self.bounds = bounds
        self.limits = limits
        self._tasks: set[asyncio.Task[None]] = set()

    async def create(self, spec: JobSpec, items: list[Item]) -> None:
        most, mine = self.bounds.local_jobs, self.bounds.key_local_jobs
        if self.memory.running() >= most:
            raise TooManyJobs(
                f"{most} jobs are running in this service (no broker is configured); "
                "try again when one has ended"
            )
        if self.memory.running(spec.owner) >= mine:
            raise TooManyJobs(
                f"this key runs {mine} jobs in this service, as many as one key may "
                "(SCRAPE_CRAWL_MAX_KEY_LOCAL_JOBS); try again when one has ended"
            )
        await self.store.create(spec, items)
        task = asyncio.create_task(self._drive(spec.id, uuid.uuid4().hex))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _drive(self, job_id: str, token: str) -> None:
        try:
            while await run_slice(self.store, self.source, job_id, token, self.limits) == "more":
                pass
        except Exception as exc:  # logged, never lost silently; the job's state says where it is
            log.error("crawl job %s: its driver failed", job_id, exc_info=exc)

    async def watch(self, job_id: str) -> None:
        return None

    def info(self) -> dict[str, Any]:
        return {"durable": False, "runner": "in-process", "running": self.memory.running()}

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.store.close()


class CeleryRunner:
    durable = True

    def __init__(self, broker_url: str, bounds: JobBounds) -> None:
        self.store: JobStore = RedisJobStore.from_url(
            broker_url, bounds.total_bytes, bounds.key_bytes
        )
        self.app = crawl_celery("openmono-scrape", broker_url)
        self._kicked: dict[str, float] = {}

    async def _send(self, job_id: str) -> None:
        task = SliceTask(job_id=job_id, token=uuid.uuid4().hex)
        await asyncio.to_thread(
            self.app.send_task, CRAWL_TASK, args=[task.model_dump()], queue=CRAWL_QUEUE
        )

    async def create(self, spec: JobSpec, items: list[Item]) -> None:
        await self.store.create(spec, items)
        self._kicked[spec.id] = time.monotonic()
        for _ in range(spec.max_drivers):
            await self._send(spec.id)

    async def watch(self, job_id: str) -> None:
        """A running job whose drivers all died gets a new one (not before `_KICK_EVERY_S`)."""
        state = await self.store.state(job_id)
        if state is None or state.status != "scraping":
            self._kicked.pop(job_id, None)
            return
        if await self.store.live_drivers(job_id, time.time()) > 0:
            return
        last = self._kicked.get(job_id, 0.0)
        if time.monotonic() - last < _KICK_EVERY_S:
            return
        self._kicked[job_id] = time.monotonic()
        log.warning("crawl job %s has no live driver: starting one", job_id)
        await self._send(job_id)

    def info(self) -> dict[str, Any]:
        return {"durable": True, "runner": "celery"}

    async def close(self) -> None:
        await self.store.close()
        await asyncio.to_thread(self.app.close)
