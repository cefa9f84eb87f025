"""What crosses the process boundaries of a crawl job: the job as the scrape service made it, and
the Celery task that drives it.

    scrape service --JobSpec (Redis) + Celery task {job_id, token}--> scrape worker (a driver slice)

Wire models only: the engine that runs a job (scope, robots.txt, the job stores, the driver,
webhooks) is the scrape service's, `openmono_scrape.crawl`; its worker reads each page in its own
process with the service's own pipeline (guard, per-host limit, cache, extraction), so a crawl
reads pages exactly as `/firecrawl/v2/scrape` does.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

# The Celery task that runs one slice of a job, and the queue every scrape worker reads.
CRAWL_TASK = "openmono.crawl.run"
CRAWL_QUEUE = "openmono.crawl"
# Redis keys of a job: `openmono:crawl:<id>:<part>` (the store's module lists the parts).
JOB_KEY_PREFIX = "openmono:crawl:"

JobKind = Literal["crawl", "batch"]
JobVersion = Literal["v1", "v2"]
JobStatus = Literal["scraping", "completed", "failed", "cancelled"]


class GuardPolicy(BaseModel):
    """The scrape service's SSRF policy, carried to wherever the job's webhooks are sent."""

    allow_cidrs: list[str] = Field(default_factory=list)
    static_hosts: dict[str, str] = Field(default_factory=dict)
    system_dns: bool = True


class WebhookSpec(BaseModel):
    url: str
    headers: dict[str, str] = Field(default_factory=dict)
    metadata: dict[str, Any] | None = None
    events: list[str] | None = None  # None = every event


class CrawlRules(BaseModel):
    """Which discovered URLs a crawl takes (`scope.Scope` applies them)."""

    limit: int = Field(ge=1)
    max_path_depth: int | None = None
    max_discovery_depth: int | None = None
    include_paths: list[str] = Field(default_factory=list)
    exclude_paths: list[str] = Field(default_factory=list)
    regex_on_full_url: bool = False
    allow_external_links: bool = False
    allow_subdomains: bool = False
    crawl_entire_domain: bool = False
    ignore_query_parameters: bool = False
    deduplicate_similar_urls: bool = True
    sitemap: Literal["include", "skip", "only"] = "include"


class JobSpec(BaseModel):
    """A crawl or batch scrape as created; never changes after that (its state does)."""

    id: str
    kind: JobKind
    version: JobVersion
    # the gateway key that made it (its name, `X-OpenMono-Key`); only that key sees the job, and
    # its bytes count against that key's budget. "": a caller that reached the service directly
    owner: str = ""
    created_at: float  # epoch seconds
    expires_at: float  # the job, its results and its errors are dropped then
    seeds: list[str]  # a crawl's start URL, or a batch's URLs
    rules: CrawlRules | None = None  # crawls only
    scrape_options: dict[str, Any] = Field(default_factory=dict)  # FirecrawlScrapeOptions
    webhook: WebhookSpec | None = None
    guard: GuardPolicy = Field(default_factory=GuardPolicy)
    # pages in flight at once for the whole job, over every driver
    concurrency: int = Field(default=4, ge=1)
    delay_s: float = Field(default=0.0, ge=0)
    # bound on the stored documents' bytes; past it the job stops taking pages
    max_bytes: int = Field(default=32 * 1024 * 1024, ge=1024)
    # a page a driver took is handed to another after this long without the driver's heartbeat
    lease_s: float = Field(default=20.0, gt=0)
    # a page whose driver died this many times is given up (an error, not a loop)
    max_attempts: int = Field(default=3, ge=1)
    # drivers at once (each a chain of Celery slices); more are turned away
    max_drivers: int = Field(default=2, ge=1)


class SliceTask(BaseModel):
    """The Celery task's one argument: which job, and which driver chain this slice belongs to."""

    job_id: str
    token: str
