"""What kind of page this is, from the signals a page states about itself, before any cleanup.

Main-content selection tuned for articles loses the content of other pages: a forum's posts look
like comments, a product grid like navigation. The type decides how selection runs (`_main`).
Signals, strongest first: schema.org types in JSON-LD (`DiscussionForumPosting`, `Product`,
`ItemList`, ...), `og:type`, the URL path (`/forum/`, `/products/`, `/collections/`, `/docs/`;
a forum also by its host, `forum.` or `community.`, or a `/boards/` section) and
DOM shape (several post containers, many `<article>` cards, code blocks; many linked headings
with little prose at a URL naming no story is a section front, even one declaring itself an
article; eight prices on an untyped page are a product grid), and last, for a page
nothing else typed, schema.org `Product` microdata or a price meta tag (measured on the wcxb dev
split, a loaded machine: 10 of 24 untyped product pages become products, products +0.009 mean
word F1 on both id halves). A `/products/` URL whose rest holds no digit (a model number, an
id) is no product signal on its own: the page's other signals type it (wcxb dev split: 6 pages
up, none down; collections 0.7107 -> 0.7185 (even ids level, odd +0.0143), products 0.6995 ->
0.7011 (even level, odd +0.0031), service 0.8289 -> 0.8301 (even +0.0021, odd level); overall
0.8680 -> 0.8689). Anything else is
"article", the type the default selection is tuned for. Measured on the wcxb development split
(even page ids): see bench/extraction.py for the resulting per-type scores.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal
from urllib.parse import urlsplit

from lxml import etree

from ._dom import text_of

PageType = Literal["article", "forum", "product", "collection", "listing", "documentation", "page"]

_FORUM_TYPES = frozenset({"DiscussionForumPosting", "QAPage", "SocialMediaPosting"})
_COLLECTION_TYPES = frozenset({"CollectionPage", "OfferCatalog", "SearchResultsPage"})
_ARTICLE_TYPES = frozenset(
    {"Article", "NewsArticle", "BlogPosting", "Report", "ScholarlyArticle", "OpinionNewsArticle"}
)
_DOC_TYPES = frozenset({"TechArticle", "APIReference", "SoftwareSourceCode"})

_FORUM_PATH = re.compile(
    r"/(?:forums?|threads?|t|questions|discussions?|community|communities|comments|"
    r"showthread\.php|viewtopic\.php|r/\w+/comments)(?:/|$|\.)"
    # A thread's topic has an id; "/topic/headphones" is a news site's section.
    r"|/topics?/[^/]*\d",
    re.I,
)
# Added after the rules above (FORUM helper): a host named for a forum (forum.example.org,
# community.example.com, warriorforum.com) or a boards / "travel-forum" path section.
_FORUM_HOST = re.compile(
    r"^(?:[\w-]+\.)*(?:forums?|boards|community|discuss|discussions|bbs)\.|forums?\.[a-z]+$", re.I
)
_FORUM_SECTION = re.compile(r"/(?:boards|[a-z]+-forums?)/", re.I)
_PRODUCT_PATH = re.compile(r"/(?:products?|p|dp|item|itm|gp/product|shop/p)/[^/]+", re.I)
# A `/products/` path whose rest names no model (no digit: `/products/bike`,
# `/products/monitors/gaming-monitors`) is a maker's catalogue section as often as one product:
# the URL alone does not type it (the page's JSON-LD, og:type, microdata or prices still do).
_CATALOGUE_PATH = re.compile(r"/products/[^0-9]*$", re.I)
_COLLECTION_PATH = re.compile(
    r"/(?:collections?|categor(?:y|ies)|c|shop|store|catalog|department|brands?|browse)(?:/|$)",
    re.I,
)
_LISTING_PATH = re.compile(
    r"/(?:blog|news|articles|posts|tags?|archives?|search|page/\d+|latest|jobs|events)/?$", re.I
)
_DOC_PATH = re.compile(
    r"/(?:docs?|documentation|api|reference|manual|guides?|tutorials?|learn|wiki|kb)(?:/|$)"
    r"|^(?:docs|developer|developers|devdocs|wiki)\.|readthedocs",
    re.I,
)
_POST_CLASS = re.compile(
    r"(?:^|\s)(?:(?:post|message|topic)[_-]?(?:body|content|text)|bbwrapper|cooked)(?:$|\s)", re.I
)
_LD_JSON = etree.XPath("//script[@type='application/ld+json']/text()")
_OG_TYPE = etree.XPath("//meta[@property='og:type']/@content")
_OWN_URL = etree.XPath("//link[@rel='canonical']/@href | //meta[@property='og:url']/@content")
# A page with this many post-like containers is a thread, whatever its URL says.
MIN_POST_CONTAINERS = 3
MIN_CARDS = 5
MIN_CODE_BLOCKS = 3


def json_ld_items(root: Any) -> list[dict[str, Any]]:
    """Every JSON-LD object of the page (`@graph` members and list items flattened)."""
    found: list[dict[str, Any]] = []
    for text in _LD_JSON(root):
        try:
            data = json.loads(text)
        except ValueError:
            continue
        _flatten(data, found, 0)
    return found


def _flatten(data: Any, found: list[dict[str, Any]], depth: int) -> None:
    if depth > 3:
        return
    if isinstance(data, list):
        for item in data:
            _flatten(item, found, depth + 1)
    elif isinstance(data, dict):
        found.append(data)
        if isinstance(data.get("@graph"), list):
            _flatten(data["@graph"], found, depth + 1)


def types_of(item: dict[str, Any]) -> set[str]:
    """The schema.org types an object declares (`@type` is a string or a list)."""
    kind = item.get("@type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    return set()


def detect_page_type(root: Any, url: str, items: list[dict[str, Any]]) -> PageType:
    """The page's type; call before scripts are stripped (JSON-LD lives in them)."""
    declared: set[str] = set()
    for item in items:
        declared |= types_of(item)
    products = sum("Product" in types_of(item) for item in items)
    og_type = next((str(value).lower() for value in _OG_TYPE(root)), "")
    # Without the URL it was fetched from (a page given as a file), the page's own address.
    parts = urlsplit(url or next((str(value) for value in _OWN_URL(root)), ""))
    path = parts.path or "/"
    if declared & _FORUM_TYPES:
        return "forum"
    if og_type in ("product.group", "product:group") or declared & _COLLECTION_TYPES:
        return "collection"
    if products >= 3 or ("ItemList" in declared and not declared & _ARTICLE_TYPES):
        return "collection"
    if og_type == "product" or products:
        return "product"
    if declared & _DOC_TYPES:
        return "documentation"
    said_article = bool(declared & _ARTICLE_TYPES) or og_type == "article"
    if _FORUM_PATH.search(path):
        return "forum"
    if _names_forum(parts.netloc, path):
        return "forum"
    if _DOC_PATH.search(path) or _DOC_PATH.search(parts.netloc):
        return "documentation"
    if said_article:
        # Section fronts and archives often declare themselves articles too.
        return "listing" if not _names_story(path) and _lists_teasers(root) else "article"
    if _PRODUCT_PATH.search(path) and not _CATALOGUE_PATH.search(path):
        return "product"
    if _COLLECTION_PATH.search(path):
        return "collection"
    if _LISTING_PATH.search(path):
        return "listing"
    if _count_posts(root) >= MIN_POST_CONTAINERS:
        return "forum"
    if len(_CARDS(root)) >= MIN_CARDS:
        return "listing"
    if len(_CODE_BLOCKS(root)) >= MIN_CODE_BLOCKS:
        return "documentation"
    if _shows_one_product(root):
        return "product"
    if not _names_story(path):
        # Many teasers or many prices make a listing or a grid only where the URL names no
        # single story: a news story has a related rail, a "best X for Y" roundup has prices.
        if _lists_teasers(root):
            return "listing"
        if _count_prices(root) >= MIN_GRID_PRICES:
            return "collection"
    return "page"


# A section front or an archive: many linked headings (teasers) and little prose, at a URL that
# does not name one story. Measured on the wcxb dev split (on a loaded machine): listings
# 0.678 -> 0.721 mean word F1 (even ids +0.046, odd +0.039), articles unchanged; without the
# URL test 18 of the article benchmark's 181 news stories (related-story rails, short
# paragraphs) read as listings.
# `descendant-or-self::body/descendant::` is `//body//` for a page's root, at a third of the cost.
_TEASER_HEADINGS = etree.XPath(
    "descendant-or-self::body/descendant::*[self::h2 or self::h3 or self::h4]"
    "[.//a[@href] or ancestor::a[@href]]"
)
_PARAGRAPHS = etree.XPath("descendant-or-self::body/descendant::p")
_CARDS = etree.XPath("descendant-or-self::body/descendant::article")
_CODE_BLOCKS = etree.XPath("descendant::pre")
_CLASSED = etree.XPath("descendant-or-self::body/descendant::*[@class]")
MIN_TEASERS = 8
MIN_TEASER_WORDS = 2
MAX_TEASER_WORDS = 25
MAX_PROSE_PARAGRAPHS = 5
MIN_PROSE_WORDS = 40
# A story's URL: a long numeric id, a year in the path, or a slug of four or more words.
_STORY_ID = re.compile(r"\d{5,}|/(?:19|20)\d\d/")
_STORY_SLUG = re.compile(r"[a-z0-9]+(?:[-_][a-z0-9]+){3,}", re.I)


# A grid of products: an untyped page showing this many prices (each its own text node), at a
# URL naming no story (a "best laptops for students" roundup has prices too). Measured on the
# wcxb dev split (a loaded machine): collections 0.678 -> 0.693 (even ids +0.019, odd +0.012),
# service pages +0.004, articles -0.0001; the article benchmark unchanged.
MIN_GRID_PRICES = 8
_PRICE = re.compile(r"(?:[$€£¥]|USD|EUR|GBP)\s?\d[\d,.]*|\d[\d,.]*\s?(?:€|EUR|kr|zł)")
_OWN_TEXTS = etree.XPath(
    "descendant-or-self::body/descendant::text()[not(parent::script or parent::style)]"
    "[normalize-space()]"
)


def _count_prices(root: Any) -> int:
    """Text nodes showing a price, counted up to `MIN_GRID_PRICES`."""
    count = 0
    for text in _OWN_TEXTS(root):
        if _PRICE.search(text):
            count += 1
            if count >= MIN_GRID_PRICES:
                break
    return count


def _names_story(path: str) -> bool:
    """Whether the URL path names one story (an id, a date, a slug of four or more words)."""
    segments = [segment for segment in path.split("/") if segment]
    return bool(_STORY_ID.search(path) or (segments and _STORY_SLUG.search(segments[-1])))


def _lists_teasers(root: Any) -> bool:
    """Many linked headings and little prose (call only for a URL that names no story)."""
    teasers = 0
    for heading in _TEASER_HEADINGS(root):
        if MIN_TEASER_WORDS <= len(text_of(heading).split()) <= MAX_TEASER_WORDS:
            teasers += 1
    if teasers < MIN_TEASERS:
        return False
    prose = 0
    for paragraph in _PARAGRAPHS(root):
        if len(text_of(paragraph).split()) >= MIN_PROSE_WORDS:
            prose += 1
            if prose >= MAX_PROSE_PARAGRAPHS:
                return False
    return True


def _names_forum(host: str, path: str) -> bool:
    """Whether the URL names a forum: its host, or a section of its path."""
    return bool(_FORUM_HOST.search(host.split(":")[0]) or _FORUM_SECTION.search(path))


# schema.org Product microdata (the JSON-LD signal's older form) and Open Graph price tags: a
# page marking up one or two products is that product's page; more is a grid of them.
_MICRODATA_PRODUCTS = etree.XPath(
    "//*[@itemscope][contains(@itemtype, 'schema.org/Product')"
    " and not(contains(@itemtype, 'schema.org/ProductGroup'))]"
)
_PRICE_META = etree.XPath("//meta[@property='product:price:amount' or @property='og:price:amount']")
MAX_MARKED_PRODUCTS = 2


def _shows_one_product(root: Any) -> bool:
    marked = len(_MICRODATA_PRODUCTS(root))
    if marked:
        return marked <= MAX_MARKED_PRODUCTS
    return bool(_PRICE_META(root))


def _count_posts(root: Any) -> int:
    count = 0
    verdicts: dict[str, bool] = {}  # per class attribute: cards repeat theirs
    for element in _CLASSED(root):
        names = element.get("class", "")
        post = verdicts.get(names)
        if post is None:
            post = verdicts[names] = _POST_CLASS.search(names) is not None
        if post and len(text_of(element)) > 80:
            count += 1
            if count >= MIN_POST_CONTAINERS:
                break
    return count
