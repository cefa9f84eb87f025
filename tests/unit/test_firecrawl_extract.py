"""`/extract` (issue 41 item 1) before any page or model: the refusals in Firecrawl's shape (over 50
URLs naming the limit, no schema or prompt, an invalid schema naming its path, a URL the guard
refuses, no model on the box) and an unknown job; the job itself runs on the real model in
tests/integration/test_firecrawl_model.py."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from openmono_scrape import ScrapeSettings, create_app

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}


@pytest.fixture
async def client() -> Any:
    # the shop's name maps to loopback, which the guard allows: nothing is fetched here anyway
    settings = ScrapeSettings(
        system_dns=False,
        browser_path=None,
        static_hosts={"shop.example": "127.0.0.1"},
        allow_cidrs=["127.0.0.1/32"],
    )
    app = create_app(settings)
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://scrape.test") as c:
        yield c


async def test_extract_refusals_come_before_any_fetch(client: httpx.AsyncClient) -> None:
    many = [f"https://shop.example/p/{i}" for i in range(51)]
    cases: list[tuple[dict[str, Any], int, str]] = [
        ({"urls": many, "schema": SCHEMA}, 400, "at most 50"),
        ({"urls": many[:1]}, 400, "needs a schema or a prompt"),
        ({"urls": many[:1], "schema": {"type": "strin"}}, 400, "schema: invalid JSON Schema"),
        ({"urls": ["ftp://x/"], "prompt": "p"}, 400, "not http(s) URLs"),
        ({"urls": ["http://10.0.0.1/"], "prompt": "p"}, 400, "not public"),
        # valid: the box has no model configured, so no job is made
        ({"urls": ["ftp://x/", many[0]], "prompt": "p", "ignoreInvalidURLs": True}, 503, "LLM"),
    ]
    for version in ("v1", "v2"):
        for body, status, said in cases:
            r = await client.post(f"/firecrawl/{version}/extract", json=body)
            assert r.status_code == status, (body, r.text)
            assert r.json()["success"] is False and said in r.json()["error"], r.text


async def test_an_unknown_extract_is_404(client: httpx.AsyncClient) -> None:
    for job in ("0" * 32, "not-an-id"):
        r = await client.get(f"/firecrawl/v2/extract/{job}")
        assert r.status_code == 404 and r.json() == {"success": False, "error": "Job not found"}
    r = await client.delete(f"/firecrawl/v1/extract/{'0' * 32}")
    assert r.status_code == 405
