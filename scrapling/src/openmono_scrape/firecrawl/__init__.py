"""Firecrawl-compatible API of the scrape service (`/firecrawl/v1/*`, `/firecrawl/v2/*`).

Tools that speak Firecrawl (its SDKs, Open WebUI, LibreChat, Dify, n8n, LangChain's loaders)
point at `http://HOST:47480/firecrawl` with `LLAMA_API_KEY` as their Firecrawl key; the gateway
checks the key and forwards the path unchanged. Modules: `_routes` (the endpoints),
`_scrape` (one page as scrape reads it), `_document` (a fetched page as a Firecrawl document),
`_model_formats` (`json` and `summary` on scrape, by the box's model: `openmono_scrape.model`),
`_searxng` (the search behind search), `_map` (map), `_jobs` (crawl and batch scrape jobs; their
drivers: `openmono_scrape.crawljobs`), `_idempotency` (`x-idempotency-key` on starting a job),
`_lenient` (v1 names on v2 and the reverse, read for their meaning and named in `warning`),
`_fallback` (every other path under `/firecrawl`:
404/405/501 naming what is supported), `_errors` (a body that does not validate or is not JSON
at all; every other error's status is in `openmono_scrape.statuses`). Wire models:
`openmono_contracts.firecrawl` and `openmono_contracts.firecrawl_jobs`.
"""

from openmono_scrape.firecrawl._errors import invalid_body, unreadable_body, unreadable_reason
from openmono_scrape.firecrawl._idempotency import (
    IdempotencyStore,
    MemoryIdempotency,
    RedisIdempotency,
)
from openmono_scrape.firecrawl._jobs import JobRunner
from openmono_scrape.firecrawl._routes import PREFIX, FirecrawlAPI, build_router
from openmono_scrape.firecrawl._scrape import Admit, PageScraper

__all__ = [
    "PREFIX",
    "Admit",
    "FirecrawlAPI",
    "IdempotencyStore",
    "JobRunner",
    "MemoryIdempotency",
    "PageScraper",
    "RedisIdempotency",
    "build_router",
    "invalid_body",
    "unreadable_body",
    "unreadable_reason",
]
