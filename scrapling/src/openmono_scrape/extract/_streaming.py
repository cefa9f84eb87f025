"""Streamed server rendering: put the late chunks of a page where its scripts would put them.

A page rendered with React's streaming (Next.js and others) sends a placeholder first, a
`<template id="B:0">` followed by a fallback ("Loading paragraph..."), and later in the document
the real content in `<div hidden id="S:0">`, which a small script swaps in. Without scripts the
reader's text sits in hidden divs at the end of the page and the visible body is placeholders,
so the hidden chunks are moved into their slots before anything else reads the tree.
"""

from __future__ import annotations

from typing import Any

from lxml import etree

from ._dom import drop_element, text_of

# Above this share of linked text a chunk is a carousel of cards, not the page's text.
MAX_LINK_SHARE = 0.5
_INLINE = ("span", "font", "small", "label")
# A fallback is a spinner or a "Loading ..." line; anything longer after a slot is content.
MAX_FALLBACK_WORDS = 8


def resolve_streamed_chunks(root: Any) -> None:
    """Move each `<div hidden id="S:n">` into its slot `<template id="B:n">` or "P:n", in place."""
    # "B:n" holds a boundary whose fallback follows it; "P:n" a postponed segment (no fallback).
    slots = {
        template.get("id")[2:]: template
        for template in root.iter("template")
        if (template.get("id") or "")[:2] in ("B:", "P:")
    }
    if not slots:
        return
    for chunk in list(root.iter("div")):
        chunk_id = chunk.get("id") or ""
        slot = slots.get(chunk_id[2:]) if chunk_id.startswith("S:") else None
        if slot is None or slot.getparent() is None or chunk.get("hidden") is None:
            continue
        if _mostly_links(chunk):
            continue  # a carousel of other pages' cards: left hidden, as before
        if _in_comment_container(slot):
            # Extractors drop a container named for comments wholesale; left at the end of the
            # page the chunk is still read as the block it is.
            continue
        if slot.get("id", "").startswith("B:"):
            _drop_fallback(slot)
        parent = slot.getparent()
        _unwrap_inline_ancestors(slot)
        index = parent.index(slot)
        children = list(chunk)
        if chunk.text and chunk.text.strip() and not children:
            continue  # text without markup: leave it (and the slot) as it is
        for offset, child in enumerate(children):
            parent.insert(index + offset, child)  # moves it out of the hidden chunk
        drop_element(slot)
        drop_element(chunk)


def _mostly_links(chunk: Any) -> bool:
    # Chunks are placed before scripts and styles are dropped: their text is not counted.
    text = len(_visible_text(chunk))
    linked = sum(len(_visible_text(link)) for link in chunk.iter("a"))
    return text > 0 and linked > MAX_LINK_SHARE * text


_VISIBLE_TEXT = etree.XPath(
    ".//text()[not(ancestor::script or ancestor::style or ancestor::noscript"
    " or ancestor::template)]"
)


def _visible_text(element: Any) -> str:
    return "".join("".join(str(run).split()) for run in _VISIBLE_TEXT(element))


def _in_comment_container(slot: Any) -> bool:
    return any(
        "comment" in f"{ancestor.get('class') or ''} {ancestor.get('id') or ''}".lower()
        for ancestor in slot.iterancestors()
    )


def _unwrap_inline_ancestors(slot: Any) -> None:
    """Make a span around a slot a div: the blocks moved in would otherwise sit in an inline
    element (a browser lays them out as blocks anyway), which makes trafilatura read the whole
    span as one run of inline text."""
    for ancestor in slot.iterancestors(*_INLINE):
        ancestor.tag = "div"


def _drop_fallback(slot: Any) -> None:
    """Remove the short element that stands in for the chunk right after its slot.

    React ends the fallback with a `<!--/$-->` comment, but the parser drops comments, so the
    fallback is recognised by its place and its size.
    """
    following = slot.getnext()
    if following is None or not isinstance(following.tag, str) or following.tag == "template":
        return
    if following.find(".//template") is not None:
        return  # it holds other slots: the page's own shell, not a spinner
    if len(text_of(following).split()) <= MAX_FALLBACK_WORDS:
        drop_element(following)
