"""Text lines of a PDF to blocks (headings, paragraphs, tables), and blocks to markdown/text/html.

A PDF has no structure, only glyphs at positions; these rules recover the usual kind:
- body size = the font size that most characters have; a line at least 1.15 x that is a heading,
  the largest size `#`, the next `##`, down to `####`; a short bold line at body size that stands
  alone is a heading one level below the smallest sized one;
- consecutive lines form a paragraph until the vertical gap exceeds half a line height (or the
  kind of line changes); a hyphen at a line end before a lower-case letter joins the word;
- a line that repeats in the top or bottom tenth of most pages (a running header or footer) and a
  bare page number there are dropped;
- tables come from pdfplumber (ruled tables only) and sit where their top edge is.
Reading order is top to bottom per page: two-column layouts interleave their columns.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from dataclasses import dataclass, field

from openmono_contracts import ScrapeFormat

HEADING_RATIO = 1.15
MAX_HEADING_CHARS = 200
MAX_BOLD_HEADING_CHARS = 80
MAX_LEVEL = 4
_PAGE_NUMBER = re.compile(
    r"^(page\s*)?\d{1,4}(\s*(/|of)\s*\d{1,4})?$|^[-–]\s*\d{1,4}\s*[-–]$", re.I
)


@dataclass(frozen=True)
class Line:
    text: str
    top: float
    bottom: float
    x0: float
    size: float
    bold: bool
    chars: int


@dataclass(frozen=True)
class TableBlock:
    top: float
    rows: list[list[str]]


@dataclass
class PageLines:
    height: float
    lines: list[Line]
    tables: list[TableBlock] = field(default_factory=list)


@dataclass
class TextBlock:
    text: str
    level: int = 0  # 0 = paragraph, 1.. = heading level


Block = TextBlock | TableBlock


def _body_size(pages: list[PageLines]) -> float:
    sizes: Counter[float] = Counter()
    for page in pages:
        for line in page.lines:
            sizes[line.size] += line.chars
    return sizes.most_common(1)[0][0] if sizes else 0.0


def _in_margin(line: Line, height: float) -> bool:
    return line.top < height * 0.1 or line.bottom > height * 0.9


def _running_lines(pages: list[PageLines]) -> set[str]:
    """Texts that sit in the page margins on at least half of the pages (three or more)."""
    if len(pages) < 3:
        return set()
    seen: Counter[str] = Counter()
    for page in pages:
        seen.update({ln.text for ln in page.lines if _in_margin(ln, page.height)})
    return {text for text, n in seen.items() if n >= max(3, len(pages) / 2)}


def _join(lines: list[str]) -> str:
    out = ""
    for text in lines:
        if out.endswith("-") and text[:1].islower():
            out = out[:-1] + text
        else:
            out = f"{out} {text}" if out else text
    return out


def _levels(pages: list[PageLines], body: float) -> dict[float, int]:
    big = sorted(
        {ln.size for p in pages for ln in p.lines if ln.size >= body * HEADING_RATIO}, reverse=True
    )
    return {size: min(i + 1, MAX_LEVEL) for i, size in enumerate(big)}


def _level_of(line: Line, levels: dict[float, int], alone: bool) -> int:
    if len(line.text) > MAX_HEADING_CHARS:
        return 0
    if line.size in levels:
        return levels[line.size]
    if line.bold and alone and len(line.text) <= MAX_BOLD_HEADING_CHARS:
        return min(len(levels) + 1, MAX_LEVEL)
    return 0


def _without_furniture(page: PageLines, running: set[str]) -> PageLines:
    """The page without running headers/footers and page numbers in its margins."""
    lines = [
        ln
        for ln in page.lines
        if not (_in_margin(ln, page.height) and (ln.text in running or _PAGE_NUMBER.match(ln.text)))
    ]
    return PageLines(page.height, lines, page.tables)


def _page_blocks(page: PageLines, levels: dict[float, int]) -> list[Block]:
    lines = page.lines
    placed: list[tuple[float, Block]] = [(t.top, t) for t in page.tables]
    group: list[Line] = []
    group_level = -1

    def flush() -> None:
        if group:
            block = TextBlock(_join([ln.text for ln in group]), max(group_level, 0))
            placed.append((group[0].top, block))
            group.clear()

    for i, line in enumerate(lines):
        prev = lines[i - 1] if i else None
        nxt = lines[i + 1] if i + 1 < len(lines) else None
        height = max(line.bottom - line.top, 1.0)
        gap_before = prev is None or line.top - prev.bottom > height * 0.5
        gap_after = nxt is None or nxt.top - line.bottom > height * 0.5
        level = _level_of(line, levels, gap_before and gap_after)
        same_kind = bool(group) and level == group_level
        same_kind = same_kind and (level == 0 or line.size == group[-1].size)
        if group and (gap_before or not same_kind):
            flush()
        if not group:
            group_level = level
        group.append(line)
    flush()
    placed.sort(key=lambda item: item[0])
    return [block for _, block in placed]


def blocks_of(pages: list[PageLines]) -> list[Block]:
    """Every page's blocks in reading order (paragraphs do not continue across pages)."""
    running = _running_lines(pages)
    pages = [_without_furniture(page, running) for page in pages]
    levels = _levels(pages, _body_size(pages))
    return [block for page in pages for block in _page_blocks(page, levels)]


def _md_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|")


def _markdown(block: Block) -> str:
    if isinstance(block, TableBlock):
        width = max(len(r) for r in block.rows)
        rows = [[_md_cell(c) for c in r] + [""] * (width - len(r)) for r in block.rows]
        lines = ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * width]
        lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
        return "\n".join(lines)
    if block.level:
        return "#" * block.level + " " + block.text
    return block.text


def _text(block: Block) -> str:
    if isinstance(block, TableBlock):
        return "\n".join(" | ".join(r) for r in block.rows)
    return block.text


def _html(block: Block) -> str:
    if isinstance(block, TableBlock):
        head, *rest = block.rows
        out = ["<table>", "<tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in head) + "</tr>"]
        out += ["<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rest]
        return "\n".join([*out, "</table>"])
    tag = f"h{block.level}" if block.level else "p"
    return f"<{tag}>{html.escape(block.text)}</{tag}>"


def format_blocks(blocks: list[Block], fmt: ScrapeFormat) -> str:
    render = {"markdown": _markdown, "text": _text, "html": _html}[fmt]
    return "\n\n".join(render(b) for b in blocks).strip()
