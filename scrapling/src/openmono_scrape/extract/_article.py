"""Article furniture trimming: the short lines around a story that are not the story.

trafilatura's article container often carries the page's furniture along with the text: a
reading-time line ("6 min read") and a dateline above the story, script placeholders ("Loading
paragraph..."), "Advertisement" slots between paragraphs, "Share this post" labels, newsletter
boxes (call, thanks, consent line), a table of contents that only links to the article's own
headings and an "About the author" box after the story. Each rule matches a whole short block
only (a few words), so a sentence that merely starts the same way is text and stays.
Image credits were tried and left alone: the wcxb truth keeps them about as often as not.
"""

from __future__ import annotations

import re
from typing import Any

from ._dom import drop_element, short_text, text_of

# A furniture line is short; anything longer is a sentence of the article.
MAX_FURNITURE_WORDS = 8

_FURNITURE = re.compile(
    r"^\W*(?:"
    # reading time, alone or after a date / byline: "Jun 8, 2023 • 11 Minute Read"
    r".{0,60}\b\d+\s*(?:min(?:ute)?s?|mins?)\.?\s+read\W*"
    # placeholders a script fills in
    r"|loading(?: paragraph| image| content)?\s*(?:\.\.\.|…)"
    # ad slots
    r"|advertisement(?:\s*[-–—:]\s*(?:page|story|article) continues below)?"
    r"|(?:story|article) continues below(?: advertisement)?"
    # share labels
    r"|share (?:this|the) (?:post|article|story|page|content)"
    # a table of contents label
    r"|(?:table of )?contents|in this (?:article|post|guide)|jump to"
    r")\W*$",
    re.I,
)
# A newsletter box: its call, its thanks and its consent line (one or two sentences each).
_NEWSLETTER = re.compile(
    r"^\W*(?:(?:sign up|subscribe|join|get)\b.{0,40}\bnewsletters?\b"
    r"|thanks? (?:you )?for (?:subscribing|signing up)\b[^.!]{0,60}[.!]?\W*(?:look out|check)?"
    r"|by (?:entering|submitting|signing up|clicking|providing)\b.{0,120}\b(?:agree|consent)\b"
    r".{0,200}\b(?:terms|privacy))",
    re.I,
)
MAX_NEWSLETTER_WORDS = 40
_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
_DATE = (
    rf"(?:{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH},?\s+\d{{4}}"
    r"|\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}/\d{1,2}/\d{2,4})"
    r"(?:,?\s*(?:at\s+)?\d{1,2}:\d{2}(?:\s*[ap]\.?m\.?)?)?"
)
_DATE_LABEL = r"(?:(?:last\s+)?(?:updated|published|posted|modified)(?:\s+(?:on|at))?\s*:?)"
# A dateline: "December 15, 2025", "Last updated on: April 21, 2025", "Published:", or a
# published and an updated date in one line.
_DATELINE = re.compile(
    rf"^\W*(?:{_DATE_LABEL}\s*(?:{_DATE})?|{_DATE})"
    rf"(?:\s*[-–—|•·/,]*\s*(?:{_DATE_LABEL}\s*)?{_DATE})*\W*$",
    re.I,
)
# Datelines are furniture only before the story starts: a dated entry further down is text.
MIN_STORY_WORDS = 20
_TOC_LABEL = re.compile(
    r"^\W*(?:(?:table of )?contents|in this (?:article|post|guide)|jump to"
    r"|on this page|what(?:'|’)?s inside)\W*$",
    re.I,
)
_ABOUT_AUTHOR = re.compile(
    r"^\W*about the (?:author|authors|writer|reviewer|expert|editor)s?\W*$", re.I
)
# An author box closes the story: looked for only in the second half of the text.
MIN_SHARE_BEFORE_BIO = 0.5
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_BLOCKS = ("p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "div", "blockquote")
_LISTS = ("ul", "ol")


def trim_article_furniture(body: Any) -> None:
    """Drop reading-time, placeholder, ad, credit, share and contents lines, in place."""
    _drop_anchor_tables_of_contents(body)
    _drop_leading_datelines(body)
    _drop_author_boxes(body)
    # Blocks holding code, a table or a list are never furniture (and no furniture holds one).
    holders = {up for inner in body.iter("pre", "table", *_LISTS) for up in inner.iterancestors()}
    for element in list(body.iter(*_BLOCKS)):
        if element.getparent() is None or element in holders:
            continue
        # Furniture is short: a longer text need not be read to its end.
        text = short_text(element, max(MAX_FURNITURE_WORDS, MAX_NEWSLETTER_WORDS))
        if not text:
            continue
        words = len(text.split())
        furniture = words <= MAX_FURNITURE_WORDS and _FURNITURE.match(text)
        if furniture or (words <= MAX_NEWSLETTER_WORDS and _NEWSLETTER.match(text)):
            parent = element.getparent()
            drop_element(element)
            if parent.tag in _LISTS and not text_of(parent).strip():
                drop_element(parent)


def _drop_author_boxes(body: Any) -> None:
    """Drop an "About the author" label and what follows it up to the next heading."""
    total = len(text_of(body))
    for label in list(body.iter(*_HEADINGS, "p", "div", "strong", "b")):
        if label.getparent() is None or len(label) > 1:
            continue
        if not _ABOUT_AUTHOR.match(" ".join(text_of(label).split())):
            continue
        before = sum(len(text) for text in label.xpath("preceding::text()"))
        if before < MIN_SHARE_BEFORE_BIO * total:
            continue
        block = label
        while block.getparent() is not None and block.getparent() is not body:
            if len(" ".join(text_of(block.getparent()).split())) > len(text_of(label)) + 2:
                break
            block = block.getparent()
        for later in list(block.itersiblings()):
            if later.tag in _HEADINGS:
                break
            drop_element(later)
        drop_element(block)


def _drop_leading_datelines(body: Any) -> None:
    """Drop date-only lines (published, updated) above the first paragraph of the story."""
    for element in list(body.iter("p", "div", "li", "time", "span")):
        if element.getparent() is None:
            continue
        text = " ".join(text_of(element).split())
        if len(text.split()) >= MIN_STORY_WORDS:
            return
        if text and len(text.split()) <= MAX_FURNITURE_WORDS and _DATELINE.match(text):
            parent = element.getparent()
            drop_element(element)
            if parent.tag in _LISTS and not text_of(parent).strip():
                drop_element(parent)


def _drop_anchor_tables_of_contents(body: Any) -> None:
    """Drop a "Contents" label and the list after it when each item is only a jump link.

    Both are needed: a "top picks" list of in-page links with a line of text each is content.
    """
    for lst in list(body.iter(*_LISTS)):
        label = lst.getprevious()
        if lst.getparent() is None or label is None:
            continue
        if not _TOC_LABEL.match(" ".join(text_of(label).split())):
            continue
        items = lst.xpath(".//li")
        if not items or not all(_is_jump_link(item) for item in items):
            continue
        drop_element(label)
        drop_element(lst)


def _is_jump_link(item: Any) -> bool:
    """Whether a list item is nothing but links to anchors on the same page (nested lists too)."""
    links = item.xpath(".//a")
    if not links or not all((link.get("href") or "").startswith("#") for link in links):
        return False
    own = " ".join(" ".join(text_of(link).split()) for link in links)
    return len(" ".join(text_of(item).split())) <= len(own) + 3
