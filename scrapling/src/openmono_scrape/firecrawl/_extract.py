"""Firecrawl's `/extract` (v1 and v2): an async job that reads pages and asks the box's model.

Starting (`POST .../extract`): 1. the body is checked before anything runs (400 in Firecrawl's
shape): a schema or a prompt is needed, the schema must be valid (the path inside it named),
more than `MAX_EXTRACT_URLS` (50) URLs is refused naming the limit, a URL that is not http(s) is
refused unless `ignoreInvalidURLs` (then listed in `invalidURLs`), a URL the SSRF guard refuses
is refused; 2. the box is asked whether it has a model (503 without one, as the `json` format);
3. the job is made (at most `MAX_RUNNING` at once, `MAX_KEY_RUNNING` of them for one gateway key,
else 429) and the answer is its id, at once.
The job: a URL ending in `/*` stands for its site's pages under that path (map: the sitemaps and
the start page's links), the whole list cut to 50 with a warning; each page is read as scrape
reads it (`scrapeOptions`, markdown), `READ_AT_ONCE` at a time within the service's admission
and per-host limits; then the model reads each page's markdown with the schema as llama.cpp's
response format (`openmono_scrape.model`, the `json` format's path: valid by construction, and
checked), and the pages' answers are merged by the chunks' rule (objects key by key, arrays
joined without repeats; a merge that does not validate gives the first page's answer, with a
warning). A page that cannot be read or answered is named in `warning`; none at all: `failed`.
Status (`GET .../extract/{id}`): `processing`, then `completed` with `data` (and `sources`, the
URLs each top-level field came from, with `showSources`) or `failed` with `error`. Jobs live in
this process (not durable: they end with it), for `crawl_ttl_s`, at most `MAX_STORED`; only the
key that made one sees it (to any other its id is 404, as an unknown one).
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from openmono_contracts.firecrawl import FirecrawlScrapeOptions
from openmono_contracts.firecrawl_extract import (
    MAX_EXTRACT_URLS,
    ExtractStatusName,
    FirecrawlExtractRequest,
    FirecrawlExtractStarted,
    FirecrawlExtractStatus,
)
from openmono_contracts.firecrawl_jobs import FirecrawlMapRequest

from openmono_scrape.crawl import iso, normalise
from openmono_scrape.engines import check_url
from openmono_scrape.errors import BadRequest, JobNotFound, ScrapeError, TooManyJobs
from openmono_scrape.firecrawl._map import SiteMapper
from openmono_scrape.firecrawl._model_formats import ready
from openmono_scrape.firecrawl._scrape import PageScraper, Version
from openmono_scrape.model import JsonAsk, checked, merge_all, problems

log = logging.getLogger("openmono_scrape")

MAX_RUNNING = 4
MAX_KEY_RUNNING = 2
MAX_STORED = 256
READ_AT_ONCE = 4
_ID = re.compile(r"^[0-9a-f]{32}$")


@dataclass
class ExtractJob:
    id: str
    owner: str
    created_at: float
    expires_at: float
    status: ExtractStatusName = "processing"
    data: Any = None
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    sources: dict[str, list[str]] | None = None


def _bad(where: str, why: str) -> BadRequest:
    return BadRequest(f"Bad Request: {where}: {why}", [{"path": [where], "message": why}])


def _sources(values: list[tuple[str, Any]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for url, value in values:
        if isinstance(value, dict):
            for k, v in value.items():
                if v not in (None, "", [], {}):
                    out.setdefault(k, []).append(url)
    return out


class ExtractJobs:
    def __init__(self, api: PageScraper) -> None:
        self.api = api
        self.settings = api.settings
        self._jobs: dict[str, ExtractJob] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def _sweep(self, now: float) -> None:
        for job_id in [j for j, job in self._jobs.items() if job.expires_at <= now]:
            del self._jobs[job_id]
        ended = [j for j, job in self._jobs.items() if job.status != "processing"]
        while len(self._jobs) >= MAX_STORED and ended:
            del self._jobs[ended.pop(0)]

    def _running(self, owner: str | None = None) -> int:
        return sum(
            1
            for job in self._jobs.values()
            if job.status == "processing" and owner in (None, job.owner)
        )

    async def _checked_urls(self, req: FirecrawlExtractRequest) -> tuple[list[str], list[str]]:
        if len(req.urls) > MAX_EXTRACT_URLS:
            raise _bad(
                "urls",
                f"{len(req.urls)} URLs: an extract reads at most {MAX_EXTRACT_URLS} "
                "(Firecrawl's limit); split the list",
            )
        valid: list[str] = []
        invalid: list[str] = []
        for raw in req.urls:
            wild = raw.endswith("/*")
            url = normalise(raw[:-1] if wild else raw)
            if url is None:
                invalid.append(raw)
                continue
            await check_url(self.api.service.guard, url)  # a refused URL is a 400, at once
            valid.append(url + "*" if wild else url)
        if invalid and not req.ignore_invalid_urls:
            raise _bad("urls", f"not http(s) URLs: {', '.join(invalid[:5])}")
        if not valid:
            raise _bad("urls", "no valid URL to extract from")
        return list(dict.fromkeys(valid)), invalid

    async def start(
        self, req: FirecrawlExtractRequest, version: Version, owner: str
    ) -> FirecrawlExtractStarted:
        if req.json_schema is None and not req.prompt:
            raise _bad("schema", "an extract needs a schema or a prompt")
        validator = checked(req.json_schema, "schema") if req.json_schema is not None else None
        opts = req.scrape_options or FirecrawlScrapeOptions()
        names = [f.get("type") if isinstance(f, dict) else f for f in opts.formats]
        other = [str(n) for n in names if n != "markdown"]
        opts = opts.model_copy(update={"formats": ["markdown"]})
        urls, invalid = await self._checked_urls(req)
        # without a model on the box the answer is 503 now, not a job that can only fail
        await ready(self.settings, time.monotonic() + self.settings.llm_timeout_s)
        now = time.time()
        self._sweep(now)
        if self._running() >= MAX_RUNNING:
            raise TooManyJobs(f"{MAX_RUNNING} extract jobs are running here; try again shortly")
        if self._running(owner) >= MAX_KEY_RUNNING:
            raise TooManyJobs(
                f"this key runs {MAX_KEY_RUNNING} extract jobs, as many as one key may; "
                "try again when one has ended"
            )
        job = ExtractJob(uuid.uuid4().hex, owner, now, now + self.settings.crawl_ttl_s)
        if req.enable_web_search:
            job.warnings.append("enableWebSearch: not done here; only the given URLs are read")
        if other:
            job.warnings.append(
                f"scrapeOptions.formats: {', '.join(other)} not made: an extract reads each "
                "page's markdown"
            )
        self._jobs[job.id] = job
        ask = JsonAsk("json", req.json_schema, validator, req.prompt, req.system_prompt)
        task = asyncio.create_task(self._run(job, req, urls, ask, opts, version))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return FirecrawlExtractStarted(
            id=job.id,
            url_trace=[] if version == "v1" else None,
            invalid_urls=invalid or None,
            warning="; ".join(job.warnings) or None,
        )

    async def _expand(
        self, urls: list[str], req: FirecrawlExtractRequest, job: ExtractJob
    ) -> list[str]:
        out: list[str] = []
        for url in urls:
            if not url.endswith("*"):
                out.append(url)
                continue
            base = url[:-1]
            mapped = await SiteMapper(self.api).links(
                FirecrawlMapRequest(
                    url=base,
                    include_subdomains=req.include_subdomains,
                    sitemap="skip" if req.ignore_sitemap else "include",
                    limit=MAX_EXTRACT_URLS * 4,
                )
            )
            out += [u for u in mapped if u.startswith(base) or req.allow_external_links]
        out = list(dict.fromkeys(out))
        if len(out) > MAX_EXTRACT_URLS:
            job.warnings.append(
                f"the URLs and their sites' pages are {len(out)}: the first {MAX_EXTRACT_URLS} "
                "were read (an extract reads at most that many)"
            )
            out = out[:MAX_EXTRACT_URLS]
        return out

    async def _read(
        self, url: str, opts: FirecrawlScrapeOptions, version: Version, gate: asyncio.Semaphore
    ) -> str:
        async with gate, self.api.admit(url):
            return (await self.api.scrape_one(url, opts, version)).doc.markdown or ""

    async def _run(
        self,
        job: ExtractJob,
        req: FirecrawlExtractRequest,
        urls: list[str],
        ask: JsonAsk,
        opts: FirecrawlScrapeOptions,
        version: Version,
    ) -> None:
        try:
            pages = await self._expand(urls, req, job)
            gate = asyncio.Semaphore(READ_AT_ONCE)
            read = await asyncio.gather(
                *(self._read(u, opts, version, gate) for u in pages), return_exceptions=True
            )
            answers: list[tuple[str, Any]] = []
            for url, markdown in zip(pages, read, strict=True):
                if isinstance(markdown, BaseException):
                    why = markdown.message if isinstance(markdown, ScrapeError) else "failed"
                    job.warnings.append(f"{url}: not read ({why})")
                    continue
                try:
                    model = await ready(
                        self.settings, time.monotonic() + self.settings.llm_timeout_s
                    )
                    made = await model.json(ask, markdown, url)
                except ScrapeError as exc:
                    job.warnings.append(f"{url}: not answered ({exc.message})")
                    continue
                answers.append((url, made.value))
                job.warnings += [w for w in made.warnings if w not in job.warnings]
            if not answers:
                job.status, job.error = "failed", "no page could be read and answered"
                return
            merged = merge_all([v for _, v in answers])
            if len(answers) > 1 and ask.validator is not None and problems(ask.validator, merged):
                job.warnings.append(
                    "the pages' answers do not merge into a valid value for the schema: the "
                    "first page's answer is given"
                )
                merged = answers[0][1]
            job.data = merged
            job.sources = _sources(answers) if req.show_sources else None
            job.status = "completed"
        except Exception as exc:  # logged; the job says it failed, never hangs in processing
            log.error("extract job %s failed", job.id, exc_info=exc)
            job.status, job.error = "failed", "unexpected error in the extract job"

    def status(self, job_id: str, owner: str) -> FirecrawlExtractStatus:
        self._sweep(time.time())
        job = self._jobs.get(job_id) if _ID.match(job_id) else None
        if job is None or job.owner != owner:
            raise JobNotFound
        return FirecrawlExtractStatus(
            status=job.status,
            data=job.data,
            expires_at=iso(job.expires_at),
            error=job.error,
            warning="; ".join(job.warnings) or None,
            sources=job.sources,
        )

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
