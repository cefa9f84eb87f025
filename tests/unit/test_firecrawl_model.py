"""The json and summary formats without a model: request shapes, schema checks, chunking, the
merge rule, the answer checks, and the refusals that come before any model call."""

from __future__ import annotations

import socket
import time
from typing import Any

import httpx
import pytest
from openmono_contracts.firecrawl import FirecrawlScrapeRequest
from openmono_scrape import ScrapeSettings, create_app, statuses
from openmono_scrape import errors as e
from openmono_scrape.firecrawl._document import parse_formats
from openmono_scrape.firecrawl._model_formats import model_asks
from openmono_scrape.model import JsonAsk, ModelClient, PageModel, checked, merge_all, split

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}


def _req(**body: Any) -> FirecrawlScrapeRequest:
    return FirecrawlScrapeRequest.model_validate({"url": "https://shop.example/p/1", **body})


def test_v2_v1_and_legacy_shapes_become_the_same_asks() -> None:
    v2 = model_asks(_req(formats=[{"type": "json", "schema": SCHEMA, "prompt": "p"}, "summary"]))
    v1 = model_asks(
        _req(formats=["json"], jsonOptions={"schema": SCHEMA, "prompt": "p", "systemPrompt": "s"})
    )
    legacy = model_asks(_req(formats=["extract"], extract={"schema": SCHEMA}))
    first = v2[0]
    assert isinstance(first, JsonAsk) and (first.key, first.schema, first.prompt) == (
        "json",
        SCHEMA,
        "p",
    )
    assert v2[1] == "summary"
    one = v1[0]
    assert isinstance(one, JsonAsk) and (one.schema, one.system_prompt) == (SCHEMA, "s")
    assert isinstance(legacy[0], JsonAsk) and legacy[0].key == "extract"
    # the format object's own options win over jsonOptions
    both = model_asks(
        _req(formats=[{"type": "json", "prompt": "mine"}], jsonOptions={"prompt": "theirs"})
    )
    assert isinstance(both[0], JsonAsk) and both[0].prompt == "mine"


def test_a_bad_schema_or_none_at_all_is_400_naming_where() -> None:
    cases = [
        (_req(formats=[{"type": "json", "schema": {"type": "strin"}}]), "formats.0.schema"),
        (
            _req(
                formats=["json"], jsonOptions={"schema": {"properties": {"a": {"minLength": -1}}}}
            ),
            "jsonOptions.schema: invalid JSON Schema at /properties/a/minLength",
        ),
        (_req(formats=[{"type": "json", "schema": [1]}]), "a schema is a JSON object"),
        (_req(formats=[{"type": "json"}]), "needs a schema or a prompt"),
    ]
    for req, said in cases:
        with pytest.raises(e.BadRequest) as caught:
            model_asks(req)
        assert said in caught.value.message
        assert statuses.status_of(caught.value, "firecrawl") == 400


def test_a_remote_ref_is_refused_without_fetching() -> None:
    # resolved offline only: a schema never makes the service fetch (no packet: TEST-NET-1)
    with pytest.raises(e.BadRequest, match="Retrieval is disabled"):
        checked({"properties": {"a": {"$ref": "http://192.0.2.1/s.json"}}}, "formats.0.schema")


def test_model_formats_are_scrape_only() -> None:
    assert parse_formats(["markdown", {"type": "json"}, "summary"], model=True) == [
        "markdown",
        "json",
        "summary",
    ]
    with pytest.raises(e.BadRequest, match="on scrape only"):
        parse_formats(["summary"])


def test_split_keeps_every_word_in_order_within_the_budget() -> None:
    text = "\n\n".join(f"Paragraph {i} " + "word " * (i * 7) for i in range(30))
    chunks = split(text, 300)
    assert all(0 < len(c) <= 300 for c in chunks)
    assert " ".join(chunks).split() == text.split()
    assert all(c.startswith("Paragraph") for c in chunks[:3])  # cut between paragraphs
    assert split("x" * 1000, 100) == ["x" * 100] * 10
    assert split("", 50) == [""]


def test_merge_rule() -> None:
    answers = [
        {"name": "", "price": 12, "tags": ["a", "b"], "seller": {"city": None}},
        {"name": "Clock", "price": 13, "tags": ["b", "c"], "seller": {"city": "Brest"}},
        {"extra": True},
    ]
    assert merge_all(answers) == {
        "name": "Clock",
        "price": 12,
        "tags": ["a", "b", "c"],
        "seller": {"city": "Brest"},
        "extra": True,
    }


def _model(n_ctx: int, max_chunks: int = 8) -> PageModel:
    client = ModelClient(ScrapeSettings(llm_url="http://127.0.0.1:9"), time.monotonic() + 5)
    return PageModel(client, n_ctx, 1024, max_chunks)


def test_a_context_too_small_for_one_chunk_is_413_and_long_pages_are_cut() -> None:
    with pytest.raises(e.ModelContextTooSmall, match="128 tokens") as caught:
        _model(128)._chunks("page", "instructions " * 10, 32)
    assert statuses.status_of(caught.value, "firecrawl") == 413
    chunks, warnings = _model(1024, max_chunks=2)._chunks("word " * 5000, "i", 256)
    assert len(chunks) == 2 and "only its first" in warnings[0]


def test_answers_that_are_cut_invalid_or_not_json_are_errors() -> None:
    model = _model(1024)
    ask = JsonAsk("json", SCHEMA, checked(SCHEMA, "s"), None, None)
    assert model._value(ask, '{"name": "Clock"}', "stop") == {"name": "Clock"}
    for text, finish, said in (
        ('{"name": "Clo', "length", "no partial JSON"),
        ('{"name": 3}', "stop", "does not validate"),
        ("Clock", "stop", "not JSON"),
    ):
        with pytest.raises(e.ModelError, match=said) as caught:
            model._value(ask, text, finish)
        assert statuses.status_of(caught.value, "firecrawl") == 502


async def test_without_a_model_configured_json_is_503_and_the_schema_checked_first() -> None:
    app = create_app(ScrapeSettings(system_dns=False, browser_path=None))
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    url = "https://shop.example/p/1"  # never fetched: both answers come before the page
    async with httpx.AsyncClient(transport=transport, base_url="http://scrape.test") as c:
        unset = await c.post(
            "/firecrawl/v1/scrape",
            json={"url": url, "formats": ["json"], "jsonOptions": {"schema": SCHEMA}},
        )
        bad = await c.post(
            "/firecrawl/v1/scrape",
            json={"url": url, "formats": ["json"], "jsonOptions": {"schema": {"type": 5}}},
        )
    assert unset.status_code == 503
    assert unset.json()["success"] is False and "SCRAPE_LLM_URL" in unset.json()["error"]
    assert bad.status_code == 400 and "jsonOptions.schema" in bad.json()["error"]


async def test_an_unreachable_model_is_503_naming_it() -> None:
    with socket.socket() as sock:  # a loopback port nobody listens on (bound, then closed)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = ScrapeSettings(llm_url=f"http://127.0.0.1:{port}")
    with pytest.raises(e.ModelUnavailable, match="cannot be reached") as caught:
        await ModelClient(settings, time.monotonic() + 5).context_tokens()
    assert statuses.status_of(caught.value, "firecrawl") == 503


async def test_params_preview_needs_the_model_and_keeps_only_valid_patterns() -> None:
    from openmono_scrape.firecrawl._preview import PARAMS_SCHEMA, _paths

    app = create_app(ScrapeSettings(system_dns=False, browser_path=None))
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://scrape.test") as c:
        body = {"url": "https://docs.example/", "prompt": "only the API reference"}
        unset = await c.post("/firecrawl/v2/crawl/params-preview", json=body)
        bad = await c.post("/firecrawl/v1/crawl/params-preview", json={**body, "url": "ftp://x"})
        empty = await c.post("/firecrawl/v2/crawl/params-preview", json={"url": body["url"]})
    assert unset.status_code == 503 and "SCRAPE_LLM_URL" in unset.json()["error"]
    assert bad.status_code == 400 and "url" in bad.json()["error"]
    assert empty.status_code == 400 and "prompt" in empty.json()["error"]
    warnings: list[str] = []
    assert _paths(["^/api/.*", "(unclosed"], "includePaths", warnings) == ["^/api/.*"]
    assert "'(unclosed' was left out" in warnings[0]
    assert checked(PARAMS_SCHEMA, "params") is not None
