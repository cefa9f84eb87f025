"""`POST /firecrawl/{v1,v2}/map`: the URLs of a site, from its sitemaps and its start page's links.

Steps: 1. the start URL is normalised (and refused with 400 when the guard refuses it);
2. unless `sitemap: skip` (v1 `ignoreSitemap`), the site's sitemaps (`sitemaps.site_facts`);
3. unless `sitemap: only` (v1 `sitemapOnly`), the start page and its links, read like a scrape
   (guard, per-host limit, cache); 4. kept: http(s) URLs on the start host (`www.` or not), its
   subdomains with `includeSubdomains`; the query dropped with `ignoreQueryParameters`; each once
   (`scope.page_key`), normalised; 5. `search`: URLs holding any of its words, those holding more
   of them first; 6. at most `limit`. v1 answers `links: [url]`, v2 `links: [{url}]`.
A start page that cannot be read is an error only when no sitemap gave anything either.
"""

from __future__ import annotations

import time

from openmono_contracts.firecrawl import FirecrawlScrapeOptions
from openmono_contracts.firecrawl_jobs import FirecrawlMapRequest

from openmono_scrape.crawl import normalise, page_key
from openmono_scrape.crawl.scope import host_of
from openmono_scrape.errors import BadRequest, BlockedURL, ScrapeError
from openmono_scrape.firecrawl._scrape import PageScraper, Version
from openmono_scrape.sitemaps import site_facts

DEFAULT_TIMEOUT_S = 60.0
SEARCH_POOL = 10_000


def _on_site(host: str, start_host: str, subdomains: bool) -> bool:
    bare, start = host.removeprefix("www."), start_host.removeprefix("www.")
    return bare == start or (subdomains and bare.endswith("." + start))


def _strip_query(url: str) -> str:
    return url.split("?", 1)[0]


def _ranked(urls: list[str], search: str | None) -> list[str]:
    words = [w for w in (search or "").lower().split() if w]
    if not words:
        return urls
    scored = [(sum(w in url.lower() for w in words), i, url) for i, url in enumerate(urls)]
    return [url for score, _, url in sorted(scored, key=lambda t: (-t[0], t[1])) if score > 0]


class SiteMapper:
    """The map of one request; `api` reads the start page."""

    def __init__(self, api: PageScraper) -> None:
        self.api = api

    async def links(self, req: FirecrawlMapRequest, version: Version = "v2") -> list[str]:
        start = normalise(req.url)
        if start is None:
            raise BadRequest("Bad Request: url: only http and https URLs can be mapped")
        timeout_s = min(
            req.timeout / 1000.0 if req.timeout else DEFAULT_TIMEOUT_S,
            self.api.settings.max_timeout_s,
        )
        deadline = time.monotonic() + timeout_s
        mode = req.sitemap_mode(version)
        found: list[str] = [start]
        page_error: ScrapeError | None = None
        if mode != "skip":
            # a search filters what the sitemaps list: read past `limit` before filtering
            wanted = max(req.limit, SEARCH_POOL) if req.search else req.limit
            facts = await site_facts(
                self.api.service, start, sitemap=True, max_urls=wanted, timeout_s=timeout_s
            )
            found += facts.sitemap_urls
        if mode != "only":
            opts = FirecrawlScrapeOptions(formats=["markdown"], max_age=300_000)
            try:
                left = max(0.5, deadline - time.monotonic())
                got = await self.api.scrape_one(start, opts, "v2", cap_s=left, with_links=True)
                found += got.links
            except BlockedURL:
                raise
            except ScrapeError as exc:
                page_error = exc
        kept = self._keep(found, start, req)
        if page_error is not None and len(kept) <= 1:
            raise page_error
        return _ranked(kept, req.search)[: req.limit]

    @staticmethod
    def _keep(found: list[str], start: str, req: FirecrawlMapRequest) -> list[str]:
        start_host = host_of(start)
        out: dict[str, str] = {}
        for raw in found:
            url = normalise(raw)
            if url is None or not _on_site(host_of(url), start_host, req.include_subdomains):
                continue
            if req.ignore_query_parameters:
                url = _strip_query(url)
            out.setdefault(page_key(url), url)
        return list(out.values())
