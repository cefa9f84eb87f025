"""Crawl and batch scrape jobs in the worker tier: the Celery task that runs one slice of a job.

The scrape service creates the job in Redis (the broker's) and sends `crawl_drivers` slice tasks
to the `openmono.crawl` queue (openmono_contracts.crawl). A slice drives the job for
`WORKER_CRAWL_SLICE_S` (`driver.run_slice`), asking the scrape service at `WORKER_SCRAPE_URL` to
read each page, then, if the job is not done, sends the next slice of its chain, which any worker
may take. So a job spreads over the workers, outlives a restart of the scrape service (its pages
wait and are tried again), and outlives a worker: its leases run out and another driver takes
its pages, its unacknowledged message is handed out again, and a page finished twice is stored
once. The task is acknowledged late and carries no result.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import httpx
from celery import Task
from openmono_contracts.crawl import (
    CRAWL_QUEUE,
    CRAWL_TASK,
    PageOutcome,
    PageRequest,
    RedisJobStore,
    SiteFacts,
    SiteRequest,
    SliceLimits,
    SliceTask,
    SourceUnavailable,
    run_slice,
)

from openmono_worker.celery_app import app
from openmono_worker.settings import WorkerSettings

log = logging.getLogger(__name__)

# A slice ends after WORKER_CRAWL_SLICE_S but finishes the pages in hand first (a page's own
# budget is at most 120 s, plus the wait for an unreachable scrape service).
_SLICE_EXTRA_S = 300.0
_UNAVAILABLE = frozenset({502, 503, 504})


class ScrapeServiceSource:
    """`PageSource` over HTTP: the scrape service's `/internal/crawl/*` endpoints."""

    def __init__(self, base_url: str, client: httpx.AsyncClient) -> None:
        self.base = base_url.rstrip("/")
        self.client = client

    async def _post(self, path: str, body: dict[str, Any], timeout_s: float) -> httpx.Response:
        try:
            resp = await self.client.post(f"{self.base}{path}", json=body, timeout=timeout_s)
        except httpx.HTTPError as exc:
            raise SourceUnavailable(f"the scrape service is unreachable ({exc!r})") from exc
        if resp.status_code in _UNAVAILABLE:
            raise SourceUnavailable(f"the scrape service answered HTTP {resp.status_code}")
        return resp

    async def page(self, req: PageRequest) -> PageOutcome:
        resp = await self._post("/internal/crawl/page", req.model_dump(mode="json"), 180.0)
        if resp.status_code != 200:
            return PageOutcome(
                ok=False, error=f"the scrape service answered HTTP {resp.status_code}"
            )
        return PageOutcome.model_validate_json(resp.content)

    async def site(self, req: SiteRequest) -> SiteFacts:
        resp = await self._post("/internal/crawl/site", req.model_dump(mode="json"), 90.0)
        if resp.status_code != 200:
            return SiteFacts()
        return SiteFacts.model_validate_json(resp.content)


async def _slice(task: SliceTask, settings: WorkerSettings) -> str:
    store = RedisJobStore.from_url(settings.broker_url)
    limits = SliceLimits(seconds=settings.crawl_slice_s)
    try:
        async with httpx.AsyncClient(trust_env=False) as client:
            source = ScrapeServiceSource(settings.scrape_url, client)
            return await run_slice(store, source, task.job_id, task.token, limits)
    finally:
        await store.close()


def time_limits(settings: WorkerSettings) -> tuple[float, float]:
    """(soft, hard) limits of a slice."""
    soft = settings.crawl_slice_s + _SLICE_EXTRA_S
    return soft, soft + 30.0


_SOFT_S, _HARD_S = time_limits(WorkerSettings())


@app.task(  # type: ignore[untyped-decorator]  # celery ships no type hints
    name=CRAWL_TASK,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    soft_time_limit=_SOFT_S,
    time_limit=_HARD_S,
)
def run_crawl_slice(self: Task, payload: dict[str, Any]) -> None:
    """One slice of a job; the next one of the chain is sent when the job goes on."""
    task = SliceTask.model_validate(payload)
    settings = WorkerSettings()
    end = asyncio.run(_slice(task, settings))
    log.info("crawl job %s: slice ended (%s)", task.job_id, end)
    if end == "more":
        self.app.send_task(CRAWL_TASK, args=[payload], queue=CRAWL_QUEUE)
