"""`/internal/crawl/page` and `/internal/crawl/site`: what a driver in the worker tier asks.

Not under `/firecrawl` and not routed by the gateway (its catch-all goes to llama-server): only
processes that reach this service directly (the stack's workers) can ask. A page takes one of
the service's admission slots like any scrape; a busy service answers 503 and the driver tries
again later. Errors of the page itself are a 200 `PageOutcome` with `ok: false`.
"""

from __future__ import annotations

from fastapi import APIRouter
from openmono_contracts.crawl import PageOutcome, PageRequest, SiteFacts, SiteRequest

from openmono_scrape.crawljobs._source import read_page, read_site
from openmono_scrape.firecrawl import Admit, PageScraper

PREFIX = "/internal/crawl"


def build_internal_router(api: PageScraper, admit: Admit) -> APIRouter:
    router = APIRouter(prefix=PREFIX, tags=["internal"])

    @router.post("/page", response_model=PageOutcome)
    async def page(req: PageRequest) -> PageOutcome:
        async with admit(req.url):
            return await read_page(api, req)

    @router.post("/site", response_model=SiteFacts)
    async def site(req: SiteRequest) -> SiteFacts:
        return await read_site(api, req)

    return router
