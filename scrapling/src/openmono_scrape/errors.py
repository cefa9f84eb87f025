"""The one exception tree of the scrape service; only `app` maps it to HTTP.

ScrapeError (code, http_status, retryable, engine)
 ├── BlockedURL            400  BLOCKED_URL          the SSRF guard refused the URL or a hop
 ├── FetchFailed           502  FETCH_FAILED         no page could be had (DNS, connect, TLS, ...)
 ├── FetchTimeout          504  TIMEOUT              the request's time budget ran out
 ├── TooLarge              413  TOO_LARGE            the body is over the download limit, or a PDF
 │                                                  over its byte or page limit
 ├── UnsupportedContent    415  UNSUPPORTED_CONTENT  a type we cannot turn into text (images,
 │                                                  archives, a damaged or encrypted PDF)
 ├── EmptyContent          422  EMPTY_CONTENT        the page was fetched but has no text (also a
 │                                                  scanned PDF: no text layer, no OCR here)
 └── EngineUnavailable     503  ENGINE_UNAVAILABLE   the engine the page needs is not installed,
                                                     or the service is saturated (retryable)
"""

from __future__ import annotations

from typing import ClassVar

from openmono_contracts import ScrapeEngine, ScrapeErrorBody, ScrapeErrorCode


class ScrapeError(Exception):
    """No page could be had; carries everything the error body needs."""

    code: ClassVar[ScrapeErrorCode] = "FETCH_FAILED"
    http_status: ClassVar[int] = 502
    default_retryable: ClassVar[bool] = False

    def __init__(
        self,
        message: str,
        *,
        url: str | None = None,
        engine: ScrapeEngine | None = None,
        retryable: bool | None = None,
        retry_after_s: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.url = url
        self.engine = engine
        self.retryable = self.default_retryable if retryable is None else retryable
        self.retry_after_s = retry_after_s

    def body(self) -> ScrapeErrorBody:
        return ScrapeErrorBody(
            error=self.code,
            message=self.message,
            retryable=self.retryable,
            url=self.url,
            engine=self.engine,
        )


class BlockedURL(ScrapeError):
    code = "BLOCKED_URL"
    http_status = 400


class FetchFailed(ScrapeError):
    code = "FETCH_FAILED"
    http_status = 502
    default_retryable = True


class FetchTimeout(ScrapeError):
    code = "TIMEOUT"
    http_status = 504
    default_retryable = True


class TooLarge(ScrapeError):
    code = "TOO_LARGE"
    http_status = 413


class UnsupportedContent(ScrapeError):
    code = "UNSUPPORTED_CONTENT"
    http_status = 415


class EmptyContent(ScrapeError):
    code = "EMPTY_CONTENT"
    http_status = 422


class EngineUnavailable(ScrapeError):
    code = "ENGINE_UNAVAILABLE"
    http_status = 503
