"""Errors as HTTP answers: the one table of status codes, for `/scrape` and `/firecrawl` alike.

Each error class of `errors` has one row: its status on `/scrape` (docs/architecture.md §4), its
status on the Firecrawl API (which says 408 for a timeout and 500 for a bug), and what it means,
which the OpenAPI documents of both read. An error without a row of its own takes its nearest
ancestor's. `Retry-After` is sent whenever the error carries `retry_after_s` (the service is busy).

The body differs by API: `/scrape` sends `ScrapeErrorBody` (`{error: CODE, message, retryable,
url, engine}`), `/firecrawl` its own `{success: false, error, details?}`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from fastapi.responses import JSONResponse
from openmono_contracts import ScrapeErrorBody
from openmono_contracts.firecrawl import FirecrawlErrorBody

from openmono_scrape import errors as e

Api = Literal["scrape", "firecrawl"]


@dataclass(frozen=True)
class Row:
    """One error's statuses; `scrape=None`: `/scrape` never raises it."""

    scrape: int | None
    firecrawl: int
    meaning: str

    def status(self, api: Api) -> int | None:
        return self.scrape if api == "scrape" else self.firecrawl


TABLE: dict[type[e.ScrapeError], Row] = {
    e.BlockedURL: Row(400, 400, "BLOCKED_URL: the SSRF guard refused the URL or a redirect hop"),
    e.TooLarge: Row(413, 413, "TOO_LARGE: over the download limit (or a PDF over its limits)"),
    e.UnsupportedContent: Row(415, 415, "UNSUPPORTED_CONTENT: not HTML, PDF, JSON or text"),
    e.EmptyContent: Row(422, 422, "EMPTY_CONTENT: fetched, but no text"),
    e.FetchFailed: Row(502, 502, "FETCH_FAILED: no page could be had"),
    e.InternalError: Row(502, 500, "an unexpected error in the service (logged here)"),
    e.EngineUnavailable: Row(
        503, 503, "ENGINE_UNAVAILABLE: the needed engine is not installed, or the service is busy"
    ),
    e.FetchTimeout: Row(504, 408, "TIMEOUT: the time budget ran out"),
    e.BadRequest: Row(None, 400, "a body or format that does not validate"),
    e.ActionFailed: Row(None, 422, "SCRAPE_ACTION_ERROR: an action failed on the page (named)"),
    e.SearchUnavailable: Row(None, 502, "the search engine cannot answer"),
    e.SearchNotConfigured: Row(None, 503, "search is not configured on this server"),
    e.SearchFailed: Row(None, 502, "the search engine could not be reached or answered garbage"),
    e.SearchTimeout: Row(None, 504, "the search engine did not answer in time"),
    e.ModelError: Row(None, 502, "the box's model gave no usable answer (json, summary)"),
    e.ModelUnavailable: Row(None, 503, "no LLM answers on this box (json, summary formats)"),
    e.ModelContextTooSmall: Row(
        None, 413, "the schema and prompt leave no room for the page in the model's context"
    ),
    e.JobNotFound: Row(None, 404, "no such job, or it expired"),
    e.NotServed: Row(None, 404, "no such endpoint here (the answer names what is)"),
    e.MethodNotAllowed: Row(None, 405, "the path is served here, with another method"),
    e.JobEnded: Row(None, 409, "the job has already ended: it cannot be cancelled"),
    e.IdempotencyConflict: Row(None, 409, "the x-idempotency-key was used for another request"),
    e.TooManyJobs: Row(None, 429, "too many jobs running in this service (no broker set)"),
    e.NotImplementedHere: Row(None, 501, "an endpoint of Firecrawl's API not implemented here"),
}


def row_of(exc: e.ScrapeError) -> Row:
    """The row of `exc`'s class, else of its nearest ancestor (`ScrapeError` itself: 502)."""
    for cls in type(exc).__mro__:
        row = TABLE.get(cls)
        if row is not None:
            return row
    return TABLE[e.FetchFailed]


def status_of(exc: e.ScrapeError, api: Api) -> int:
    row = row_of(exc)
    status = row.status(api)
    return status if status is not None else row.firecrawl


def headers_of(exc: e.ScrapeError) -> dict[str, str]:
    if exc.retry_after_s is None:
        return {}
    return {"Retry-After": str(max(1, round(exc.retry_after_s)))}


def answer(exc: e.ScrapeError, api: Api) -> JSONResponse:
    """`exc` as the response `api` gives: its status, its body shape, `Retry-After`."""
    if api == "scrape":
        body: dict[str, Any] = exc.body().model_dump(mode="json")
    else:
        details = exc.details if isinstance(exc, e.BadRequest) else None
        if isinstance(exc, e.ActionFailed):
            details = {"index": exc.index, "type": exc.kind}
        code = exc.firecrawl_code if isinstance(exc, e.ActionFailed) else None
        wire = FirecrawlErrorBody(error=exc.message, code=code, details=details)
        body = wire.model_dump(mode="json", exclude_none=True)
    return JSONResponse(body, status_code=status_of(exc, api), headers=headers_of(exc))


def documented(api: Api, extra: Mapping[int, str] | None = None) -> dict[int | str, dict[str, Any]]:
    """The error responses of `api` for its OpenAPI document (`extra`: status -> meaning, for
    answers that are not errors of this tree, such as a body that does not validate)."""
    model = ScrapeErrorBody if api == "scrape" else FirecrawlErrorBody
    meanings: dict[int, list[str]] = {}
    for row in TABLE.values():
        status = row.status(api)
        if status is not None:
            meanings.setdefault(status, []).append(row.meaning)
    for status, text in (extra or {}).items():
        meanings.setdefault(status, []).insert(0, text)
    return {
        status: {"model": model, "description": "; ".join(meanings[status])}
        for status in sorted(meanings)
    }
