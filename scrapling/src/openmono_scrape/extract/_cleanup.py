"""Boilerplate trimming on the selected main content.

trafilatura keeps blocks that sit inside the article container but are not the article: "Related:
..." and "Read more: ..." teasers between paragraphs, empty rules, and trailing "Comments" /
"Tags" labels. Each rule is narrow (short blocks only) so article text is not put at risk; a
broader "paragraph that is only a link" rule was measured and rejected (it cost recall).
"""

from __future__ import annotations

import re
from typing import Any

from ._dom import drop_element, text_of

_TEASER_LABEL = re.compile(
    r"^\W*(?:related(?: (?:articles?|posts?|stories|coverage|content|reading))?"
    r"|read (?:more|also|next)|see (?:more|also)|also (?:read|on [\w.]+|see)"
    r"|more (?:from|on|coverage)|recommended"
    r"|leggi anche|lesen sie auch|lire aussi|leia também|veja também|lea también|ver también)"
    r"\s*(?:[:|»>\-–—]|$)",
    re.I,
)
_TRAILING_LABEL = re.compile(
    r"^\W*(?:\d+\s+)?(?:comments?|tags?|share(?: this)?(?: article| story)?|advertisement"
    r"|you may also like|related|print(?: article)?|filed under)\W*$",
    re.I,
)
_RULE = re.compile(r"^[\s_*=\-–—~.·•]+$")
_BLOCKS = ("p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "div")
MAX_TEASER_WORDS = 30


def trim_boilerplate(body: Any) -> None:
    """Drop teaser blocks, rules and trailing labels from the main content, in place."""
    for element in list(body.iter(*_BLOCKS)):
        if element.getparent() is None or len(element.xpath(".//pre|.//table")):
            continue
        text = " ".join(text_of(element).split())
        if not text or _RULE.match(text):
            if element.tag != "div" and not len(element):
                drop_element(element)
            continue
        if len(text.split()) <= MAX_TEASER_WORDS and _TEASER_LABEL.match(text):
            drop_element(element)
    _trim_tail(body)


def _trim_tail(body: Any) -> None:
    """Remove label-only blocks ("Comments", "Tags", a rule) at the very end."""
    while True:
        children = [child for child in body if isinstance(child.tag, str)]
        if len(children) < 2:
            return
        last = children[-1]
        text = " ".join(text_of(last).split())
        if last.tag == "pre" or not (_TRAILING_LABEL.match(text) or _RULE.match(text or "-")):
            return
        drop_element(last)
