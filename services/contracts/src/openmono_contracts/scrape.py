"""Scrape service contract (docs/architecture.md §4): `POST /scrape` request, 200 response, error
body."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ScrapeFormat = Literal["markdown", "text", "html"]
ScrapeEngine = Literal["fetcher", "browser", "stealthy"]
ScrapeErrorCode = Literal[
    "BLOCKED_URL",
    "FETCH_FAILED",
    "TIMEOUT",
    "TOO_LARGE",
    "UNSUPPORTED_CONTENT",
    "EMPTY_CONTENT",
    "ENGINE_UNAVAILABLE",
]


class ScrapeRequest(BaseModel):
    """Body of `POST /scrape`."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(min_length=1, max_length=8192)
    render: bool = False
    headless: bool = True
    max_length: int | None = Field(default=None, ge=1)
    format: ScrapeFormat = "markdown"
    main_content: bool = True
    timeout_s: float | None = Field(default=None, gt=0, le=120)
    # Serve a cached copy of the page when it is at most this old (seconds); None or 0 = always
    # fetch afresh. Every fetched page is stored either way, for later requests that allow one.
    max_age_s: float | None = Field(default=None, ge=0)


CacheState = Literal["hit", "miss"]


class ScrapeResponse(BaseModel):
    """A page was fetched (whatever status the site answered)."""

    status: int
    url: str
    engine: ScrapeEngine
    format: ScrapeFormat
    truncated: bool
    content: str
    title: str | None = None
    escalated_from: str | None = None
    elapsed_ms: float
    # `hit`: the page came from the scrape cache (stored at `cached_at`, ISO 8601 UTC), the origin
    # was not asked; `miss`: it was fetched now.
    cache: CacheState = "miss"
    cached_at: str | None = None


class ScrapeErrorBody(BaseModel):
    """No page could be had; sent with a real HTTP error status."""

    error: ScrapeErrorCode
    message: str
    retryable: bool
    url: str | None = None
    engine: ScrapeEngine | None = None
