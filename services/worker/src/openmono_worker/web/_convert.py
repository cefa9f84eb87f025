"""HTML to text for the fetch fallback: main content as markdown (trafilatura), else plain text.

The scrape service does this better (engines, escalation, its own extractor); the fallback only
needs readable text, so it uses trafilatura directly and strips tags when trafilatura finds no
main content. Plain text and JSON pass through untouched.
"""

from __future__ import annotations

import html as html_lib
import re
from html.parser import HTMLParser

_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_SKIP = frozenset({"script", "style", "noscript", "template", "svg", "head"})
_BLOCK = frozenset(
    {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "section", "article"}
)
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})


def looks_like_html(text: str) -> bool:
    """For answers without a content type: an HTML document starts like one."""
    head = text[:1024].lstrip().lower()
    return head.startswith(("<!doctype html", "<html")) or "<html" in head


def title_of(page: str) -> str | None:
    match = _TITLE.search(page)
    if not match:
        return None
    text = " ".join(html_lib.unescape(match.group(1)).split())
    return text or None


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIP:
            self._skip += 1
        elif tag in _BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP and self._skip:
            self._skip -= 1
        elif tag in _BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self._skip:
            self.parts.append(data)


def plain_text(page: str) -> str:
    """All visible text of an HTML page, one block per line."""
    parser = _Text()
    parser.feed(page)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.parts).splitlines())
    return "\n".join(line for line in lines if line)


def html_to_markdown(page: str, url: str) -> str:
    """Main content as markdown with absolute links; the whole text when none is found."""
    import trafilatura

    try:
        extracted = trafilatura.extract(
            page,
            url=url,
            output_format="markdown",
            include_links=True,
            include_tables=True,
            include_formatting=True,
            favor_recall=True,
        )
    except Exception:  # trafilatura raises assorted errors on odd markup; the text path remains
        extracted = None
    if isinstance(extracted, str) and extracted.strip():
        return extracted.strip()
    return plain_text(page)
