"""PDF bytes to text: headings, paragraphs and ruled tables, in the caller's format.

pdfplumber (MIT, over pdfminer.six) reads the text layer: every character with its font, size
and position, and the ruled lines from which it finds tables. We chose it over pypdf (text only,
no positions worth building headings from) and pypdfium2 (fast plain text, but no tables, and
font sizes only character by character through its C API, which ran at 24 pages/s here against
pdfplumber's 6 on dense pages, before any table finding). The page limit bounds its slowness.

The layout rules (`_layout`) turn lines into blocks. Limits, each a clear error:
- over `max_bytes` or `max_pages`: `TOO_LARGE` (413), before any page is read; streams that
  inflate past `max_inflated_bytes` in all (`_inflate`): `TOO_LARGE` when it happens;
- past the request's deadline (checked between pages): `TIMEOUT` (504);
- not parseable, or encrypted with a password: `UNSUPPORTED_CONTENT` (415);
- no page with a text layer (a scan): `EMPTY_CONTENT` (422) saying so; there is no OCR here.

The conversion is CPU-bound and runs in a worker thread (`content.render_off_loop`).
"""

from __future__ import annotations

import io
import logging
import re
import time
from dataclasses import dataclass
from typing import Any

from openmono_contracts import ScrapeFormat

from openmono_scrape.errors import (
    EmptyContent,
    FetchTimeout,
    ScrapeError,
    TooLarge,
    UnsupportedContent,
)
from openmono_scrape.pdf._inflate import causes, hit_limit, inflate_allowance
from openmono_scrape.pdf._layout import (
    Line,
    PageLines,
    TableBlock,
    TextBlock,
    blocks_of,
    format_blocks,
)

log = logging.getLogger("openmono_scrape")

# Glyphs pdfminer cannot map to Unicode come out as "(cid:13)": noise to a reader.
_CID = re.compile(r"\(cid:\d+\)")
_BOLD = re.compile(r"bold|black|heavy|semibold|cmbx|sfbx")
# Fixed-width families, TeX's typewriter fonts (cmtt, sftt, lmmono) included.
_MONO = re.compile(r"mono|courier|consol|menlo|typewriter|cmtt|sftt|inconsolata|code")
PDF_TYPES = frozenset({"application/pdf", "application/x-pdf", "application/acrobat"})


@dataclass(frozen=True)
class PdfLimits:
    max_bytes: int = 10 * 1024 * 1024
    max_pages: int = 100
    max_inflated_bytes: int = 256 * 1024 * 1024
    deadline: float | None = None  # time.monotonic() value; None = no deadline


@dataclass(frozen=True)
class PdfText:
    content: str
    title: str | None
    pages: int


def looks_like_pdf(body: bytes) -> bool:
    """The PDF header, which readers accept anywhere in the first KiB."""
    return b"%PDF-" in body[:1024]


def _inside(obj: dict[str, Any], boxes: list[tuple[float, float, float, float]]) -> bool:
    cx = (float(obj["x0"]) + float(obj["x1"])) / 2
    cy = (float(obj["top"]) + float(obj["bottom"])) / 2
    return any(x0 <= cx <= x1 and top <= cy <= bottom for x0, top, x1, bottom in boxes)


def _cell(value: object) -> str:
    return " ".join(str(value).split()) if value is not None else ""


def _read_page(page: Any) -> PageLines:
    """The page's tables (ruled, at least 2 x 2) and the text lines outside them."""
    tables: list[TableBlock] = []
    boxes: list[tuple[float, float, float, float]] = []
    for table in page.find_tables():
        rows = [[_cell(c) for c in row] for row in table.extract()]
        rows = [row for row in rows if any(row)]
        if len(rows) >= 2 and max(len(r) for r in rows) >= 2:
            tables.append(TableBlock(top=float(table.bbox[1]), rows=rows))
            boxes.append(tuple(float(v) for v in table.bbox))  # type: ignore[arg-type]
    text_page = page
    if boxes:
        text_page = page.filter(lambda o: o.get("object_type") != "char" or not _inside(o, boxes))
    lines = []
    for raw in text_page.extract_text_lines(return_chars=True, strip=True, x_tolerance_ratio=0.15):
        chars = [c for c in raw["chars"] if str(c.get("text", "")).strip()]
        if not chars or not str(raw["text"]).strip():
            continue
        text = _CID.sub("", str(raw["text"])).strip()
        if not text:
            continue
        sizes = sorted(round(float(c["size"]) * 2) / 2 for c in chars)
        fonts = [_font_name(str(c.get("fontname", ""))) for c in chars]
        lines.append(
            Line(
                text=text,
                top=float(raw["top"]),
                bottom=float(raw["bottom"]),
                x0=float(raw["x0"]),
                size=sizes[len(sizes) // 2],
                bold=all(_BOLD.search(f) for f in fonts),
                chars=len(chars),
                mono=all(_MONO.search(f) for f in fonts),
            )
        )
    return PageLines(height=float(page.height), lines=lines, tables=tables)


def _font_name(fontname: str) -> str:
    return (fontname.partition("+")[2] or fontname).lower()  # subset prefix "ABCDEF+Font-Bold"


def _open(body: bytes) -> Any:
    # imported here: pdfplumber (and pdfminer) cost ~0.3 s to import, paid on the first PDF
    import pdfplumber

    return pdfplumber.open(io.BytesIO(body))


def _failure(exc: Exception, limits: PdfLimits) -> ScrapeError:
    """What a parser error means for the caller (the parser raises assorted types)."""
    if hit_limit(exc):
        return TooLarge(
            f"the PDF's streams inflate to more than {limits.max_inflated_bytes} bytes "
            "(SCRAPE_PDF_MAX_INFLATED_BYTES)"
        )
    text = " ".join(f"{type(e).__name__} {e}" for e in causes(exc)).lower()
    if "password" in text or "encrypt" in text:
        return UnsupportedContent("the PDF is encrypted with a password; it cannot be read")
    return UnsupportedContent("the PDF could not be read: the file is damaged or not a PDF")


def _read_all(body: bytes, limits: PdfLimits) -> tuple[list[PageLines], str]:
    """Every page's lines and tables, and the document's Title ("" when none)."""
    pdf = _open(body)
    try:
        count = len(pdf.pages)
        if count == 0:
            raise EmptyContent("the PDF has no pages")
        if count > limits.max_pages:
            raise TooLarge(
                f"the PDF has {count} pages, over the limit of {limits.max_pages} "
                "(SCRAPE_PDF_MAX_PAGES)"
            )
        pages = []
        for number, page in enumerate(pdf.pages, start=1):
            if limits.deadline is not None and time.monotonic() > limits.deadline:
                raise FetchTimeout(
                    f"the time budget ran out converting the PDF (page {number} of {count})",
                    retryable=False,
                )
            try:
                pages.append(_read_page(page))
            finally:
                page.close()  # frees its cached objects: memory stays per page, not per file
        meta = pdf.metadata
        return pages, _cell(meta.get("Title")) if isinstance(meta, dict) else ""
    finally:
        pdf.close()


def pdf_to_text(body: bytes, fmt: ScrapeFormat, limits: PdfLimits) -> PdfText:
    """Convert a whole PDF; raises TooLarge, FetchTimeout, UnsupportedContent or EmptyContent."""
    if len(body) > limits.max_bytes:
        raise TooLarge(
            f"the PDF is {len(body)} bytes, over the limit of {limits.max_bytes} "
            "(SCRAPE_PDF_MAX_BYTES)"
        )
    started = time.monotonic()
    try:
        with inflate_allowance(limits.max_inflated_bytes):
            pages, meta_title = _read_all(body, limits)
    except ScrapeError:
        raise
    except Exception as exc:  # a damaged or hostile file must cost one clear error
        raise _failure(exc, limits) from exc
    count = len(pages)
    if not any(p.lines or p.tables for p in pages):
        raise EmptyContent(
            f"the PDF's {count} page(s) have no text layer (scanned images?); "
            "OCR is not available in this service"
        )
    blocks = blocks_of(pages)
    content = format_blocks(blocks, fmt)
    heading = next((b.text for b in blocks if isinstance(b, TextBlock) and b.level), None)
    log.info("converted a PDF: %d pages in %.0f ms", count, (time.monotonic() - started) * 1000)
    return PdfText(content=content, title=meta_title or heading, pages=count)
