"""Tables: data tables as GFM pipe tables, layout tables as the blocks they hold.

A GFM table cannot hold lists, code blocks or other tables, and pages still use tables for layout;
those are rendered cell by cell as ordinary blocks so no text is lost or mangled.
"""

from __future__ import annotations

from typing import Any, Protocol


class Renderer(Protocol):
    """What a table needs of the renderer that meets it (`_markdown.Renderer`)."""

    markdown: bool

    def blocks(self, element: Any) -> list[str]: ...


_LAYOUT_MARKERS = ("table", "ul", "ol", "pre", "blockquote", "h1", "h2", "h3", "h4", "h5", "h6")
MAX_COLSPAN = 50


def table_rows(table: Any) -> list[Any]:
    """Rows in document order: direct ones and those inside thead/tbody/tfoot."""
    rows: list[Any] = []
    for child in table:
        if child.tag == "tr":
            rows.append(child)
        elif child.tag in ("thead", "tbody", "tfoot"):
            rows.extend(row for row in child if row.tag == "tr")
    return rows


def _is_layout(table: Any, rows: list[Any]) -> bool:
    if any(True for _ in table.iterdescendants(*_LAYOUT_MARKERS)):
        return True
    widths = [sum(1 for cell in row if cell.tag in ("td", "th")) for row in rows]
    return max(widths, default=0) <= 1


def render_table(renderer: Renderer, table: Any) -> list[str]:
    rows = table_rows(table)
    if not rows or _is_layout(table, rows):
        return renderer.blocks(table)
    grid: list[list[str]] = []
    for row in rows:
        cells: list[str] = []
        for cell in row:
            if cell.tag not in ("td", "th"):
                continue
            cells.append(_cell_text(renderer, cell))
            try:
                span = min(max(int(cell.get("colspan", "1")), 1), MAX_COLSPAN)
            except ValueError:
                span = 1
            cells.extend("" for _ in range(span - 1))
        if any(cells):
            grid.append(cells)
    if not grid:
        return []
    width = max(len(cells) for cells in grid)
    for cells in grid:
        cells.extend("" for _ in range(width - len(cells)))
    caption = table.find("caption")
    blocks = renderer.blocks(caption) if caption is not None else []
    if not renderer.markdown:
        blocks.append("\n".join("\t".join(cells).rstrip() for cells in grid))
        return blocks
    lines = [_row(grid[0]), _row(["---"] * width)]
    lines.extend(_row(cells) for cells in grid[1:])
    blocks.append("\n".join(lines))
    return blocks


def _cell_text(renderer: Renderer, cell: Any) -> str:
    text = " ".join(" ".join(block.split()) for block in renderer.blocks(cell))
    return text.replace("|", "\\|") if renderer.markdown else text


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"
