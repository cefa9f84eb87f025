"""The scrape worker: the Celery worker that runs the slices of crawl and batch scrape jobs.

    python -m openmono_scrape.worker [celery worker options]
    (= celery -A openmono_scrape.worker worker; node name `openmono-scrape@<hostname>`)

The scrape service creates a job in Redis (its broker, `SCRAPE_CRAWL_BROKER_URL`) and sends
`crawl_drivers` slice tasks (`openmono.crawl.run`) to the `openmono.crawl` queue, which only this
worker serves. A slice drives its job for `SCRAPE_CRAWL_SLICE_S` (`crawl.run_slice`), reading
each page in this process with the service's own pipeline (`ScrapeService`: guard, per-host
limit, cache, engines and extraction, the same settings), then, if the job is not done, sends the
next slice of its chain, which any scrape worker may take. So a job spreads over the workers,
outlives a restart of the scrape service (it never asks it), and outlives a worker: its leases
run out and another driver takes its pages, its unacknowledged message is handed out again, and
a page finished twice is stored once.

One process, slices in threads (`SCRAPE_CRAWL_WORKER_SLICES`), all of them on one event loop
that holds one page pipeline (`_Pipeline`): its admission slots, per-host limit and browser are
shared by every slice, as by the requests of one scrape service. The thread pool enforces no
Celery time limit, so a slice is bounded here: past its time plus `_SLICE_EXTRA_S` it is
cancelled (its pages go back to the job). The task is acknowledged late and carries no result.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import sys
import threading
from dataclasses import dataclass
from typing import Any

from celery import Celery, Task, signals
from openmono_contracts.crawl import CRAWL_QUEUE, CRAWL_TASK, SliceTask
from openmono_contracts.logurl import redact_handlers

from openmono_scrape.admission import admission
from openmono_scrape.crawl import RedisJobStore, SliceLimits, run_slice
from openmono_scrape.crawljobs import DirectSource, crawl_celery
from openmono_scrape.firecrawl import PageScraper
from openmono_scrape.service import ScrapeService
from openmono_scrape.settings import ScrapeSettings

log = logging.getLogger("openmono_scrape.worker")

NODE = "openmono-scrape@%h"
# A slice ends after SCRAPE_CRAWL_SLICE_S but finishes the pages in hand first (a page's own
# budget is at most 120 s, plus the wait for a busy pipeline).
_SLICE_EXTRA_S = 300.0
_BUILD_S = 60.0


def slice_bound_s(cfg: ScrapeSettings) -> float:
    """How long one slice may run before it is cancelled."""
    return cfg.crawl_slice_s + _SLICE_EXTRA_S


@dataclass
class _Parts:
    service: ScrapeService
    source: DirectSource
    store: RedisJobStore


class _Pipeline:
    """This process's event loop (in its own thread) and, on it, the page pipeline and the job
    store; made at the first slice, so importing this module starts nothing."""

    def __init__(self, cfg: ScrapeSettings) -> None:
        self.cfg = cfg
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._parts: _Parts | None = None

    async def _build(self) -> _Parts:
        assert self.cfg.crawl_broker_url
        service = ScrapeService(self.cfg)
        admit = admission(self.cfg)
        source = DirectSource(PageScraper(service, admit), admit)
        return _Parts(service, source, RedisJobStore.from_url(self.cfg.crawl_broker_url))

    def _started(self) -> tuple[asyncio.AbstractEventLoop, _Parts]:
        with self._lock:
            if self._loop is None or self._parts is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="pipeline", daemon=True).start()
                self._loop = loop
                self._parts = asyncio.run_coroutine_threadsafe(self._build(), loop).result(_BUILD_S)
            return self._loop, self._parts

    def run(self, task: SliceTask) -> str:
        """Run one slice on the loop and wait for it; cancelled past `slice_bound_s`."""
        loop, parts = self._started()
        limits = SliceLimits(seconds=self.cfg.crawl_slice_s)
        work = run_slice(parts.store, parts.source, task.job_id, task.token, limits)
        future = asyncio.run_coroutine_threadsafe(work, loop)
        try:
            return future.result(slice_bound_s(self.cfg))
        except concurrent.futures.TimeoutError:
            future.cancel()  # the driver hands its pages back to the job as it unwinds
            log.error("crawl job %s: slice cancelled past its bound", task.job_id)
            return "cancelled"

    def close(self) -> None:
        with self._lock:
            loop, parts, self._loop, self._parts = self._loop, self._parts, None, None
        if loop is None:
            return
        if parts is not None:

            async def _close() -> None:
                await parts.store.close()
                await parts.service.close()

            try:
                asyncio.run_coroutine_threadsafe(_close(), loop).result(30)
            except Exception as exc:  # shutting down: say so, and stop the loop anyway
                log.warning("the page pipeline did not close cleanly: %r", exc)
        loop.call_soon_threadsafe(loop.stop)


def create_app(cfg: ScrapeSettings) -> Celery:
    if not cfg.crawl_broker_url:
        raise SystemExit(
            "openmono scrape worker: SCRAPE_CRAWL_BROKER_URL is empty (the Redis it serves)"
        )
    app = crawl_celery("openmono-scrape-worker", cfg.crawl_broker_url)
    app.conf.update(
        worker_pool="threads",
        worker_concurrency=cfg.crawl_worker_slices,
        # one slice message per free thread: a long slice never holds a second one hostage
        worker_prefetch_multiplier=1,
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        task_default_queue=CRAWL_QUEUE,
        # a slice of a worker that died is handed out again after this long: past the longest a
        # live slice runs, so a running one is never handed out twice
        broker_transport_options={
            "visibility_timeout": slice_bound_s(cfg) + 60.0,
            "socket_connect_timeout": 3.0,
        },
        redis_socket_connect_timeout=3.0,
        worker_send_task_events=False,
        task_send_sent_event=False,
        worker_hijack_root_logger=False,
    )
    return app


settings = ScrapeSettings()
app = create_app(settings) if settings.crawl_broker_url else Celery("openmono-scrape-worker")
pipeline = _Pipeline(settings)


@app.task(  # type: ignore[untyped-decorator]  # celery ships no type hints
    name=CRAWL_TASK,
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
)
def run_crawl_slice(self: Task, payload: dict[str, Any]) -> None:
    """One slice of a job; the next one of the chain is sent when the job goes on."""
    task = SliceTask.model_validate(payload)
    end = pipeline.run(task)
    log.info("crawl job %s: slice ended (%s)", task.job_id, end)
    if end == "more":
        self.app.send_task(CRAWL_TASK, args=[payload], queue=CRAWL_QUEUE)


@signals.worker_shutdown.connect  # type: ignore[untyped-decorator]
def _close_pipeline(**_: Any) -> None:
    pipeline.close()


@signals.after_setup_logger.connect  # type: ignore[untyped-decorator]
@signals.after_setup_task_logger.connect  # type: ignore[untyped-decorator]
def _redact_logged_urls(logger: logging.Logger | None = None, **_: Any) -> None:
    """Log lines (a library's, a traceback) show URLs without query, fragment or userinfo."""
    if logger is not None:
        redact_handlers(logger)


def main(argv: list[str] | None = None) -> None:
    if not settings.crawl_broker_url:
        create_app(settings)  # says why it cannot start
    args = list(sys.argv[1:] if argv is None else argv)
    if not any(a in ("-n", "--hostname") or a.startswith("--hostname=") for a in args):
        args = ["--hostname", NODE, *args]
    if not any(a == "-l" or a.startswith("--loglevel") for a in args):
        args = ["--loglevel", "INFO", *args]
    app.worker_main(["worker", *args])


if __name__ == "__main__":
    main()
