"""How FileRead and FileWrite answer the model, wherever the file was read or written.

The worker's tools and the ACP client-fs path (the editor serves the file) both format through
here, so the model sees one wording: `cat -n` style numbered lines, long lines cut, and a footer
that says which `offset` continues; a write says Created or Overwrote, with lines and bytes.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["MAX_LINE_CHARS", "READ_DEFAULT_LIMIT", "read_page", "write_summary"]

READ_DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000


def _row(number: int, text: str) -> str:
    if len(text) > MAX_LINE_CHARS:
        text = text[:MAX_LINE_CHARS] + " … [line cut]"
    return f"{number:6d}\t{text}"


def read_page(
    window: Sequence[str],
    first: int,
    shown: str,
    *,
    total: int | None = None,
    more: bool = False,
    budget: int | None = None,
) -> tuple[str, int]:
    """`window` (the lines from line `first` on) numbered, and the last line number shown.

    Stops before `budget` bytes (at least one line is shown). The footer names the next `offset`
    when lines are left: up to `total` when the file's length is known, or when `more` says the
    source may hold more (an editor that returned as many lines as were asked).
    """
    if not window:
        return f"({shown} is empty)", first - 1
    out: list[str] = []
    used = 0
    last = first - 1
    for number, text in enumerate(window, start=first):
        row = _row(number, text)
        cost = len(row.encode("utf-8")) + 1
        if budget is not None and out and used + cost > budget:
            break
        out.append(row)
        used += cost
        last = number
    body = "\n".join(out)
    left = last < total if total is not None else more or last < first + len(window) - 1
    if left:
        of = f" of {total}" if total is not None else ""
        body += f"\n\n[{shown}: showing lines {first}-{last}{of}; continue with offset={last + 1}]"
    return body, last


def write_summary(shown: str, content: str, *, existed: bool, via: str = "") -> str:
    """`Created|Overwrote <path>[ via]` with the new content's line and byte counts."""
    size = len(content.encode("utf-8", errors="surrogateescape"))
    lines = content.count("\n") + (0 if content.endswith("\n") else 1) if content else 0
    verb = "Overwrote" if existed else "Created"
    where = f" {via}" if via else ""
    return f"{verb} {shown}{where} ({lines} lines, {size} bytes)"
