"""Crawl and batch scrape jobs in the scrape service: who runs them (`_runner`), how their pages
are read here (`_source`), and the internal endpoints the worker tier's drivers ask
(`_internal`). The job logic itself is shared with the worker: `openmono_contracts.crawl`.
The Firecrawl endpoints that start and watch jobs are in `firecrawl._jobs`.
"""

from openmono_scrape.crawljobs._internal import build_internal_router
from openmono_scrape.crawljobs._runner import CeleryRunner, JobBounds, LocalRunner
from openmono_scrape.crawljobs._source import DirectSource, read_page, read_site

__all__ = [
    "CeleryRunner",
    "DirectSource",
    "JobBounds",
    "LocalRunner",
    "build_internal_router",
    "read_page",
    "read_site",
]
