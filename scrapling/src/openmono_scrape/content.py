"""From a fetched answer to the text the caller asked for.

HTML goes through the extraction package (main content, markdown/text/html); JSON and plain text
pass through as the site sent them (decoded); PDF, images, archives and other binary types are
`UNSUPPORTED_CONTENT` (415): we do not extract PDFs, and a half-right PDF text would be worse than a
clear refusal.
"""

from __future__ import annotations

from dataclasses import dataclass

from openmono_contracts import ScrapeFormat

from openmono_scrape.decode import decode_body
from openmono_scrape.errors import EmptyContent, UnsupportedContent
from openmono_scrape.extract import extract
from openmono_scrape.page import FetchedPage

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_PASSTHROUGH = frozenset(
    {
        "application/json",
        "application/ld+json",
        "application/xml",
        "application/rss+xml",
        "application/atom+xml",
        "application/javascript",
        "application/x-ndjson",
    }
)


@dataclass(frozen=True)
class Rendered:
    content: str
    title: str | None


def kind_of(page: FetchedPage) -> str:
    """`html`, `text` or `binary`, from the declared type, else from the first bytes."""
    ctype = page.content_type
    if ctype in HTML_TYPES:
        return "html"
    if ctype.startswith("text/") or ctype in TEXT_PASSTHROUGH or ctype.endswith(("+json", "+xml")):
        return "text"
    if ctype and ctype not in ("application/octet-stream", "binary/octet-stream"):
        return "binary"
    head = page.body[:512].lstrip().lower()
    if head.startswith(b"%pdf") or b"\x00" in head:
        return "binary"
    if head.startswith((b"<!doctype html", b"<html")) or b"<body" in head or b"<head" in head:
        return "html"
    return "text"


def render(page: FetchedPage, fmt: ScrapeFormat, main_content: bool) -> Rendered:
    """The caller's view of `page`; raises `UnsupportedContent` or `EmptyContent`."""
    kind = kind_of(page)
    if kind == "binary":
        ctype = page.content_type or "binary data"
        raise UnsupportedContent(
            f"{ctype} cannot be turned into text by this service", url=page.url, engine=page.engine
        )
    if kind == "html":
        html = page.rendered_html
        if html is None:
            html = decode_body(page.body, page.header("content-type"))
        extracted = extract(html, page.url, fmt, main_content)
        result = Rendered(extracted.content, extracted.title)
    else:
        result = Rendered(decode_body(page.body, page.header("content-type")), None)
    if not result.content.strip():
        raise EmptyContent(
            f"the page was fetched (HTTP {page.status}) but holds no text",
            url=page.url,
            engine=page.engine,
        )
    return result


def truncate(text: str, max_length: int | None) -> tuple[str, bool]:
    """Cut on a character boundary (Python strings index code points, never bytes)."""
    if max_length is None or len(text) <= max_length:
        return text, False
    return text[:max_length], True
