"""PDFs through the real scrape service, served by a real HTTP server on 127.0.0.1.

The PDFs are written by hand (`tests.support.pdfgen`): a report with a title, headings,
paragraphs and a ruled table; a scan (images, no text layer); a long one for the limits; damaged
files. One service runs with small PDF limits so the limit paths are reached with small files.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from openmono_scrape.settings import ScrapeSettings

from tests.support import pdfgen
from tests.support.fixture_web import scrape_service
from tests.support.httpfake import FakeServer, Reply, Seen, serve
from tests.support.scrape_fixtures import err, ok, scrape

pytestmark = pytest.mark.integration

REPORT = pdfgen.report_pdf(2)
LONG = pdfgen.report_pdf(150)
BYTE_LIMIT = 400 * 1024  # over the long files below, so the page limit is what they meet
PAGE_LIMIT = 160
INFLATE_LIMIT = 2 * 1024 * 1024
BOMB = pdfgen.build_pdf([[pdfgen.Text(72, 700, 11, "boom")]], flate=True, pad=8 * 1024 * 1024)
DAMAGED = {
    "/garbage.pdf": b"%PDF-1.7\nnot really a PDF\n%%EOF\n",
    "/cut.pdf": REPORT[: len(REPORT) // 3],
}
HIDDEN = (
    "<html><head><title>Hid\u200bden</title></head><body><article><h1>Hidden characters</h1>"
    "<p>"
    + "Plain wo\u200brds with a \u202eflipped\u202c part and a jo\u2060ined one. "
    * 12
    + "</p>"
    "</article></body></html>"
)


def _site(req: Seen) -> Reply:
    pdf = "application/pdf"
    routes = {
        "/report.pdf": Reply(200, REPORT, pdf),
        "/download": Reply(200, REPORT, "application/octet-stream"),
        "/scan.pdf": Reply(200, pdfgen.scanned_pdf(2), pdf),
        "/long.pdf": Reply(200, LONG, pdf),
        "/many-pages.pdf": Reply(200, pdfgen.report_pdf(PAGE_LIMIT + 1), pdf),
        "/big.pdf": Reply(200, REPORT + b"%" + b"x" * BYTE_LIMIT + b"\n", pdf),
        "/bomb.pdf": Reply(200, BOMB, pdf),
        "/locked.pdf": Reply(
            200, pdfgen.build_pdf([[pdfgen.Text(72, 700, 11, "x")]], locked=True), pdf
        ),
        "/hidden": Reply(200, HIDDEN.encode(), "text/html; charset=utf-8"),
    }
    routes.update({path: Reply(200, body, pdf) for path, body in DAMAGED.items()})
    return routes.get(req.path, Reply(404, b"missing", "text/plain"))


@pytest.fixture(scope="module")
def site() -> Iterator[FakeServer]:
    with serve(_site) as server:
        yield server


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    env = {
        "SCRAPE_BROWSER_PATH": "",
        "SCRAPE_PDF_MAX_BYTES": str(BYTE_LIMIT),
        "SCRAPE_PDF_MAX_PAGES": str(PAGE_LIMIT),
        "SCRAPE_PDF_MAX_INFLATED_BYTES": str(INFLATE_LIMIT),
    }
    with scrape_service(tmp_path_factory.mktemp("svc"), env) as url:
        yield url


def test_text_pdf_becomes_markdown(svc: str, site: FakeServer) -> None:
    r = ok(scrape(svc, url=f"{site.url}/report.pdf"))
    assert (r.status, r.engine, r.format, r.truncated) == (200, "fetcher", "markdown", False)
    assert r.title == "Tidal Survey"
    assert r.content.startswith(
        "# Tidal Survey of the Western Approaches\n\n## Section 1: Observations\n\n"
        "Tide gauges along the coast"
    )
    assert "| Port | High water | Range (m) |\n| --- | --- | --- |\n| Brest | 04:12 | 6.1 |" in (
        r.content
    )
    assert "## Section 2: Observations" in r.content and r.content.count("## Method") == 2


def test_other_formats_sniffing_and_max_length(svc: str, site: FakeServer) -> None:
    text = ok(scrape(svc, url=f"{site.url}/report.pdf", format="text"))
    assert text.content.startswith("Tidal Survey of the Western Approaches\n\nSection 1")
    html = ok(scrape(svc, url=f"{site.url}/report.pdf", format="html"))
    assert html.content.startswith("<h1>Tidal Survey of the Western Approaches</h1>")
    sniffed = ok(scrape(svc, url=f"{site.url}/download"))  # octet-stream, %PDF- header
    assert sniffed.content.startswith("# Tidal Survey")
    cut = ok(scrape(svc, url=f"{site.url}/report.pdf", max_length=20))
    assert cut.truncated and cut.content == "# Tidal Survey of th"


def test_scan_is_empty_content_with_a_reason(svc: str, site: FakeServer) -> None:
    body = err(scrape(svc, url=f"{site.url}/scan.pdf"), 422, "EMPTY_CONTENT")
    assert "no text layer" in body.message and "OCR is not available" in body.message
    assert body.url == f"{site.url}/scan.pdf"


def test_over_the_limits_is_too_large(svc: str, site: FakeServer) -> None:
    pages = err(scrape(svc, url=f"{site.url}/many-pages.pdf"), 413, "TOO_LARGE")
    assert f"{PAGE_LIMIT + 1} pages" in pages.message and "SCRAPE_PDF_MAX_PAGES" in pages.message
    size = err(scrape(svc, url=f"{site.url}/big.pdf"), 413, "TOO_LARGE")
    assert "SCRAPE_PDF_MAX_BYTES" in size.message
    assert len(BOMB) < 50_000  # a small file that inflates to 8 MiB
    bomb = err(scrape(svc, url=f"{site.url}/bomb.pdf"), 413, "TOO_LARGE")
    assert "SCRAPE_PDF_MAX_INFLATED_BYTES" in bomb.message


@pytest.mark.parametrize("path", sorted(DAMAGED))
def test_damaged_pdf_is_a_clear_error(svc: str, site: FakeServer, path: str) -> None:
    body = err(scrape(svc, url=f"{site.url}{path}"), 415, "UNSUPPORTED_CONTENT")
    assert body.message == "the PDF could not be read: the file is damaged or not a PDF"
    assert body.retryable is False


def test_password_protected_pdf_says_so(svc: str, site: FakeServer) -> None:
    body = err(scrape(svc, url=f"{site.url}/locked.pdf"), 415, "UNSUPPORTED_CONTENT")
    assert body.message == "the PDF is encrypted with a password; it cannot be read"


def test_conversion_does_not_block_the_service(svc: str, site: FakeServer) -> None:
    """While a long PDF converts in its thread, the event loop still answers."""
    done: list[str] = []

    def long_scrape() -> None:
        r = ok(scrape(svc, url=f"{site.url}/long.pdf", max_length=200))
        assert r.truncated
        done.append("pdf")

    worker = threading.Thread(target=long_scrape)
    worker.start()
    try:
        while len([r for r in site.requests if r.path == "/long.pdf"]) == 0:
            worker.join(0.02)
        assert httpx.get(f"{svc}/health", timeout=10).json()["status"] == "ok"
        done.append("health")
    finally:
        worker.join(120)
    assert done == ["health", "pdf"]


def test_hidden_characters_never_reach_the_caller(svc: str, site: FakeServer) -> None:
    r = ok(scrape(svc, url=f"{site.url}/hidden"))
    assert r.title == "Hidden"
    assert "Plain words with a flipped part and a joined one." in r.content
    for char in ("\u200b", "\u202e", "\u202c", "\u2060"):
        assert char not in r.content


def test_the_service_is_still_healthy(svc: str, tmp_path: Path) -> None:
    assert httpx.get(f"{svc}/health", timeout=10).status_code == 200


@pytest.mark.slow
@pytest.mark.skipif(
    ScrapeSettings().browser_path is None, reason="no Chromium installed (apt-get install chromium)"
)
def test_render_true_still_reads_the_file(site: FakeServer, tmp_path: Path) -> None:
    """Chromium shows a PDF in its viewer; the service fetches the file itself instead."""
    with scrape_service(tmp_path) as browser_svc:
        r = ok(scrape(browser_svc, url=f"{site.url}/report.pdf", render=True))
    assert r.engine == "fetcher" and r.title == "Tidal Survey"
    assert r.content.startswith("# Tidal Survey of the Western Approaches")


def test_firecrawl_scrape_reads_a_pdf_with_the_same_limits(svc: str, site: FakeServer) -> None:
    def fc(path: str) -> httpx.Response:
        body = {"url": f"{site.url}{path}", "formats": ["markdown"], "maxAge": 0}
        return httpx.post(f"{svc}/firecrawl/v2/scrape", json=body, timeout=60)

    got = fc("/report.pdf")
    assert got.status_code == 200, got.text
    data = got.json()["data"]
    assert data["markdown"].startswith("# Tidal Survey")
    assert data["metadata"]["statusCode"] == 200
    # the service's PDF limits hold on this path too (150 pages: over the defaults, under these)
    assert fc("/long.pdf").status_code == 200
    over = fc("/many-pages.pdf")
    assert over.status_code == 413
    assert over.json()["success"] is False and "SCRAPE_PDF_MAX_PAGES" in over.json()["error"]
