"""The one exception tree of the scrape service; `statuses` (the HTTP layer) maps it to HTTP.

ScrapeError (code, retryable, engine, retry_after_s)
 ├── BlockedURL            BLOCKED_URL          the SSRF guard refused the URL or a hop
 ├── FetchFailed           FETCH_FAILED         no page could be had (DNS, connect, TLS, ...)
 │    └── InternalError                         a bug: logged with its traceback, never sent
 ├── FetchTimeout          TIMEOUT              the request's time budget ran out
 ├── TooLarge              TOO_LARGE            the body is over the download limit, or a PDF
 │                                              over its byte or page limit
 ├── UnsupportedContent    UNSUPPORTED_CONTENT  a type we cannot turn into text (images,
 │                                              archives, a damaged or encrypted PDF)
 ├── EmptyContent          EMPTY_CONTENT        the page was fetched but has no text (also a
 │                                              scanned PDF: no text layer, no OCR here)
 ├── EngineUnavailable     ENGINE_UNAVAILABLE   the engine the page needs is not installed,
 │    │                                         or the service is saturated (retryable)
 │    └── SourceUnavailable                     (crawl jobs) a page cannot be read now (the
 │                                              pipeline is busy): its driver tries it later
 ├── ActionFailed                               (Firecrawl actions) one action could not be done
 │                                              on the page; the message names its index
 ├── BadRequest                                 (Firecrawl API) a body or format that does not
 │                                              validate; `details` says which fields
 └── SearchUnavailable                          (Firecrawl search) SearXNG cannot answer:
      ├── SearchNotConfigured                   no SearXNG is configured here
      ├── SearchTimeout                         it did not answer in time
      └── SearchFailed                          unreachable, an error status, or garbage
 ├── ModelError                                 (Firecrawl json/summary) the box's model gave no
 │    │                                         usable answer (an error, not valid, too long)
 │    ├── ModelUnavailable                      no LLM on the box, or it cannot be reached
 │    └── ModelContextTooSmall                  the schema and prompt leave no room for the page
 ├── JobNotFound                                (Firecrawl jobs) no such job, or it expired
 ├── JobEnded                                   (Firecrawl jobs) it ended: it cannot be cancelled
 ├── IdempotencyConflict                        (Firecrawl jobs) the idempotency key was used
 │                                              for another request
 ├── TooManyJobs                                (Firecrawl jobs) this process runs all it may
 │    └── StoreFull                             the jobs' stored bytes are at their bound
 └── NotServed                                  (Firecrawl) no such endpoint here
      ├── MethodNotAllowed                      served here, with another method
      └── NotImplementedHere                    Firecrawl's, not implemented by this server
"""

from __future__ import annotations

from typing import Any, ClassVar

from openmono_contracts import ScrapeEngine, ScrapeErrorBody, ScrapeErrorCode


class ScrapeError(Exception):
    """No page could be had; carries everything the error body needs."""

    code: ClassVar[ScrapeErrorCode] = "FETCH_FAILED"
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
        """The `/scrape` error body (the Firecrawl API has its own shape: `statuses`)."""
        return ScrapeErrorBody(
            error=self.code,
            message=self.message,
            retryable=self.retryable,
            url=self.url,
            engine=self.engine,
        )


class BlockedURL(ScrapeError):
    code = "BLOCKED_URL"


class FetchFailed(ScrapeError):
    code = "FETCH_FAILED"
    default_retryable = True


class FetchTimeout(ScrapeError):
    code = "TIMEOUT"
    default_retryable = True


class TooLarge(ScrapeError):
    code = "TOO_LARGE"


class UnsupportedContent(ScrapeError):
    code = "UNSUPPORTED_CONTENT"


class EmptyContent(ScrapeError):
    code = "EMPTY_CONTENT"


class EngineUnavailable(ScrapeError):
    code = "ENGINE_UNAVAILABLE"


class SourceUnavailable(EngineUnavailable):
    """A crawl driver's page source could not read the page now (busy): try it later."""


class ActionFailed(ScrapeError):
    """An action of a Firecrawl scrape failed on the page (`index`: its place in `actions`)."""

    firecrawl_code = "SCRAPE_ACTION_ERROR"

    def __init__(self, index: int, kind: str, why: str, url: str | None = None) -> None:
        super().__init__(f"Action {index} ({kind}) failed: {why}", url=url, engine="browser")
        self.index = index
        self.kind = kind


class InternalError(FetchFailed):
    """Something we did not foresee; the client is told only that, the log has the traceback."""

    def __init__(self, message: str = "unexpected error in the scrape service", **at: Any) -> None:
        super().__init__(message, **at)


class BadRequest(ScrapeError):
    """A Firecrawl request that does not validate (`details`: which fields, and why)."""

    def __init__(self, message: str, details: Any | None = None) -> None:
        super().__init__(message)
        self.details = details


class SearchUnavailable(ScrapeError):
    """The search behind the Firecrawl search endpoint cannot answer."""


class SearchNotConfigured(SearchUnavailable):
    pass


class SearchTimeout(SearchUnavailable):
    pass


class SearchFailed(SearchUnavailable):
    pass


class ModelError(ScrapeError):
    """The box's model could not make the format (`json`, `summary`) of a Firecrawl scrape."""


class ModelUnavailable(ModelError):
    pass


class ModelContextTooSmall(ModelError):
    pass


class JobNotFound(ScrapeError):
    def __init__(self) -> None:
        super().__init__("Job not found")


class JobEnded(ScrapeError):
    pass


class IdempotencyConflict(ScrapeError):
    pass


class TooManyJobs(ScrapeError):
    pass


class NotServed(ScrapeError):
    pass


class MethodNotAllowed(NotServed):
    pass


class NotImplementedHere(NotServed):
    pass
