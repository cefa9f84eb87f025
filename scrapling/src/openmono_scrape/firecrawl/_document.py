"""A fetched page as a Firecrawl document: the asked formats and `metadata`.

Formats: `markdown` and `html` are the service's own extraction (main content unless
`onlyMainContent: false`); `rawHtml` is the page as the site (or the browser) gave it; `links`
are the page's absolute http(s) links, in order, once each. A page with no text is a document
with empty markdown (Firecrawl's behaviour), not an error. Metadata is read from the page's head:
title, description, language, the OpenGraph basics.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urljoin

from lxml import html as lxml_html
from openmono_contracts.firecrawl import FirecrawlDocument, FirecrawlFormat, FirecrawlMetadata
from openmono_contracts.scrape import ScrapeFormat

from openmono_scrape.content import kind_of, render
from openmono_scrape.decode import decode_body
from openmono_scrape.errors import BadRequest, EmptyContent
from openmono_scrape.pdf import PdfLimits
from openmono_scrape.service import PageResult

_KNOWN: frozenset[str] = frozenset({"markdown", "html", "rawHtml", "links"})
# made by the box's model (`_model_formats`), on scrape only: a crawl, batch or search asking
# for them would set the model to work on every page
MODEL_FORMATS: frozenset[str] = frozenset({"json", "extract", "summary"})
# made by the browser (`_interact`), on scrape only too
SHOT_FORMATS: frozenset[str] = frozenset({"screenshot", "screenshot@fullPage"})
# on scrape only as well: it compares with the asking key's snapshot (`_changes`)
SCRAPE_ONLY: frozenset[str] = MODEL_FORMATS | {"changeTracking"}
# the firecrawl-py SDK's own spellings of two formats
_SNAKE = {"raw_html": "rawHtml", "change_tracking": "changeTracking"}
_OG = {"og:title": "og_title", "og:description": "og_description", "og:image": "og_image",
       "og:site_name": "og_site_name"}  # fmt: skip


def parse_formats(raw: list[str | dict[str, Any]], model: bool = False) -> list[FirecrawlFormat]:
    """The asked formats in order, once each; 400 for one this server does not make (`model`:
    the model's formats are allowed, as on scrape)."""
    out: list[FirecrawlFormat] = []
    for item in raw:
        name = item.get("type") if isinstance(item, dict) else item
        name = _SNAKE.get(name, name) if isinstance(name, str) else name
        if isinstance(name, str) and name in SCRAPE_ONLY and not model:
            raise BadRequest(
                f"Bad Request: format {name!r} is made on scrape only here "
                "(here: markdown, html, rawHtml, links)"
            )
        if isinstance(name, str) and name in SHOT_FORMATS and not model:
            raise BadRequest(
                f"Bad Request: format {name!r} is made by the browser on scrape only here "
                "(here: markdown, html, rawHtml, links)"
            )
        if not isinstance(name, str) or name not in _KNOWN | SCRAPE_ONLY | SHOT_FORMATS:
            raise BadRequest(
                f"Bad Request: format {name!r} is not supported here "
                "(supported: markdown, html, rawHtml, links; on scrape also json, summary, "
                "screenshot, changeTracking)"
            )
        if name not in out:
            out.append(name)  # type: ignore[arg-type]  # checked against _KNOWN above
    return out


def _raw_html(result: PageResult) -> str:
    page = result.page
    if page.rendered_html is not None:
        return page.rendered_html
    return decode_body(page.body, page.header("content-type"))


def _head_facts(root: Any) -> dict[str, str]:
    facts: dict[str, str] = {}
    lang = root.get("lang") if root is not None else None
    if lang:
        facts["language"] = lang.strip()
    for meta in root.iter("meta") if root is not None else ():
        name = (meta.get("name") or meta.get("property") or "").strip().lower()
        content = (meta.get("content") or "").strip()
        if not content:
            continue
        if name == "description":
            facts.setdefault("description", content)
        elif name in _OG:
            facts.setdefault(_OG[name], content)
    title = root.findtext(".//title") if root is not None else None
    if title and title.strip():
        facts["title"] = " ".join(title.split())
    return facts


def _parse(markup: str) -> Any | None:
    try:
        return lxml_html.document_fromstring(markup)
    except (ValueError, lxml_html.etree.ParserError):
        return None


def _links(root: Any, base: str) -> list[str]:
    seen: dict[str, None] = {}
    for anchor in root.iter("a") if root is not None else ():
        href = (anchor.get("href") or "").strip()
        if not href:
            continue
        try:
            url = urljoin(base, href)
        except ValueError:
            continue
        if url.startswith(("http://", "https://")):
            seen.setdefault(url.partition("#")[0] or url, None)
    return list(seen)


def _text(
    result: PageResult, fmt: ScrapeFormat, main_content: bool, pdf: PdfLimits | None
) -> tuple[str, str | None]:
    try:
        rendered = render(result.page, fmt, main_content, pdf)
    except EmptyContent:
        return "", None
    return rendered.content, rendered.title


def document(
    result: PageResult,
    source_url: str,
    formats: list[FirecrawlFormat],
    main_content: bool,
    pdf: PdfLimits | None = None,
) -> FirecrawlDocument:
    """Raises the service's errors (`UnsupportedContent` for an image, `TooLarge` for a PDF over
    `pdf`'s limits). A PDF is slow to convert: call this off the event loop for one."""
    page = result.page
    is_html = kind_of(page) == "html"
    root = _parse(_raw_html(result)) if is_html else None
    facts = _head_facts(root)
    doc = FirecrawlDocument()
    # always made: it also refuses (415) what cannot become text, whatever the formats
    markdown, title = _text(result, "markdown", main_content, pdf)
    if "markdown" in formats:
        doc.markdown = markdown
    if "html" in formats:
        doc.html, _ = _text(result, "html", main_content, pdf)
    if "rawHtml" in formats:
        doc.raw_html = _raw_html(result)
    if "links" in formats:
        doc.links = _links(root, page.url)
    doc.metadata = FirecrawlMetadata(
        title=facts.get("title") or title,
        description=facts.get("description"),
        language=facts.get("language"),
        source_url=source_url,
        url=page.url,
        status_code=page.status,
        content_type=page.content_type or None,
        og_title=facts.get("og_title"),
        og_description=facts.get("og_description"),
        og_image=facts.get("og_image"),
        og_site_name=facts.get("og_site_name"),
        cache_state=result.cache,
        cached_at=result.cached_at,
    )
    return doc
