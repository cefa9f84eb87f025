"""Crawl and batch scrape jobs in the scrape service and its worker: who runs them (`_runner`),
how their pages are read in the driver's own process (`_source`), and the Celery app both ends
of the crawl queue build (`_celery`). The engine is `openmono_scrape.crawl`; the scrape worker
that serves the queue is `openmono_scrape.worker`; the Firecrawl endpoints that start and watch
jobs are in `firecrawl._jobs`.
"""

from openmono_scrape.crawljobs._celery import crawl_celery
from openmono_scrape.crawljobs._runner import CeleryRunner, JobBounds, LocalRunner
from openmono_scrape.crawljobs._source import DirectSource, read_page, read_site

__all__ = [
    "CeleryRunner",
    "DirectSource",
    "JobBounds",
    "LocalRunner",
    "crawl_celery",
    "read_page",
    "read_site",
]
