"""One scrape, start to finish. The steps:

1. Budget: `timeout_s` (default 60, at most 120) covers every engine, hop and wait below.
   The cache is asked first (`max_age_s`; `cache`): a copy young enough is the answer, and the
   origin is not touched. Otherwise the fetch waits for a slot of its host (`hostlimit`), and the
   page it gets is stored for later requests (2xx and 3xx only: an error page is not kept).
2. `render: true` goes to the browser at once; otherwise the `fetcher` tries first.
3. The fetcher's answer is judged (`escalation`): 401/403/429/503, a challenge interstitial or a
   JavaScript shell sends the URL to the browser; 404/410 never do. A 429/503 whose `Retry-After`
   fits in the budget (and under `max_retry_after_s`) is retried once on the fetcher first. A
   fetch that threw (connection reset, TLS failure) escalates too; a refusal by the guard, a body
   over the limit or an exhausted budget never do.
4. The browser's answer is judged again: still a challenge means the stealthy engine (Camoufox)
   is needed, and where it is missing the caller gets `ENGINE_UNAVAILABLE`.
5. When escalation was only about a status code and the next engine is missing or fails, the
   fetcher's page is still a page: it is returned with the site's status.
6. The page becomes text (`content.render`; a PDF in a thread, within the same budget; a PDF a
   browser loaded is fetched again by the fetcher, as a browser only hands back its viewer), is
   cut to `max_length`, and is returned.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass

from openmono_contracts import NetGuard, ScrapeRequest, ScrapeResponse
from openmono_contracts.logurl import for_log
from openmono_contracts.netguard import policy_resolver
from openmono_contracts.scrape import CacheState

from openmono_scrape.cache import CachedPage, ScrapeCache, cache_key
from openmono_scrape.content import kind_of, render_off_loop, truncate
from openmono_scrape.decode import decode_body
from openmono_scrape.engines import BrowserEngine, StealthyEngine, fetcher
from openmono_scrape.engines.interact import Plan
from openmono_scrape.errors import (
    BlockedURL,
    EngineUnavailable,
    FetchFailed,
    FetchTimeout,
    ScrapeError,
    TooLarge,
)
from openmono_scrape.escalation import escalation_reason, is_challenge
from openmono_scrape.hostlimit import HostLimiter
from openmono_scrape.page import Budget, FetchedPage
from openmono_scrape.pdf import PdfLimits, looks_like_pdf
from openmono_scrape.settings import ScrapeSettings

log = logging.getLogger("openmono_scrape")


def _retry_after_s(page: FetchedPage) -> float | None:
    raw = page.header("retry-after")
    if raw is None:
        return None
    try:
        return max(0.0, float(raw.strip()))
    except ValueError:
        return None  # an HTTP date: not worth parsing for the few seconds we would wait


def _pdf_viewer(page: FetchedPage) -> bool:
    return page.engine != "fetcher" and kind_of(page) == "pdf" and not looks_like_pdf(page.body)


def _html_of(page: FetchedPage) -> str | None:
    if kind_of(page) != "html":
        return None
    if page.rendered_html is not None:
        return page.rendered_html
    return decode_body(page.body, page.header("content-type"))


@dataclass(frozen=True)
class PageResult:
    """A page to render, the engine it escalated from, and whether the cache served it."""

    page: FetchedPage
    escalated_from: str | None
    cache: CacheState
    cached_at: str | None = None


class ScrapeService:
    """Holds the guard and the engines; `scrape` serves one request."""

    def __init__(self, settings: ScrapeSettings) -> None:
        self.settings = settings
        self.guard = NetGuard(
            settings.allow_cidrs,
            resolver=policy_resolver(settings.static_hosts, settings.system_dns),
        )
        self.browser = BrowserEngine(settings, self.guard)
        self.stealthy = StealthyEngine(settings, self.guard)
        self.cache = ScrapeCache(settings.cache_max_bytes, settings.cache_redis_url)
        self.hosts = HostLimiter(settings.per_host_concurrency)

    def engines(self) -> dict[str, bool]:
        return {
            "fetcher": True,
            "browser": self.browser.available,
            "stealthy": self.stealthy.available,
        }

    async def close(self) -> None:
        await self.browser.shutdown()
        await self.cache.close()

    async def _fetch_fast(
        self, url: str, budget: Budget, headers: Mapping[str, str] | None = None
    ) -> FetchedPage:
        return await fetcher.fetch(
            url,
            self.guard,
            budget,
            max_bytes=self.settings.max_download_bytes,
            max_redirects=self.settings.max_redirects,
            headers=headers,
        )

    async def _after_retry_after(self, page: FetchedPage, budget: Budget) -> FetchedPage:
        """One polite retry on the fetcher when the site names a short wait."""
        wait = _retry_after_s(page)
        if page.status not in (429, 503) or wait is None:
            return page
        if wait > self.settings.max_retry_after_s or wait >= budget.remaining() - 1.0:
            return page
        await asyncio.sleep(wait)
        return await self._fetch_fast(page.url, budget)

    async def _browser_chain(self, url: str, budget: Budget) -> FetchedPage:
        """Browser, then stealthy when the browser still meets a challenge."""
        page = await self.browser.fetch(url, budget)
        html = _html_of(page)
        if html is not None and is_challenge(html):
            try:
                return await self.stealthy.fetch(url, budget)
            except EngineUnavailable as exc:
                exc.message = (
                    "the page is behind a challenge the browser could not pass, and the "
                    "stealthy engine (Camoufox) is not installed"
                )
                raise
        return page

    async def fetch_page(
        self,
        url: str,
        render: bool,
        budget: Budget,
        headers: Mapping[str, str] | None = None,
    ) -> tuple[FetchedPage, str | None]:
        """The page to render and the engine it escalated from (None when none was).

        `headers` reach the fetcher only; the browser engines send their own.
        """
        if render:
            if not self.browser.available:
                raise EngineUnavailable(
                    "render needs a browser and no Chromium is installed here",
                    url=url,
                    engine="browser",
                )
            return await self._browser_chain(url, budget), None
        try:
            page = await self._fetch_fast(url, budget, headers)
        except (BlockedURL, TooLarge, FetchTimeout, EngineUnavailable):
            raise
        except FetchFailed as exc:
            if not exc.retryable or not self.browser.available:
                raise
            log.info("fetcher failed (%s); trying the browser", exc.message)
            return await self._browser_chain(url, budget), "fetcher"
        page = await self._after_retry_after(page, budget)
        reason = escalation_reason(page.status, _html_of(page))
        if reason is None:
            return page, None
        status_only = reason.startswith("status")
        if not self.browser.available:
            if status_only:
                return page, None
            raise EngineUnavailable(
                f"the page needs a browser ({reason}) and no Chromium is installed here",
                url=url,
                engine="browser",
            )
        log.info("escalating %s to the browser: %s", for_log(url), reason)
        try:
            return await self._browser_chain(page.url, budget), "fetcher"
        except (BlockedURL, TooLarge):
            raise
        except ScrapeError:
            if status_only and budget.remaining() > 0:
                return page, None
            raise

    async def get_page(
        self,
        url: str,
        *,
        render: bool,
        timeout_s: float | None,
        max_age_s: float | None,
        headers: Mapping[str, str] | None = None,
        store: bool = True,
        plan: Plan | None = None,
    ) -> tuple[PageResult, Budget]:
        """Steps 1-5: the page (from the cache when allowed and young enough) and its budget.

        With a `plan` (Firecrawl actions, screenshot) the browser loads the page and runs it,
        and the cache is neither read nor written: the page after the actions is not the page.
        """
        total = min(timeout_s or self.settings.default_timeout_s, self.settings.max_timeout_s)
        budget = Budget(total)
        if plan is not None:
            return await self._interactive(url, budget, plan), budget
        key = cache_key(url, render=render, headers=headers)
        entry = await self.cache.get(key, max_age_s)
        if entry is not None:
            hit = PageResult(entry.page, entry.escalated_from, "hit", entry.stored_at_iso)
            return hit, budget

        async def fetch() -> tuple[FetchedPage, str | None]:
            async with self.hosts.slot(url, budget.remaining()):
                page, came_from = await self.fetch_page(url, render, budget, headers)
                if _pdf_viewer(page):
                    # A browser shows a PDF in its viewer and hands back the viewer's HTML;
                    # the file itself needs no script, so the fetcher brings it.
                    page = await self._fetch_fast(page.url, budget, headers)
                return page, came_from

        try:
            page, escalated_from = await asyncio.wait_for(fetch(), total + 0.5)
        except TimeoutError as exc:
            raise FetchTimeout(
                f"the time budget of {total:g}s ran out", url=url, retryable=True
            ) from exc
        if page.engine == "stealthy":
            escalated_from = "browser"
        if store and 200 <= page.status < 400:
            await self.cache.put(key, CachedPage(page, escalated_from, time.time()))
        return PageResult(page, escalated_from, "miss"), budget

    async def _interactive(self, url: str, budget: Budget, plan: Plan) -> PageResult:
        if not self.browser.available:
            raise EngineUnavailable(
                "actions and screenshots need a browser and no Chromium is installed here",
                url=url,
                engine="browser",
            )

        async def fetch() -> FetchedPage:
            async with self.hosts.slot(url, budget.remaining()):
                return await self.browser.fetch(url, budget, plan)

        try:
            page = await asyncio.wait_for(fetch(), budget.total_s + 0.5)
        except TimeoutError as exc:
            raise FetchTimeout(
                f"the time budget of {budget.total_s:g}s ran out", url=url, retryable=True
            ) from exc
        return PageResult(page, None, "miss")

    def pdf_limits(self, budget: Budget) -> PdfLimits:
        """The PDF converter's limits from the settings, with the request's deadline."""
        cfg = self.settings
        return PdfLimits(
            cfg.pdf_max_bytes, cfg.pdf_max_pages, cfg.pdf_max_inflated_bytes, budget.deadline
        )

    async def scrape(self, req: ScrapeRequest) -> ScrapeResponse:
        got, budget = await self.get_page(
            req.url, render=req.render, timeout_s=req.timeout_s, max_age_s=req.max_age_s
        )
        page = got.page
        rendered = await render_off_loop(
            page, req.format, req.main_content, self.pdf_limits(budget)
        )
        content, truncated = truncate(rendered.content, req.max_length)
        return ScrapeResponse(
            status=page.status,
            url=page.url,
            engine=page.engine,
            format=req.format,
            truncated=truncated,
            content=content,
            title=rendered.title,
            escalated_from=got.escalated_from,
            elapsed_ms=round(budget.elapsed_ms(), 1),
            cache=got.cache,
            cached_at=got.cached_at,
        )
