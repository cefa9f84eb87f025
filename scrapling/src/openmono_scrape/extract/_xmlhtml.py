"""trafilatura's XML back to plain HTML, with protected code blocks restored verbatim.

trafilatura's output vocabulary (head, list/item, hi, ref, graphic, quote, code, lb, row/cell) is
renamed to ordinary HTML so one renderer serves both the main content and the whole page, and
`format: html` returns a clean fragment. It also splits text written straight into a `<div>`
around inline elements; `rejoin_split_paragraphs` puts such sentences back together.
"""

from __future__ import annotations

import re
from typing import Any

from lxml import etree

from ._code import CodeBlock, CodeStore, strip_markers
from ._dom import text_of

_HI_TAGS = {"#b": "strong", "#i": "em", "#u": "u", "#t": "code", "#sub": "sub", "#sup": "sup"}
_SIMPLE = {"quote": "blockquote", "lb": "br", "del": "del", "row": "tr", "p": "p", "div": "div"}
_INLINE_TAGS = frozenset({"a", "em", "strong", "code", "u", "sub", "sup", "del", "span"})
_CONTINUATION = re.compile(r"^\s*(?:[a-z]|[.,;:)!?”’»…\-–—])")


def to_html(body: Any, store: CodeStore) -> Any:
    """Rename trafilatura's XML elements to HTML in place; restore protected code blocks."""
    for element in list(body.iter()):
        if not isinstance(element.tag, str):
            continue
        block = _protected_block(element, store) if store.blocks else None
        if block is not None:
            _replace_with_pre(element, block.text, block.language)
            continue
        _rename(element)
    if "⟦" in text_of(body):  # one C-level look first: most pages have no code blocks
        for element in body.iter():
            if element.text and "⟦" in element.text:
                element.text = strip_markers(element.text)
            if element.tail and "⟦" in element.tail:
                element.tail = strip_markers(element.tail)
    body.tag = "body"
    body.attrib.clear()
    return body


def _protected_block(element: Any, store: CodeStore) -> CodeBlock | None:
    """The code block whose marker this element carries, itself or as the lone child it wraps."""
    if element.tag not in ("code", "quote", "p"):
        return None
    if not (element.text or "").strip() and len(element) == 1 and element[0].tag == "code":
        return store.lookup(element[0].text)
    return store.lookup(element.text)


def _replace_with_pre(element: Any, text: str, language: str | None) -> None:
    tail = element.tail
    element.clear()
    element.tag = "pre"
    element.tail = tail
    code = etree.SubElement(element, "code")
    if language:
        code.set("class", f"language-{language}")
    code.text = text


def _rename(element: Any) -> None:
    tag = element.tag
    attrs = dict(element.attrib)
    element.attrib.clear()
    if tag == "head":
        rend = attrs.get("rend", "h3")
        element.tag = rend if rend in ("h1", "h2", "h3", "h4", "h5", "h6") else "h3"
    elif tag == "list":
        element.tag = attrs.get("rend", "ul") if attrs.get("rend") in ("ul", "ol", "dl") else "ul"
    elif tag == "item":
        rend = attrs.get("rend", "")
        element.tag = "dt" if rend.startswith("dt") else "dd" if rend.startswith("dd") else "li"
    elif tag == "hi":
        element.tag = _HI_TAGS.get(attrs.get("rend", "#i"), "em")
    elif tag == "ref":
        element.tag = "a"
        if attrs.get("target"):
            element.set("href", attrs["target"])
    elif tag == "graphic":
        element.tag = "img"
        for name in ("src", "alt", "title"):
            if attrs.get(name):
                element.set(name, attrs[name])
    elif tag == "cell":
        element.tag = "th" if attrs.get("role") == "head" else "td"
        if attrs.get("colspan"):
            element.set("colspan", attrs["colspan"])
    elif tag == "code":
        # A code element holding whole lines is a block; inside running text it is inline code.
        element.tag = "pre" if "\n" in (element.text or "") else "code"
    elif tag in _SIMPLE:
        element.tag = _SIMPLE[tag]
    elif tag == "table":
        pass
    else:
        element.tag = "div" if len(element) else "span"


def rejoin_split_paragraphs(body: Any) -> None:
    """Put back inline elements trafilatura left between two halves of one paragraph.

    Text written straight into a `<div>` comes out as `<p>…publication </p><em>Name</em><p>. A
    preview…</p>`. An inline element joins the paragraph before it unless that one ended a line,
    and the paragraph after it joins too when it visibly continues the sentence.
    """
    for container in [body, *body.iter("div", "blockquote", "li", "td", "th")]:
        for child in list(container):
            if child.tag not in _INLINE_TAGS or child.getparent() is not container:
                continue
            before = child.getprevious()
            if before is None or before.tag != "p" or _ends_line(before):
                continue
            before.append(child)
            after = before.getnext()
            if after is None or after.tag != "p" or (child.tail or "").strip():
                continue
            if not _CONTINUATION.match(after.text or ""):
                continue
            child.tail = (child.tail or "") + (after.text or "")
            for grandchild in list(after):
                before.append(grandchild)
            container.remove(after)


def _ends_line(paragraph: Any) -> bool:
    last = paragraph[-1].tail if len(paragraph) else paragraph.text
    return (last or "\n").rstrip(" \t").endswith("\n")
