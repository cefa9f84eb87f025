"""How a page of a job is read: the service's own page pipeline, in the driver's process (the
scrape service without a broker, or the scrape worker), so a job reads pages exactly as
`/firecrawl/*/scrape` does and no page takes a network hop to be read."""

from __future__ import annotations

from openmono_contracts.firecrawl import FirecrawlScrapeOptions
from pydantic import ValidationError

from openmono_scrape.crawl import PageOutcome, PageRequest, SiteFacts, SiteRequest
from openmono_scrape.errors import BadRequest, EngineUnavailable, ScrapeError, SourceUnavailable
from openmono_scrape.firecrawl import Admit, PageScraper
from openmono_scrape.sitemaps import site_facts

SITE_TIMEOUT_S = 60.0


async def read_page(api: PageScraper, req: PageRequest) -> PageOutcome:
    """The page's document, or why there is none (never raises a ScrapeError)."""
    try:
        opts = FirecrawlScrapeOptions.model_validate(req.scrape_options)
        got = await api.scrape_one(req.url, opts, req.version, with_links=req.want_links)
    except ValidationError as exc:
        return PageOutcome(ok=False, error=f"bad scrape options: {exc.errors()[0]['msg']}")
    except ScrapeError as exc:
        code = "BAD_REQUEST" if isinstance(exc, BadRequest) else exc.code
        return PageOutcome(ok=False, error=exc.message, code=code, final_url=exc.url)
    meta = got.doc.metadata
    return PageOutcome(
        ok=True,
        document=got.doc.model_dump(mode="json", exclude_none=True, by_alias=True),
        links=got.links,
        final_url=meta.url if meta else None,
        status_code=meta.status_code if meta else None,
    )


async def read_site(api: PageScraper, req: SiteRequest) -> SiteFacts:
    return await site_facts(
        api.service, req.url, sitemap=req.sitemap, max_urls=req.max_urls, timeout_s=SITE_TIMEOUT_S
    )


class DirectSource:
    """`PageSource` over this process's page pipeline; takes its admission slots."""

    def __init__(self, api: PageScraper, admit: Admit) -> None:
        self.api = api
        self.admit = admit

    async def page(self, req: PageRequest) -> PageOutcome:
        try:
            async with self.admit(req.url):
                return await read_page(self.api, req)
        except EngineUnavailable as exc:  # the pipeline is busy: the driver tries again later
            raise SourceUnavailable(exc.message) from exc

    async def site(self, req: SiteRequest) -> SiteFacts:
        return await read_site(self.api, req)
