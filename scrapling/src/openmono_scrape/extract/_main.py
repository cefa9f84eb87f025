"""Main-content selection: trafilatura picks the content, then we repair what it got wrong.

A shop's category page (detected "collection") is not selected at all: its content is the
page's main region (`_region`), which replaced trafilatura's selection on 131 of the wcxb dev
split's 134 pages detected so.

1. trafilatura in its balanced mode, on the page as served for products and forums (`_pagetype`),
   with comments on forums, and on the cleaned page for any other type (listings and untyped
   pages without their screen-reader-only text: `_region.drop_screen_reader_text`);
2. its XML goes back to plain HTML with verbatim code blocks (`_xmlhtml`); on a page read as
   served, text that is not in the cleaned page (hidden) is removed (`_cleanup.drop_unseen_text`);
3. article chunks it left behind come back (`_chunks`), split paragraphs are rejoined;
4. a leading heading that repeats the title is dropped (the title travels in its own field) and
   boilerplate is trimmed (`_cleanup`; a trailing "You may also like" section is cut on articles
   and untyped pages only: elsewhere "See also" and "Recommended" are part of the page); on
   articles the furniture lines around the story go too (reading time, ad slots, placeholders,
   a table of contents of jump links: `_article`);
5. by page type: listings and untyped pages (service pages, mostly) get back the item grid it
   dropped (`_items`),
   products the name, description and specs their JSON-LD states (`_jsonld`) and the
   label/value spec rows it dropped, once their review widgets, related-product rails, consent
   banners, script notices and repeated blocks are gone (`_product`; the widgets and banners go
   from collections too, before their region is taken: `drop_visible_chrome`),
   forums the whole thread when one post of it was kept, without signatures (`_forum`).
"""

from __future__ import annotations

from typing import Any

import trafilatura
from lxml import etree

from ._article import trim_article_furniture
from ._chunks import add_missing_chunks
from ._cleanup import drop_unseen_text, trim_boilerplate
from ._code import CodeStore
from ._dom import drop_element, text_of
from ._forum import complete_thread
from ._items import add_missing_items
from ._jsonld import add_product_facts
from ._pagetype import PageType
from ._product import (
    add_missing_specs,
    drop_product_chrome,
    drop_product_rails,
    drop_repeated_blocks,
    drop_widget_lines,
)
from ._region import drop_screen_reader_text
from ._title import repeats_title
from ._xmlhtml import rejoin_split_paragraphs, to_html

# A repeated headline is looked for among the first few elements only (after a kicker or a
# date line at most), never further down the article.
_HEADLINE_WINDOW = 3


# Off articles, when less than this share of the selection is text a reader sees, the selection
# was a hidden block and the cleaned page is read instead.
MIN_SEEN_SHARE = 0.5
# A shop's product and category pages: the same review widgets, rails and banners beside them.
_SHOP_TYPES: frozenset[PageType] = frozenset({"product", "collection"})
# The grid types: cards, whose screen-reader-only labels go before anything is chosen.
_GRID_TYPES: frozenset[PageType] = frozenset({"listing", "collection", "page"})


def drop_visible_chrome(root: Any, page_type: PageType) -> None:
    """Before selection, from the visible page: shop widgets (`_product`) on products and
    category pages, and on grid types the text only a screen reader reads (`_region`)."""
    if page_type in _SHOP_TYPES:
        drop_product_chrome(root)  # the visible tree only: see `_product`
    if page_type in _GRID_TYPES:
        drop_screen_reader_text(root)


def select_main(
    root: Any,
    store: CodeStore,
    headlines: set[str],
    page_type: PageType = "article",
    pristine: Any | None = None,
    items: list[dict[str, Any]] | None = None,
) -> Any | None:
    """Return a `<body>` element holding only the main content, or None if none was found.

    `root` is the page without what a reader never sees (`drop_visible_chrome` applied), `store`
    the code blocks `protect_code_blocks` took out of the tree trafilatura reads; trafilatura
    works on its own copy. `headlines` are the page's normalised titles. The page is read from
    `pristine` when given (the page as served, which trafilatura's own cleaning was built for:
    the caller gives it for products and forums), comments included on forums (the replies are
    the content); text that does not appear in `root` is then removed, so hidden text stays out
    either way. Without `pristine` the page is read from `root`. Never called on collections
    (`_region.REGION_ONLY`)."""
    if pristine is None:
        # Balanced, not precision mode: precision scored higher on the article benchmark
        # (0.976 against 0.972) but lower on the wcxb dev split's articles (0.921 against
        # 0.931, even page ids), where it keeps teasers and drops list-shaped sections.
        body = _trafilatura(root, precision=False)
    else:
        body = _trafilatura(pristine, precision=False, comments=page_type == "forum")
    html_body = None if body is None or not len(body) else to_html(body, store)
    if html_body is not None and pristine is not None:
        before = len(_text(html_body))
        drop_unseen_text(html_body, root)
        if len(_text(html_body)) < MIN_SEEN_SHARE * before:
            # It chose a hidden block (a closed modal, say): read the cleaned page instead.
            body = _trafilatura(root, precision=False, comments=page_type == "forum")
            if body is not None and len(body):
                html_body = to_html(body, store)
    if html_body is not None and not _text(html_body):
        html_body = None
    if html_body is None:
        if page_type not in ("listing", "forum"):
            return None
        # A bare grid of items is still the content; a forum's posts may be script-loaded.
        html_body = etree.Element("body")
    add_missing_chunks(root, html_body, store)
    rejoin_split_paragraphs(html_body)
    if page_type == "forum":
        html_body = complete_thread(root, html_body, store, pristine)
    _drop_repeated_headline(html_body, headlines)
    trim_boilerplate(html_body, cut_more_stories=page_type in ("article", "page"))
    if page_type == "article":
        trim_article_furniture(html_body)
    if page_type in ("listing", "page"):
        # Not on articles: there a run of cards is "related stories" (measured: the article
        # benchmark fell from 0.97 to 0.94 with it). An untyped page takes the items only when
        # they outweigh the text selected (a service page's cards, not an article's teasers).
        add_missing_items(root, html_body, dominant=page_type == "page")
    if page_type == "product":
        drop_product_rails(html_body)
        drop_repeated_blocks(html_body)
        drop_widget_lines(html_body)
        add_missing_specs(root, html_body)
    if page_type == "product" and items:
        add_product_facts(html_body, items)
    return html_body if len(html_body) else None


def _trafilatura(tree: Any, *, precision: bool, comments: bool = False) -> Any | None:
    document = trafilatura.bare_extraction(
        tree,
        # No URL on purpose: the renderer resolves links itself, and trafilatura's own
        # resolution costs a few percent of the whole extraction.
        url=None,
        favor_precision=precision,
        include_comments=comments,
        include_tables=True,
        include_images=False,
        include_links=True,
        include_formatting=True,
        with_metadata=False,
        deduplicate=False,
        # Any format but "python": only the tree is read, and "python" also renders it to text
        # (3% of the whole extraction). The format does not change what is extracted.
        output_format="xml",
    )
    return getattr(document, "body", None)


def _text(body: Any | None) -> str:
    return "" if body is None else " ".join(text_of(body).split())


def _drop_repeated_headline(body: Any, headlines: set[str]) -> None:
    children = [child for child in body if isinstance(child.tag, str)]
    if len(children) < 2:
        return
    for child in children[:_HEADLINE_WINDOW]:
        if child.tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            if repeats_title(text_of(child), headlines):
                drop_element(child)
            return
