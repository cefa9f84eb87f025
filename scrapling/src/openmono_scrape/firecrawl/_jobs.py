"""Crawl and batch scrape jobs in Firecrawl's shapes: start, status with `next` paging, cancel,
errors (`/firecrawl/{v1,v2}/crawl[/{id}[/errors]]`, `.../batch/scrape[...]`).

Starting a job: 1. the body is validated (400 in Firecrawl's shape: a bad pattern, a format this
server does not make, a URL the guard refuses, a webhook URL the guard refuses or that is not
http(s), an unsupported option such as `prompt`); 2. the job's spec is made from the request and
the service's settings (concurrency, byte bound, TTL, the guard's policy for webhooks) and belongs
to the gateway key that asked (`X-OpenMono-Key`, which the gateway sets after its auth, replacing
any the client sent); 3. the runner stores it, within the bytes its key and all keys may hold
(else 429), and starts its drivers; the answer is the id and the status URL, at once.
Only the key that made a job sees it: to any other its id is 404, as an unknown one.
Status: counts, `expiresAt`, and one page of documents (`skip`/`limit`, at most 100 documents or
10 MiB), with `next` pointing at the following page while there are more, or may be more.
The status URL is built from the request as the client sent it (the gateway keeps `Host`), under
`/firecrawl/<version>`, which the gateway serves whether the client used `/firecrawl` or `/v2`.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse
from kombu.exceptions import OperationalError as KombuOperationalError
from openmono_contracts.crawl import CrawlRules, GuardPolicy, JobSpec, JobVersion, WebhookSpec
from openmono_contracts.firecrawl import FirecrawlScrapeOptions
from openmono_contracts.firecrawl_jobs import (
    FirecrawlBatchScrapeRequest,
    FirecrawlCrawlRequest,
    FirecrawlJobCancelled,
    FirecrawlJobError,
    FirecrawlJobErrors,
    FirecrawlJobStarted,
    FirecrawlJobStatus,
    FirecrawlWebhook,
)
from openmono_contracts.gatewaykeys import KEY_HEADER, KEY_NAME
from pydantic import BaseModel
from redis.exceptions import RedisError

from openmono_scrape.crawl import (
    Item,
    JobStore,
    Scope,
    StoreFull,
    Webhooks,
    check_patterns,
    iso,
    normalise,
    page_key,
)
from openmono_scrape.engines import check_url
from openmono_scrape.errors import (
    BadRequest,
    EngineUnavailable,
    IdempotencyConflict,
    JobEnded,
    JobNotFound,
    NotImplementedHere,
    ScrapeError,
    TooManyJobs,
)
from openmono_scrape.firecrawl._document import parse_formats
from openmono_scrape.firecrawl._fallback import not_served
from openmono_scrape.firecrawl._idempotency import (
    HEADER,
    IdempotencyStore,
    Record,
    fingerprint,
    key_of,
)
from openmono_scrape.firecrawl._interact import refuse_off_scrape
from openmono_scrape.firecrawl._lenient import crawl_warnings, joined, scrape_warnings
from openmono_scrape.firecrawl._scrape import PageScraper


class JobRunner(Protocol):
    """Who runs the jobs' drivers (`openmono_scrape.crawljobs`: Celery, or this process)."""

    store: JobStore
    durable: bool

    async def create(self, spec: JobSpec, items: list[Item]) -> None: ...
    async def watch(self, job_id: str) -> None: ...
    def info(self) -> dict[str, Any]: ...
    async def close(self) -> None: ...


Kind = Literal["crawl", "batch"]
Make = Callable[[], Awaitable[JSONResponse]]
Answer = Callable[[Make, str], Awaitable[JSONResponse]]
PAGE_DOCS = 100
PAGE_BYTES = 10 * 1024 * 1024
_JOB_ID = re.compile(r"^[0-9a-f]{32}$")
_PATHS = {"crawl": "crawl", "batch": "batch/scrape"}


def _json(model: BaseModel) -> JSONResponse:
    return JSONResponse(model.model_dump(mode="json", exclude_none=True, by_alias=True))


def job_url(request: Request, version: JobVersion, kind: Kind, job_id: str) -> str:
    """The job's status URL as the client reaches it (scheme from X-Forwarded-Proto when the
    gateway set it, host from Host)."""
    proto = request.headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
    scheme = proto if proto in ("http", "https") else request.url.scheme
    host = request.headers.get("host") or request.url.netloc
    return f"{scheme}://{host}/firecrawl/{version}/{_PATHS[kind]}/{job_id}"


def owner_of(request: Request) -> str:
    """The gateway key's name the request came with ("" for a caller that reached this service
    directly, or a header that is not a key name)."""
    name = request.headers.get(KEY_HEADER, "")
    return name if KEY_NAME.fullmatch(name) else ""


def _webhook(raw: str | FirecrawlWebhook | None) -> WebhookSpec | None:
    if raw is None:
        return None
    if isinstance(raw, str):
        return WebhookSpec(url=raw)
    return WebhookSpec(
        url=raw.url, headers=raw.headers or {}, metadata=raw.metadata, events=raw.events
    )


class JobsAPI:
    def __init__(self, api: PageScraper, runner: JobRunner, once: IdempotencyStore) -> None:
        self.api = api
        self.runner = runner
        self.once = once
        self.settings = api.settings
        self._hooks: set[asyncio.Task[None]] = set()

    def _spec(
        self, kind: Kind, version: JobVersion, owner: str, seeds: list[str], **kw: Any
    ) -> JobSpec:
        cfg = self.settings
        now = time.time()
        return JobSpec(
            id=uuid.uuid4().hex,
            kind=kind,
            version=version,
            owner=owner,
            created_at=now,
            expires_at=now + cfg.crawl_ttl_s,
            seeds=seeds,
            guard=GuardPolicy(
                allow_cidrs=cfg.allow_cidrs,
                static_hosts=cfg.static_hosts,
                system_dns=cfg.system_dns,
            ),
            max_bytes=cfg.crawl_max_bytes,
            lease_s=cfg.crawl_lease_s,
            max_drivers=cfg.crawl_drivers if self.runner.durable else 1,
            **kw,
        )

    async def _checked_start(self, url: str) -> str:
        start = normalise(url)
        if start is None:
            raise BadRequest("Bad Request: url: only http and https URLs can be crawled")
        await check_url(self.api.service.guard, start)  # a refused start URL is a 400, at once
        return start

    async def _checked_webhook(self, raw: str | FirecrawlWebhook | None) -> WebhookSpec | None:
        """The webhook, its URL checked now by the guard that checks each delivery: a target the
        guard refuses is a 400 before the job exists, not a job that can never report."""
        hook = _webhook(raw)
        if hook is None:
            return None
        if urlsplit(hook.url).scheme.lower() not in ("http", "https"):
            raise BadRequest("Bad Request: webhook.url: only http and https webhooks are sent")
        try:
            await check_url(self.api.service.guard, hook.url)
        except ScrapeError as exc:
            raise BadRequest(f"Bad Request: webhook.url: {exc.message}") from exc
        return hook

    async def start_crawl(
        self, req: FirecrawlCrawlRequest, version: JobVersion, request: Request
    ) -> JSONResponse:
        if req.prompt:
            raise BadRequest(
                "Bad Request: prompt: crawl options written from a prompt need an LLM this "
                "server does not run for Firecrawl; give includePaths, limit, ... instead"
            )
        bad = check_patterns(req.include_paths + req.exclude_paths)
        if bad is not None:
            raise BadRequest(f"Bad Request: includePaths/excludePaths: {bad}")
        parse_formats(req.scrape_options.formats)
        refuse_off_scrape(req.scrape_options)
        start = await self._checked_start(req.url)
        webhook = await self._checked_webhook(req.webhook)
        rules = CrawlRules(
            limit=req.limit,
            # v1's name on v2 too: read for its meaning, and named in the answer's warning
            max_path_depth=req.max_depth,
            max_discovery_depth=req.max_discovery_depth,
            include_paths=req.include_paths,
            exclude_paths=req.exclude_paths,
            regex_on_full_url=req.regex_on_full_url,
            allow_external_links=req.allow_external_links,
            allow_subdomains=req.allow_subdomains,
            crawl_entire_domain=req.entire_domain(),
            ignore_query_parameters=req.ignore_query_parameters,
            deduplicate_similar_urls=req.deduplicate_similar_urls,
            sitemap=req.sitemap_mode(version),
        )
        # pages in flight may exceed the per-host limit: the service holds fetches to one host to
        # it, and the others' extraction and bookkeeping overlap those fetches
        limit = self.settings.crawl_concurrency
        spec = self._spec(
            "crawl",
            version,
            owner_of(request),
            [start],
            rules=rules,
            scrape_options=self._options(req.scrape_options),
            webhook=webhook,
            concurrency=min(req.max_concurrency or limit, limit),
            delay_s=req.delay or 0.0,
        )
        key = Scope(rules, start).key(start)
        job_id = await self._create(spec, [Item(start, 0, key, kickoff=True)], req, request)
        return _json(
            FirecrawlJobStarted(
                id=job_id,
                url=job_url(request, version, "crawl", job_id),
                warning=joined(crawl_warnings(req, version)),
            )
        )

    @staticmethod
    def _options(opts: FirecrawlScrapeOptions) -> dict[str, Any]:
        return opts.model_dump(mode="json", include=set(FirecrawlScrapeOptions.model_fields))

    async def start_batch(
        self, req: FirecrawlBatchScrapeRequest, version: JobVersion, request: Request
    ) -> JSONResponse:
        if req.append_to_id:
            raise BadRequest("Bad Request: appendToId: adding to a running job is not supported")
        parse_formats(req.formats)
        refuse_off_scrape(req)
        valid: dict[str, str] = {}
        invalid: list[str] = []
        for raw in req.urls:
            url = normalise(raw)
            if url is None:
                invalid.append(raw)
            else:
                valid.setdefault(page_key(url, similar=False), url)
        if invalid and not req.ignore_invalid_urls:
            raise BadRequest(f"Bad Request: urls: not http(s) URLs: {', '.join(invalid[:5])}")
        if not valid:
            raise BadRequest("Bad Request: urls: no valid URL to scrape")
        webhook = await self._checked_webhook(req.webhook)
        cap = self.settings.crawl_concurrency
        spec = self._spec(
            "batch",
            version,
            owner_of(request),
            list(valid.values()),
            scrape_options=self._options(req),
            webhook=webhook,
            concurrency=min(req.max_concurrency or cap, cap),
        )
        items = [Item(url, 0, key) for key, url in valid.items()]
        job_id = await self._create(spec, items, req, request)
        started = FirecrawlJobStarted(
            id=job_id,
            url=job_url(request, version, "batch", job_id),
            invalid_urls=invalid or None,
            warning=joined(scrape_warnings(req, version)),
        )
        return _json(started)

    async def _create(
        self, spec: JobSpec, items: list[Item], body: BaseModel, request: Request
    ) -> str:
        """Creates the job; the id of the job to answer with (with an `x-idempotency-key` seen
        before for the same request, that earlier job's, and nothing is created)."""
        key = key_of(request.headers)
        if key is None:
            await self._store(spec, items)
            return spec.id
        asked = fingerprint(spec.kind, spec.version, body.model_dump(mode="json"))
        held = await self.once.claim(spec.owner, key, Record(spec.id, asked))
        if held is not None:
            if held.fingerprint != asked:
                raise IdempotencyConflict(
                    f"{HEADER} was already used for another request; use a new key for a new job"
                )
            return held.job_id
        try:
            await self._store(spec, items)
        except BaseException:
            await self.once.forget(spec.owner, key)
            raise
        await self.once.keep(spec.owner, key, Record(spec.id, asked), spec.expires_at)
        return spec.id

    async def _store(self, spec: JobSpec, items: list[Item]) -> None:
        try:
            await self.runner.create(spec, items)
        except StoreFull as exc:
            raise TooManyJobs(str(exc)) from exc

    async def _known(
        self, job_id: str, kind: Kind, version: JobVersion, method: str, request: Request
    ) -> JobSpec:
        """The job, when it exists and is this key's, of this kind; else 404 (another key's job
        is not told apart from one that never existed)."""
        if not _JOB_ID.match(job_id):
            error = not_served(method, f"{version}/{_PATHS[kind]}/{job_id}")
            raise error if isinstance(error, NotImplementedHere) else JobNotFound()
        spec = await self.runner.store.spec(job_id)
        if spec is None or spec.owner != owner_of(request) or spec.kind != kind:
            raise JobNotFound
        return spec

    async def status(
        self,
        kind: Kind,
        version: JobVersion,
        job_id: str,
        skip: int,
        limit: int | None,
        request: Request,
    ) -> JSONResponse:
        spec = await self._known(job_id, kind, version, "GET", request)
        await self.runner.watch(job_id)
        state = await self.runner.store.state(job_id)
        if state is None:
            raise JobNotFound
        raw = await self.runner.store.documents(job_id, skip, min(limit or PAGE_DOCS, PAGE_DOCS))
        data: list[dict[str, Any]] = []
        size = 0
        for text in raw:
            size += len(text)
            if data and size > PAGE_BYTES:
                break
            data.append(json.loads(text))
        shown = skip + len(data)
        more = shown < state.completed or state.status == "scraping"
        nxt = None
        if more:
            nxt = f"{job_url(request, version, kind, job_id)}?skip={shown}"
            if limit:
                nxt += f"&limit={limit}"
        return _json(
            FirecrawlJobStatus(
                status=state.status,
                completed=state.completed,
                total=state.total,
                credits_used=state.completed,
                expires_at=iso(spec.expires_at),
                next=nxt,
                data=data,
                warning=state.warning,
            )
        )

    async def cancel(
        self, kind: Kind, version: JobVersion, job_id: str, request: Request
    ) -> JSONResponse:
        spec = await self._known(job_id, kind, version, "DELETE", request)
        outcome = await self.runner.store.cancel(job_id, time.time())
        if outcome == "missing":
            raise JobNotFound
        if outcome != "cancelled":
            raise JobEnded(f"the job has already {outcome}")
        hooks = Webhooks(spec)
        if hooks.wants("cancelled") and await self.runner.store.mark_once(job_id, "cancelled"):
            hooks.send("cancelled", success=False, error="the job was cancelled")
            task = asyncio.create_task(hooks.drain())
            self._hooks.add(task)
            task.add_done_callback(self._hooks.discard)
        return _json(FirecrawlJobCancelled())

    async def errors(
        self, kind: Kind, version: JobVersion, job_id: str, request: Request
    ) -> JSONResponse:
        await self._known(job_id, kind, version, "GET", request)
        errors, blocked = await self.runner.store.errors(job_id)
        listed = [FirecrawlJobError.model_validate(json.loads(e)) for e in errors]
        return _json(FirecrawlJobErrors(errors=listed, robots_blocked=blocked))


def reachable(make: Make) -> Make:
    """`make`, with the job store or broker out of reach answered as a busy service (503 +
    Retry-After), not as a bug: the stack's Redis restarting is a wait, not an error."""

    async def run() -> JSONResponse:
        try:
            return await make()
        except (RedisError, KombuOperationalError) as exc:
            raise EngineUnavailable(
                "the job store (the stack's Redis) cannot be reached; try again shortly",
                retryable=True,
                retry_after_s=5.0,
            ) from exc

    return run


def add_job_routes(
    router: APIRouter,
    jobs: JobsAPI,
    answer: Answer,
    responses: dict[int | str, dict[str, Any]],
) -> None:
    """The job endpoints of both versions on `router`; `answer` maps errors to Firecrawl's shape."""

    def routes(version: JobVersion, kind: Kind) -> None:
        base = f"/{version}/{_PATHS[kind]}"
        body_model = FirecrawlCrawlRequest if kind == "crawl" else FirecrawlBatchScrapeRequest
        starter = jobs.start_crawl if kind == "crawl" else jobs.start_batch
        tag = kind if kind == "crawl" else "batch_scrape"

        async def start(body: Any, request: Request) -> JSONResponse:
            return await answer(reachable(lambda: starter(body, version, request)), base)

        # the body's model differs per kind: give FastAPI the class itself, not a name
        start.__annotations__["body"] = body_model

        async def status(
            job_id: str,
            request: Request,
            skip: int = Query(default=0, ge=0),
            limit: int | None = Query(default=None, ge=1, le=1000),
        ) -> JSONResponse:
            return await answer(
                reachable(lambda: jobs.status(kind, version, job_id, skip, limit, request)), base
            )

        async def cancel(job_id: str, request: Request) -> JSONResponse:
            return await answer(
                reachable(lambda: jobs.cancel(kind, version, job_id, request)), base
            )

        async def errors(job_id: str, request: Request) -> JSONResponse:
            return await answer(
                reachable(lambda: jobs.errors(kind, version, job_id, request)), base
            )

        for name, fn in (
            ("start", start),
            ("status", status),
            ("cancel", cancel),
            ("errors", errors),
        ):
            fn.__name__ = f"firecrawl_{tag}_{name}_{version}"
        ok = {200: {"model": FirecrawlJobStarted}, **responses}
        router.add_api_route(base, start, methods=["POST"], responses=ok)
        router.add_api_route(
            base + "/{job_id}/errors",
            errors,
            methods=["GET"],
            responses={200: {"model": FirecrawlJobErrors}, **responses},
        )
        router.add_api_route(
            base + "/{job_id}",
            status,
            methods=["GET"],
            responses={200: {"model": FirecrawlJobStatus}, **responses},
        )
        router.add_api_route(
            base + "/{job_id}",
            cancel,
            methods=["DELETE"],
            responses={200: {"model": FirecrawlJobCancelled}, **responses},
        )

    versions: tuple[JobVersion, ...] = ("v1", "v2")
    for version in versions:
        routes(version, "crawl")
        routes(version, "batch")
