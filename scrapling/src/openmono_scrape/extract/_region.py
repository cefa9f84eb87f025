"""The page's main region, chrome removed: the second candidate for pages that are not articles.

trafilatura's selection is tuned for articles. On a service page, a listing or a shop's category
page it often keeps one block (a hero, an intro) and drops the sections or the item grid that
are the page. There the page's own markup is a better guide: the `<main>` element (or
`role="main"`) when it holds the content, else the body, without what surrounds the content on
every page of the site: navigation, header, footer, asides, dialogs, cookie and consent banners,
newsletter forms, breadcrumbs, share bars, pagination, filter/facet/sort panels, skip links,
and controls (buttons, menus: "Add to cart", "Sort by"). A region that is chosen on a grid page
(collections, listings, untyped pages) also loses the short labels every card repeats ("Notify
Me", "Best seller", "Qty:"): a text of up to three words, no digits, seen four times or more in
a slot (element shape under parent shape) that holds at most two different texts; a slot of
many values is an attribute of the items (a brand, a colour) and stays. Those two rules, on the
same split and machine: collections 0.670 -> 0.676, listings 0.677 -> 0.678, service 0.811 ->
0.812, every other type level (figures in the next paragraph are from before them).

Chrome by class or id name: beside the landmarks, an element named footer (not a card's own
`card__footer`), related / recently viewed / recommendation rails, and a cookie or consent
notice however long its legal text (up to 0.6 of the page; other names 0.3). Before selection,
grid pages (and untyped ones) also lose the text only a screen reader reads
(`drop_screen_reader_text`: `sr-only`, `visually-hidden`, `show-for-sr`, ... with a theme's
prefixes): trafilatura keeps it ("X is available in 3 options", "Product Details"); about 1% of
the extraction time on those pages (one XPath walk of the body, a loaded machine). Those rules,
wcxb dev split against main before them (a loaded machine): listings 0.724 -> 0.732 (even ids
+0.010, odd +0.005), collections 0.694 -> 0.707 (+0.009 / +0.016), service 0.826 -> 0.829,
documentation 0.932 -> 0.933. Tried and dropped there: "header" by name (page headers hold the
title: -0.001 overall), "promo", "banner", "widget", "ads", "legal" names (each lower on a half),
labels repeated on every card in a slot of many values (one shop's "Weight:" is content, another's
"Brand Name" is not: even ids -0.0002), untyped pages taking the region at cover 0.8 (+0.009 on
service but the article benchmark 0.972 -> 0.971) or 0.7 (service odd ids -0.0005).

`prefer_main_region` chooses between the two candidates by detected type (`RULES`); on a
collection there is none to choose: the region is the content, no selection made
(`REGION_ONLY`). Elsewhere the region replaces the selection when the selection covers too
little of its words, unless the selection is a long run of prose (many words, or many paragraphs
of prose: an article), the region is many times larger than it, or (on untyped pages) mostly
link text. Articles keep the selection unless it is a sliver of the page: the region at least 20
times its words (a caption or a teaser selected, or nothing at all; before, an empty selection
gave the whole page, chrome and all). Measured on the wcxb dev split: articles 0.9444 -> 0.9456
(even ids +0.0021, odd +0.0001), forums 0.7934 -> 0.8019 (odd +0.0175, even level), every other
type level; three pages move, all up; the article benchmark stays at 0.9720. A lower bound buys
nothing there: at 14 times a listing read as an article takes a worse region (-0.04), and right
selections reach 10 times (a story with long comments and rails around it); the untyped pages'
cover rule on articles moved 84 pages, 69 of them down.
What this module gained, measured as it was added: docs/extraction.md (`_region`).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from lxml import etree

from ._cleanup import trim_boilerplate
from ._dom import NameMatcher, drop_element, text_of
from ._pagetype import PageType

# Landmarks that are chrome wherever they are (unless they hold the main region).
_CHROME_XPATH = etree.XPath(
    "//nav|//footer|//aside|//form|//dialog|//menu"
    # The presence test first: comparing every element's role to eight values costs 3x more.
    "|//*[@role or @aria-modal][@role='navigation' or @role='banner' or @role='contentinfo'"
    " or @role='complementary'"
    " or @role='search' or @role='dialog' or @role='alertdialog' or @role='menubar'"
    " or @aria-modal='true']"
)
# A page header is chrome outside the main region; inside it, it holds the page's title.
_HEADER_XPATH = etree.XPath("//header")
# Controls: their labels ("Add to cart", "Quick view", "Load more", a sort menu's options) are
# what a reader acts on, not what the page says. Dropped wherever they are, the main region too.
# A button that opens a panel (an accordion's "Ingredients", a tab's "Specifications") names a
# section of the page: it stays.
_CONTROL_XPATH = etree.XPath(
    "descendant::select|descendant::*[self::button or @role][self::button or @role='button']"
    "[not(@aria-expanded or @aria-controls)]"
)
_MAIN_XPATH = etree.XPath("//main|//*[@role='main']")
# Read from the body (the head holds no chrome a reader sees).
_NAMED_XPATH = etree.XPath("descendant-or-self::*[@class or @id]")
_JUMP_LINK_XPATH = etree.XPath("descendant::a[starts-with(@href, '#')]")
# Class and id names of chrome. Matched on whole name parts ("site-nav", "cookie_banner").
_CHROME_NAME = re.compile(
    r"(?:^|[\s_-])(?:cookies?|consent|gdpr|newsletter|subscribe|signup|sign-up|breadcrumbs?"
    r"|share|sharing|social|pagination|pager|paginator|filters?|facets?|refinements?|sorting"
    r"|sort-by|skip-link|skip-to|skiplink|modal|popup|popover|offcanvas|off-canvas|drawer"
    r"|megamenu|mega-menu|navbar|menu|menus|toolbar|sidebar|visually-hidden|sr-only"
    r"|screen-reader-text|announcement-bar|site-header|site-footer"
    r"|related|recently-viewed|recommendations?|upsell|cross-sell"
    # A footer by name, not a card's own ("card__footer", "card-footer": its date, its author).
    r"|(?<!__)(?<!card-)(?<!card_)footer)(?:$|[\s_-])",
    re.I,
)


@dataclass(frozen=True)
class RegionRule:
    """When the region replaces the selection, for one detected page type.

    The selection covers less than `max_cover` of the region's words; the selection is shorter
    than `max_selected` words (a long run of prose is an article's body, rightly chosen); the
    region is at most `max_growth` times the selection (far more is comments or a site index
    around a page whose content the selection found); the selection has fewer than
    `max_long_paragraphs` paragraphs of prose (more is an article); less than `max_link_share`
    of the region's words are link text (more is an index of other pages); the region is at
    least `min_growth` times the selection (less: the selection found the content). None: no
    such condition.
    """

    max_cover: float | None = None
    max_selected: int | None = None
    max_growth: float | None = None
    max_long_paragraphs: int | None = None
    max_link_share: float | None = None
    min_growth: float | None = None


# A paragraph of prose has at least this many words.
MIN_PROSE_WORDS = 25
# A region whose words are mostly link text is an index of other pages.
LINK_SHARE = 0.6
# Measured on the wcxb dev split, both page-id halves (see the module docstring). A shop's
# category page (detected "collection") takes the region whatever the selection: it keeps the
# intro and loses the grid (see `REGION_ONLY`).
RULES: dict[PageType, RegionRule] = {
    "page": RegionRule(
        max_cover=0.6, max_selected=1200, max_long_paragraphs=12, max_link_share=LINK_SHARE
    ),
    "collection": RegionRule(),
    "listing": RegionRule(max_cover=0.6),
    "documentation": RegionRule(max_cover=0.9, max_growth=8),
    # An article keeps its selection unless the selection is a sliver of the page (a caption,
    # a teaser, nothing at all): then the selection failed, and the region is the story.
    "article": RegionRule(min_growth=20),
}
# The types whose content is the region alone, no selection made: on the wcxb dev split the
# region replaced trafilatura's selection on 131 of the 134 pages detected "collection" (the
# rest kept it by a growth bound, region over 5 times the selection). Without the selection
# and that bound: overall mean word F1 0.8717 -> 0.8726 (even ids +0.0013, odd +0.0005); two
# listings read as collections 0 -> 1.0; one collection -0.65 (its truth is the intro and a
# FAQ, without the product grid: collections 0.7239 -> 0.7183, odd ids -0.010); every other
# page identical; and 12% to 14% less extraction time over the split (two paired runs;
# collections about half), trafilatura's cascade being most of a page's time.
REGION_ONLY: frozenset[PageType] = frozenset({"collection"})
# Below this many words a selection is a fragment and the growth bound does not apply.
MIN_SELECTED_FOR_GROWTH = 100
_WORD = re.compile(r"\w+")
_DIGIT = re.compile(r"\d")
_SKIP_LINK = re.compile(r"^\W*(?:skip|jump) to\b", re.I)
# A landmark holding more than this share of the body's text is a wrapper left open (a `<form>`
# around the whole page, an unclosed `<nav>`), not chrome.
MAX_FORM_SHARE = 0.5
MAX_LANDMARK_SHARE = 0.9
# A named element holding more than this share of the region's text is not chrome, whatever
# its class says (a "has-sidebar" layout wrapper, a "filterable" product grid).
MAX_NAMED_CHROME_SHARE = 0.3
# A cookie or consent notice is never the content, however long its legal text (a page's
# whole policy in a dialog): only a wrapper holding most of the page is kept.
MAX_CONSENT_SHARE = 0.6
_CONSENT_NAME = re.compile(r"(?:^|[\s_-])(?:cookies?|consent|gdpr)(?:$|[\s_-])", re.I)
# A control's label is a few words; a longer "button" is a clickable card of content.
MAX_CONTROL_WORDS = 8
# The types whose region is a grid of cards (documentation repeats "Copy", "Note" as content).
LABEL_TYPES: frozenset[PageType] = frozenset({"collection", "listing", "page"})
# A grid's card labels: at most this many words, repeated at least this many times.
MAX_LABEL_WORDS = 3
MIN_LABEL_REPEATS = 4
MAX_SLOT_VALUES = 2
_TABLE_TAGS = frozenset({"table", "thead", "tbody", "tfoot", "tr", "td", "th"})
_LABEL_EXEMPT = frozenset({"h1", "h2", "h3", "h4", "h5", "h6", "td", "th", "body", "main"})
# `<main>` is the region only when it holds this share of the body's text (chrome removed):
# some sites mark only a hero or an intro as main.
MIN_MAIN_SHARE = 0.5


# Screen-reader-only text (the utility classes of CSS frameworks and CMS themes: `sr-only`,
# `visually-hidden`, `screen-reader-text`, `show-for-sr`, prefixed or suffixed by a theme's own
# names): a reader of the page never sees it ("Product Details", "Opens in a new tab"). On the
# wcxb dev split 2% to 7% of such elements (by class) hold text of the truth.
_SCREEN_READER_CLASS = re.compile(
    r"^(?:\w+[-_]+)*(?:sr-?only|sr-text|screen-?reader(?:-?(?:text|only))?|visually-?hidden"
    r"|show-for-sr|visible-sr|assistive-text|hidden-accessible)(?:--[\w-]+)?$",
    re.I,
)


def drop_screen_reader_text(root: Any) -> None:
    """Drop the elements only a screen reader reads (class `sr-only`, `visually-hidden`, ...)."""
    body = root.find("body")
    if body is None:
        return
    # One walk with a verdict per class attribute (cards repeat theirs): 30% less than an
    # XPath of substring tests.
    screen_reader = NameMatcher(_SCREEN_READER_CLASS)
    found = []
    for element in body.iterdescendants():
        names = element.get("class")
        if names is not None and screen_reader(names):
            found.append(element)
    for element in found:
        if element.getparent() is not None:
            drop_element(element)


def prefer_main_region(root: Any, selected: Any | None, page_type: PageType) -> Any | None:
    """The page's main region instead of `selected` when the selection covers too little of it.

    `root` is the visible page (its chrome is stripped in place when the type takes the rule);
    `selected` the content selection made from it, a separate tree, or None.
    """
    rule = RULES.get(page_type)
    if rule is None:
        return selected
    chosen_list = [] if selected is None else _WORD.findall(text_of(selected).lower())
    if _keeps_selection(rule, root, selected, len(chosen_list)):
        return selected  # decided without the region (and the words' counts): spare its cost
    region = main_region(root)
    if region is None:
        return selected
    chosen_words = Counter(chosen_list)
    region_words = _words(region)
    if not region_words or not _takes_region(rule, region, region_words, chosen_words):
        return selected
    # The selection's own boilerplate trimming (done after the choice: it is half the cost).
    trim_boilerplate(region, cut_more_stories=page_type in ("article", "page"))
    if page_type in LABEL_TYPES:
        drop_repeated_labels(region)
    return region


def drop_repeated_labels(region: Any) -> None:
    """Drop the short labels every card of a grid repeats ("Notify Me", "Qty:", "Best seller").

    A text of a few words that stands alone (an element holding only it) and comes back at
    least `MIN_LABEL_REPEATS` times is the grid's furniture when its slot (the same element
    shape under the same parent shape, on every card) holds at most `MAX_SLOT_VALUES`
    different texts: a button's "Notify Me" or "Sold out". A slot of many values is an
    attribute of the items (a brand, a colour, "Full-Time" or "Contract") and stays, as do
    prices and counts, headings and table cells (a table's "Yes" column is data).
    """
    seen: dict[str, list[Any]] = {}
    slots: dict[tuple[str, str, str, str], list[str]] = {}  # the raw texts in each slot
    # An element's text is its parent's when the parent adds only whitespace around it (its
    # text is one run of the parent's), so stripped lengths tell: each text is read once and
    # never collapsed, but for the few that may be labels and the slots they sit in.
    sizes: dict[Any, int] = {}  # a parent comes before its children
    for element in region.iter():
        if not isinstance(element.tag, str):
            continue
        raw = text_of(element)
        size = sizes[element] = len(raw.strip())
        parent = element.getparent()
        if element.tag in _LABEL_EXEMPT or not size or parent is None:
            continue
        parent_size = sizes.get(parent)
        if parent_size is None:
            parent_size = len(text_of(parent).strip())
        if parent_size == size:
            continue  # the outermost element holding the text stands for it
        slots.setdefault(_slot(element, parent), []).append(raw)
        words = raw.split(None, MAX_LABEL_WORDS)
        if len(words) > MAX_LABEL_WORDS:
            continue
        text = " ".join(words).lower()
        if _DIGIT.search(text):
            continue  # a price or a count is the item's own, even when two items share it
        seen.setdefault(text, []).append(element)
    values: dict[tuple[str, str, str, str], int] = {}
    for elements in seen.values():
        if len(elements) < MIN_LABEL_REPEATS:
            continue
        for element in elements:
            parent = element.getparent()
            if parent is None or _in_table(element):
                continue
            slot = _slot(element, parent)
            if slot not in values:
                values[slot] = len({" ".join(raw.split()).lower() for raw in slots[slot]})
            if values[slot] <= MAX_SLOT_VALUES:
                drop_element(element)


def _slot(element: Any, parent: Any) -> tuple[str, str, str, str]:
    return element.tag, element.get("class", ""), parent.tag, parent.get("class", "")


def _in_table(element: Any) -> bool:
    return any(up.tag in _TABLE_TAGS for up in (element, *element.iterancestors()))


def _keeps_selection(rule: RegionRule, root: Any, selected: Any | None, chosen: int) -> bool:
    """The bounds on the selection alone (`chosen` words): a long selection, many paragraphs of
    prose, or (for `min_growth`) a selection the whole page, chrome and all, is not many times
    larger than."""
    if rule.max_selected is not None and chosen >= rule.max_selected:
        return True
    if rule.min_growth is not None:
        body = root.find("body")
        if body is None or _size(body) < rule.min_growth * max(chosen, 1):
            return True
    if rule.max_long_paragraphs is None or selected is None:
        return False
    prose = sum(len(text_of(p).split()) >= MIN_PROSE_WORDS for p in selected.iter("p"))
    return prose >= rule.max_long_paragraphs


def _takes_region(
    rule: RegionRule, region: Any, region_words: Counter[str], chosen_words: Counter[str]
) -> bool:
    total = sum(region_words.values())
    chosen = sum(chosen_words.values())
    if rule.min_growth is not None and total < rule.min_growth * max(chosen, 1):
        return False
    grown = rule.max_growth is not None and total > rule.max_growth * chosen
    if grown and chosen >= MIN_SELECTED_FOR_GROWTH:
        return False
    if rule.max_cover is not None and sum((chosen_words & region_words).values()) >= (
        rule.max_cover * total
    ):
        return False
    if rule.max_link_share is not None:
        linked = sum(len(_WORD.findall(text_of(a))) for a in region.iter("a"))
        if linked >= rule.max_link_share * total:
            return False
    return True


def main_region(root: Any) -> Any | None:
    """Strip the page's chrome from `root` in place and return its main region (or None)."""
    body = root.find("body")
    if body is None:
        return None
    total = _size(body)
    main = max(_MAIN_XPATH(root), key=_size, default=None)
    keep = set() if main is None else {main, *main.iterancestors()}
    inside = set() if main is None else set(main.iter("header"))
    chrome = [e for e in _CHROME_XPATH(root) if e not in keep]
    chrome += [e for e in _HEADER_XPATH(root) if e not in keep and e not in inside]
    for element in chrome:
        # An element inside one already dropped is gone with it.
        share = MAX_FORM_SHARE if element.tag == "form" else MAX_LANDMARK_SHARE
        if element.getparent() is not None and _size(element) <= share * total:
            drop_element(element)
    for control in _CONTROL_XPATH(body):
        if control.getparent() is None or control in keep:
            continue
        # A clickable card (a whole teaser marked as a button) is content, not a control.
        if control.tag == "select" or _size(control) <= MAX_CONTROL_WORDS:
            drop_element(control)
    size = _size(body)
    limit = MAX_NAMED_CHROME_SHARE * size
    for element, names in _chrome_named(_NAMED_XPATH(body)):
        if element in keep or element.getparent() is None:
            continue
        if _size(element) <= (MAX_CONSENT_SHARE * size if _CONSENT_NAME.search(names) else limit):
            drop_element(element)
    for link in _JUMP_LINK_XPATH(body):
        if _SKIP_LINK.match(text_of(link)):
            drop_element(link)
    if main is None or main.getparent() is None or _size(main) < MIN_MAIN_SHARE * _size(body):
        return body
    return main


def _chrome_named(elements: list[Any]) -> list[tuple[Any, str]]:
    """The elements whose class or id names chrome, each with its names, in document order."""
    chrome = NameMatcher(_CHROME_NAME)
    found = []
    for element in elements:
        names = f"{element.get('class', '')} {element.get('id', '')}"
        if chrome(names):
            found.append((element, names))
    return found


def _size(element: Any) -> int:
    """Words, roughly (whitespace-separated runs): the indentation of the markup is no text."""
    return len(text_of(element).split())


def _words(element: Any) -> Counter[str]:
    return Counter(_WORD.findall(text_of(element).lower()))
