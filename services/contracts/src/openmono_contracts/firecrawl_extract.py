"""Firecrawl's `/extract` (v1 and v2): start a job over URLs, then its status by id (an external
contract, camelCase).

A request names URLs (a `/*` at the end of one: that site's pages, as map finds them) and what
to extract (`schema` and/or `prompt`); the job reads each page and asks the box's model, as the
scrape's `json` format does, then merges the pages' answers.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, Field

from openmono_contracts.firecrawl import FirecrawlScrapeOptions
from openmono_contracts.firecrawl_jobs import Answer, Wire

ExtractStatusName = Literal["processing", "completed", "failed", "cancelled"]
# Firecrawl's own bound on one extract's URLs
MAX_EXTRACT_URLS = 50


class FirecrawlExtractRequest(Wire):
    """`POST /firecrawl/v1/extract` and `/v2/extract`."""

    # the count is checked by the service, so the refusal names the limit in Firecrawl's shape
    urls: list[str] = Field(min_length=1, max_length=10_000)
    prompt: str | None = Field(default=None, max_length=10_000)
    json_schema: dict[str, Any] | None = Field(
        default=None, validation_alias=AliasChoices("schema", "json_schema")
    )
    system_prompt: str | None = Field(default=None, max_length=10_000)
    allow_external_links: bool = False
    enable_web_search: bool = False
    show_sources: bool = False
    include_subdomains: bool = True
    ignore_sitemap: bool = False
    ignore_invalid_urls: bool = Field(
        default=False, validation_alias=AliasChoices("ignoreInvalidURLs", "ignore_invalid_urls")
    )
    scrape_options: FirecrawlScrapeOptions | None = None


class FirecrawlExtractStarted(Answer):
    success: Literal[True] = True
    id: str
    # v1: the URLs the job was given (Firecrawl's `urlTrace` lists what it read; empty at start)
    url_trace: list[Any] | None = None
    invalid_urls: list[str] | None = Field(default=None, serialization_alias="invalidURLs")
    warning: str | None = None


class FirecrawlExtractStatus(Answer):
    """`GET .../extract/{id}`."""

    success: Literal[True] = True
    status: ExtractStatusName
    data: Any | None = None
    expires_at: str
    error: str | None = None
    warning: str | None = None
    # showSources: the URLs each top-level field's value came from
    sources: dict[str, list[str]] | None = None
    tokens_used: int | None = None
