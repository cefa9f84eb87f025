"""PDF to text on hand-written PDFs: layout rules, formats, limits and refusals."""

from __future__ import annotations

import time
import zlib

import pytest
from openmono_scrape.errors import EmptyContent, FetchTimeout, TooLarge, UnsupportedContent
from openmono_scrape.pdf import PdfLimits, looks_like_pdf, pdf_to_text
from openmono_scrape.pdf import _inflate as pdf_inflate

from tests.support import pdfgen as pg

REPORT_HEAD = "# Tidal Survey of the Western Approaches\n\n## Section 1: Observations\n\n"
TABLE_MD = (
    "| Port | High water | Range (m) |\n| --- | --- | --- |\n"
    "| Brest | 04:12 | 6.1 |\n| Roscoff | 04:40 | 7.9 |"
)


def test_headings_paragraphs_and_table_as_markdown() -> None:
    out = pdf_to_text(pg.report_pdf(1), "markdown", PdfLimits())
    assert out.pages == 1 and out.title == "Tidal Survey"  # the document's Title wins
    assert out.content.startswith(REPORT_HEAD)
    # lines of one paragraph are joined; the gap starts the next paragraph
    assert (
        "Tide gauges along the coast were read every ten minutes for a lunar month. The "
        "readings were corrected" in out.content
    )
    assert "listed in table 1 below.\n\nLocal effects" in out.content
    assert f"the ebb.\n\n{TABLE_MD}\n\n## Method\n\nEach constituent" in out.content
    assert out.content.count("Brest") == 1  # table text is not repeated as a paragraph


def test_text_and_html_formats() -> None:
    text = pdf_to_text(pg.report_pdf(1), "text", PdfLimits()).content
    assert text.startswith("Tidal Survey of the Western Approaches\n\nSection 1")
    assert "Brest | 04:12 | 6.1" in text and "#" not in text and "---" not in text
    html = pdf_to_text(pg.report_pdf(1), "html", PdfLimits()).content
    assert html.startswith("<h1>Tidal Survey of the Western Approaches</h1>\n\n<h2>Section 1")
    assert "<tr><td>Brest</td><td>04:12</td><td>6.1</td></tr>" in html
    assert "<p>Each constituent was fitted by least squares" in html


def test_title_falls_back_to_the_first_heading() -> None:
    words = "The harbour keeps its own notes & tables."
    body = pg.build_pdf([[pg.Text(72, 700, 20, "Harbour <Notes>"), pg.Text(72, 660, 11, words)]])
    out = pdf_to_text(body, "html", PdfLimits())
    assert out.title == "Harbour <Notes>"
    assert out.content == f"<h1>Harbour &lt;Notes&gt;</h1>\n\n<p>{words.replace('&', '&amp;')}</p>"


def test_hyphenated_line_ends_join_and_bold_lines_become_headings() -> None:
    page = [
        pg.Text(72, 700, 11, "Summary", bold=True),
        *pg.paragraph_ops(72, 670, ["The gauges were recali-", "brated twice a week."]),
    ]
    out = pdf_to_text(pg.build_pdf([page]), "markdown", PdfLimits()).content
    assert out == "# Summary\n\nThe gauges were recalibrated twice a week."


def test_code_lists_and_contents_lines() -> None:
    code = ["def tide(hour):", "    return hour % 12.42", "", "print(tide(3))"]
    page = [
        pg.Text(72, 720, 11, "Contents . . . . . . . . . . . 1"),
        pg.Text(72, 706, 11, "Method . . . . . . . . . . . . 2"),
        *pg.paragraph_ops(
            72, 680, ["The gauges are read by a short function, shown here in", "full:"]
        ),
        *[
            pg.Text(
                72 + 6.6 * (len(ln) - len(ln.lstrip())), 650 - 14.3 * i, 11, ln.strip(), mono=True
            )
            for i, ln in enumerate(code)
            if ln
        ],
        pg.Text(72, 580, 11, "\u2022 Read at high water and at low"),
        pg.Text(72, 565.7, 11, "water, every day."),
        pg.Text(72, 551.4, 11, "\u2022 Correct for pressure."),
    ]
    out = pdf_to_text(pg.build_pdf([page]), "markdown", PdfLimits()).content
    assert out == (
        "Contents … 1\n\nMethod … 2\n\n"
        "The gauges are read by a short function, shown here in full:\n\n"
        "```\ndef tide(hour):\n    return hour % 12.42\n\nprint(tide(3))\n```\n\n"
        "- Read at high water and at low water, every day.\n\n- Correct for pressure."
    )
    html = pdf_to_text(pg.build_pdf([page]), "html", PdfLimits()).content
    assert "<pre><code>def tide(hour):\n    return hour % 12.42" in html
    assert "<p>• Correct for pressure.</p>" in html


def test_running_headers_and_page_numbers_are_dropped() -> None:
    pages = [
        [
            pg.Text(72, 760, 9, "Tidal Survey - draft"),
            pg.Text(72, 600, 11, f"Body text of page {n}."),
            pg.Text(300, 30, 9, str(n)),
        ]
        for n in range(1, 5)
    ]
    # the title page's title is the running header's text, at another size: it stays
    pages[0].insert(0, pg.Text(72, 740, 24, "Tidal Survey - draft", bold=True))
    out = pdf_to_text(pg.build_pdf(pages), "markdown", PdfLimits()).content
    bodies = "\n\n".join(f"Body text of page {n}." for n in range(1, 5))
    assert out == f"# Tidal Survey - draft\n\n{bodies}"


def test_a_single_boxed_cell_is_text_not_a_table() -> None:
    box = [pg.Line(70, 700, 300, 700), pg.Line(70, 680, 300, 680)]
    box += [pg.Line(70, 700, 70, 680), pg.Line(300, 700, 300, 680)]
    page = [*box, pg.Text(74, 686, 11, "Note: readings are in metres.")]
    out = pdf_to_text(pg.build_pdf([page]), "markdown", PdfLimits()).content
    assert out == "Note: readings are in metres."


def test_scan_without_text_layer_is_empty_content() -> None:
    with pytest.raises(EmptyContent, match="no text layer") as info:
        pdf_to_text(pg.scanned_pdf(3), "markdown", PdfLimits())
    assert "OCR is not available" in info.value.message and "3 page" in info.value.message


def test_limits_are_too_large_before_reading() -> None:
    body = pg.report_pdf(5)
    with pytest.raises(TooLarge, match="5 pages, over the limit of 4"):
        pdf_to_text(body, "markdown", PdfLimits(max_pages=4))
    with pytest.raises(TooLarge, match="SCRAPE_PDF_MAX_BYTES"):
        pdf_to_text(body, "markdown", PdfLimits(max_bytes=len(body) - 1))
    assert pdf_to_text(body, "markdown", PdfLimits(max_pages=5, max_bytes=len(body))).pages == 5


def test_compressed_streams_convert_and_a_zip_bomb_is_too_large() -> None:
    ops = [pg.Text(72, 700, 11, "Compressed words on a compressed page.")]
    small = pg.build_pdf([ops], flate=True, pad=100_000)
    out = pdf_to_text(small, "markdown", PdfLimits(max_inflated_bytes=1024 * 1024))
    assert out.content == "Compressed words on a compressed page."
    bomb = pg.build_pdf([ops, ops], flate=True, pad=3 * 1024 * 1024)
    assert len(bomb) < 20_000
    with pytest.raises(TooLarge, match="inflate to more than 4194304 bytes"):
        pdf_to_text(bomb, "markdown", PdfLimits(max_inflated_bytes=4 * 1024 * 1024))
    # the allowance is per conversion: the next one starts afresh, and a big one passes
    assert pdf_to_text(bomb, "markdown", PdfLimits(max_inflated_bytes=8 * 1024 * 1024)).pages == 2


def test_deadline_is_checked_between_pages() -> None:
    with pytest.raises(FetchTimeout, match="converting the PDF"):
        pdf_to_text(pg.report_pdf(2), "markdown", PdfLimits(deadline=time.monotonic() - 1))


@pytest.mark.parametrize(
    "body",
    [
        b"%PDF-1.7\nthis is not a PDF at all\n%%EOF\n",
        pg.report_pdf(2)[:400],  # cut off mid-file
        b"%PDF-1.4\n" + bytes(range(256)) * 40,
    ],
)
def test_damaged_files_are_unsupported_content(body: bytes) -> None:
    with pytest.raises((UnsupportedContent, EmptyContent)) as info:
        pdf_to_text(body, "markdown", PdfLimits())
    assert "PDF" in info.value.message


def test_password_protected_pdf_says_so() -> None:
    with pytest.raises(UnsupportedContent, match="encrypted with a password"):
        pdf_to_text(
            pg.build_pdf([[pg.Text(72, 700, 11, "secret")]], locked=True), "text", PdfLimits()
        )


def test_sniffing() -> None:
    assert looks_like_pdf(b"%PDF-1.4\n...")
    assert looks_like_pdf(b"\r\n junk before %PDF-1.7")
    assert not looks_like_pdf(b"<html>%PDF</html>")


def test_bounded_zlib_behaves_like_zlib() -> None:
    bounded = pdf_inflate._BoundedZlib()
    data = zlib.compress(b"tide " * 1000)
    assert bounded.decompress(data) == b"tide " * 1000  # no allowance: plain zlib
    with pdf_inflate.inflate_allowance(10_000):
        assert bounded.decompress(data) == b"tide " * 1000
        with pytest.raises(zlib.error):
            bounded.decompress(data[:-8])  # cut stream: the error pdfminer expects
        with pytest.raises(pdf_inflate.InflateLimitExceeded):
            bounded.decompress(data)  # 15,000 bytes charged in this allowance by now
    wrapped = RuntimeError(ValueError("x"))
    wrapped.__cause__ = pdf_inflate.InflateLimitExceeded()
    assert pdf_inflate.hit_limit(RuntimeError(wrapped)) and not pdf_inflate.hit_limit(
        wrapped.args[0]
    )
