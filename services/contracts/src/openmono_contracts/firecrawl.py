"""Firecrawl's wire shapes, as the gateway's `/firecrawl` API serves them (an external contract).

The field names are Firecrawl's own (camelCase, `sourceURL`); the models accept them by alias or
by their Python names. Requests ignore fields this server does not implement (Firecrawl clients
send many: `mobile`, `blockAds`, `origin`, ...), so a stock client is never refused for an option
that changes nothing here; a format we cannot produce is refused with 400 by the service instead.
v1 and v2 share the request and document models; they differ only in how search results are
wrapped (`data: [...]` in v1, `data: {web: [...]}` in v2).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from openmono_contracts.firecrawl_actions import FirecrawlAction, FirecrawlActionResults

# The formats this server produces; Firecrawl's others get 400.
# `json` (v1's legacy name: `extract`) and `summary` are made by the box's own model;
# `screenshot` (`screenshot@fullPage`: v1's whole page) by the browser; `changeTracking`
# compares the page with the asking key's last scrape of it.
FirecrawlFormat = Literal[
    "markdown", "html", "rawHtml", "links", "json", "extract", "summary", "screenshot",
    "screenshot@fullPage", "changeTracking",
]  # fmt: skip
ChangeStatus = Literal["new", "same", "changed", "removed"]

# v2 defaults to a two-day cache window, v1 to none (Firecrawl's documented defaults).
V1_DEFAULT_MAX_AGE_MS = 0
V2_DEFAULT_MAX_AGE_MS = 2 * 24 * 3600 * 1000


def _markdown_only() -> list[str | dict[str, Any]]:
    return ["markdown"]


class _Wire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")


class FirecrawlJsonOptions(_Wire):
    """v1's `jsonOptions` (and its legacy `extract`); v2 puts `schema`/`prompt` in the format."""

    # `schema` would shadow pydantic's BaseModel.schema: the Python name differs, the wire's not
    json_schema: dict[str, Any] | None = Field(
        default=None, validation_alias=AliasChoices("schema", "json_schema")
    )
    prompt: str | None = Field(default=None, max_length=10_000)
    system_prompt: str | None = Field(default=None, max_length=10_000)


class FirecrawlScrapeOptions(_Wire):
    """What to make of each page (the body of scrape, and `scrapeOptions` of search)."""

    # strings, or v2's objects `{"type": "markdown"}`
    formats: list[str | dict[str, Any]] = Field(default_factory=_markdown_only)
    only_main_content: bool = True
    timeout: int | None = Field(default=None, ge=1, le=300_000, description="milliseconds")
    wait_for: int = Field(default=0, ge=0, le=60_000, description="milliseconds")
    max_age: int | None = Field(default=None, ge=0, description="milliseconds")
    store_in_cache: bool = True
    headers: dict[str, str] | None = None
    # v1: the options of the `json` format, and of the legacy `extract` format
    json_options: FirecrawlJsonOptions | None = None
    extract: FirecrawlJsonOptions | None = None
    # run in order in the browser before the page is read (`firecrawl_actions`)
    actions: list[FirecrawlAction] | None = None


class FirecrawlScrapeRequest(FirecrawlScrapeOptions):
    """`POST /firecrawl/v1/scrape` and `/firecrawl/v2/scrape`."""

    url: str = Field(min_length=1, max_length=8192)


class FirecrawlSearchRequest(_Wire):
    """`POST /firecrawl/v1/search` and `/firecrawl/v2/search`."""

    query: str = Field(min_length=1, max_length=500)
    limit: int = Field(default=5, ge=1, le=100)
    timeout: int | None = Field(default=None, ge=1, le=300_000, description="milliseconds")
    scrape_options: FirecrawlScrapeOptions | None = None


class FirecrawlMetadata(_Wire):
    """`data.metadata`: what the page says about itself, and how this answer was made."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="allow", serialize_by_alias=True
    )

    title: str | None = None
    description: str | None = None
    language: str | None = None
    source_url: str | None = Field(
        default=None,
        serialization_alias="sourceURL",
        validation_alias=AliasChoices("sourceURL", "source_url"),
    )
    url: str | None = None
    status_code: int | None = None
    content_type: str | None = None
    og_title: str | None = None
    og_description: str | None = None
    og_image: str | None = None
    og_site_name: str | None = None
    # "hit" when the page came from the cache (the origin was not asked), else "miss"
    cache_state: Literal["hit", "miss"] | None = None
    cached_at: str | None = None
    error: str | None = None


class FirecrawlChangeTracking(_Wire):
    """`data.changeTracking`: this scrape against the key's previous one of the page."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="ignore", serialize_by_alias=True
    )

    previous_scrape_at: str | None = None
    change_status: ChangeStatus
    visibility: Literal["visible", "hidden"] = "visible"
    # git-diff mode: {text, json}; json mode: {field: {previous, current}}; only when changed
    diff: dict[str, Any] | None = None
    json_: dict[str, Any] | None = Field(
        default=None, serialization_alias="json", validation_alias=AliasChoices("json", "json_")
    )


class FirecrawlDocument(_Wire):
    """`data` of a scrape; one search result (then `url`, `title`, `description` are set too)."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="ignore", serialize_by_alias=True
    )

    url: str | None = None
    title: str | None = None
    description: str | None = None
    markdown: str | None = None
    html: str | None = None
    raw_html: str | None = None
    links: list[str] | None = None
    # the `json` format's answer (valid for the request's schema); v1's legacy `extract` format's
    json_: Any | None = Field(
        default=None, serialization_alias="json", validation_alias=AliasChoices("json", "json_")
    )
    extract: Any | None = None
    summary: str | None = None
    # the `screenshot` format: a data: URL (self-hosted Firecrawl without storage does the same)
    screenshot: str | None = None
    actions: FirecrawlActionResults | None = None
    change_tracking: FirecrawlChangeTracking | None = None
    metadata: FirecrawlMetadata | None = None


class FirecrawlScrapeResponse(_Wire):
    success: Literal[True] = True
    data: FirecrawlDocument
    warning: str | None = None


class FirecrawlSearchResponseV1(_Wire):
    success: Literal[True] = True
    data: list[FirecrawlDocument]
    warning: str | None = None


class FirecrawlSearchData(_Wire):
    web: list[FirecrawlDocument]


class FirecrawlSearchResponseV2(_Wire):
    success: Literal[True] = True
    data: FirecrawlSearchData
    warning: str | None = None


class FirecrawlErrorBody(_Wire):
    """Every error, with a real HTTP status (400, 401, 408, 413, 415, 5xx)."""

    success: Literal[False] = False
    error: str
    # Firecrawl's error code where it names one (`SCRAPE_ACTION_ERROR`)
    code: str | None = None
    details: Any | None = None
