"""Firecrawl's model-made formats on a scrape: `json` (v1's legacy `extract`) and `summary`.

Request shapes read (Firecrawl's): v2 `formats: [{"type": "json", "schema": {...}, "prompt":
"..."}]`, `{"type": "summary"}`; v1 `formats: ["json"]` with `jsonOptions: {schema, prompt,
systemPrompt}`, the legacy `formats: ["extract"]` with `extract: {...}`, and `"summary"`. The
options in the format object win over `jsonOptions`. A `json` format needs a schema or a prompt.
Schemas are checked (400 naming the schema path) before the page is fetched. The answers go to
the document's `json` (`extract` for the legacy format) and `summary`.
"""

from __future__ import annotations

import time
from typing import Any

from openmono_contracts.firecrawl import (
    FirecrawlDocument,
    FirecrawlJsonOptions,
    FirecrawlScrapeOptions,
)

from openmono_scrape.errors import BadRequest
from openmono_scrape.model import JsonAsk, ModelClient, PageModel, checked
from openmono_scrape.settings import ScrapeSettings

Ask = JsonAsk | str  # a JsonAsk, or "summary"


def _text(value: Any, field: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > 10_000:
        why = "a string of at most 10000 characters"
        raise BadRequest(f"Bad Request: {field}: {why}", [{"path": [field], "message": why}])
    return value


def json_ask(
    key: str, item: dict[str, Any], options: FirecrawlJsonOptions | None, where: str
) -> JsonAsk:
    schema = item.get("schema", options.json_schema if options else None)
    if "schema" in item:
        field = f"{where}.schema"
    else:
        field = "jsonOptions.schema" if key == "json" else "extract.schema"
    prompt = _text(item.get("prompt", options.prompt if options else None), f"{where}.prompt")
    system = _text(
        item.get("systemPrompt", options.system_prompt if options else None),
        f"{where}.systemPrompt",
    )
    if schema is None and not prompt:
        why = "the json format needs a schema or a prompt"
        raise BadRequest(f"Bad Request: {where}: {why}", [{"path": [where], "message": why}])
    validator = checked(schema, field) if schema is not None else None
    return JsonAsk(key, schema, validator, prompt, system)


def model_asks(opts: FirecrawlScrapeOptions) -> list[Ask]:
    """What the model is asked for, in format order; `BadRequest` for a wrong schema or option."""
    asks: list[Ask] = []
    for i, item in enumerate(opts.formats):
        name = item.get("type") if isinstance(item, dict) else item
        body = item if isinstance(item, dict) else {}
        if name == "json" and not any(isinstance(a, JsonAsk) and a.key == "json" for a in asks):
            asks.append(json_ask("json", body, opts.json_options, f"formats.{i}"))
        elif name == "extract" and not any(
            isinstance(a, JsonAsk) and a.key == "extract" for a in asks
        ):
            asks.append(json_ask("extract", body, opts.extract, f"formats.{i}"))
        elif name == "summary" and "summary" not in asks:
            asks.append("summary")
    return asks


async def ready(settings: ScrapeSettings, deadline: float) -> PageModel:
    """The model, once the box says it has one (`ModelUnavailable`, 503, otherwise)."""
    client = ModelClient(settings, deadline)
    n_ctx = await client.context_tokens()
    return PageModel(client, n_ctx, settings.llm_answer_tokens, settings.llm_max_chunks)


async def fill(
    doc: FirecrawlDocument, asks: list[Ask], markdown: str, url: str, model: PageModel
) -> list[str]:
    """Sets the document's model-made fields; the warnings to give with it."""
    warnings: list[str] = []
    for ask in asks:
        if isinstance(ask, JsonAsk):
            made = await model.json(ask, markdown, url)
            if ask.key == "json":
                doc.json_ = made.value
            else:
                doc.extract = made.value
        else:
            made = await model.summary(markdown, url)
            doc.summary = made.value
        warnings += [w for w in made.warnings if w not in warnings]
    return warnings


def model_deadline(opts: FirecrawlScrapeOptions, started: float, settings: ScrapeSettings) -> float:
    """The request's `timeout` bounds fetch and model together; without one the model step has
    `llm_timeout_s` of its own after the fetch."""
    if opts.timeout:
        return started + opts.timeout / 1000.0
    return time.monotonic() + settings.llm_timeout_s
