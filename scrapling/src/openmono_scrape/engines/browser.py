"""The `browser` engine: one long-lived Scrapling `AsyncStealthySession` (patchright Chromium).

- One browser for the whole service, started on first use (a cold start costs ~1-3 s), with the
  SSRF guard twice: on its context (`_guardroute`: every request, document redirect hops, size
  limit, final URL and status) and as its only way out (`egress`: a forward proxy on 127.0.0.1
  that checks and pins every connection, including the preconnects, beacons and keepalive
  requests no route sees; without it a refused address still received TCP connections).
- At most `browser_max_pages` pages at once (a semaphore). A request waits for a free page up to
  `browser_queue_wait_s` within its own budget; past that wait it is refused as busy (503 +
  Retry-After), and a budget that runs out first is a timeout.
- Recycled after `browser_recycle_pages` fetches, or at once after a crash-like error: recycling
  takes every page slot first, so no fetch is cut off, then closes the session.
- `close()` stops the browser, Playwright's driver and every Chromium process under it; the app
  calls it on shutdown, and a test checks that no process of the tree survives.
- Chromium: Debian's `/usr/bin/chromium` through `executable_path` (or a running one through
  `cdp_url`); `real_chrome` does not work with it (NOTES). Never as root, and with its own
  sandbox on unless `browser_sandbox` is off (`_launch`).
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Any

from openmono_contracts import NetGuard
from scrapling.fetchers import AsyncStealthySession

from openmono_scrape.engines._guardroute import GuardRoute, NavState, nav_failure
from openmono_scrape.engines._launch import Launch, prepare
from openmono_scrape.engines._target import check_url
from openmono_scrape.engines.egress import GuardProxy
from openmono_scrape.engines.interact import Plan, Runner, prepare_page
from openmono_scrape.errors import EngineUnavailable, FetchFailed, FetchTimeout, ScrapeError
from openmono_scrape.page import Budget, FetchedPage
from openmono_scrape.settings import ScrapeSettings

log = logging.getLogger("openmono_scrape.engines.browser")

# What a request refused for want of a free page is told to wait before it asks again.
_BUSY_RETRY_AFTER_S = 2.0


class BrowserEngine:
    """Chromium through Scrapling, shared by all requests."""

    name = "browser"

    def __init__(self, settings: ScrapeSettings, guard: NetGuard) -> None:
        self.settings = settings
        self.guard = guard
        self.route = GuardRoute(guard, settings.max_download_bytes, settings.max_redirects)
        self.proxy = GuardProxy(guard)
        self._session: Any = None
        self._launch: Launch | None = None
        self._start_lock = asyncio.Lock()
        self._slots = asyncio.Semaphore(settings.browser_max_pages)
        self._served = 0
        self._recycling = False
        self.launches = 0  # browsers started since the service started

    @property
    def available(self) -> bool:
        if self.settings.browser_cdp_url:
            return True
        path = self.settings.browser_path
        return bool(path) and Path(path or "").is_file() and os.access(path or "", os.X_OK)

    @property
    def running(self) -> bool:
        return self._session is not None

    @property
    def open_pages(self) -> int:
        """Pages open in the browser's context (the pool's and any other: /health)."""
        context = getattr(self._session, "context", None)
        return len(context.pages) if context is not None else 0

    def _session_options(self, launch: Launch | None) -> dict[str, Any]:
        options: dict[str, Any] = {
            "headless": True,
            "max_pages": self.settings.browser_max_pages,
            "google_search": False,
            "retries": 1,
            # Every destination, loopback included, goes through the guard proxy.
            "proxy": self.proxy.url,
            "extra_flags": [*self.settings.browser_flags, "--proxy-bypass-list=<-loopback>"],
            # Service workers fetch outside the context's routes: never let one start.
            "additional_args": {"service_workers": "block"},
        }
        if launch is None:
            options["cdp_url"] = self.settings.browser_cdp_url
            return options
        merged = {**options["additional_args"], **launch.options.get("additional_args", {})}
        return {**options, **launch.options, "additional_args": merged}

    async def _ensure(self, budget: Budget) -> Any:
        async with self._start_lock:
            if self._session is None:
                if not self.proxy.port:
                    await self.proxy.start()
                launch = None if self.settings.browser_cdp_url else prepare(self.settings)
                try:
                    session = await self._start(launch, budget)
                except BaseException:
                    if launch is not None:
                        launch.cleanup()
                    raise
                self._session, self._launch = session, launch
                self._served = 0
                self.launches += 1
            return self._session

    async def _start(self, launch: Launch | None, budget: Budget) -> Any:
        session = AsyncStealthySession(**self._session_options(launch))
        try:
            await asyncio.wait_for(session.start(), budget.require(engine="browser"))
            await self.route.install(session.context)
        except TimeoutError as exc:
            await self._close_quietly(session)
            raise FetchTimeout("the browser did not start in time", engine="browser") from exc
        except Exception as exc:
            await self._close_quietly(session)
            log.exception("browser start failed")
            raise EngineUnavailable(
                "the browser could not be started", engine="browser", retryable=True
            ) from exc
        return session

    @staticmethod
    async def _close_quietly(session: Any) -> None:
        try:
            await asyncio.wait_for(session.close(), 15)
        except Exception:
            log.warning("browser close failed", exc_info=True)

    async def close(self) -> None:
        """Stop the browser (idempotent), then remove its launch's folders."""
        async with self._start_lock:
            session, self._session = self._session, None
            launch, self._launch = self._launch, None
        if session is not None:
            await self._close_quietly(session)
        if launch is not None:
            launch.cleanup()

    async def shutdown(self) -> None:
        """Stop the browser and its proxy (the app's lifespan end)."""
        await self.close()
        await self.proxy.close()

    async def _recycle(self) -> None:
        """Take every page slot (waits for running fetches), then close the browser."""
        n = self.settings.browser_max_pages
        for _ in range(n):
            await self._slots.acquire()
        try:
            await self.close()
        finally:
            for _ in range(n):
                self._slots.release()
            self._recycling = False

    def _maybe_recycle(self, force: bool = False) -> None:
        if self._recycling or self._session is None:
            return
        if force or self._served >= self.settings.browser_recycle_pages:
            self._recycling = True
            asyncio.get_running_loop().create_task(self._recycle())

    async def fetch(self, url: str, budget: Budget, plan: Plan | None = None) -> FetchedPage:
        """Render `url` in the browser; the guard checks it and every hop and subresource.
        `plan`: actions and a screenshot, run on the page before it is read (`interact`)."""
        if not self.available:
            raise EngineUnavailable(
                "no Chromium is installed on this host", url=url, engine="browser"
            )
        try:
            await check_url(self.guard, url, engine="browser")
        except ScrapeError as exc:
            exc.engine = "browser"
            raise
        left = budget.require(url, "browser")
        queue_wait = self.settings.browser_queue_wait_s
        try:
            await asyncio.wait_for(self._slots.acquire(), min(left, queue_wait) or 0.001)
        except TimeoutError as exc:
            if queue_wait < left:
                raise EngineUnavailable(
                    f"all {self.settings.browser_max_pages} browser pages are busy",
                    url=url,
                    engine="browser",
                    retryable=True,
                    retry_after_s=_BUSY_RETRY_AFTER_S,
                ) from exc
            raise FetchTimeout(
                "no browser page became free in time", url=url, engine="browser"
            ) from exc
        crashed = False
        try:
            session = await self._ensure(budget)
            return await self._fetch_in(session, url, budget, plan)
        except (EngineUnavailable, FetchFailed, FetchTimeout) as exc:
            # A timed-out navigation leaves its pooled page mid-flight (its route handler still
            # running), and reusing that page stalled the next fetch: start afresh instead.
            crashed = not isinstance(exc, FetchFailed) or "closed" in exc.message
            raise
        finally:
            self._served += 1
            self._slots.release()
            self._maybe_recycle(force=crashed)

    async def _fetch_in(
        self, session: Any, url: str, budget: Budget, plan: Plan | None = None
    ) -> FetchedPage:
        left = budget.require(url, "browser")
        state = NavState(
            deadline=budget.deadline,
            max_bytes=self.settings.max_download_bytes,
            max_redirects=self.settings.max_redirects,
        )
        pages: list[Any] = []
        runner = Runner(plan, budget.deadline, url) if plan is not None else None

        async def setup(page: Any) -> None:
            pages.append(page)
            self.route.states[page] = state
            await prepare_page(page, plan)

        try:
            response = await asyncio.wait_for(
                session.fetch(
                    url,
                    timeout=max(1000.0, left * 1000.0),
                    # a plan settles the page itself, before its screenshot
                    wait=0 if runner else self.settings.browser_settle_ms,
                    page_setup=setup,
                    page_action=runner.run if runner else None,
                    google_search=False,
                    load_dom=True,
                    network_idle=False,
                ),
                left,
            )
        except TimeoutError as exc:
            raise FetchTimeout("the page did not load in time", url=url, engine="browser") from exc
        except Exception as exc:
            raise nav_failure(state, url, exc, "browser") from exc
        finally:
            for page in pages:
                self.route.states.pop(page, None)
        if state.blocked or state.too_large or state.status is None:
            raise nav_failure(state, url, None, "browser")
        if runner is not None and runner.error is not None:
            raise runner.error
        headers = dict(state.headers)
        body = bytes(response.body or b"")
        # For HTML, Scrapling hands back the DOM after scripts ran, serialized as UTF-8.
        rendered = (
            body.decode("utf-8", "replace")
            if "html" in headers.get("content-type", "html")
            else None
        )
        return FetchedPage(
            url=state.final_url or url,
            status=state.status,
            headers=headers,
            body=body,
            engine="browser",
            rendered_html=rendered,
            interaction=runner.result if runner else None,
        )
