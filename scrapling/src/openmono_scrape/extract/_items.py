"""Listings and untyped pages: the repeated items are the content, and selection drops most of them.

(A collection is not selected at all: its main region, grid included, is its content: `_region`.)

A product grid or an index of posts is a run of sibling elements of one shape (same tag and
class), each a short text with a link. To article-tuned selection each looks like a navigation
teaser, so it keeps the intro text and loses the items. Here the largest such run of the page
is found and, when the selected content lacks most of its text, appended as a list.

A run counts as items only outside navigation, header, footer and aside, and never when its
class names chrome (menus, filters and facets, breadcrumbs, pagination, sort controls): a
filter panel is a run of links too, and it is what a reader of the listing skips.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from lxml import etree

from ._dom import text_of

_CHROME = re.compile(
    r"nav|menu|footer|header|breadcrumb|filter|facet|refine|sort|pagination|pager|sidebar"
    r"|social|share|cookie|banner|modal|dropdown|megamenu|toolbar|tabs?\b|swatch|legal",
    re.I,
)
_CHROME_TAGS = frozenset({"nav", "header", "footer", "aside", "form", "select"})
MIN_ITEMS = 4
MIN_ITEM_WORDS = 2
MAX_ITEM_WORDS = 120
# Most items of a run carry a link (the item's own page).
MIN_LINKED_SHARE = 0.6
# The run is added when less than this share of its words is already in the selection.
MAX_PRESENT_SHARE = 0.5
MAX_ITEMS = 200
# An untyped page takes a run only with more words than the selection (0.5 was measured: no
# gain on the wcxb dev split, a loss on the article benchmark).
DOMINANT_SHARE = 1.0
_WORD = re.compile(r"\w+")


def _signature(element: Any) -> tuple[str, str]:
    return element.tag, " ".join(sorted((element.get("class") or "").split()))


def _in_chrome(element: Any) -> bool:
    for node in (element, *element.iterancestors()):
        if node.tag in _CHROME_TAGS:
            return True
        if node.tag not in ("body", "html") and _CHROME.search(
            f"{node.get('class', '')} {node.get('id', '')} {node.get('role', '')}"
        ):
            return True
    return False


def find_item_run(root: Any) -> list[Any]:
    """The page's largest run of item-shaped siblings, or an empty list."""
    body = root.find("body")
    if body is None:
        return []
    best: list[Any] = []
    best_words = 0
    for parent in body.iter():
        if not isinstance(parent.tag, str) or len(parent) < MIN_ITEMS:
            continue
        groups: dict[tuple[str, str], list[Any]] = defaultdict(list)
        for child in parent:
            if isinstance(child.tag, str):
                groups[_signature(child)].append(child)
        for run in groups.values():
            if len(run) < MIN_ITEMS:
                continue
            words = _run_words(run)
            if words > best_words and not _in_chrome(parent):
                best, best_words = run, words
    return best


def _run_words(run: list[Any]) -> int:
    total = linked = items = 0
    for element in run:
        count = len(text_of(element).split())
        if MIN_ITEM_WORDS <= count <= MAX_ITEM_WORDS:
            items += 1
            total += count
            linked += element.tag == "a" or element.find(".//a") is not None
    if items < MIN_ITEMS or linked < MIN_LINKED_SHARE * items:
        return 0
    return total


def add_missing_items(root: Any, body: Any, *, dominant: bool = False) -> None:
    """Append the item run of `root` to `body` when `body` lacks most of it.

    With `dominant`, only a run with more words than `body` already has is added.
    """
    run = find_item_run(root)
    if not run:
        return
    selected = _WORD.findall(text_of(body).lower())
    present = set(selected)
    words = _WORD.findall(" ".join(text_of(item) for item in run).lower())
    if not words or sum(word in present for word in words) / len(words) >= MAX_PRESENT_SHARE:
        return
    if dominant and len(words) <= DOMINANT_SHARE * len(selected):
        return
    listing = etree.Element("ul")
    for item in run[:MAX_ITEMS]:
        lines = [" ".join(line.split()) for line in _lines(item)]
        text = " · ".join(line for line in lines if line)
        if text:
            etree.SubElement(listing, "li").text = text
    if len(listing):
        body.append(listing)


def _lines(item: Any) -> list[str]:
    """The item's text, one entry per text node (name, price and blurb stay apart)."""
    return [str(text) for text in item.itertext()]
