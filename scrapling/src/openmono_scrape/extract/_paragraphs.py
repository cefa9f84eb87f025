"""Give bare text its paragraphs before main-content selection.

Many pages write article text straight into a `<div>`, separated by `<br><br>`. trafilatura's
precision mode drops the leading text of such a div when an inline element follows it (measured:
"The figures come from ... the weekly <em><a>Gazette</a></em>, which ..." loses everything before
the link). Wrapping each run of text and inline elements in a `<p>`, split at blocks and at double
line breaks, gives it the shape it handles well, and matches what a reader sees as paragraphs.

A container holding nothing but its own text (no child element) is already one block: off
documentation it is left as it is. On shop and article pages such leaf divs are mostly chrome
tiles ("Free shipping", "Why buy here"); made paragraphs they pull trafilatura's choice towards
the chrome (measured on the wcxb dev split, both id halves: products 0.625 to 0.634 and articles
0.938 to 0.939 mean word F1). In documentation they are notes and parameter descriptions, and
wrapping them keeps them (documentation 0.913 without, 0.916 with).
"""

from __future__ import annotations

from typing import Any

from lxml import etree

from ._markdown import BLOCK_TAGS

_CONTAINERS = ("body", "div", "section", "article", "main", "center")
# What XPath's normalize-space() strips (str.strip() would also strip a no-break space, text).
_BLANK = " \t\r\n"


def wrap_bare_text(root: Any, *, leaf_containers: bool = True) -> None:
    """Wrap text runs that sit directly in block containers into `<p>` elements, in place.

    Without `leaf_containers`, a container with no child element is left unwrapped.
    """
    for container in list(root.iter(*_CONTAINERS)):
        if (leaf_containers or len(container)) and _has_bare_text(container):
            _wrap_runs(container)


def _has_bare_text(container: Any) -> bool:
    """Whether non-blank text sits directly in `container` (its text or a child's tail)."""
    if container.text and container.text.strip(_BLANK):
        return True
    return any(child.tail and child.tail.strip(_BLANK) for child in container)


def _is_block(element: Any) -> bool:
    if not isinstance(element.tag, str) or element.tag in BLOCK_TAGS:
        return True
    # An inline element wrapping blocks (a card link around divs) cannot go inside a <p>.
    return any(True for _ in element.iterdescendants(*BLOCK_TAGS))


class _Runs:
    """Builds the new children of one container: blocks as they are, inline runs in `<p>`s."""

    def __init__(self, container: Any) -> None:
        self.container = container
        self.paragraph: Any = None

    def text(self, text: str | None) -> None:
        if not text:
            return
        if self.paragraph is None:
            if not text.strip():
                return
            self.paragraph = etree.SubElement(self.container, "p")
        if len(self.paragraph):
            last = self.paragraph[-1]
            last.tail = (last.tail or "") + text
        else:
            self.paragraph.text = (self.paragraph.text or "") + text

    def block(self, element: Any) -> None:
        self.paragraph = None
        self.container.append(element)

    def inline(self, element: Any) -> None:
        if element.tag == "br":
            if self.paragraph is None:
                return  # a break before any text shows nothing
            previous = self.paragraph[-1] if len(self.paragraph) else None
            if previous is not None and previous.tag == "br" and not (previous.tail or "").strip():
                # <br><br>: the paragraph ends here.
                self.paragraph.remove(previous)
                self.paragraph = None
                return
        if self.paragraph is None:
            self.paragraph = etree.SubElement(self.container, "p")
        self.paragraph.append(element)


def _wrap_runs(container: Any) -> None:
    leading = container.text
    children = list(container)
    container.text = None
    for child in children:
        container.remove(child)  # each child keeps its tail
    runs = _Runs(container)
    runs.text(leading)
    for child in children:
        tail, child.tail = child.tail, None
        if _is_block(child):
            runs.block(child)
        else:
            runs.inline(child)
        runs.text(tail)
