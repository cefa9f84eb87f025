"""Firecrawl's error shape, `{"success": false, "error": "..."}`, with a real HTTP status.

ScrapeError (the service's tree)  ->  status
  BlockedURL                          400  bad input: the guard refused the URL
  FetchTimeout                        408  Firecrawl's code for a scrape that ran out of time
  TooLarge                            413
  UnsupportedContent                  415
  FetchFailed                         502  the origin could not be reached
  EngineUnavailable                   503  (and the service is busy: Retry-After)
BadRequest (this module)              400  a body that does not validate, an unknown format
SearchUnavailable (this module)       502/503  SearXNG down, unset or answering garbage
"""

from __future__ import annotations

from typing import Any

from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from openmono_contracts.firecrawl import FirecrawlErrorBody

from openmono_scrape.errors import FetchTimeout, ScrapeError


class FirecrawlError(ScrapeError):
    """An error only the Firecrawl API has; `http_status` is set per instance."""

    def __init__(self, message: str, status: int, details: Any | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.details = details


class BadRequest(FirecrawlError):
    def __init__(self, message: str, details: Any | None = None) -> None:
        super().__init__(message, 400, details)


class SearchUnavailable(FirecrawlError):
    pass


def status_of(exc: ScrapeError) -> int:
    if isinstance(exc, FirecrawlError):
        return exc.status
    if isinstance(exc, FetchTimeout):
        return 408
    return exc.http_status


def error_response(exc: ScrapeError) -> JSONResponse:
    details = exc.details if isinstance(exc, FirecrawlError) else None
    body = FirecrawlErrorBody(error=exc.message, details=details)
    headers = {}
    if exc.retry_after_s is not None:
        headers["Retry-After"] = str(max(1, round(exc.retry_after_s)))
    return JSONResponse(
        body.model_dump(mode="json", exclude_none=True),
        status_code=status_of(exc),
        headers=headers,
    )


def invalid_body(exc: RequestValidationError) -> JSONResponse:
    """400: which fields are wrong and why, never the input echoed back."""
    details = [
        {
            "path": [str(p) for p in err.get("loc", ()) if p != "body"],
            "message": str(err.get("msg", "")),
        }
        for err in exc.errors()
    ]
    first = details[0] if details else {"path": [], "message": "invalid"}
    where = ".".join(first["path"]) or "body"
    return error_response(BadRequest(f"Bad Request: {where}: {first['message']}", details))
