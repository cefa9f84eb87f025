"""From a fetched answer to the text the caller asked for.

HTML goes through the extraction package (main content, markdown/text/html); PDF through `pdf`
(its text layer: headings, paragraphs, ruled tables; run in a thread, as it is slow and CPU-bound);
JSON and plain text pass through as the site sent them (decoded); images, archives and other
binary types are `UNSUPPORTED_CONTENT` (415). Every answer's text and title go through
`clean_text` (zero-width and bidi controls removed) last.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import ParamSpec, TypeVar

from openmono_contracts import ScrapeFormat
from openmono_contracts.texthygiene import clean_text

from openmono_scrape.decode import decode_body
from openmono_scrape.errors import EmptyContent, ScrapeError, UnsupportedContent
from openmono_scrape.extract import extract
from openmono_scrape.page import FetchedPage
from openmono_scrape.pdf import PDF_TYPES, PdfLimits, looks_like_pdf, pdf_to_text

_P = ParamSpec("_P")
_T = TypeVar("_T")

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
    """`html`, `pdf`, `text` or `binary`, from the declared type, else from the first bytes."""
    ctype = page.content_type
    if ctype in PDF_TYPES:
        return "pdf"
    if ctype in HTML_TYPES:
        return "html"
    if ctype.startswith("text/") or ctype in TEXT_PASSTHROUGH or ctype.endswith(("+json", "+xml")):
        return "text"
    if ctype and ctype not in ("application/octet-stream", "binary/octet-stream"):
        return "binary"
    if looks_like_pdf(page.body):
        return "pdf"
    head = page.body[:512].lstrip().lower()
    if b"\x00" in head:
        return "binary"
    if head.startswith((b"<!doctype html", b"<html")) or b"<body" in head or b"<head" in head:
        return "html"
    return "text"


def render(
    page: FetchedPage, fmt: ScrapeFormat, main_content: bool, pdf: PdfLimits | None = None
) -> Rendered:
    """The caller's view of `page`; raises `UnsupportedContent` or `EmptyContent`.

    A PDF also raises `TooLarge` or `FetchTimeout` when over `pdf`'s limits (defaults if None).
    """
    kind = kind_of(page)
    if kind == "pdf":
        try:
            converted = pdf_to_text(page.body, fmt, pdf or PdfLimits())
        except ScrapeError as exc:
            exc.url, exc.engine = page.url, page.engine
            raise
        result = Rendered(converted.content, converted.title)
    elif kind == "binary":
        ctype = page.content_type or "binary data"
        raise UnsupportedContent(
            f"{ctype} cannot be turned into text by this service", url=page.url, engine=page.engine
        )
    elif kind == "html":
        html = page.rendered_html
        if html is None:
            html = decode_body(page.body, page.header("content-type"))
        extracted = extract(html, page.url, fmt, main_content)
        result = Rendered(extracted.content, extracted.title)
    else:
        result = Rendered(decode_body(page.body, page.header("content-type")), None)
    title = clean_text(result.title) if result.title else None
    result = Rendered(clean_text(result.content), title)
    if not result.content.strip():
        raise EmptyContent(
            f"the page was fetched (HTTP {page.status}) but holds no text",
            url=page.url,
            engine=page.engine,
        )
    return result


async def off_loop_for_pdf(
    page: FetchedPage, fn: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs
) -> _T:
    """`fn(...)`, in a worker thread when `page` is a PDF (slow to convert), so the event loop
    keeps serving meanwhile; HTML is quick enough to render in place."""
    if kind_of(page) == "pdf":
        return await asyncio.to_thread(fn, *args, **kwargs)
    return fn(*args, **kwargs)


async def render_off_loop(
    page: FetchedPage, fmt: ScrapeFormat, main_content: bool, pdf: PdfLimits
) -> Rendered:
    """`render`, with a PDF converted in a worker thread so the event loop keeps serving."""
    return await off_loop_for_pdf(page, render, page, fmt, main_content, pdf)


def truncate(text: str, max_length: int | None) -> tuple[str, bool]:
    """Cut on a character boundary (Python strings index code points, never bytes)."""
    if max_length is None or len(text) <= max_length:
        return text, False
    return text[:max_length], True
