"""PDF conversion speed: the scrape service's converter against plain text extraction.

    uv run python bench/pdf.py [--pages 40] [--rounds 3]

The document is hand-written (`tests.support.pdfgen.dense_pdf`): per page a heading, ~44 lines of
10 pt text in four paragraphs and a ruled 6 x 4 table, standard fonts. Timed, interleaved each
round so they share the machine's load:
- `openmono`: `openmono_scrape.pdf.pdf_to_text` to markdown (pdfplumber: lines, tables, layout);
- `pdfminer`: `pdfminer.high_level.extract_text`, the text alone from the same parser;
- `pdfium`: pypdfium2's text per page (C, no layout): the fastest baseline.
Prints the median seconds and pages/s per converter and the ratio against `pdfium`.
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # reuse the test support's PDF writer

import pypdfium2  # noqa: E402
from openmono_scrape.pdf import PdfLimits, pdf_to_text  # noqa: E402
from pdfminer.high_level import extract_text  # noqa: E402

from tests.support.pdfgen import dense_pdf  # noqa: E402


def _pdfium(data: bytes) -> str:
    doc = pypdfium2.PdfDocument(data)
    try:
        parts = []
        for page in doc:
            textpage = page.get_textpage()
            parts.append(textpage.get_text_range())
            textpage.close()
            page.close()
        return "\n".join(parts)
    finally:
        doc.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    data = dense_pdf(args.pages)
    converters: dict[str, Callable[[bytes], str]] = {
        "openmono": lambda d: pdf_to_text(d, "markdown", PdfLimits(max_pages=10_000)).content,
        "pdfminer": lambda d: extract_text(io.BytesIO(d)),
        "pdfium": _pdfium,
    }
    times: dict[str, list[float]] = {name: [] for name in converters}
    sizes: dict[str, int] = {}
    for _ in range(args.rounds):
        for name, convert in converters.items():
            start = time.perf_counter()
            sizes[name] = len(convert(data))
            times[name].append(time.perf_counter() - start)
    print(f"document: {args.pages} pages, {len(data)} bytes; {args.rounds} rounds")
    base = statistics.median(times["pdfium"])
    for name, values in times.items():
        med = statistics.median(values)
        print(
            f"{name:9s} median {med:7.3f} s  {args.pages / med:7.1f} pages/s  "
            f"x{med / base:6.1f} vs pdfium  ({sizes[name]} chars out)"
        )


if __name__ == "__main__":
    main()
