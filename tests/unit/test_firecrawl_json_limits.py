"""The json format's bad-input clauses end to end (issue 41), against a scripted model speaking
real HTTP: an answer cut at its token limit is a 502 without any JSON, a context too small for
one chunk is a 413, and a context that overflows even for halved chunks is a 413, never a
partial answer."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from openmono_scrape import ScrapeSettings, create_app

from tests.support.httpfake import Reply, Seen, serve

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "maxLength": 40}},
    "required": ["name"],
}
PAGE = (
    "<html><body><main><h1>Brass Tide Clock</h1><p>"
    + "A tide clock. " * 200
    + "</p></main></body></html>"
)


def _model(n_ctx: int, chat: Callable[[dict[str, Any]], Reply]) -> Callable[[Seen], Reply]:
    def handle(req: Seen) -> Reply:
        if req.path == "/services":
            return Reply(
                200,
                json.dumps(
                    {"llm": True, "search": False, "scrape": True, "crawl_durable": False}
                ).encode(),
                "application/json",
            )
        if req.path == "/props":
            body = {"default_generation_settings": {"n_ctx": n_ctx}}
            return Reply(200, json.dumps(body).encode(), "application/json")
        if req.path == "/v1/chat/completions":
            return chat(json.loads(req.body))
        if req.path == "/page":
            return Reply(200, PAGE.encode(), "text/html; charset=utf-8")
        return Reply(404)

    return handle


def _cut(body: dict[str, Any]) -> Reply:
    answer = {
        "choices": [{"message": {"content": '{"name": "Brass Ti'}, "finish_reason": "length"}]
    }
    return Reply(200, json.dumps(answer).encode(), "application/json")


def _overflow(body: dict[str, Any]) -> Reply:
    error = {"error": {"type": "exceed_context_size_error", "message": "too long", "n_ctx": 512}}
    return Reply(400, json.dumps(error).encode(), "application/json")


@pytest.mark.parametrize(
    ("n_ctx", "chat", "status", "said"),
    [
        (4096, _cut, 502, "no partial JSON"),
        (100, _cut, 413, "context"),
        (4096, _overflow, 413, "even when split"),
    ],
)
async def test_never_a_truncated_json(n_ctx: int, chat: Any, status: int, said: str) -> None:
    with serve(_model(n_ctx, chat)) as llm:
        settings = ScrapeSettings(
            system_dns=False, browser_path=None, llm_url=llm.url, allow_cidrs=["127.0.0.0/8"]
        )
        app = create_app(settings)
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://scrape.test", timeout=30
        ) as c:
            resp = await c.post(
                "/firecrawl/v2/scrape",
                json={"url": f"{llm.url}/page", "formats": [{"type": "json", "schema": SCHEMA}]},
            )
    assert resp.status_code == status
    assert said in resp.json()["error"]
    assert "data" not in resp.json()
