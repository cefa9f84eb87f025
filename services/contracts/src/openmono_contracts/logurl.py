"""URLs in log lines: scheme://host/path, never the query, the fragment or the userinfo.

A fetched URL's query often carries a token (`?token=`, a signed URL's `X-Amz-Signature`), and
its userinfo a password: the logs are files that outlive the call (issue 36, finding 11). The
scrape service, the tool worker and the crawl driver name a URL through `for_log`; their log
handlers format through `RedactingFormatter`, which rewrites any URL in a finished line (a
library's own line, an exception's message, a traceback) the same way.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import urlsplit

__all__ = ["RedactingFormatter", "for_log", "redact_handlers", "redact_urls"]

# A URL as it appears in running text: a scheme, `://`, then up to whitespace or a quote/bracket
# that ends it in a log line or a repr.
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]{1,15}://[^\s\"'<>`]+")


def for_log(url: str) -> str:
    """`url` as a log line may show it: scheme://host[:port]/path (no user, query, fragment)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        # not parseable (a bad port, a bad IPv6 literal): keep only what precedes any ? or #
        return re.split(r"[?#]", url.rsplit("@", 1)[-1], maxsplit=1)[0]
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port is not None else host
    return f"{parts.scheme}://{netloc}{parts.path}"


def _rewrite(m: re.Match[str]) -> str:
    url = m.group(0)
    # punctuation that ends the sentence around a URL stays in the line
    bare = url.rstrip(".,;:!)]}")
    return for_log(bare) + url[len(bare) :]


def redact_urls(text: str) -> str:
    """`text` with every URL in it cut to scheme://host/path."""
    return _URL.sub(_rewrite, text) if "://" in text else text


class RedactingFormatter(logging.Formatter):
    """Formats as `inner` does (a plain Formatter when None), then cuts every URL in the line,
    a traceback's included, to scheme://host/path."""

    def __init__(self, inner: logging.Formatter | None = None, fmt: str | None = None) -> None:
        super().__init__(fmt)
        self.inner = inner

    def format(self, record: logging.LogRecord) -> str:
        text = self.inner.format(record) if self.inner is not None else super().format(record)
        return redact_urls(text)


def redact_handlers(*loggers: logging.Logger) -> None:
    """Wrap the formatter of every handler of `loggers` (the root logger's when none) in a
    `RedactingFormatter`, keeping what each one printed otherwise."""
    for logger in loggers or (logging.getLogger(),):
        for handler in logger.handlers:
            if not isinstance(handler.formatter, RedactingFormatter):
                handler.setFormatter(RedactingFormatter(handler.formatter))
