"""One page as Firecrawl's scrape reads it: its options mapped onto the service, the document.

Steps: 1. the formats are checked (`parse_formats`: 400 for one this server does not make; on
scrape, the model's formats and their schemas too, `_model_formats`);
2. Firecrawl's options onto the service (`timeout` ms → budget, `maxAge` ms → cache age, v1 and
v2 defaults apart; `waitFor` → the browser when one is installed; `headers` → the fetcher;
`storeInCache`); 3. `ScrapeService.get_page` (cache, per-host limit, engines, escalation);
4. the document (`_document`), a PDF converted off the event loop; 5. on scrape, `json` and
`summary` from its markdown by the box's model. Scrape, search, map and the crawl and batch
jobs all read pages here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Literal

from openmono_contracts.firecrawl import (
    V1_DEFAULT_MAX_AGE_MS,
    V2_DEFAULT_MAX_AGE_MS,
    FirecrawlDocument,
    FirecrawlScrapeOptions,
)

from openmono_scrape.cache import CachedPage
from openmono_scrape.content import off_loop_for_pdf
from openmono_scrape.firecrawl import _interact
from openmono_scrape.firecrawl._changes import ChangeTracker, tracking_of
from openmono_scrape.firecrawl._document import document, parse_formats
from openmono_scrape.firecrawl._model_formats import fill, model_asks, model_deadline, ready
from openmono_scrape.service import ScrapeService

Version = Literal["v1", "v2"]
Admit = Callable[[str | None], AbstractAsyncContextManager[None]]


@dataclass
class Scraped:
    doc: FirecrawlDocument
    warnings: list[str]
    links: list[str]


class PageScraper:
    """One page the way `/firecrawl/*/scrape` reads it; what map, jobs and search build on.

    `admit` is the service's admission (the same slots as `/scrape`).
    """

    def __init__(self, service: ScrapeService, admit: Admit) -> None:
        self.service = service
        self.settings = service.settings
        self.admit = admit
        self.changes = ChangeTracker(service.cache)

    async def scrape_one(
        self,
        url: str,
        opts: FirecrawlScrapeOptions,
        version: Version,
        cap_s: float | None = None,
        with_links: bool = False,
        model: bool = False,
        owner: str = "",
    ) -> Scraped:
        """One page as a document; `with_links` also gives its links, asked for or not; `model`:
        the scrape-only formats (`json`, `summary`, `changeTracking`) may be asked, `owner`
        the gateway key asking (whose change-tracking snapshots are compared)."""
        started = time.monotonic()
        formats = parse_formats(opts.formats, model)
        asks = model_asks(opts) if model else []
        default_age = V1_DEFAULT_MAX_AGE_MS if version == "v1" else V2_DEFAULT_MAX_AGE_MS
        max_age_ms = opts.max_age if opts.max_age is not None else default_age
        timeout_s = opts.timeout / 1000.0 if opts.timeout else None
        if cap_s is not None:
            timeout_s = max(0.1, min(timeout_s or cap_s, cap_s))
        warnings: list[str] = []
        total_s = min(timeout_s or self.settings.default_timeout_s, self.settings.max_timeout_s)
        # a screenshot or actions that cannot run here: 400 before the model is asked too
        if model:
            has_browser = self.service.browser.available
            plan = _interact.plan_for(opts, self.settings, has_browser, total_s)
        else:
            _interact.refuse_off_scrape(opts)
            plan = None
        tracking = tracking_of(opts) if model else None
        asked_links = "links" in formats
        if with_links and not asked_links:
            formats.append("links")
        asked_markdown = "markdown" in formats
        model_work = None
        if (asks or tracking is not None) and not asked_markdown:
            formats.append("markdown")
        if asks or (tracking is not None and tracking.ask is not None):
            # before the fetch: without a model on the box the answer is 503 at once
            model_work = await ready(self.settings, model_deadline(opts, started, self.settings))
        render = False
        if opts.wait_for > 0:
            if self.service.browser.available:
                render = True
            else:
                warnings.append("waitFor needs a browser and none is installed here")
        result, budget = await self.service.get_page(
            url,
            render=render,
            timeout_s=timeout_s,
            max_age_s=max_age_ms / 1000.0,
            headers=opts.headers,
            store=opts.store_in_cache,
            plan=plan,
        )
        # the same PDF limits and deadline as /scrape, and converted off the event loop as there
        limits = self.service.pdf_limits(budget)
        doc = await off_loop_for_pdf(
            result.page, document, result, url, formats, opts.only_main_content, limits
        )
        warnings += _interact.fill(doc, result.page.interaction)
        links = doc.links or []
        if not asked_links:
            doc.links = None
        if model_work is not None and asks:
            warnings += await fill(doc, asks, doc.markdown or "", url, model_work)
        if tracking is not None:
            now = result.cached_at or CachedPage(result.page, None, time.time()).stored_at_iso
            doc.change_tracking, more = await self.changes.track(
                tracking, owner, url, result.page.status, doc.markdown or "", now, model_work
            )
            warnings += more
        if not asked_markdown:
            doc.markdown = None
        return Scraped(doc, warnings, links)
