"""One slice of a job: take pages from the store, read them through the page source, record them.

A driver is a chain of slices. In the scrape worker each slice is a Celery task that, when the
job is not done when its time is up, sends the next slice (which any scrape worker may take); in
a scrape service without Redis the chain is a loop in the service. The steps of a slice:

1. Join the job's drivers (`store.beat`); one beyond `max_drivers` leaves at once.
2. Send the `started` webhook, once per job (`mark_once`).
3. Loop until the slice's time is up: claim as many pages as the job lets run now, read each in
   its own task (`_process`), and keep the leases of the pages in hand alive (a heartbeat task),
   so a driver that dies loses its pages to another after `lease_s`, and only then.
4. A page (`_process`): a crawl's start page first reads the site (robots.txt, and its sitemaps
   unless `sitemap: skip`); robots.txt is honoured for every page of a crawl; the page source
   (the scrape service's pipeline, in this process) reads the page (`PageSource.page`: its guard
   on the URL and every redirect hop, its per-host limit, its cache with the job's `maxAge`); a
   redirect onto another URL of the crawl is a duplicate, one out of the crawl's scope an error;
   the links in scope become new pages.
5. Time up: let the pages in hand finish, then say whether the job goes on ("more").
When the page source is busy (`SourceUnavailable`: all its admission slots taken), a page is
tried again for `source_retry_s`, then put back for a later slice: a busy reader delays a job,
it does not fail its pages.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar

from openmono_contracts.crawl import JobSpec
from openmono_contracts.logurl import for_log

from openmono_scrape.crawl.memstore import iso
from openmono_scrape.crawl.pages import PageOutcome, PageRequest, SiteFacts, SiteRequest
from openmono_scrape.crawl.robots import Robots
from openmono_scrape.crawl.scope import Scope, normalise, origin_of
from openmono_scrape.crawl.store import Finished, Item, JobStore
from openmono_scrape.crawl.webhook import Webhooks
from openmono_scrape.errors import SourceUnavailable

log = logging.getLogger("openmono.crawl")

SliceEnd = Literal["ended", "more", "missing", "surplus"]
_T = TypeVar("_T")


class PageSource(Protocol):
    async def page(self, req: PageRequest) -> PageOutcome: ...
    async def site(self, req: SiteRequest) -> SiteFacts: ...


@dataclass(frozen=True)
class SliceLimits:
    seconds: float = 30.0
    # between looks at the store while other drivers hold the job's pages
    poll_s: float = 0.2
    # how long one page waits for a busy page source before it is put back
    source_retry_s: float = 60.0
    # the chain's place among the job's drivers is kept this long while its next slice queues
    queue_grace_s: float = 120.0


class _RobotsBook:
    """robots.txt per origin: this slice's parsed copies over the job's stored texts."""

    def __init__(self, store: JobStore, source: PageSource, job_id: str) -> None:
        self.store, self.source, self.job_id = store, source, job_id
        self._parsed: dict[str, Robots] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def learn(self, origin: str, text: str | None) -> None:
        self._parsed[origin] = Robots(text)

    async def get(self, url: str) -> Robots:
        origin = origin_of(url)
        if origin in self._parsed:
            return self._parsed[origin]
        async with self._locks.setdefault(origin, asyncio.Lock()):
            if origin not in self._parsed:
                text = await self.store.robots(self.job_id, origin)
                if text is None:
                    facts = await self.source.site(SiteRequest(url=origin + "/"))
                    text = facts.robots or ""
                    await self.store.set_robots(self.job_id, origin, text)
                self.learn(origin, text)
        return self._parsed[origin]


class Driver:
    def __init__(
        self, store: JobStore, source: PageSource, spec: JobSpec, token: str, limits: SliceLimits
    ) -> None:
        self.store, self.source, self.spec, self.token = store, source, spec, token
        self.limits = limits
        self.scope = Scope(spec.rules, spec.seeds[0]) if spec.rules is not None else None
        self.robots = _RobotsBook(store, source, spec.id)
        self.hooks = Webhooks(spec)
        self.inflight: dict[asyncio.Task[None], Item] = {}
        self._put_back: list[Item] = []

    async def _retrying(self, make: Callable[[], Awaitable[_T]]) -> _T:
        deadline = time.monotonic() + self.limits.source_retry_s
        delay = 0.25
        while True:
            try:
                return await make()
            except SourceUnavailable:
                if time.monotonic() + delay > deadline:
                    raise
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)

    def _candidates(self, urls: list[str], depth: int) -> list[tuple[str, str]]:
        """(normalised URL, key) of the URLs in scope at `depth`, each once."""
        assert self.scope is not None
        out: dict[str, str] = {}
        for raw in urls:
            url = normalise(raw)
            if url is None or not self.scope.admits(url, depth):
                continue
            out.setdefault(self.scope.key(url), url)
        return [(url, key) for key, url in out.items()]

    async def _sort_by_robots(
        self, found: list[tuple[str, str]], depth: int, done: Finished
    ) -> None:
        for url, key in found:
            if (await self.robots.get(url)).allows(url):
                done.discovered.append(Item(url, depth, key))
            else:
                done.blocked.append((key, url))

    def _error(self, item: Item, code: str | None, message: str) -> dict[str, Any]:
        return {
            "id": str(uuid.uuid4()),
            "timestamp": iso(time.time()),
            "url": item.url,
            "code": code,
            "error": message,
        }

    async def _process(self, item: Item) -> None:
        done = Finished()
        rules = self.spec.rules
        sitemap_found: list[tuple[str, str]] = []
        if self.scope is not None and rules is not None:
            if item.kickoff:
                facts = await self._retrying(
                    lambda: self.source.site(
                        SiteRequest(
                            url=item.url,
                            sitemap=rules.sitemap != "skip",
                            max_urls=min(rules.limit, 100_000),
                        )
                    )
                )
                origin = origin_of(item.url)
                await self.store.set_robots(self.spec.id, origin, facts.robots or "")
                self.robots.learn(origin, facts.robots)
                sitemap_found = self._candidates(facts.sitemap_urls, 0)
            if not (await self.robots.get(item.url)).allows(item.url):
                done.self_blocked = True
                await self._record(item, done)
                return
        request = PageRequest(
            url=item.url,
            version=self.spec.version,
            scrape_options=self.spec.scrape_options,
            want_links=rules is not None and rules.sitemap != "only",
        )
        outcome = await self._retrying(lambda: self.source.page(request))
        if not outcome.ok:
            done.error = self._error(item, outcome.code, outcome.error or "the page failed")
        else:
            done.document = json.dumps(outcome.document or {}, separators=(",", ":"))
            if self.scope is not None:
                await self._after_page(item, outcome, done, sitemap_found)
        await self._record(item, done)

    async def _after_page(
        self,
        item: Item,
        outcome: PageOutcome,
        done: Finished,
        sitemap_found: list[tuple[str, str]],
    ) -> None:
        assert self.scope is not None
        final = normalise(outcome.final_url or item.url) or item.url
        if self.scope.key(final) != item.key:
            if not self.scope.admits(final, item.depth):
                done.document = None
                done.error = self._error(
                    item, "REDIRECT_OUT_OF_SCOPE", "the page redirected out of the crawl's scope"
                )
                return
            done.alias_key = self.scope.key(final)
        await self._sort_by_robots(sitemap_found, 0, done)
        await self._sort_by_robots(
            self._candidates(outcome.links, item.depth + 1), item.depth + 1, done
        )

    async def _record(self, item: Item, done: Finished) -> None:
        result = await self.store.finish(self.spec.id, item, done, time.time())
        if result.verdict == "stored" and done.document is not None:
            self.hooks.send("page", data=[json.loads(done.document)])
        elif result.verdict == "error" and done.error is not None:
            self.hooks.send("page", success=False, error=done.error["error"])
        if result.ended is not None:
            failed = result.ended == "failed"
            self.hooks.send(
                result.ended, success=not failed, error="no page could be read" if failed else None
            )

    async def _heartbeat(self) -> None:
        period = max(0.5, min(self.spec.lease_s / 3, 5.0))
        while True:
            await asyncio.sleep(period)
            now = time.time()
            await self.store.renew(self.spec.id, list(self.inflight.values()), now)
            await self.store.beat(self.spec.id, self.token, now + self.spec.lease_s, now)

    def _reap(self, finished: set[asyncio.Task[None]]) -> None:
        for task in finished:
            item = self.inflight.pop(task)
            exc = task.exception()
            if isinstance(exc, SourceUnavailable):
                log.warning("job %s: the page source is busy; %s waits", self.spec.id, item.url)
            elif exc is not None:
                log.error("job %s: page %s failed", self.spec.id, for_log(item.url), exc_info=exc)
            if exc is not None:
                self._put_back.append(item)

    async def run(self) -> SliceEnd:
        now = time.time()
        if not await self.store.beat(self.spec.id, self.token, now + self.spec.lease_s, now):
            return "surplus"
        if await self.store.mark_once(self.spec.id, "started"):
            self.hooks.send("started")
        beat = asyncio.create_task(self._heartbeat())
        ends = time.monotonic() + self.limits.seconds
        try:
            while True:
                for item in self._put_back:
                    await self.store.release(self.spec.id, item)
                self._put_back.clear()
                if time.monotonic() < ends:
                    free = self.spec.concurrency - len(self.inflight)
                    if free > 0:
                        for item in await self.store.claim(self.spec.id, free, time.time()):
                            self.inflight[asyncio.create_task(self._process(item))] = item
                if self.inflight:
                    finished, _ = await asyncio.wait(
                        set(self.inflight),
                        timeout=self.limits.poll_s,
                        return_when=asyncio.FIRST_COMPLETED,
                    )
                    self._reap(finished)
                    continue
                state = await self.store.state(self.spec.id)
                if state is None or state.status != "scraping":
                    return "ended"
                if time.monotonic() >= ends:
                    now = time.time()
                    await self.store.beat(
                        self.spec.id, self.token, now + self.limits.queue_grace_s, now
                    )
                    return "more"
                await asyncio.sleep(self.limits.poll_s)
        finally:
            beat.cancel()
            for task in self.inflight:
                task.cancel()
            await asyncio.gather(beat, *self.inflight, return_exceptions=True)
            for item in [*self.inflight.values(), *self._put_back]:
                await self.store.release(self.spec.id, item)
            await self.hooks.drain()


async def run_slice(
    store: JobStore, source: PageSource, job_id: str, token: str, limits: SliceLimits
) -> SliceEnd:
    """Run one slice of `job_id` for the driver chain `token` (see the module docstring)."""
    spec = await store.spec(job_id)
    if spec is None:
        return "missing"
    end = await Driver(store, source, spec, token, limits).run()
    if end in ("ended", "missing"):
        await store.leave(job_id, token)
    return end
