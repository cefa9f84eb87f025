"""The HTTP surface: `POST /scrape`, `GET /health`, and the Firecrawl-compatible API under
`/firecrawl` (its own error shape, see `firecrawl`). With `statuses` (the one table of error
statuses, shared by both APIs), the only place errors become status codes.

200 whenever a page was fetched, whatever the site answered; an error is answered with its status
from `statuses.TABLE` (503 with `Retry-After` when the service is saturated). A body that does not
validate is 422 `{"detail": [...]}` with the field and the reason, never the input echoed back and
never a traceback; a body that is not JSON at all (not UTF-8, nested past the parser's depth, a
number too long to read) is the same 422 on `/scrape` and Firecrawl's 400 on `/firecrawl`, never
FastAPI's bare `{"detail": "There was an error parsing the body"}`. Anything unexpected is
logged with its traceback and answered as an `InternalError` without one (502 FETCH_FAILED on
`/scrape`, 500 on `/firecrawl`).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from openmono_contracts import ScrapeRequest, ScrapeResponse
from openmono_contracts.logurl import for_log
from starlette.exceptions import HTTPException

from openmono_scrape import crawljobs, firecrawl, statuses
from openmono_scrape.admission import admission
from openmono_scrape.crawl import SliceLimits
from openmono_scrape.errors import InternalError, ScrapeError
from openmono_scrape.service import ScrapeService
from openmono_scrape.settings import ScrapeSettings

log = logging.getLogger("openmono_scrape")

_ERROR_RESPONSES = statuses.documented(
    "scrape", {422: "a body that does not validate: {detail: [{loc, msg, type}]}"}
)


def _api(request: Request) -> statuses.Api:
    return "firecrawl" if request.url.path.startswith(firecrawl.PREFIX + "/") else "scrape"


def create_app(settings: ScrapeSettings | None = None) -> FastAPI:
    """Build the app; the service and its browser live as long as the app's lifespan."""
    cfg = settings or ScrapeSettings()
    service = ScrapeService(cfg)
    # one of `max_concurrency` slots, waited for up to `queue_wait_s`, else 503
    admit = admission(cfg)
    api = firecrawl.FirecrawlAPI(service, admit)
    runner = _runner(cfg, api, admit)
    once: firecrawl.IdempotencyStore = (
        firecrawl.RedisIdempotency.from_url(cfg.crawl_broker_url)
        if cfg.crawl_broker_url
        else firecrawl.MemoryIdempotency()
    )

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await once.close()
            await api.close()
            await runner.close()
            await service.close()

    app = FastAPI(
        title="OpenMono scrape service",
        version="0.1.0",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    app.state.service = service
    app.state.runner = runner

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        if _api(request) == "firecrawl":
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

    @app.exception_handler(HTTPException)
    async def _http(request: Request, exc: HTTPException) -> JSONResponse:
        # FastAPI raises a bare 400 from the cause when a body cannot be parsed at all
        unreadable = exc.status_code == 400 and exc.__cause__ is not None
        if _api(request) == "firecrawl":
            if unreadable:
                return firecrawl.unreadable_body(exc)
            body = {"success": False, "error": str(exc.detail)}
            return JSONResponse(body, status_code=exc.status_code, headers=exc.headers)
        if unreadable:
            why = firecrawl.unreadable_reason(exc)
            detail = [{"loc": ["body"], "msg": why, "type": "json_invalid"}]
            return JSONResponse({"detail": detail}, status_code=422)
        return JSONResponse(
            {"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers
        )

    @app.exception_handler(ScrapeError)
    async def _scrape_error(request: Request, exc: ScrapeError) -> JSONResponse:
        return statuses.answer(exc, _api(request))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.error("unexpected error on %s", request.url.path, exc_info=exc)
        return statuses.answer(InternalError(), _api(request))

    @app.get("/health")
    async def health() -> dict[str, Any]:
        """Liveness, and which engines can run on this host."""
        return {
            "status": "ok",
            "engines": service.engines(),
            "browser_running": service.browser.running,
            "browser_launches": service.browser.launches,
            "browser_pages": service.browser.open_pages,
            "cache": service.cache.stats(),
            "crawl": runner.info(),
        }

    # The gateway's probe, not part of the API: its 503 means "no" (Caddy's probe reads the status).
    @app.get("/health/crawl-durable", include_in_schema=False)
    async def crawl_durable() -> JSONResponse:
        """200 when crawl jobs outlive this process (the gateway's `/services` probe), else 503."""
        durable = runner.durable
        return JSONResponse({"durable": durable}, status_code=200 if durable else 503)

    @app.post("/scrape", response_model=ScrapeResponse, responses=_ERROR_RESPONSES)
    async def scrape(req: ScrapeRequest) -> ScrapeResponse:
        """Fetch one URL and return its main content (docs/architecture.md §4)."""
        async with admit(req.url):
            result = await service.scrape(req)
        log.info(
            "scraped %s status=%s engine=%s escalated_from=%s cache=%s %.0fms",
            for_log(result.url),
            result.status,
            result.engine,
            result.escalated_from,
            result.cache,
            result.elapsed_ms,
        )
        return result

    app.include_router(firecrawl.build_router(api, runner, once))
    return app


def _runner(
    cfg: ScrapeSettings, api: firecrawl.PageScraper, admit: firecrawl.Admit
) -> firecrawl.JobRunner:
    """Celery and Redis when a broker is configured (durable jobs), else this process."""
    bounds = crawljobs.JobBounds.of(cfg)
    if cfg.crawl_broker_url:
        return crawljobs.CeleryRunner(cfg.crawl_broker_url, bounds)
    limits = SliceLimits(seconds=3600.0)
    return crawljobs.LocalRunner(crawljobs.DirectSource(api, admit), limits, bounds)


def __getattr__(name: str) -> Any:
    # `uvicorn openmono_scrape.app:app` builds the app on first access, from the environment,
    # so importing this module (tests, the bench) never reads settings as a side effect.
    if name == "app":
        built = create_app()
        globals()["app"] = built
        return built
    raise AttributeError(name)
