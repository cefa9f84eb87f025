"""The extraction driver: decoded HTML in, main content (or the whole page) in the asked format.

`extract()` is a pure function (no network, no shared mutable state, safe from any thread) and
never raises: empty, garbage or hostile input gives empty content, which the service reports as
EMPTY_CONTENT. Steps:

1. parse (`_dom`), put the late chunks of a streamed (React) page into their slots
   (`_streaming`), read the title (`_title`) and the `<base href>` (`_links`), tell the page
   type from JSON-LD, og:type, URL and DOM (`_pagetype`), drop what a reader never sees
   (scripts, styles, hidden elements, form controls);
2. main content: code blocks are set aside verbatim (`_code`), embedded posts unmarked
   (`_embeds`), bare text given paragraphs (`_paragraphs`); trafilatura selects the content and
   `_main` repairs its result (`_xmlhtml`, `_chunks`, `_cleanup`, article furniture `_article`)
   and completes it by page type (whole forum threads `_forum`, shop chrome out `_product`,
   item grids `_items`, product facts `_jsonld`); off articles the page's own main region
   without its chrome (`_region`) replaces a selection that covers too little of it, and on a
   shop's category page (a collection) it is the content, no selection made; when nothing is
   found the whole visible page is used instead;
3. render the chosen tree (`_markdown`, `_tables`): markdown with absolute links and verbatim
   fenced code, the plain text a reader sees, or the cleaned HTML fragment.

How well it does, measured: docs/extraction.md.
"""

from __future__ import annotations

import logging
from copy import deepcopy
from dataclasses import dataclass
from typing import Any

from lxml import etree
from lxml import html as lxml_html
from openmono_contracts.logurl import for_log
from openmono_contracts.scrape import ScrapeFormat

from ._code import protect_code_blocks, restore_code_blocks
from ._dom import body_of, parse_html, remove_invisible, text_of
from ._embeds import unmark_embedded_posts
from ._links import absolutize_links, document_base
from ._main import drop_visible_chrome, select_main
from ._markdown import Renderer
from ._pagetype import PageType, detect_page_type, json_ld_items
from ._paragraphs import wrap_bare_text
from ._region import REGION_ONLY, prefer_main_region
from ._streaming import resolve_streamed_chunks
from ._title import find_title, headline_candidates

LOGGER = logging.getLogger("openmono_scrape.extract")


@dataclass(frozen=True)
class Extracted:
    """What a page says: its title (None when it has none) and its content in the asked format."""

    title: str | None
    content: str


def extract(html: str, url: str, fmt: ScrapeFormat, main_content: bool) -> Extracted:
    """Extract the main content (or the whole visible page) of decoded HTML in `fmt`."""
    try:
        return _extract(html, url, fmt, main_content)
    except Exception:  # a hostile page must cost one empty answer, never the service
        LOGGER.warning("extraction failed for %s", for_log(url), exc_info=True)
        return Extracted(title=None, content="")


# The types trafilatura reads from the page as served rather than from the visible page: its own
# cleaning was built for that, and there it keeps products' descriptions (wcxb dev split, a
# loaded machine: products 0.673 from the visible page, 0.686 as served) and forums' replies.
# On the other types the visible page scores the same (overall 0.8621 either way; service
# +0.001, collections +0.001, documentation -0.0002) and saves a copy of the page and a share of
# trafilatura's work: 9% less time per page (median of four runs side by side).
_READ_AS_SERVED: frozenset[PageType] = frozenset({"product", "forum"})


def _extract(html: str, url: str, fmt: ScrapeFormat, main_content: bool) -> Extracted:
    root = parse_html(html)
    if root is None:
        return Extracted(title=None, content="")
    resolve_streamed_chunks(root)
    title = find_title(root)
    headlines = headline_candidates(root)
    base_url = document_base(root, url)
    chosen: Any = None
    if main_content:
        items = json_ld_items(root)
        page_type = detect_page_type(root, url, items)
        # Products and forums are read by trafilatura as served (see `select_main`).
        pristine = deepcopy(root) if page_type in _READ_AS_SERVED else None
        if pristine is not None:
            # Every stage of trafilatura drops them, but only after copying the tree (several
            # times): wcxb dev products and forums take 5% less time without them; two pages
            # move, +0.002 and -0.0003 page-F1.
            etree.strip_elements(pristine, "style", "svg", with_tail=False)
        remove_invisible(root)
        read = root if pristine is None else pristine
        store = protect_code_blocks(read)
        unmark_embedded_posts(read)
        wrap_bare_text(read, leaf_containers=page_type == "documentation")
        drop_visible_chrome(root, page_type)
        if page_type not in REGION_ONLY:
            chosen = select_main(root, store, headlines, page_type, pristine, items)
        if chosen is None or read is root:
            # The region and the whole-page fallback come from `root`: its code verbatim again.
            restore_code_blocks(root, store)
        # The page's own main region, chrome removed, may hold more of the page (on a collection
        # it is the content: nothing was selected).
        chosen = prefer_main_region(root, chosen, page_type)
    else:
        remove_invisible(root)
    if chosen is None:
        chosen = body_of(root)
    return Extracted(title=title, content=_render(chosen, base_url, fmt))


def _render(element: Any, base_url: str, fmt: ScrapeFormat) -> str:
    if fmt == "html":
        if not text_of(element).strip():
            return ""
        absolutize_links(element, base_url)
        return str(lxml_html.tostring(element, encoding="unicode", method="html")).strip()
    text = Renderer(base_url, markdown=fmt == "markdown").render(element)
    return text if text.strip() else ""
