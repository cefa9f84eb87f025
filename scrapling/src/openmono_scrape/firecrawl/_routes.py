"""`/firecrawl/{v1,v2}/...`: Firecrawl's API over the scrape service (scrape and search here; map,
crawl and batch scrape in `_map` and `_jobs`; every other path in `_fallback`).

Steps of a scrape: 1. FastAPI validates the body against the wire model (the app answers a failure
on these paths with 400 in Firecrawl's shape, `invalid_body`); the formats are checked here
2. map Firecrawl's options onto the service (`timeout` ms → budget, `maxAge` ms → cache age,
`waitFor` → the browser when one is installed, `headers` → the fetcher, `storeInCache`)
3. `ScrapeService.get_page` (cache, per-host limit, engines, escalation)  4. the document
(`_document`)  5. `json` and `summary` by the box's model (`_model_formats`; scrape only).
A search asks SearXNG, then scrapes the results in parallel (at most `search_scrape_concurrency`
at once, the per-host limit still applies) when `scrapeOptions` names formats; a result that
cannot be scraped stays in the answer with `metadata.error`, the others are not held back by it.
Every error is Firecrawl's `{success: false, error}` with its status from the service's one
table (`openmono_scrape.statuses`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from openmono_contracts.firecrawl import (
    FirecrawlDocument,
    FirecrawlMetadata,
    FirecrawlScrapeOptions,
    FirecrawlScrapeRequest,
    FirecrawlScrapeResponse,
    FirecrawlSearchData,
    FirecrawlSearchRequest,
    FirecrawlSearchResponseV1,
    FirecrawlSearchResponseV2,
)
from openmono_contracts.firecrawl_extract import (
    FirecrawlExtractRequest,
    FirecrawlExtractStarted,
    FirecrawlExtractStatus,
)
from openmono_contracts.firecrawl_jobs import (
    FirecrawlCrawlParamsRequest,
    FirecrawlCrawlParamsResponse,
    FirecrawlMapLink,
    FirecrawlMapRequest,
    FirecrawlMapResponseV1,
    FirecrawlMapResponseV2,
)
from openmono_contracts.searxng import SearchHit
from pydantic import BaseModel

from openmono_scrape import statuses
from openmono_scrape.errors import InternalError, ScrapeError
from openmono_scrape.firecrawl import _searxng
from openmono_scrape.firecrawl._document import parse_formats
from openmono_scrape.firecrawl._extract import ExtractJobs
from openmono_scrape.firecrawl._fallback import add_fallback
from openmono_scrape.firecrawl._idempotency import IdempotencyStore
from openmono_scrape.firecrawl._interact import refuse_off_scrape
from openmono_scrape.firecrawl._jobs import JobRunner, JobsAPI, add_job_routes, owner_of
from openmono_scrape.firecrawl._lenient import joined, map_warnings, scrape_warnings
from openmono_scrape.firecrawl._map import SiteMapper
from openmono_scrape.firecrawl._preview import params_preview
from openmono_scrape.firecrawl._queue import QueueAPI, add_queue_routes
from openmono_scrape.firecrawl._scrape import Admit, PageScraper, Version
from openmono_scrape.service import ScrapeService

log = logging.getLogger("openmono_scrape")

PREFIX = "/firecrawl"
Make = Callable[[Any, Request], Awaitable[JSONResponse]]

_RESPONSES = statuses.documented("firecrawl", {401: "no or wrong bearer (answered by the gateway)"})


def _json(model: BaseModel) -> JSONResponse:
    return JSONResponse(model.model_dump(mode="json", exclude_none=True, by_alias=True))


async def _answer(make: Callable[[], Awaitable[JSONResponse]], path: str) -> JSONResponse:
    try:
        return await make()
    except ScrapeError as exc:
        return statuses.answer(exc, "firecrawl")
    except Exception as exc:  # never a traceback to the client
        log.error("unexpected error on %s", path, exc_info=exc)
        return statuses.answer(InternalError(), "firecrawl")


class FirecrawlAPI(PageScraper):
    """The handlers; `admit` is the service's admission (the same slots as `/scrape`)."""

    def __init__(self, service: ScrapeService, admit: Admit) -> None:
        super().__init__(service, admit)
        self.extracts = ExtractJobs(self)

    async def extract(
        self, req: FirecrawlExtractRequest, version: Version, request: Request
    ) -> JSONResponse:
        return _json(await self.extracts.start(req, version, owner_of(request)))

    async def close(self) -> None:
        await self.extracts.close()

    async def scrape(
        self, req: FirecrawlScrapeRequest, version: Version, request: Request
    ) -> JSONResponse:
        crossed = scrape_warnings(req, version)
        async with self.admit(req.url):
            got = await self.scrape_one(req.url, req, version, model=True, owner=owner_of(request))
        return _json(FirecrawlScrapeResponse(data=got.doc, warning=joined(crossed + got.warnings)))

    async def map(self, req: FirecrawlMapRequest, version: Version, _: Request) -> JSONResponse:
        warning = joined(map_warnings(req, version))
        async with self.admit(req.url):
            links = await SiteMapper(self).links(req, version)
        if version == "v1":
            return _json(FirecrawlMapResponseV1(links=links, warning=warning))
        return _json(
            FirecrawlMapResponseV2(links=[FirecrawlMapLink(url=u) for u in links], warning=warning)
        )

    async def params_preview(
        self, req: FirecrawlCrawlParamsRequest, _: Version, __: Request
    ) -> JSONResponse:
        async with self.admit(req.url):
            return _json(await params_preview(req, self.settings))

    async def _result(
        self, hit: SearchHit, opts: FirecrawlScrapeOptions, version: Version, deadline: float
    ) -> FirecrawlDocument:
        try:
            doc = (await self.scrape_one(hit.url, opts, version, deadline - time.monotonic())).doc
        except ScrapeError as exc:
            doc = FirecrawlDocument(
                metadata=FirecrawlMetadata(source_url=hit.url, url=hit.url, error=exc.message)
            )
        doc.url, doc.title, doc.description = hit.url, hit.title, hit.snippet
        return doc

    async def search(
        self, req: FirecrawlSearchRequest, version: Version, _: Request
    ) -> JSONResponse:
        total = min(
            req.timeout / 1000.0 if req.timeout else self.settings.default_timeout_s,
            self.settings.max_timeout_s,
        )
        deadline = time.monotonic() + total
        opts = req.scrape_options
        formats = parse_formats(opts.formats) if opts is not None else []
        if opts is not None:
            refuse_off_scrape(opts)
        async with self.admit(None):
            hits = await _searxng.search(
                self.settings.searxng_url,
                req.query,
                req.limit,
                min(self.settings.search_timeout_s, total),
            )
            if opts is not None and formats:
                gate = asyncio.Semaphore(self.settings.search_scrape_concurrency)

                async def one(hit: SearchHit, scrape_opts: FirecrawlScrapeOptions) -> Any:
                    async with gate:
                        return await self._result(hit, scrape_opts, version, deadline)

                docs = list(await asyncio.gather(*(one(h, opts) for h in hits)))
            else:
                docs = [FirecrawlDocument(url=h.url, title=h.title, description=h.snippet)
                        for h in hits]  # fmt: skip
        if version == "v1":
            return _json(FirecrawlSearchResponseV1(data=docs))
        return _json(FirecrawlSearchResponseV2(data=FirecrawlSearchData(web=docs)))


def _bound(
    handler: Callable[[Any, Version, Request], Awaitable[JSONResponse]], version: Version
) -> Make:
    async def make(body: Any, request: Request) -> JSONResponse:
        return await handler(body, version, request)

    return make


def add_extract_status(router: APIRouter, api: FirecrawlAPI, version: Version) -> None:
    async def status(job_id: str, request: Request) -> JSONResponse:
        async def make() -> JSONResponse:
            return _json(api.extracts.status(job_id, owner_of(request)))

        return await _answer(make, f"/firecrawl/{version}/extract/{{id}}")

    status.__name__ = f"firecrawl_extract_status_{version}"
    router.add_api_route(
        f"/{version}/extract/{{job_id}}",
        status,
        methods=["GET"],
        responses={200: {"model": FirecrawlExtractStatus}, **_RESPONSES},
    )


def build_router(api: FirecrawlAPI, runner: JobRunner, once: IdempotencyStore) -> APIRouter:
    """The `/firecrawl` routes (the gateway forwards its paths unchanged), the fallback last."""
    router = APIRouter(prefix=PREFIX, tags=["firecrawl"])

    def post(path: str, make: Make, body: type[BaseModel], ok: type[BaseModel]) -> None:
        async def endpoint(body: Any, request: Request) -> JSONResponse:
            return await _answer(lambda: make(body, request), f"/firecrawl{path}")

        # each route has its own body model: FastAPI is given the class itself
        endpoint.__annotations__["body"] = body
        endpoint.__name__ = "firecrawl" + path.replace("/", "_")
        responses = {200: {"model": ok}, **_RESPONSES}
        router.add_api_route(path, endpoint, methods=["POST"], responses=responses)

    versions: tuple[Version, ...] = ("v1", "v2")
    for v in versions:
        one = v == "v1"
        post(f"/{v}/scrape", _bound(api.scrape, v), FirecrawlScrapeRequest, FirecrawlScrapeResponse)
        post(
            f"/{v}/search",
            _bound(api.search, v),
            FirecrawlSearchRequest,
            FirecrawlSearchResponseV1 if one else FirecrawlSearchResponseV2,
        )
        post(
            f"/{v}/map",
            _bound(api.map, v),
            FirecrawlMapRequest,
            FirecrawlMapResponseV1 if one else FirecrawlMapResponseV2,
        )
        post(
            f"/{v}/crawl/params-preview",
            _bound(api.params_preview, v),
            FirecrawlCrawlParamsRequest,
            FirecrawlCrawlParamsResponse,
        )
        post(
            f"/{v}/extract",
            _bound(api.extract, v),
            FirecrawlExtractRequest,
            FirecrawlExtractStarted,
        )
        add_extract_status(router, api, v)
    jobs = JobsAPI(api, runner, once)
    add_queue_routes(router, QueueAPI(jobs), _answer, _RESPONSES)
    add_job_routes(router, jobs, _answer, _RESPONSES)
    add_fallback(router)
    return router
