"""Crawl and batch scrape jobs: what the scrape service and the worker tier must do alike.

A job is made by the scrape service (`/firecrawl/v*/crawl`, `/batch/scrape`) and run by drivers:
slices of `driver.run_slice`, as Celery tasks in the worker tier when the stack has Redis
(`RedisJobStore`, durable), or as a loop in the service without it (`MemoryJobStore`). Pages are
always read by the scrape service, the driver only decides which and records them.

Modules: `_spec` (the models that cross processes), `scope` (URL rules and dedupe keys),
`robots`, `store` (the store's rules and types) with `memstore` and `redisstore`, `driver`,
`webhook`.
"""

from openmono_contracts.crawl._spec import (
    CRAWL_QUEUE,
    CRAWL_TASK,
    JOB_KEY_PREFIX,
    CrawlRules,
    GuardPolicy,
    JobKind,
    JobSpec,
    JobStatus,
    JobVersion,
    PageOutcome,
    PageRequest,
    SiteFacts,
    SiteRequest,
    SliceTask,
    WebhookSpec,
)
from openmono_contracts.crawl.driver import PageSource, SliceLimits, SourceUnavailable, run_slice
from openmono_contracts.crawl.memstore import MemoryJobStore, iso
from openmono_contracts.crawl.redisstore import RedisJobStore
from openmono_contracts.crawl.robots import Robots
from openmono_contracts.crawl.scope import Scope, check_patterns, normalise, page_key
from openmono_contracts.crawl.store import (
    Finished,
    FinishResult,
    Item,
    JobState,
    JobStore,
    StoreFull,
)
from openmono_contracts.crawl.webhook import Webhooks

__all__ = [
    "CRAWL_QUEUE",
    "CRAWL_TASK",
    "JOB_KEY_PREFIX",
    "CrawlRules",
    "FinishResult",
    "Finished",
    "GuardPolicy",
    "Item",
    "JobKind",
    "JobSpec",
    "JobState",
    "JobStatus",
    "JobStore",
    "JobVersion",
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
    "SliceTask",
    "SourceUnavailable",
    "StoreFull",
    "WebhookSpec",
    "Webhooks",
    "check_patterns",
    "iso",
    "normalise",
    "page_key",
    "run_slice",
]
