"""Minimal PDF files written by hand, for the scrape service's PDF tests and bench.

No PDF library writes them: each file is a catalog, a page tree, three standard Type 1 fonts
(Helvetica, Helvetica-Bold, Courier: every reader has their metrics), one content stream per
page and an exact cross-reference table. A page is a list of drawing operations:

    Text(x, y, size, "words", bold=False)   text at (x, y) in points from the bottom left
    Line(x0, y0, x1, y1)                    a stroked line (table rules)
    Image(x, y, w, h)                       a grey 8x8 image scaled to w x h (a "scan")
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

PAGE_W, PAGE_H = 612, 792  # US Letter, points


@dataclass(frozen=True)
class Text:
    x: float
    y: float
    size: float
    text: str
    bold: bool = False
    mono: bool = False  # Courier


@dataclass(frozen=True)
class Line:
    x0: float
    y0: float
    x1: float
    y1: float


@dataclass(frozen=True)
class Image:
    x: float
    y: float
    w: float
    h: float


Op = Text | Line | Image


def _pdf_string(text: str) -> bytes:
    raw = text.encode("cp1252")  # WinAnsiEncoding, the standard fonts' encoding here
    return b"(" + raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)") + b")"


def _content(ops: list[Op]) -> bytes:
    out: list[bytes] = []
    for op in ops:
        if isinstance(op, Text):
            font = b"/F3" if op.mono else b"/F2" if op.bold else b"/F1"
            out.append(
                b"BT %s %g Tf %g %g Td %s Tj ET" % (font, op.size, op.x, op.y, _pdf_string(op.text))
            )
        elif isinstance(op, Line):
            out.append(b"0.5 w %g %g m %g %g l S" % (op.x0, op.y0, op.x1, op.y1))
        else:
            out.append(b"q %g 0 0 %g %g %g cm /Im1 Do Q" % (op.w, op.h, op.x, op.y))
    return b"\n".join(out)


def _stream(dictionary: bytes, data: bytes, flate: bool = False) -> bytes:
    if flate:
        dictionary += b"/Filter/FlateDecode"
        data = zlib.compress(data, 9)
    return b"<<%s/Length %d>>stream\n%s\nendstream" % (dictionary, len(data), data)


def build_pdf(
    pages: list[list[Op]],
    title: str | None = None,
    *,
    flate: bool = False,
    pad: int = 0,
    locked: bool = False,
) -> bytes:
    """A complete PDF file with one page per list of operations.

    `flate` compresses the content streams; `pad` puts that many spaces (valid, meaningless
    content) before each page's operations: with `flate`, a small file that inflates large.
    `locked` adds a standard security handler (RC4, revision 2) whose user-password check no
    empty password passes: a reader needs a password it does not have.
    """
    n = len(pages)
    # 1 catalog, 2 page tree, 3-4 fonts, 5 image, 6 info, then (page, contents) pairs
    page_ids = [7 + 2 * i for i in range(n)]
    objects: dict[int, bytes] = {
        1: b"<</Type/Catalog/Pages 2 0 R>>",
        2: b"<</Type/Pages/Kids[%s]/Count %d>>" % (b" ".join(b"%d 0 R" % p for p in page_ids), n),
        3: b"<</Type/Font/Subtype/Type1/BaseFont/Helvetica/Encoding/WinAnsiEncoding>>",
        4: b"<</Type/Font/Subtype/Type1/BaseFont/Helvetica-Bold/Encoding/WinAnsiEncoding>>",
        5 + 2 * n + 2: b"<</Type/Font/Subtype/Type1/BaseFont/Courier/Encoding/WinAnsiEncoding>>",
        5: _stream(
            b"/Type/XObject/Subtype/Image/Width 8/Height 8/ColorSpace/DeviceGray"
            b"/BitsPerComponent 8",
            bytes((x * 29 + y * 13) % 256 for y in range(8) for x in range(8)),
        ),
        6: b"<</Title%s/Producer(tests.support.pdfgen)>>" % _pdf_string(title or ""),
    }
    for pid, ops in zip(page_ids, pages, strict=True):
        objects[pid] = (
            b"<</Type/Page/Parent 2 0 R/MediaBox[0 0 %d %d]"
            b"/Resources<</Font<</F1 3 0 R/F2 4 0 R/F3 %d 0 R>>/XObject<</Im1 5 0 R>>>>"
            b"/Contents %d 0 R>>" % (PAGE_W, PAGE_H, 5 + 2 * n + 2, pid + 1)
        )
        objects[pid + 1] = _stream(b"", b" " * pad + _content(ops), flate)
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets: dict[int, int] = {}
    for num in sorted(objects):
        offsets[num] = len(out)
        out += b"%d 0 obj\n%s\nendobj\n" % (num, objects[num])
    xref = len(out)
    size = max(objects) + 1
    out += b"xref\n0 %d\n0000000000 65535 f \n" % size
    for num in range(1, size):
        out += b"%010d 00000 n \n" % offsets[num]
    info = b"/Info 6 0 R" if title is not None else b""
    if locked:
        info += b"/Encrypt<</Filter/Standard/V 1/R 2/P -4/O<%s>/U<%s>>>/ID[<%s><%s>]" % (
            b"ab" * 32,
            b"cd" * 32,
            b"01" * 16,
            b"01" * 16,
        )
    out += b"trailer\n<</Size %d/Root 1 0 R%s>>\nstartxref\n%d\n%%%%EOF\n" % (size, info, xref)
    return bytes(out)


def table_ops(x: float, top: float, widths: list[float], rows: list[list[str]]) -> list[Op]:
    """A ruled table: every cell boxed by lines, its text inside (10 pt)."""
    row_h = 18.0
    right = x + sum(widths)
    bottom = top - row_h * len(rows)
    ops: list[Op] = [Line(x, top - row_h * i, right, top - row_h * i) for i in range(len(rows) + 1)]
    edges = [x]
    for w in widths:
        edges.append(edges[-1] + w)
    ops += [Line(e, top, e, bottom) for e in edges]
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            ops.append(Text(edges[c] + 4, top - row_h * (r + 1) + 5, 10, cell, bold=r == 0))
    return ops


def paragraph_ops(x: float, top: float, lines: list[str], size: float = 11) -> list[Op]:
    """Lines of body text, one below the other at 1.3 x the font size."""
    return [Text(x, top - i * size * 1.3, size, line) for i, line in enumerate(lines)]


def scanned_pdf(pages: int = 1) -> bytes:
    """Pages that hold only a full-page image: what a scanner without OCR produces."""
    return build_pdf([[Image(36, 36, PAGE_W - 72, PAGE_H - 72)] for _ in range(pages)])


def report_pdf(pages: int = 1) -> bytes:
    """A report: title, section headings, paragraphs and a ruled table on every page."""
    out: list[list[Op]] = []
    for p in range(pages):
        ops: list[Op] = []
        if p == 0:
            ops.append(Text(72, 720, 22, "Tidal Survey of the Western Approaches", bold=True))
        ops.append(Text(72, 680, 15, f"Section {p + 1}: Observations", bold=True))
        ops += paragraph_ops(
            72,
            655,
            [
                "Tide gauges along the coast were read every ten minutes for a lunar month.",
                "The readings were corrected for air pressure before the harmonic analysis,",
                f"which gave the constituents listed in table {p + 1} below.",
            ],
        )
        ops += paragraph_ops(
            72,
            600,
            [
                "Local effects are strongest in the shallow bays, where the quarter-diurnal",
                "constituents distort the curve and the flood runs longer than the ebb.",
            ],
        )
        ops += table_ops(
            72,
            550,
            [120, 90, 90],
            [
                ["Port", "High water", "Range (m)"],
                ["Brest", "04:12", "6.1"],
                ["Roscoff", "04:40", "7.9"],
            ],
        )
        ops.append(Text(72, 460, 15, "Method", bold=True))
        ops += paragraph_ops(
            72,
            435,
            ["Each constituent was fitted by least squares over the whole record."],
        )
        out.append(ops)
    return build_pdf(out, title="Tidal Survey")


_WORDS = [
    "tide", "gauge", "reading", "corrected", "harmonic", "constituent", "estuary", "flood", "ebb",
    "surge", "datum", "chart", "spring", "neap", "amplitude", "phase", "lunar", "solar", "shelf",
    "basin", "harbour", "survey", "record",
]  # fmt: skip


def dense_pdf(pages: int) -> bytes:
    """Pages as full as a typical report's: a heading, ~44 lines in four paragraphs, a table."""
    out: list[list[Op]] = []
    for p in range(pages):
        ops: list[Op] = [Text(72, 740, 15, f"Chapter {p + 1}", bold=True)]
        y = 715.0
        for para in range(4):
            lines = [
                " ".join(_WORDS[(p * 7 + para * 5 + i * 3 + k) % len(_WORDS)] for k in range(13))
                for i in range(11 if para < 3 else 8)
            ]
            ops += paragraph_ops(72, y, lines, size=10)
            y -= len(lines) * 13 + 10
        rows = [["Station", "Mean", "Max", "Min"]]
        rows += [
            [f"S{p}-{r}", f"{r * 1.1:.2f}", f"{r * 2.3:.2f}", f"{r * 0.4:.2f}"] for r in range(5)
        ]
        ops += table_ops(72, y - 6, [110, 80, 80, 80], rows)
        out.append(ops)
    return build_pdf(out, title="Dense report")
