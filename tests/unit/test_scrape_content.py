"""Bytes to text: charsets, content kinds, passthrough, truncation, settings parsing."""

from __future__ import annotations

import pytest
from openmono_scrape.content import kind_of, render, truncate
from openmono_scrape.decode import charset_of, decode_body
from openmono_scrape.errors import EmptyContent, TooLarge, UnsupportedContent
from openmono_scrape.page import Budget, FetchedPage
from openmono_scrape.pdf import PdfLimits
from openmono_scrape.settings import ScrapeSettings

from tests.support import fixture_web as fw
from tests.support import pdfgen


def fetched(body: bytes, ctype: str | None, status: int = 200) -> FetchedPage:
    headers = {"content-type": ctype} if ctype else {}
    return FetchedPage("http://example.org/a", status, headers, body, "fetcher")


@pytest.mark.parametrize("name", ["utf8", "latin1", "sjis"])
def test_declared_charsets(name: str) -> None:
    codec, text = fw.CHARSET_TEXT[name]
    body = f"<p>{text}</p>".encode(codec)
    assert decode_body(body, f"text/html; charset={codec}") == f"<p>{text}</p>"


def test_meta_charset_when_the_header_has_none() -> None:
    _, text = fw.CHARSET_TEXT["sjis-meta"]
    body = f'<html><head><meta charset="Shift_JIS"></head><p>{text}</p>'.encode("shift_jis")
    assert charset_of("text/html", body) == "shift_jis"
    assert text in decode_body(body, "text/html")


def test_latin1_label_reads_as_windows_1252_and_unlabelled_falls_back() -> None:
    assert decode_body("“quoted”".encode("cp1252"), "text/html; charset=ISO-8859-1") == "“quoted”"
    assert decode_body("café".encode("cp1252"), None) == "café"
    assert decode_body("\ufeffbom".encode(), "text/html; charset=latin-1") == "bom"
    assert decode_body(b"ok", "text/html; charset=no-such-codec") == "ok"


def test_kinds() -> None:
    assert kind_of(fetched(b"<html></html>", "text/html; charset=utf-8")) == "html"
    assert kind_of(fetched(b"{}", "application/json")) == "text"
    assert kind_of(fetched(b"{}", "application/problem+json")) == "text"
    assert kind_of(fetched(b"a", "text/plain")) == "text"
    assert kind_of(fetched(fw.PDF_BYTES, "application/pdf")) == "pdf"
    assert kind_of(fetched(fw.PDF_BYTES, None)) == "pdf"
    assert kind_of(fetched(fw.PDF_BYTES, "application/octet-stream")) == "pdf"
    assert kind_of(fetched(b"\x00\x01rest", None)) == "binary"
    assert kind_of(fetched(b"<!DOCTYPE html><html><body>x", None)) == "html"
    assert kind_of(fetched(b"plain words", "application/octet-stream")) == "text"


def test_passthrough_keeps_json_and_text_as_sent() -> None:
    body = b'{"a": [1, 2], "b": "\xc3\xa9"}'
    out = render(fetched(body, "application/json"), "markdown", True)
    assert out.content == '{"a": [1, 2], "b": "é"}'
    assert out.title is None


def test_images_are_unsupported_and_a_pdf_without_pages_is_empty() -> None:
    with pytest.raises(EmptyContent, match="no pages"):
        render(fetched(fw.PDF_BYTES, "application/pdf"), "markdown", True)
    with pytest.raises(UnsupportedContent):
        render(fetched(b"\x89PNG", "image/png"), "text", True)


def test_empty_page_is_empty_content() -> None:
    with pytest.raises(EmptyContent):
        render(fetched(fw.page("", "<div></div>").encode(), "text/html"), "markdown", True)


def test_html_goes_through_extraction() -> None:
    out = render(fetched(fw.article_page().encode(), "text/html"), "markdown", True)
    assert fw.ARTICLE_SENTINEL in out.content
    assert out.title == fw.ARTICLE_TITLE


def test_pdf_goes_through_the_converter() -> None:
    out = render(fetched(pdfgen.report_pdf(1), "application/pdf"), "markdown", True)
    assert out.title == "Tidal Survey"
    assert out.content.startswith("# Tidal Survey of the Western Approaches\n\n## Section 1")
    with pytest.raises(TooLarge) as info:
        render(fetched(pdfgen.report_pdf(2), None), "markdown", True, PdfLimits(max_pages=1))
    assert (info.value.url, info.value.engine) == ("http://example.org/a", "fetcher")


def test_hidden_characters_are_stripped_from_every_kind() -> None:
    html = fw.page(
        "T\u200bitle", "<article><p>" + "Hid\u200bden\u202e text. " * 20 + "</p></article>"
    )
    out = render(fetched(html.encode(), "text/html; charset=utf-8"), "markdown", True)
    assert "Hidden text." in out.content and "\u200b" not in out.content
    assert out.title == "Title"
    plain = render(fetched("a\u2066b\ufeff".encode(), "text/plain"), "text", True)
    assert plain.content == "ab"


def test_truncate_on_characters() -> None:
    assert truncate("東京の天気", 2) == ("東京", True)
    assert truncate("abc", 3) == ("abc", False)
    assert truncate("abc", None) == ("abc", False)


def test_budget() -> None:
    from openmono_scrape.errors import FetchTimeout

    b = Budget(0.0)
    with pytest.raises(FetchTimeout):
        b.require()
    assert Budget(10).remaining() > 9


def test_settings_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCRAPE_ALLOW_CIDRS", "127.0.0.0/8, 10.0.0.0/8")
    monkeypatch.setenv("SCRAPE_STATIC_HOSTS", "a.test=127.0.0.1,B.test.=127.0.0.2")
    monkeypatch.setenv("SCRAPE_BROWSER_PATH", "")
    monkeypatch.setenv("SCRAPE_MAX_DOWNLOAD_BYTES", "2048")
    s = ScrapeSettings()
    assert s.allow_cidrs == ["127.0.0.0/8", "10.0.0.0/8"]
    assert s.static_hosts == {"a.test": "127.0.0.1", "b.test": "127.0.0.2"}
    assert s.browser_path is None
    assert s.max_download_bytes == 2048
    # the sandbox is a setting of its own, on unless switched off (a container without userns)
    assert "--no-sandbox" not in s.browser_flags and s.browser_sandbox
    monkeypatch.setenv("SCRAPE_BROWSER_SANDBOX", "false")
    monkeypatch.setenv("SCRAPE_BROWSER_USER", " ")
    s = ScrapeSettings()
    assert not s.browser_sandbox and s.browser_user is None
