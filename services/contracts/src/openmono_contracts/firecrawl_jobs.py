"""Firecrawl's map, crawl and batch scrape wire shapes (an external contract, camelCase).

Requests accept Firecrawl's field names by alias or by their Python names and ignore fields this
server does not implement (`origin`, `integration`, `zeroDataRetention`, ...), as the scrape and
search models do (`openmono_contracts.firecrawl`). v1 and v2 share these models; where they
differ, both spellings are fields here and the service reads each for its meaning, the request's
own version's name winning when both are given (v1's `maxDepth`, `ignoreSitemap`, `sitemapOnly`,
`allowBackwardLinks`; v2's `sitemap`); the scrape service names the other version's in `warning`.

A crawl or a batch scrape is a job: starting one answers `FirecrawlJobStarted` at once, its status
(`FirecrawlJobStatus`) pages through the documents with `next`, `expiresAt` says when the job and
its results are dropped, and its errors (`FirecrawlJobErrors`) list the pages that failed and those
robots.txt kept out. Webhooks POST `{success, type, id, webhookId, data, error?, metadata?}`,
`type` being `crawl.started|page|completed|failed|cancelled` (`batch_scrape.*` for a batch).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from openmono_contracts.firecrawl import FirecrawlScrapeOptions

JobStatusName = Literal["scraping", "completed", "failed", "cancelled"]
SitemapMode = Literal["include", "skip", "only"]
WebhookEventName = Literal["started", "page", "completed", "failed", "cancelled"]


def _scrape_options() -> FirecrawlScrapeOptions:
    return FirecrawlScrapeOptions()


class Wire(BaseModel):
    """A request: Firecrawl's camelCase names or the Python ones, unknown fields ignored."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class Answer(BaseModel):
    """An answer, written with Firecrawl's camelCase names."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="ignore", serialize_by_alias=True
    )


class FirecrawlWebhook(Wire):
    """`webhook` of a crawl or a batch scrape (a bare URL string is accepted as well)."""

    url: str = Field(min_length=1, max_length=2048)
    headers: dict[str, str] | None = None
    metadata: dict[str, Any] | None = None
    # "page" and "crawl.page" both name the page event; none given = every event
    events: list[str] | None = None


class FirecrawlMapRequest(Wire):
    """`POST /firecrawl/v1/map` and `/v2/map`."""

    url: str = Field(min_length=1, max_length=8192)
    search: str | None = Field(default=None, max_length=500)
    include_subdomains: bool = True
    ignore_query_parameters: bool = True
    limit: int = Field(default=5000, ge=1, le=100_000)
    timeout: int | None = Field(default=None, ge=1, le=300_000, description="milliseconds")
    sitemap: SitemapMode | None = None  # v2
    ignore_sitemap: bool | None = None  # v1
    sitemap_only: bool | None = None  # v1

    def sitemap_mode(self, version: Literal["v1", "v2"] = "v2") -> SitemapMode:
        """The sitemap mode; when both spellings are given, the request's version's wins."""
        v1: SitemapMode | None = None
        if self.sitemap_only or self.ignore_sitemap is not None:
            v1 = "only" if self.sitemap_only else "skip" if self.ignore_sitemap else "include"
        mine, other = (v1, self.sitemap) if version == "v1" else (self.sitemap, v1)
        return mine or other or "include"


class FirecrawlMapLink(Answer):
    url: str
    title: str | None = None
    description: str | None = None


class FirecrawlMapResponseV1(Answer):
    success: Literal[True] = True
    links: list[str]
    warning: str | None = None


class FirecrawlMapResponseV2(Answer):
    success: Literal[True] = True
    links: list[FirecrawlMapLink]
    warning: str | None = None


class FirecrawlCrawlRequest(Wire):
    """`POST /firecrawl/v1/crawl` and `/v2/crawl`."""

    url: str = Field(min_length=1, max_length=8192)
    limit: int = Field(default=10_000, ge=1, le=100_000)
    # v1: how many path segments below the start URL's own (Firecrawl's `maxDepth`)
    max_depth: int | None = Field(default=None, ge=0, le=1000)
    # link hops from the start page; the start page and sitemap pages are at depth 0
    max_discovery_depth: int | None = Field(default=None, ge=0, le=1000)
    include_paths: list[str] = Field(default_factory=list, max_length=100)
    exclude_paths: list[str] = Field(default_factory=list, max_length=100)
    regex_on_full_url: bool = Field(
        default=False, validation_alias=AliasChoices("regexOnFullURL", "regex_on_full_url")
    )
    allow_external_links: bool = False
    allow_subdomains: bool = False
    crawl_entire_domain: bool | None = None
    allow_backward_links: bool | None = None  # v1's older name of crawlEntireDomain
    ignore_query_parameters: bool = False
    deduplicate_similar_urls: bool = Field(
        default=True,
        validation_alias=AliasChoices("deduplicateSimilarURLs", "deduplicate_similar_urls"),
    )
    ignore_robots_txt: bool = False
    sitemap: SitemapMode | None = None  # v2
    ignore_sitemap: bool | None = None  # v1
    delay: float | None = Field(default=None, gt=0, le=60, description="seconds between pages")
    max_concurrency: int | None = Field(default=None, ge=1, le=100)
    prompt: str | None = None
    scrape_options: FirecrawlScrapeOptions = Field(default_factory=_scrape_options)
    webhook: str | FirecrawlWebhook | None = None

    def sitemap_mode(self, version: Literal["v1", "v2"] = "v2") -> SitemapMode:
        """The sitemap mode; when both spellings are given, the request's version's wins."""
        v1: SitemapMode | None = None
        if self.ignore_sitemap is not None:
            v1 = "skip" if self.ignore_sitemap else "include"
        mine, other = (v1, self.sitemap) if version == "v1" else (self.sitemap, v1)
        return mine or other or "include"

    def entire_domain(self) -> bool:
        if self.crawl_entire_domain is not None:
            return self.crawl_entire_domain
        return bool(self.allow_backward_links)


class FirecrawlBatchScrapeRequest(FirecrawlScrapeOptions):
    """`POST /firecrawl/v1/batch/scrape` and `/v2/batch/scrape`: the URLs and scrape options."""

    urls: list[str] = Field(min_length=1, max_length=10_000)
    webhook: str | FirecrawlWebhook | None = None
    ignore_invalid_urls: bool = Field(
        default=False, validation_alias=AliasChoices("ignoreInvalidURLs", "ignore_invalid_urls")
    )
    max_concurrency: int | None = Field(default=None, ge=1, le=100)
    append_to_id: str | None = None


class FirecrawlJobStarted(Answer):
    """The answer to starting a crawl or a batch scrape: the job id and its status URL."""

    success: Literal[True] = True
    id: str
    url: str
    invalid_urls: list[str] | None = Field(default=None, serialization_alias="invalidURLs")
    # options of the other Firecrawl version, and how they were read (never dropped silently)
    warning: str | None = None


class FirecrawlJobStatus(Answer):
    """`GET .../crawl/{id}` and `.../batch/scrape/{id}`: counts and one page of documents."""

    success: Literal[True] = True
    status: JobStatusName
    completed: int
    total: int
    credits_used: int
    expires_at: str
    # the next page of documents (`?skip=N`); absent when this page holds the last of them
    next: str | None = None
    data: list[dict[str, Any]]
    warning: str | None = None


class FirecrawlJobError(Answer):
    id: str
    timestamp: str
    url: str
    code: str | None = None
    error: str


class FirecrawlJobErrors(Answer):
    """`GET .../crawl/{id}/errors`: failed pages, and the URLs robots.txt kept out."""

    errors: list[FirecrawlJobError]
    robots_blocked: list[str]


class FirecrawlJobCancelled(Answer):
    success: Literal[True] = True
    status: Literal["cancelled"] = "cancelled"


class FirecrawlActiveCrawl(Answer):
    """One running crawl of `GET .../crawl/active` (`teamId`: the gateway key's name)."""

    id: str
    team_id: str
    url: str
    options: dict[str, Any]


class FirecrawlActiveCrawls(Answer):
    """`GET .../crawl/active` (and its older name `.../crawl/ongoing`): the key's running crawls."""

    success: Literal[True] = True
    crawls: list[FirecrawlActiveCrawl]


class FirecrawlQueueStatus(Answer):
    """`GET .../team/queue-status`: the pages the key's running jobs have yet to read."""

    success: Literal[True] = True
    jobs_in_queue: int
    active_jobs_in_queue: int
    waiting_jobs_in_queue: int
    max_concurrency: int
    most_recent_success: str | None = None


class FirecrawlCrawlParamsRequest(Wire):
    """`POST .../crawl/params-preview`: crawl options for `url`, written from `prompt`."""

    url: str = Field(min_length=1, max_length=8192)
    prompt: str = Field(min_length=1, max_length=10_000)


class FirecrawlCrawlParams(Answer):
    """The options the box's model wrote (Firecrawl's v2 crawl names; unset ones left out)."""

    url: str
    include_paths: list[str] | None = None
    exclude_paths: list[str] | None = None
    max_discovery_depth: int | None = None
    limit: int | None = None
    crawl_entire_domain: bool | None = None
    allow_subdomains: bool | None = None
    allow_external_links: bool | None = None
    sitemap: SitemapMode | None = None


class FirecrawlCrawlParamsResponse(Answer):
    success: Literal[True] = True
    data: FirecrawlCrawlParams
    warning: str | None = None
