"""The HTTP layer alone: error-to-status mapping, validation bodies, the lazy `app` for uvicorn."""

from __future__ import annotations

import httpx
import pytest
from openmono_scrape import ScrapeSettings, create_app
from openmono_scrape import errors as e

EXPECTED = {
    e.BlockedURL: (400, "BLOCKED_URL", False),
    e.TooLarge: (413, "TOO_LARGE", False),
    e.UnsupportedContent: (415, "UNSUPPORTED_CONTENT", False),
    e.EmptyContent: (422, "EMPTY_CONTENT", False),
    e.FetchFailed: (502, "FETCH_FAILED", True),
    e.EngineUnavailable: (503, "ENGINE_UNAVAILABLE", False),
    e.FetchTimeout: (504, "TIMEOUT", True),
}


@pytest.mark.parametrize("cls", list(EXPECTED))
def test_each_error_has_its_status_and_code(cls: type[e.ScrapeError]) -> None:
    status, code, retryable = EXPECTED[cls]
    exc = cls("why", url="http://x/", engine="fetcher")
    assert (exc.http_status, exc.code, exc.retryable) == (status, code, retryable)
    body = exc.body()
    assert (body.error, body.message, body.url, body.engine) == (
        code,
        "why",
        "http://x/",
        "fetcher",
    )


def client() -> httpx.AsyncClient:
    settings = ScrapeSettings(system_dns=False, browser_path=None)
    transport = httpx.ASGITransport(app=create_app(settings), raise_app_exceptions=False)
    return httpx.AsyncClient(transport=transport, base_url="http://scrape.test")


async def test_validation_errors_name_the_field_without_echoing_input() -> None:
    async with client() as c:
        resp = await c.post(
            "/scrape", json={"url": "http://a/", "timeout_s": 999, "secret": "s3cr3t"}
        )
    assert resp.status_code == 422
    detail = resp.json()["detail"]
    assert {tuple(d["loc"]) for d in detail} == {("body", "timeout_s"), ("body", "secret")}
    assert "s3cr3t" not in resp.text and "999" not in resp.text


async def test_refusal_before_any_fetch() -> None:
    async with client() as c:
        resp = await c.post("/scrape", json={"url": "http://169.254.169.254/"})
    assert resp.status_code == 400
    assert resp.json()["error"] == "BLOCKED_URL"


async def test_health_without_a_browser() -> None:
    async with client() as c:
        health = (await c.get("/health")).json()
    assert health["engines"] == {"fetcher": True, "browser": False, "stealthy": False}


def test_uvicorn_target_builds_the_app_lazily(monkeypatch: pytest.MonkeyPatch) -> None:
    import openmono_scrape.app as module

    monkeypatch.setenv("SCRAPE_BROWSER_PATH", "")
    monkeypatch.delitem(module.__dict__, "app", raising=False)
    app = module.app
    assert app.title == "OpenMono scrape service"
    assert module.app is app  # built once
    monkeypatch.delitem(module.__dict__, "app")
