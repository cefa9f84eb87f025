"""What integrators poll about a key's jobs: `GET .../crawl/active` (and its older name
`.../crawl/ongoing`) and `GET .../team/queue-status`, under `/firecrawl/v1` and `/v2`.

Both read the job store for the asking gateway key's jobs only (`X-OpenMono-Key`, as every job
endpoint): another key's jobs are neither listed nor counted.
- active: the key's running crawls (batch scrapes are not crawls), oldest first, each with its
  start URL and options as this server read them (the crawl rules and `scrapeOptions`,
  Firecrawl's names); `teamId` is the key's name (`operator` for LLAMA_API_KEY).
- queue-status: Firecrawl counts pages as jobs, so: `jobsInQueue` the pages the key's running
  jobs (crawls and batches) have yet to read, `activeJobsInQueue` of them at most as many as the
  jobs read at once (each its `maxConcurrency`), `waitingJobsInQueue` the rest; `maxConcurrency`
  the pages one job reads at once here (`SCRAPE_CRAWL_CONCURRENCY`); `mostRecentSuccess` when the
  key's last completed job ended (null when none of its live jobs has).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from openmono_contracts.crawl import JobSpec
from openmono_contracts.firecrawl_jobs import (
    FirecrawlActiveCrawl,
    FirecrawlActiveCrawls,
    FirecrawlQueueStatus,
)
from pydantic import BaseModel
from pydantic.alias_generators import to_camel

from openmono_scrape.crawl import JobState, iso
from openmono_scrape.firecrawl._jobs import Answer, JobsAPI, owner_of, reachable


def _json(model: BaseModel) -> JSONResponse:
    return JSONResponse(model.model_dump(mode="json", exclude_none=True, by_alias=True))


def _options(spec: JobSpec) -> dict[str, Any]:
    rules = spec.rules.model_dump(mode="json") if spec.rules else {}
    out = {to_camel(k): v for k, v in rules.items()}
    out["scrapeOptions"] = {to_camel(k): v for k, v in spec.scrape_options.items()}
    return out


class QueueAPI:
    def __init__(self, jobs: JobsAPI) -> None:
        self.jobs = jobs

    async def _mine(self, request: Request) -> list[tuple[JobSpec, JobState]]:
        store = self.jobs.runner.store
        out: list[tuple[JobSpec, JobState]] = []
        for job_id in await store.owned(owner_of(request)):
            spec, state = await store.spec(job_id), await store.state(job_id)
            if spec is not None and state is not None:
                out.append((spec, state))
        out.sort(key=lambda pair: pair[0].created_at)
        return out

    async def active(self, request: Request) -> JSONResponse:
        team = owner_of(request) or "operator"
        crawls = [
            FirecrawlActiveCrawl(
                id=spec.id, team_id=team, url=spec.seeds[0], options=_options(spec)
            )
            for spec, state in await self._mine(request)
            if spec.kind == "crawl" and state.status == "scraping"
        ]
        return _json(FirecrawlActiveCrawls(crawls=crawls))

    async def queue(self, request: Request) -> JSONResponse:
        waiting = active = 0
        last_success: float | None = None
        for spec, state in await self._mine(request):
            if state.status == "scraping":
                left = max(0, state.total - state.completed - state.failed)
                now = min(left, spec.concurrency)
                active += now
                waiting += left - now
            elif state.status == "completed" and state.finished_at is not None:
                last_success = max(last_success or 0.0, state.finished_at)
        return _json(
            FirecrawlQueueStatus(
                jobs_in_queue=active + waiting,
                active_jobs_in_queue=active,
                waiting_jobs_in_queue=waiting,
                max_concurrency=self.jobs.settings.crawl_concurrency,
                most_recent_success=iso(last_success) if last_success is not None else None,
            )
        )


def add_queue_routes(
    router: APIRouter, queue: QueueAPI, answer: Answer, responses: dict[int | str, Any]
) -> None:
    """Register before the job routes: `crawl/active` would otherwise be read as a job id."""

    def endpoint(make: Callable[[Request], Awaitable[JSONResponse]], path: str, name: str) -> None:
        async def run(request: Request) -> JSONResponse:
            return await answer(reachable(lambda: make(request)), path)

        run.__name__ = name
        ok = FirecrawlQueueStatus if path.endswith("queue-status") else FirecrawlActiveCrawls
        router.add_api_route(
            path, run, methods=["GET"], responses={200: {"model": ok}, **responses}
        )

    for v in ("v1", "v2"):
        for name in ("active", "ongoing"):
            endpoint(queue.active, f"/{v}/crawl/{name}", f"firecrawl_crawl_{name}_{v}")
        endpoint(queue.queue, f"/{v}/team/queue-status", f"firecrawl_queue_status_{v}")
