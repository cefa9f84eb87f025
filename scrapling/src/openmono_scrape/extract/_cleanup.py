"""Boilerplate trimming on the selected main content.

trafilatura keeps blocks that sit inside the article container but are not the article: "Related:
..." and "Read more: ..." teasers between paragraphs, a "You may also like" section at the end,
empty rules, and trailing "Comments" / "Tags" labels. Each rule is narrow (short blocks, or after
a real body of text only) so article text is not put at risk; a broader "paragraph that is
only a link" rule was measured and rejected (it cost recall).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from ._dom import drop_element, short_text, text_of

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
# A block that is only one of these labels introduces other stories: it and all after it go.
_MORE_STORIES = re.compile(
    r"^\W*(?:you (?:may|might) (?:also )?like|related(?: (?:posts?|articles?|stories|news))?"
    r"|more (?:stories|news|articles|from [\w .'-]+)|read (?:more|next)|recommended(?: for you)?"
    r"|most (?:read|popular)|trending(?: now)?|see also|other articles|more on this(?: topic)?"
    r"|você (?:também )?pode gostar|leia também|veja também|(?:posts|artigos) relacionados"
    r"|(?:también )?te puede interesar|artículos relacionados|potrebbe interessarti"
    r"|articoli correlati|leggi anche|vous aimerez aussi|(?:à )?lire aussi|articles similaires"
    r"|das könnte sie auch interessieren|mehr zum thema|weitere artikel|ähnliche artikel"
    r"|lesen sie auch)\W*$",
    re.I,
)
# ... but only after a real body of text, so the article itself is never cut short.
MIN_CHARS_BEFORE_CUT = 500
# A label is a few words ("More from Reuters"); a longer line that starts the same way is text.
MAX_LABEL_WORDS = 6
MIN_SHARE_BEFORE_CUT = 0.2
_RULE = re.compile(r"^[\s_*=\-–—~.·•]+$")
_BLOCKS = ("p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "div")
MAX_TEASER_WORDS = 30
_LEAVES = ("p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "td", "th", "dt", "dd", "blockquote")


def trim_boilerplate(body: Any, *, cut_more_stories: bool = True) -> None:
    """Drop teaser blocks, rules and trailing labels from the main content, in place.

    With `cut_more_stories`, a "You may also like" section and all after it go too: on an
    article that is other stories, but on documentation, a wiki or a shop page "See also" and
    "Recommended" sections are part of the page (measured on the wcxb dev split: off articles
    the cut cost documentation 0.006 and collections 0.010 of mean word F1, both id halves).
    """
    # Blocks holding code or a table are never trimmed (and nothing trimmed holds one).
    holders = {up for element in body.iter("pre", "table") for up in element.iterancestors()}
    for element in list(body.iter(*_BLOCKS)):
        if element.getparent() is None or element in holders:
            continue
        if len(element):
            # Only a teaser can go (an empty block or a rule with children stays), and a teaser
            # is short: a longer text need not be read to its end.
            text = short_text(element, MAX_TEASER_WORDS)
            if text is None:
                continue
        else:
            text = " ".join((element.text or "").split())
        if not text or _RULE.match(text):
            if element.tag != "div" and not len(element):
                drop_element(element)
            continue
        if _TEASER_LABEL.match(text):
            drop_element(element)
    if cut_more_stories:
        _cut_more_stories(body)
    _trim_tail(body)


def drop_unseen_text(body: Any, visible: Any) -> None:
    """Remove from `body` every run of text that appears nowhere in `visible`, in place.

    `body` was selected from the page as served; `visible` is the same page without the
    elements a reader never sees. Runs are compared without whitespace (trafilatura adds and
    trims spaces between elements); an element left with no text at all goes too.
    """
    seen = "".join(text_of(visible).split())
    # Code blocks were restored verbatim from the page's own (protected) markup.
    verbatim = {node for pre in body.iter("pre") for node in pre.iter()}
    for element in list(body.iter()):
        if not isinstance(element.tag, str) or element in verbatim:
            continue
        if element.text and "".join(element.text.split()) not in seen:
            element.text = None
        if element.tail and "".join(element.tail.split()) not in seen:
            element.tail = None
    for element in list(body.iter(*_LEAVES)):
        if element.getparent() is not None and not text_of(element).strip():
            drop_element(element)


def text_blocks(body: Any, blocks: tuple[str, ...]) -> Iterator[Any]:
    """The blocks of `body` in order: elements of a tag in `blocks` that hold no other (not an
    li of ps). Each is judged when its turn comes, so the caller may drop blocks on the way:
    one inside a block dropped meanwhile is skipped. `body` may sit in a page's tree.
    """
    top = body.getroottree().getroot()
    for block in list(body.iter(*blocks)):
        if block.getroottree().getroot() is not top:
            continue  # inside a block already dropped
        if next(block.iterdescendants(*blocks), None) is None:
            yield block


def drop_repeats(body: Any, blocks: tuple[str, ...], min_words: int) -> None:
    """Drop each block of `body` (`text_blocks`) whose text an earlier block said, in place.

    One of fewer than `min_words` words stays (short labels recur by chance).
    """
    seen: set[str] = set()
    for block in text_blocks(body, blocks):
        key = " ".join(text_of(block).split()).lower()
        if len(key.split()) < min_words:
            continue
        if key in seen:
            drop_element(block)
        else:
            seen.add(key)


def _cut_more_stories(body: Any) -> None:
    """Drop a trailing "You may also like" style section: its label and everything after it."""
    total = len(text_of(body))
    for label in body.iter("h2", "h3", "h4", "h5", "h6", "p", "div", "strong", "b"):
        if len(label) > 1:
            continue
        text = text_of(label)
        if len(text.split(None, MAX_LABEL_WORDS)) > MAX_LABEL_WORDS or not _MORE_STORIES.match(
            text
        ):
            continue
        if label.tag in ("strong", "b") and _inline_in_text(label):
            continue
        before = sum(len(text) for text in label.xpath("preceding::text()"))
        if before < max(MIN_CHARS_BEFORE_CUT, MIN_SHARE_BEFORE_CUT * total):
            continue
        node = label
        while node is not None and node is not body:
            for later in list(node.itersiblings()):
                drop_element(later)
            parent = node.getparent()
            if node is label:
                drop_element(node)
            node = parent
        return


def _inline_in_text(label: Any) -> bool:
    """Whether a bold label sits inside a line of other text (a phrase, not a section label)."""
    parent = label.getparent()
    if parent is None:
        return False
    return len(text_of(parent).split()) > len(text_of(label).split()) + 2


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
