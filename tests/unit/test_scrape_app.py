"""The HTTP layer alone: error-to-status mapping (one table for `/scrape` and `/firecrawl`),
validation bodies, the lazy `app` for uvicorn."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI
from openmono_scrape import ScrapeSettings, create_app, statuses
from openmono_scrape import errors as e

# error: (/scrape status, /firecrawl status, code in the /scrape body, retryable)
EXPECTED = {
    e.BlockedURL: (400, 400, "BLOCKED_URL", False),
    e.TooLarge: (413, 413, "TOO_LARGE", False),
    e.UnsupportedContent: (415, 415, "UNSUPPORTED_CONTENT", False),
    e.EmptyContent: (422, 422, "EMPTY_CONTENT", False),
    e.FetchFailed: (502, 502, "FETCH_FAILED", True),
    e.InternalError: (502, 500, "FETCH_FAILED", True),
    e.EngineUnavailable: (503, 503, "ENGINE_UNAVAILABLE", False),
    e.FetchTimeout: (504, 408, "TIMEOUT", True),
}


@pytest.mark.parametrize("cls", list(EXPECTED))
def test_each_error_has_its_status_and_code(cls: type[e.ScrapeError]) -> None:
    status, firecrawl, code, retryable = EXPECTED[cls]
    exc = cls("why", url="http://x/", engine="fetcher")
    assert (statuses.status_of(exc, "scrape"), exc.code, exc.retryable) == (
        status,
        code,
        retryable,
    )
    assert statuses.status_of(exc, "firecrawl") == firecrawl
    body = exc.body()
    assert (body.error, body.message, body.url, body.engine) == (
        code,
        "why",
        "http://x/",
        "fetcher",
    )


def test_every_error_class_has_a_row_or_an_ancestor_with_one() -> None:
    def subclasses(cls: type[e.ScrapeError]) -> list[type[e.ScrapeError]]:
        return [cls, *(s for sub in cls.__subclasses__() for s in subclasses(sub))]

    for cls in subclasses(e.ScrapeError):
        if cls is e.ScrapeError:
            continue
        assert any(base in statuses.TABLE for base in cls.__mro__), cls
    search = {
        e.SearchNotConfigured("x"): 503,
        e.SearchFailed("x"): 502,
        e.SearchTimeout("x"): 504,
        e.BadRequest("x"): 400,
    }
    assert [statuses.status_of(k, "firecrawl") for k in search] == list(search.values())


def test_openapi_documents_each_api_from_the_one_table() -> None:
    scrape = statuses.documented("scrape")
    firecrawl = statuses.documented("firecrawl")
    assert sorted(scrape) == [400, 413, 415, 422, 502, 503, 504]
    assert sorted(firecrawl) == [
        400,
        404,
        405,
        408,
        409,
        413,
        415,
        422,
        429,
        500,
        501,
        502,
        503,
        504,
    ]
    assert "TIMEOUT" in str(firecrawl[408]["description"])


def _app() -> FastAPI:
    return create_app(ScrapeSettings(system_dns=False, browser_path=None))


def client(app: FastAPI | None = None) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app or _app(), raise_app_exceptions=False)
    return httpx.AsyncClient(transport=transport, base_url="http://scrape.test")


async def test_both_apis_answer_an_error_from_the_same_row_with_retry_after() -> None:
    app = _app()

    async def busy() -> None:
        raise e.EngineUnavailable("busy", retryable=True, retry_after_s=1.4)

    async def timeout() -> None:
        raise e.FetchTimeout("slow", url="http://a/")

    async def bug() -> None:
        raise RuntimeError("secret detail")

    for name, fn in (("busy", busy), ("timeout", timeout), ("bug", bug)):
        app.add_api_route(f"/test/{name}", fn)
        app.add_api_route(f"/firecrawl/test/{name}", fn)
        # before the fallback that answers every other /firecrawl path (404 in Firecrawl's shape)
        app.router.routes.insert(0, app.router.routes.pop())
    async with client(app) as c:
        busy_s, busy_f = await c.get("/test/busy"), await c.get("/firecrawl/test/busy")
        slow_s, slow_f = await c.get("/test/timeout"), await c.get("/firecrawl/test/timeout")
        bug_s, bug_f = await c.get("/test/bug"), await c.get("/firecrawl/test/bug")
    assert busy_s.status_code == busy_f.status_code == 503
    assert busy_s.headers["retry-after"] == busy_f.headers["retry-after"] == "1"
    assert busy_s.json()["error"] == "ENGINE_UNAVAILABLE" and busy_s.json()["retryable"]
    assert busy_f.json() == {"success": False, "error": "busy"}
    assert (slow_s.status_code, slow_f.status_code) == (504, 408)
    assert "retry-after" not in slow_s.headers
    assert (bug_s.status_code, bug_f.status_code) == (502, 500)
    assert "secret" not in bug_s.text and "secret" not in bug_f.text
    assert bug_f.json()["error"] == "unexpected error in the scrape service"


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


async def test_the_service_serves_no_internal_crawl_endpoint() -> None:
    # crawl drivers read pages in their own process (openmono_scrape.worker): the service has
    # no endpoint for them (it had /internal/crawl/page and /site)
    body = {"url": "http://127.0.0.1:9/"}
    async with client() as c:
        for path in ("/internal/crawl/page", "/internal/crawl/site"):
            assert (await c.post(path, json=body)).status_code == 404, path
