"""Articles split into chunks: bring back the chunks main-content selection left behind.

Some sites cut one article into several sibling containers with the same class (ads or embeds
between them, e.g. `div.article-body-component` repeated). trafilatura keeps the first and loses
the rest. The container holding most of the selected paragraphs names the chunk class when that
class says "article body" (or names a CMS's rich-text block); nearby elements (a common
ancestor at most three levels up) of that exact tag and class that carry real prose (several
sentences, few links) and whose paragraphs were not selected are added before or after the
selection, in page order.
"""

from __future__ import annotations

import re
from collections import Counter
from copy import deepcopy
from typing import Any

from ._code import CodeStore, restore_code_blocks
from ._dom import drop_element, text_of

# Only a class that names article text marks chunks (not "content" or a page-builder widget).
_ARTICLE_CLASS = re.compile(
    r"(?:article|story|post|entry)[_-]*(?:body|content|text|chunk)|rich[_-]?text", re.I
)
MAX_COMMON_ANCESTOR_LEVELS = 3
MIN_PARAGRAPH_CHARS = 60
MIN_CHUNK_CHARS = 150
MAX_LINK_SHARE = 0.3
_DROP_IN_CHUNKS = ("aside", "figure", "nav", "form", "footer", "header", "button", "img")
_KEEP_ATTRIBUTES = {"a": ("href",), "code": ("class",), "td": ("colspan",), "th": ("colspan",)}


def _norm(text: str) -> str:
    return " ".join(text.split())


def add_missing_chunks(root: Any, selected: Any, store: CodeStore) -> None:
    """Add to `selected` (an HTML `<body>`) the sibling chunks of its article found in `root`."""
    chosen = {t for p in selected.iter("p") if len(t := _norm(text_of(p))) >= MIN_PARAGRAPH_CHARS}
    if not chosen:
        return
    # Collapsing whitespace only shortens a text: a shorter paragraph is none of the chosen.
    parents = Counter(
        p.getparent()
        for p in root.iter("p")
        if p.getparent() is not None
        and len(raw := text_of(p)) >= MIN_PARAGRAPH_CHARS
        and _norm(raw) in chosen
    )
    if not parents:
        return
    home = parents.most_common(1)[0][0]
    chunk_class = home.get("class")
    if not chunk_class or not _ARTICLE_CLASS.search(chunk_class):
        return
    # Chunks of one article live close together; comments or bios reusing a class do not.
    near = list(home.iterancestors())[:MAX_COMMON_ANCESTOR_LEVELS]
    before: list[Any] = []
    after: list[Any] = []
    seen_home = False
    for element in root.iter(home.tag):
        if element.get("class") != chunk_class:
            continue
        if element in parents:
            seen_home = True
            continue
        ancestors = list(element.iterancestors())
        if any(ancestor in parents for ancestor in ancestors):
            continue
        if not any(ancestor in near for ancestor in ancestors):
            continue
        if _is_missing_prose(element, chosen):
            (after if seen_home else before).append(element)
    for index, element in enumerate(before):
        selected.insert(index, clean_copy(element, store))
    for element in after:
        selected.append(clean_copy(element, store))


def _is_missing_prose(element: Any, chosen: set[str]) -> bool:
    paragraphs = [_norm(text_of(p)) for p in element.iter("p")]
    prose = [t for t in paragraphs if len(t) >= MIN_PARAGRAPH_CHARS]
    if sum(map(len, prose)) < MIN_CHUNK_CHARS or any(t in chosen for t in prose):
        return False
    total = len(_norm(text_of(element)))
    linked = sum(len(_norm(text_of(a))) for a in element.iter("a"))
    return total > 0 and linked / total <= MAX_LINK_SHARE


def clean_copy(
    element: Any,
    store: CodeStore,
    drop_tags: tuple[str, ...] = _DROP_IN_CHUNKS,
    drop_class: re.Pattern[str] | None = None,
) -> Any:
    """A `<div>` copy of `element` for the selection: code restored, `drop_tags` (and elements
    whose class matches `drop_class`) removed, only the attributes the renderer reads kept."""
    copy = deepcopy(element)
    copy.tail = None
    restore_code_blocks(copy, store)
    for node in list(copy.iter(*drop_tags)):
        drop_element(node)
    if drop_class is not None:
        for node in list(copy.iter()):
            if isinstance(node.tag, str) and drop_class.search(node.get("class", "")):
                drop_element(node)
    for node in copy.iter():
        if not isinstance(node.tag, str):
            continue
        names = _KEEP_ATTRIBUTES.get(node.tag, ())
        keep = {name: node.get(name) for name in names if node.get(name)}
        node.attrib.clear()
        node.attrib.update(keep)
    copy.tag = "div"
    return copy
