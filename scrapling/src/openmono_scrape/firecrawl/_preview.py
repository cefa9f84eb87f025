"""`POST .../crawl/params-preview`: crawl options written from a prompt by the box's model.

Firecrawl asks its LLM to turn `{url, prompt}` ("only the blog posts from 2024") into crawl
options; here the box's own llama-server does it, on the same path as the `json` format
(`openmono_scrape.model`): the options' JSON Schema (`PARAMS_SCHEMA`, Firecrawl's v2 names, each
value bounded) goes to llama.cpp as the response format, so the answer is valid by
construction, and it is validated again. The page is not fetched: the model reads the URL and the
prompt only. A path pattern that is not a valid regular expression is left out and named in
`warning` (the options then start a crawl as they are). No model on the box: 503, as `json`.
"""

from __future__ import annotations

import time
from typing import Any

from openmono_contracts.firecrawl_jobs import (
    FirecrawlCrawlParams,
    FirecrawlCrawlParamsRequest,
    FirecrawlCrawlParamsResponse,
)

from openmono_scrape.crawl import check_patterns, normalise
from openmono_scrape.errors import BadRequest
from openmono_scrape.firecrawl._model_formats import ready
from openmono_scrape.model import JsonAsk, checked
from openmono_scrape.settings import ScrapeSettings

# bounded so that the whole answer stays near a hundred tokens: a small model under load makes
# a few tokens a second (a looser bound ran past two minutes on the bundled model at load ~8)
_PATTERNS = {
    "type": "array",
    "maxItems": 4,
    "items": {"type": "string", "minLength": 1, "maxLength": 60},
}
PARAMS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "includePaths": _PATTERNS,
        "excludePaths": _PATTERNS,
        "maxDiscoveryDepth": {"type": "integer", "minimum": 0, "maximum": 10},
        "limit": {"type": "integer", "minimum": 1, "maximum": 10_000},
        "crawlEntireDomain": {"type": "boolean"},
        "allowSubdomains": {"type": "boolean"},
        "allowExternalLinks": {"type": "boolean"},
        "sitemap": {"enum": ["include", "skip", "only"]},
    },
    "required": ["includePaths", "excludePaths"],
    "additionalProperties": False,
}
_VALIDATOR = checked(PARAMS_SCHEMA, "params")
_SYSTEM = (
    "You write the options of a web crawl as JSON. includePaths and excludePaths are regular "
    "expressions matched against a URL's path (for example ^/blog/.*). Give only the options "
    "the request asks for; an empty list when it names no paths."
)


def _paths(raw: Any, field: str, warnings: list[str]) -> list[str] | None:
    if not raw:
        return None
    kept = []
    for pattern in raw:
        bad = check_patterns([pattern])
        if bad is None:
            kept.append(pattern)
        else:
            warnings.append(f"{field}: the model's pattern {pattern!r} was left out ({bad})")
    return kept or None


async def params_preview(
    req: FirecrawlCrawlParamsRequest, settings: ScrapeSettings
) -> FirecrawlCrawlParamsResponse:
    url = normalise(req.url)
    if url is None:
        raise BadRequest("Bad Request: url: only http and https URLs can be crawled")
    model = await ready(settings, time.monotonic() + settings.llm_timeout_s)
    ask = JsonAsk("json", PARAMS_SCHEMA, _VALIDATOR, f"The crawl asked for: {req.prompt}", _SYSTEM)
    made = await model.json(ask, f"The crawl starts at {url}", url)
    value: dict[str, Any] = made.value
    warnings = list(made.warnings)
    data = FirecrawlCrawlParams(
        url=url,
        include_paths=_paths(value.get("includePaths"), "includePaths", warnings),
        exclude_paths=_paths(value.get("excludePaths"), "excludePaths", warnings),
        max_discovery_depth=value.get("maxDiscoveryDepth"),
        limit=value.get("limit"),
        crawl_entire_domain=value.get("crawlEntireDomain"),
        allow_subdomains=value.get("allowSubdomains"),
        allow_external_links=value.get("allowExternalLinks"),
        sitemap=value.get("sitemap"),
    )
    return FirecrawlCrawlParamsResponse(data=data, warning="; ".join(warnings) or None)
