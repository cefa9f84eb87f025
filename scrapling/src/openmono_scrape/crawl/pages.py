"""What a driver asks of the pipeline that reads its pages (`driver.PageSource`), and the answers.

In-process values, not wire models: the driver and the page pipeline run in one process (the
scrape service without a broker, or the scrape worker), so no page leaves it on its way to the
job's store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from openmono_contracts.crawl import JobVersion


@dataclass(frozen=True)
class PageRequest:
    """Scrape one page of a job the way `/firecrawl/{version}/scrape` would."""

    url: str
    version: JobVersion = "v2"
    scrape_options: dict[str, Any] = field(default_factory=dict)
    # a crawl needs the page's links to go on, whatever formats the user asked for
    want_links: bool = False


@dataclass(frozen=True)
class PageOutcome:
    """A page's document (Firecrawl's JSON, camelCase) or why there is none."""

    ok: bool
    document: dict[str, Any] | None = None
    links: list[str] = field(default_factory=list)
    final_url: str | None = None
    status_code: int | None = None
    error: str | None = None
    code: str | None = None  # the scrape service's error code (BLOCKED_URL, TIMEOUT, ...)


@dataclass(frozen=True)
class SiteRequest:
    """A site's robots.txt, and its sitemap URLs when `sitemap` (sitemap indexes followed)."""

    url: str
    sitemap: bool = False
    max_urls: int = 10_000  # at most 100,000 (the driver caps it)


@dataclass(frozen=True)
class SiteFacts:
    robots: str | None = None  # None: the site has none (or it could not be read)
    sitemap_urls: list[str] = field(default_factory=list)
