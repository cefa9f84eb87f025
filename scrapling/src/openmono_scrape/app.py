"""The HTTP surface: `POST /scrape`, `GET /health`, and the Firecrawl-compatible API under
`/firecrawl` (its own error shape, see `firecrawl`). The only place errors become status codes.

Status codes (DESIGN.md §4): 200 whenever a page was fetched, whatever the site answered; errors
carry a `ScrapeErrorBody` with 400 BLOCKED_URL, 413 TOO_LARGE, 415 UNSUPPORTED_CONTENT,
422 EMPTY_CONTENT, 502 FETCH_FAILED, 503 ENGINE_UNAVAILABLE (also when the service is saturated,
with `Retry-After`), 504 TIMEOUT. A body that does not validate is 422 `{"detail": [...]}` with
the field and the reason, never the input echoed back and never a traceback. Anything unexpected
is logged with its traceback and answered 502 FETCH_FAILED without one.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from openmono_contracts import ScrapeErrorBody, ScrapeRequest, ScrapeResponse

from openmono_scrape import firecrawl
from openmono_scrape.errors import EngineUnavailable, FetchFailed, ScrapeError
from openmono_scrape.service import ScrapeService
from openmono_scrape.settings import ScrapeSettings

log = logging.getLogger("openmono_scrape")

_ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    code: {"model": ScrapeErrorBody, "description": text}
    for code, text in (
        (400, "BLOCKED_URL: the SSRF guard refused the URL or a redirect hop"),
        (413, "TOO_LARGE: the body is over the download limit (or a PDF over its limits)"),
        (415, "UNSUPPORTED_CONTENT: not HTML, PDF, JSON or text (e.g. images)"),
        (422, "EMPTY_CONTENT: fetched, but no text (request validation errors also use 422)"),
        (502, "FETCH_FAILED: no page could be had"),
        (503, "ENGINE_UNAVAILABLE: the needed engine is not installed, or the service is busy"),
        (504, "TIMEOUT: the time budget ran out"),
    )
}


def _error_response(exc: ScrapeError) -> JSONResponse:
    headers = {}
    if exc.retry_after_s is not None:
        headers["Retry-After"] = str(max(1, round(exc.retry_after_s)))
    return JSONResponse(
        exc.body().model_dump(mode="json"), status_code=exc.http_status, headers=headers
    )


def create_app(settings: ScrapeSettings | None = None) -> FastAPI:
    """Build the app; the service and its browser live as long as the app's lifespan."""
    cfg = settings or ScrapeSettings()
    service = ScrapeService(cfg)
    slots = asyncio.Semaphore(cfg.max_concurrency)

    @asynccontextmanager
    async def _admitted(url: str | None) -> AsyncIterator[None]:
        try:
            await asyncio.wait_for(slots.acquire(), cfg.queue_wait_s or 0.001)
        except TimeoutError as exc:
            raise EngineUnavailable(
                f"the scrape service is busy ({cfg.max_concurrency} requests in flight)",
                url=url,
                retryable=True,
                retry_after_s=1.0,
            ) from exc
        try:
            yield
        finally:
            slots.release()

    def admit(url: str | None) -> AbstractAsyncContextManager[None]:
        """One of `max_concurrency` slots, waited for up to `queue_wait_s`, else 503."""
        return _admitted(url)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await service.close()

    app = FastAPI(
        title="OpenMono scrape service",
        version="0.1.0",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    app.state.service = service

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        if request.url.path.startswith(firecrawl.PREFIX + "/"):
            return firecrawl.invalid_body(exc)
        detail = [
            {
                "loc": list(err.get("loc", ())),
                "msg": str(err.get("msg", "")),
                "type": err.get("type"),
            }
            for err in exc.errors()
        ]
        return JSONResponse({"detail": detail}, status_code=422)

    @app.exception_handler(ScrapeError)
    async def _scrape_error(_: Request, exc: ScrapeError) -> JSONResponse:
        return _error_response(exc)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.error("unexpected error on %s", request.url.path, exc_info=exc)
        return _error_response(FetchFailed("unexpected error in the scrape service"))

    @app.get("/health")
    async def health() -> dict[str, Any]:
        """Liveness, and which engines can run on this host."""
        return {
            "status": "ok",
            "engines": service.engines(),
            "browser_running": service.browser.running,
            "browser_launches": service.browser.launches,
            "cache": service.cache.stats(),
        }

    @app.post("/scrape", response_model=ScrapeResponse, responses=_ERROR_RESPONSES)
    async def scrape(req: ScrapeRequest) -> ScrapeResponse:
        """Fetch one URL and return its main content (DESIGN.md §4)."""
        async with admit(req.url):
            result = await service.scrape(req)
        log.info(
            "scraped %s status=%s engine=%s escalated_from=%s cache=%s %.0fms",
            result.url,
            result.status,
            result.engine,
            result.escalated_from,
            result.cache,
            result.elapsed_ms,
        )
        return result

    app.include_router(firecrawl.build_router(service, admit))
    return app


def __getattr__(name: str) -> Any:
    # `uvicorn openmono_scrape.app:app` builds the app on first access, from the environment,
    # so importing this module (tests, the bench) never reads settings as a side effect.
    if name == "app":
        built = create_app()
        globals()["app"] = built
        return built
    raise AttributeError(name)
