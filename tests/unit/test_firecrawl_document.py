"""A fetched page as a Firecrawl document: formats, metadata from the head, links, refusals."""

from __future__ import annotations

import pytest
from openmono_scrape.errors import BadRequest, UnsupportedContent
from openmono_scrape.firecrawl._document import document, parse_formats
from openmono_scrape.page import FetchedPage
from openmono_scrape.service import PageResult

HTML = """<!doctype html><html lang="en-GB"><head><title> Tide   tables </title>
<meta name="description" content="High and low water.">
<meta property="og:title" content="Tides (OG)"><meta property="og:site_name" content="Harbour">
</head><body><nav><a href="/home">Home</a></nav><article><h1>Tide tables</h1>
<p>High water at Brest is at 04:12 today, and the range is six metres, which is large.</p>
<p>See <a href="/brest#today">Brest</a>, <a href="/brest">Brest again</a>,
<a href="https://other.example/x">elsewhere</a> and <a href="mailto:a@b.c">mail</a>.</p>
</article></body></html>"""


def _result(body: bytes, ctype: str, cache: str = "miss") -> PageResult:
    page = FetchedPage("https://port.example/tides", 200, {"content-type": ctype}, body, "fetcher")
    return PageResult(page, None, cache, "2026-12-01T00:00:00Z" if cache == "hit" else None)  # type: ignore[arg-type]


def test_formats_in_order_once_each_and_refusals() -> None:
    assert parse_formats(["links", {"type": "markdown"}, "links", "raw_html"]) == [
        "links",
        "markdown",
        "rawHtml",
    ]
    for bad in (["screenshot"], [{"type": "json"}], [{"no": "type"}]):
        with pytest.raises(BadRequest):
            parse_formats(bad)


def test_every_format_and_the_head_metadata() -> None:
    result = _result(HTML.encode(), "text/html; charset=utf-8", cache="hit")
    doc = document(
        result, "https://port.example/tides?src=1", ["markdown", "html", "rawHtml", "links"], True
    )
    assert doc.markdown is not None and "High water at Brest" in doc.markdown
    assert "Home" not in doc.markdown  # main content only
    assert doc.html is not None and "<p>" in doc.html
    assert doc.raw_html == HTML
    assert doc.links == [
        "https://port.example/home",
        "https://port.example/brest",
        "https://other.example/x",
    ]
    md = doc.metadata
    assert md is not None
    assert (md.title, md.description, md.language) == (
        "Tide tables",
        "High and low water.",
        "en-GB",
    )
    assert (md.og_title, md.og_site_name) == ("Tides (OG)", "Harbour")
    assert (
        md.source_url == "https://port.example/tides?src=1"
        and md.url == "https://port.example/tides"
    )
    assert (md.status_code, md.cache_state, md.cached_at) == (200, "hit", "2026-12-01T00:00:00Z")
    wire = doc.model_dump(mode="json", exclude_none=True, by_alias=True)
    assert set(wire) == {"markdown", "html", "rawHtml", "links", "metadata"}
    assert wire["metadata"]["sourceURL"] == "https://port.example/tides?src=1"
    assert wire["metadata"]["statusCode"] == 200 and wire["metadata"]["cacheState"] == "hit"


def test_only_the_asked_formats_and_the_whole_page_on_request() -> None:
    doc = document(
        _result(HTML.encode(), "text/html"), "https://port.example/tides", ["markdown"], False
    )
    assert doc.html is None and doc.raw_html is None and doc.links is None
    assert doc.markdown is not None and "Home" in doc.markdown


def test_json_passes_through_and_a_page_without_text_is_empty_markdown() -> None:
    doc = document(_result(b'{"port": "Brest"}', "application/json"), "u", ["markdown"], True)
    assert doc.markdown == '{"port": "Brest"}'
    empty = document(
        _result(b"<html><body><div></div></body></html>", "text/html"), "u", ["markdown"], True
    )
    assert empty.markdown == ""


def test_an_image_is_refused() -> None:
    with pytest.raises(UnsupportedContent):
        document(_result(b"\x89PNG\r\n\x1a\n", "image/png"), "u", ["rawHtml"], True)
