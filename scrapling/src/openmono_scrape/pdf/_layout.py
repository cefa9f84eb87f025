"""Text lines of a PDF to blocks (headings, paragraphs, tables), and blocks to markdown/text/html.

A PDF has no structure, only glyphs at positions; these rules recover the usual kind:
- body size = the font size that most characters have; a line at least 1.15 x that is a heading,
  the largest size `#`, the next `##`, down to `####`; a short bold line at body size that stands
  alone is a heading one level below the smallest sized one;
- consecutive lines form a paragraph until the vertical gap exceeds half a line height (or the
  kind of line changes); a hyphen at a line end before a lower-case letter joins the word;
- a line that repeats in the top or bottom tenth of most pages (a running header or footer) and a
  bare page number there are dropped;
- tables come from pdfplumber (ruled tables only) and sit where their top edge is;
- lines wholly in a fixed-width font are code: kept line by line, indented by their offset,
  fenced in markdown; a bullet glyph starts a list item (`- `); a table-of-contents line (dot
  leaders, which become one `…`) stands alone.
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
BULLETS = ("•", "◦", "▪", "●", "■", "‣", "⁃")
_LEADER = re.compile(r"(?:\s?\.){4,}\s*")
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
    mono: bool = False  # every character in a fixed-width font


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
    level: int = 0  # 0 = paragraph (or code), 1.. = heading level
    code: bool = False


Block = TextBlock | TableBlock


def _body_size(pages: list[PageLines]) -> float:
    sizes: Counter[float] = Counter()
    for page in pages:
        for line in page.lines:
            sizes[line.size] += line.chars
    return sizes.most_common(1)[0][0] if sizes else 0.0


def _in_margin(line: Line, height: float) -> bool:
    return line.top < height * 0.1 or line.bottom > height * 0.9


def _running_lines(pages: list[PageLines]) -> dict[str, float]:
    """Texts in the page margins on at least half of the pages (three or more), with the size
    they usually have there: the same words at another size (the title on the title page) stay.
    """
    if len(pages) < 3:
        return {}
    seen: Counter[str] = Counter()
    sizes: dict[str, Counter[float]] = {}
    for page in pages:
        margin = [ln for ln in page.lines if _in_margin(ln, page.height)]
        seen.update({ln.text for ln in margin})
        for ln in margin:
            sizes.setdefault(ln.text, Counter())[ln.size] += 1
    return {
        text: sizes[text].most_common(1)[0][0]
        for text, n in seen.items()
        if n >= max(3, len(pages) / 2)
    }


def _join(lines: list[str]) -> str:
    out = ""
    for text in lines:
        if out.endswith("-") and text[:1].islower():
            out = out[:-1] + text
        else:
            out = f"{out} {text}" if out else text
    return out


def _code(lines: list[Line]) -> str:
    """Lines as they stand, indented by their offset in (estimated) character widths, with a
    blank line where the gap is one."""
    left = min(ln.x0 for ln in lines)
    out: list[str] = []
    for prev, ln in zip([None, *lines], lines, strict=False):
        if prev is not None and ln.top - prev.bottom > (prev.bottom - prev.top) * 0.8:
            out.append("")  # the blank line the gap stands for
        width = max(ln.size * 0.6, 1.0)  # fixed-width fonts are ~0.6 em wide
        out.append(" " * round((ln.x0 - left) / width) + ln.text)
    return "\n".join(out)


def _levels(pages: list[PageLines], body: float) -> dict[float, int]:
    big = sorted(
        {
            ln.size
            for p in pages
            for ln in p.lines
            if ln.size >= body * HEADING_RATIO and not ln.mono
        },
        reverse=True,
    )
    return {size: min(i + 1, MAX_LEVEL) for i, size in enumerate(big)}


def _level_of(line: Line, levels: dict[float, int], alone: bool) -> int:
    if len(line.text) > MAX_HEADING_CHARS or line.mono or _LEADER.search(line.text):
        return 0
    if line.size in levels:
        return levels[line.size]
    if line.bold and alone and len(line.text) <= MAX_BOLD_HEADING_CHARS:
        return min(len(levels) + 1, MAX_LEVEL)
    return 0


def _without_furniture(page: PageLines, running: dict[str, float]) -> PageLines:
    """The page without running headers/footers and page numbers in its margins."""

    def furniture(ln: Line) -> bool:
        if not _in_margin(ln, page.height):
            return False
        return running.get(ln.text) == ln.size or bool(_PAGE_NUMBER.match(ln.text))

    return PageLines(page.height, [ln for ln in page.lines if not furniture(ln)], page.tables)


def _kind(line: Line, level: int) -> tuple[str, float]:
    if line.mono:
        return ("code", 0.0)
    if level:
        return ("heading", line.size)
    return ("text", 0.0)


def _page_blocks(page: PageLines, levels: dict[float, int]) -> list[Block]:
    lines = page.lines
    placed: list[tuple[float, Block]] = [(t.top, t) for t in page.tables]
    group: list[Line] = []
    group_level = 0
    group_kind = ("", 0.0)
    group_alone = False

    def flush() -> None:
        if not group:
            return
        if group_kind[0] == "code":
            block = TextBlock(_code(group), code=True)
        else:
            block = TextBlock(_join([ln.text for ln in group]), group_level)
        placed.append((group[0].top, block))
        group.clear()

    for i, line in enumerate(lines):
        prev = lines[i - 1] if i else None
        nxt = lines[i + 1] if i + 1 < len(lines) else None
        height = max(line.bottom - line.top, 1.0)
        gap = 2.0 if line.mono else 0.5  # code keeps going across one blank line
        gap_before = prev is None or line.top - prev.bottom > height * gap
        gap_after = nxt is None or nxt.top - line.bottom > height * 0.5
        level = _level_of(line, levels, gap_before and gap_after)
        kind = _kind(line, level)
        # a bullet starts an item; a table-of-contents line (dot leaders) stands alone
        alone = _LEADER.search(line.text) is not None and not line.mono
        starts = alone or line.text.startswith(BULLETS)
        if group and (gap_before or kind != group_kind or starts or group_alone):
            flush()
        if not group:
            group_level, group_kind, group_alone = level, kind, alone
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
    if block.code:
        return f"```\n{block.text}\n```"
    if block.level:
        return "#" * block.level + " " + block.text
    return _prose(block.text, "- ")


def _prose(text: str, bullet: str) -> str:
    """Dot leaders become one ellipsis; a leading bullet glyph becomes `bullet`."""
    text = _LEADER.sub(" … ", text).strip()
    return bullet + text[1:].lstrip() if text.startswith(BULLETS) else text


def _text(block: Block) -> str:
    if isinstance(block, TableBlock):
        return "\n".join(" | ".join(r) for r in block.rows)
    return block.text if block.code else _prose(block.text, "• ")


def _html(block: Block) -> str:
    if isinstance(block, TableBlock):
        head, *rest = block.rows
        out = ["<table>", "<tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in head) + "</tr>"]
        out += ["<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rest]
        return "\n".join([*out, "</table>"])
    if block.code:
        return f"<pre><code>{html.escape(block.text)}</code></pre>"
    tag = f"h{block.level}" if block.level else "p"
    return f"<{tag}>{html.escape(_prose(block.text, '• '))}</{tag}>"


def format_blocks(blocks: list[Block], fmt: ScrapeFormat) -> str:
    render = {"markdown": _markdown, "text": _text, "html": _html}[fmt]
    return "\n\n".join(render(b) for b in blocks).strip()
