"""The crawl engine: what runs a crawl or batch scrape job, wherever its drivers run.

A job is made by the scrape service (`/firecrawl/v*/crawl`, `/batch/scrape`) and run by drivers:
slices of `driver.run_slice`, as Celery tasks in the scrape worker when the stack has Redis
(`RedisJobStore`, durable), or as a loop in the service without it (`MemoryJobStore`). Either
way the driver reads pages in its own process through a `PageSource` over the service's page
pipeline (`openmono_scrape.crawljobs`), so a page never takes a network hop to be read.

Modules: `pages` (what a driver asks of its page source), `scope` (URL rules and dedupe keys),
`robots`, `store` (the store's rules and types) with `memstore` and `redisstore`, `driver`,
`webhook`. The job's wire models (`JobSpec`, `SliceTask`, the queue) are in
`openmono_contracts.crawl`.
"""

from openmono_scrape.crawl.driver import PageSource, SliceLimits, run_slice
from openmono_scrape.crawl.memstore import MemoryJobStore, iso
from openmono_scrape.crawl.pages import PageOutcome, PageRequest, SiteFacts, SiteRequest
from openmono_scrape.crawl.redisstore import RedisJobStore
from openmono_scrape.crawl.robots import Robots
from openmono_scrape.crawl.scope import Scope, check_patterns, normalise, page_key
from openmono_scrape.crawl.store import (
    Finished,
    FinishResult,
    Item,
    JobState,
    JobStore,
    StoreFull,
)
from openmono_scrape.crawl.webhook import Webhooks

__all__ = [
    "FinishResult",
    "Finished",
    "Item",
    "JobState",
    "JobStore",
    "MemoryJobStore",
    "PageOutcome",
    "PageRequest",
    "PageSource",
    "RedisJobStore",
    "Robots",
    "Scope",
    "SiteFacts",
    "SiteRequest",
    "SliceLimits",
    "StoreFull",
    "Webhooks",
    "check_patterns",
    "iso",
    "normalise",
    "page_key",
    "run_slice",
]
