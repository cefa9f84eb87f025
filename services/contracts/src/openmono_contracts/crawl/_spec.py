"""What crosses the process boundaries of a crawl job: the job as the scrape service made it, and
the two requests a driver in the worker tier makes of the scrape service.

    scrape service --JobSpec (Redis) + Celery task {job_id, token}--> worker (a driver slice)
    worker --PageRequest--> scrape service  /internal/crawl/page  --PageOutcome-->
    worker --SiteRequest--> scrape service  /internal/crawl/site  --SiteFacts-->

The driver never fetches a page itself: the scrape service does, with its guard (every URL and
redirect hop), its per-host limit, its cache and its extraction, so a crawl reads pages exactly
as `/firecrawl/v2/scrape` does.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

# The Celery task that runs one slice of a job, and the queue every crawl-serving worker reads.
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


class PageRequest(BaseModel):
    """Scrape one page of a job the way `/firecrawl/{version}/scrape` would."""

    url: str
    version: JobVersion = "v2"
    scrape_options: dict[str, Any] = Field(default_factory=dict)
    # a crawl needs the page's links to go on, whatever formats the user asked for
    want_links: bool = False


class PageOutcome(BaseModel):
    """A page's document (Firecrawl's JSON, camelCase) or why there is none."""

    ok: bool
    document: dict[str, Any] | None = None
    links: list[str] = Field(default_factory=list)
    final_url: str | None = None
    status_code: int | None = None
    error: str | None = None
    code: str | None = None  # the scrape service's error code (BLOCKED_URL, TIMEOUT, ...)


class SiteRequest(BaseModel):
    """A site's robots.txt, and its sitemap URLs when `sitemap` (sitemap indexes followed)."""

    url: str
    sitemap: bool = False
    max_urls: int = Field(default=10_000, ge=1, le=100_000)


class SiteFacts(BaseModel):
    robots: str | None = None  # None: the site has none (or it could not be read)
    sitemap_urls: list[str] = Field(default_factory=list)


class SliceTask(BaseModel):
    """The Celery task's one argument: which job, and which driver chain this slice belongs to."""

    job_id: str
    token: str
