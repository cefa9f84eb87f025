"""Render an HTML tree as CommonMark/GFM markdown, or as the plain text a reader sees.

One walker serves both formats: block elements become blocks separated by a blank line, inline
content is collapsed the way a browser collapses whitespace. Code blocks are the exception and are
emitted verbatim in a fence long enough never to clash with the code. Text outside code is escaped
just enough that it cannot turn into markup by accident. Links are absolute; images are dropped
(their alt text and URLs add nothing an agent can read, and hurt extraction precision).
"""

from __future__ import annotations

import re
from typing import Any

from ._code import language_of, verbatim_text
from ._dom import text_of
from ._links import absolute_url
from ._tables import render_table

BLOCK_TAGS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details",
        "dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form",
        "h1", "h2", "h3", "h4", "h5", "h6", "header", "hgroup", "hr", "html", "legend", "li",
        "main", "menu", "nav", "ol", "p", "pre", "section", "summary", "table", "tbody", "td",
        "tfoot", "th", "thead", "tr", "ul",
    }
)  # fmt: skip
_HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_STRONG = frozenset({"b", "strong"})
_EMPHASIS = frozenset({"i", "em", "cite", "dfn"})
_INLINE_CODE = frozenset({"code", "kbd", "samp", "tt", "var"})
_STRIKE = frozenset({"del", "s", "strike"})

_SPACES = re.compile(r"[ \t\r\n\f\v\u00a0\u2000-\u200a\u202f\u205f\u3000]+")
_ESCAPE = re.compile(r"[\\*`\[\]]|(?<![^\W_])_|_(?![^\W_])|<(?=[A-Za-z/!?])|&(?=#?\w+;)")
# A paragraph line that would start a heading, quote, list or setext underline. Ordered-list
# numbers are escaped at their delimiter (`2024\. A year`): a backslash before a digit is literal.
_LINE_START = re.compile(r"^(?:#{1,6}(?=\s|$)|>|[-+](?=\s|$)|=+\s*$|~~~)")
_LINE_START_NUMBER = re.compile(r"^(\d{1,9})([.)])(?=\s|$)")


class Renderer:
    """Walks one tree; `markdown=False` gives plain text with the same block layout."""

    def __init__(self, base_url: str, *, markdown: bool) -> None:
        self.base_url = base_url
        self.markdown = markdown
        self._block_holders: set[Any] = set()
        self._plain = 0  # > 0 while rendering inline content without emphasis marks
        self._urls: dict[str | None, str | None] = {}  # a page links the same target many times

    def render(self, root: Any) -> str:
        self._block_holders = _elements_holding_blocks(root)
        return "\n\n".join(self.blocks(root)).strip("\n")

    # -- blocks -------------------------------------------------------------------------------
    def blocks(self, element: Any) -> list[str]:
        """Render an element's children as a list of non-empty blocks."""
        out: list[str] = []
        inline: list[str] = []

        def flush() -> None:
            paragraph = self._paragraph("".join(inline))
            inline.clear()
            if paragraph:
                out.append(paragraph)

        if element.text:
            inline.append(self.text(element.text))
        for child in element:
            if isinstance(child.tag, str):
                if child.tag in BLOCK_TAGS or child in self._block_holders:
                    flush()
                    out.extend(self.block(child))
                else:
                    inline.append(self.inline(child))
            if child.tail:
                inline.append(self.text(child.tail))
        flush()
        return out

    def block(self, element: Any) -> list[str]:
        tag = element.tag
        if tag in _HEADINGS:
            text = _one_line(self.inner(element))
            if not text:
                return []
            return [f"{'#' * _HEADINGS[tag]} {text}" if self.markdown else text]
        if tag in ("ul", "ol", "menu", "dir"):
            return self._list(element, ordered=tag == "ol")
        if tag == "li":
            return self._list_items([element], ordered=False, start=1)
        if tag == "pre":
            return self._code_block(element)
        if tag == "blockquote":
            return self._quote(element)
        if tag == "table":
            return render_table(self, element)
        if tag == "hr":
            return ["---"] if self.markdown else []
        return self.blocks(element)

    def _paragraph(self, raw: str) -> str:
        lines = []
        for line in raw.split("\n"):
            line = _SPACES.sub(" ", line).strip()
            if not line:
                continue
            if self.markdown:
                line = _LINE_START.sub(_escaped, line, count=1)
                line = _LINE_START_NUMBER.sub(_escaped_delimiter, line, count=1)
            lines.append(line)
        return "\n".join(lines)

    def _list(self, element: Any, *, ordered: bool) -> list[str]:
        try:
            start = int(element.get("start", "1"))
        except ValueError:
            start = 1
        if (element.text or "").strip() or any((c.tail or "").strip() for c in element):
            return self.blocks(element)  # text loose in a list (invalid, but browsers show it)
        items = [child for child in element if isinstance(child.tag, str)]
        return self._list_items(items, ordered=ordered, start=start)

    def _list_items(self, items: list[Any], *, ordered: bool, start: int) -> list[str]:
        rendered: list[str] = []
        number = start
        for item in items:
            if item.tag in ("ul", "ol") and rendered:
                # A list directly inside a list (invalid but common) belongs to the item above it.
                nested = "\n".join(self.block(item))
                if nested:
                    rendered[-1] += "\n" + _indent(nested, "  ")
                continue
            body = "\n".join(self.blocks(item) if item.tag == "li" else self.block(item))
            if not body.strip():
                continue
            marker = f"{number}." if ordered else "-"
            number += 1
            first, _, rest = body.partition("\n")
            entry = f"{marker} {first}"
            if rest:
                entry += "\n" + _indent(rest, " " * (len(marker) + 1))
            rendered.append(entry)
        return ["\n".join(rendered)] if rendered else []

    def _code_block(self, pre: Any) -> list[str]:
        text = verbatim_text(pre)
        if not text.strip():
            return []
        if not self.markdown:
            return [text]
        return [fenced(text, language_of(pre))]

    def _quote(self, element: Any) -> list[str]:
        body = "\n\n".join(self.blocks(element))
        if not body:
            return []
        if not self.markdown:
            return [body]
        return ["\n".join(f"> {line}" if line else ">" for line in body.split("\n"))]

    # -- inline -------------------------------------------------------------------------------
    def inner(self, element: Any) -> str:
        """The inline rendering of an element's content (children and their tails)."""
        parts = [self.text(element.text)] if element.text else []
        for child in element:
            if isinstance(child.tag, str):
                part = self.inline(child)
                if child.tag in BLOCK_TAGS and part:
                    part = f" {part} "
                elif part.startswith(("*", "~~")) and parts and _ends_with_mark(parts[-1]):
                    # Two emphasis runs back to back ("*a**b*") do not parse: keep the text plain.
                    self._plain += 1
                    part = self.inline(child)
                    self._plain -= 1
                parts.append(part)
            if child.tail:
                parts.append(self.text(child.tail))
        return "".join(parts)

    def inline(self, element: Any) -> str:
        tag = element.tag
        if tag == "br":
            return "\n"
        if tag == "img":
            return ""  # images carry no text a reader could use; their URLs are noise here
        if tag == "a":
            return self._link(element)
        if tag in _INLINE_CODE:
            return self._inline_code(element)
        content = self.inner(element)
        if not self.markdown or self._plain:
            return content
        if tag in _STRONG:
            return _wrap(content, "**")
        if tag in _EMPHASIS:
            return _wrap(content, "*")
        if tag in _STRIKE:
            return _wrap(content, "~~")
        return content

    def text(self, raw: str) -> str:
        collapsed = _SPACES.sub(" ", raw)
        return _ESCAPE.sub(_escaped, collapsed) if self.markdown else collapsed

    def _link(self, element: Any) -> str:
        content = self.inner(element)
        target = element.get("href")
        if target in self._urls:
            href = self._urls[target]
        else:
            href = self._urls[target] = absolute_url(self.base_url, target)
        if not self.markdown or not href or not content.strip():
            return content
        # Spaces at the edges of the link text belong around the link, not inside the brackets.
        lead = " " if content[:1].isspace() else ""
        trail = " " if content[-1:].isspace() else ""
        return f"{lead}[{_one_line(content)}]({_md_url(href)}){trail}"

    def _inline_code(self, element: Any) -> str:
        code = _SPACES.sub(" ", text_of(element))
        if not code.strip():
            return code
        if not self.markdown:
            return code
        fence = "`"
        while fence in code:
            fence += "`"
        pad = " " if code.startswith("`") or code.endswith("`") else ""
        return f"{fence}{pad}{code}{pad}{fence}"


def fenced(text: str, language: str | None) -> str:
    """A fenced code block whose fence is longer than any backtick run inside."""
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{language or ''}\n{text}\n{fence}"


def _elements_holding_blocks(root: Any) -> set[Any]:
    """Inline elements (span, a, font...) that wrap block elements: rendered as containers."""
    holders: set[Any] = set()
    seen: set[Any] = set()
    for element in root.iter(*BLOCK_TAGS):
        for ancestor in element.iterancestors():
            if ancestor in seen:
                break
            seen.add(ancestor)
            if ancestor.tag not in BLOCK_TAGS:
                holders.add(ancestor)
    return holders


# Replacement functions, not templates: a template is looked up again on every call (a third
# of the renderer's regex time), a function only runs on a match, and matches are rare.
def _escaped(match: re.Match[str]) -> str:
    return "\\" + match[0]


def _escaped_delimiter(match: re.Match[str]) -> str:
    return f"{match[1]}\\{match[2]}"


def _wrap(content: str, mark: str) -> str:
    stripped = content.strip()
    if not stripped:
        return content
    lead = content[: len(content) - len(content.lstrip())]
    trail = content[len(content.rstrip()) :]
    return f"{lead}{mark}{stripped}{mark}{trail}"


def _ends_with_mark(text: str) -> bool:
    return text.endswith(("*", "~~")) and not text.endswith("\\*")


def _one_line(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line if line else "" for line in text.split("\n"))


def _md_url(url: str) -> str:
    return url.replace(" ", "%20").replace("(", "%28").replace(")", "%29")
