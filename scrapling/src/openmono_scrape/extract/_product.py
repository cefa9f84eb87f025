"""Shop chrome on product (and category) pages: review widgets, "related products" rails, banners.

Five passes. `drop_product_chrome`, before selection: blocks named as chrome in the markup.
`drop_product_rails`, after: a section whose heading introduces other products ("People who
viewed this item also viewed", "Similar items"), up to the next heading as high.
`drop_repeated_blocks`, after: the second copy of a text block (a carousel's cloned slides, the
mobile copy of a feature list), which a reader sees once. `drop_widget_lines`, after: a short
block that is a buying widget's label or a shop banner ("Add to cart", "Select a size", "Free
shipping on orders over $50", "Pay in 4 ...", "Order within 3 hr", "Only 2 left") or a notice
of the shop's scripts (a cookie notice, "Oops! Something went wrong", an e-mail consent line,
"Lorem ipsum"). `add_missing_specs`, last: a spec sheet drawn as label/value rows of `div`s,
which trafilatura drops as too short, comes back as a list.

A product page's content is the product: its name, price, description and specs. trafilatura
keeps, next to it, the review widget (dozens of customer reviews under the spec sheet), the
"related" / "also bought" / "recently viewed" rails and cookie-consent text, which the wcxb
annotators mostly leave out. Shops name those blocks in their markup (`class="reviews"`,
`id="related-products"`, `class="cookie-consent"`), so they are recognised by class or id.

They are removed from the *visible* tree only, never from the page trafilatura reads: removed
before selection they shift trafilatura's choice of container (measured: one page lost half its
recall), while removed from the visible tree their text is taken out of the selection afterwards
by the unseen-text pass (`_cleanup.drop_unseen_text`), whatever trafilatura chose.

`drop_product_chrome` also runs on shops' category pages (detected "collection": their review
widgets, rails and newsletter blocks are the same chrome), where a review-named block that is one
of a run of same-class siblings is a card, not a widget, and "truste" names TrustArc's banner
only, not a "trusted-by" section.

What this module gained, measured as it was added: docs/extraction.md (`_product`).
"""

from __future__ import annotations

import re
from typing import Any

from lxml import etree

from ._cleanup import drop_repeats, text_blocks
from ._dom import NAMED_IN_BODY, NameMatcher, drop_element, text_of

# Class/id words (at a word start) of review widgets: the shop's own and the common review
# services, and buyers' comments or a seller's feedback (the same widget under another name).
# Not "rating" (the star summary is a fact about the product the annotators keep) nor
# "testimonial" (the shop's own chosen quotes belong to its copy), nor "faq" or "questions"
# (the annotators keep a product's questions and answers: products -0.005 with them): each
# cost a page its text.
_REVIEWS = re.compile(
    r"(?:^|[\s_-])(?:reviews?(?!er)|yotpo|okendo|judgeme|jdgm|stamped|bazaarvoice"
    r"|trustpilot|feefo|reevoo|powerreviews|loox|comments?|feedback)",
    re.I,
)
_TESTIMONIAL = re.compile(r"testimonial", re.I)
# ... and of rails of other products and of consent banners (not "cmp-": besides consent
# platforms, Adobe's page builder prefixes every component with it).
_RAILS_AND_BANNERS = re.compile(
    r"(?:^|[\s_-])(?:related|recommend|upsells?|up-sells?|cross-?sells?"
    r"|also-?(?:viewed|bought|like)|recently-?viewed|similar|you-may|complete-the-look"
    # "truste" (TrustArc's banner) as a whole word: not a "trusted-by" section.
    r"|frequently-bought|cookies?|consent|gdpr|onetrust|truste(?![a-z])"
    r"|newsletter|klaviyo|signup|sign-up|subscribe|email-capture)",
    re.I,
)
# A review-named block shorter than this is the rating summary ("4.8 from 1,316 reviews", a
# critics' quote), which annotators keep; the widget listing the reviews is far longer (on the
# wcxb dev split the result was the same for any bound from 500 to 2,000 characters).
MIN_REVIEW_WIDGET_CHARS = 1000
# A block holding more than this share of the page's text is the page (a wrapper whose class
# happens to say "reviews"), never a widget beside it; so is a block holding the product's h1.
MAX_CHROME_SHARE = 0.5
_KEEP_TAGS = frozenset({"html", "body", "main"})


def drop_product_chrome(root: Any) -> None:
    """Remove review widgets, related-product rails and consent banners from `root`, in place."""
    total = len(text_of(root))
    matchers = _ChromeMatchers()
    for element in list(NAMED_IN_BODY(root)):
        names = f"{element.get('class', '')} {element.get('id', '')}"
        rail_or_banner, named_chrome = matchers.verdict(names)
        if not named_chrome:
            continue
        if element.tag in _KEEP_TAGS or element.getroottree().getroot() is not root:
            continue  # the page itself, or inside a block already dropped
        size = len(text_of(element))
        if size > MAX_CHROME_SHARE * total or element.find(".//h1") is not None:
            continue
        if not rail_or_banner and size < MIN_REVIEW_WIDGET_CHARS:
            continue
        if not rail_or_banner and _is_card(element):
            continue
        drop_element(element)


class _ChromeMatchers:
    """The shop-chrome patterns, each judged once per class name part (for one page)."""

    def __init__(self) -> None:
        self.rails_and_banners = NameMatcher(_RAILS_AND_BANNERS)
        self.reviews = NameMatcher(_REVIEWS)
        self.testimonial = NameMatcher(_TESTIMONIAL)

    def verdict(self, names: str) -> tuple[bool, bool]:
        """Whether names say rail or banner, and whether they say that or a review (not a
        testimonial)."""
        rail_or_banner = self.rails_and_banners(names)
        review = self.reviews(names) and not self.testimonial(names)
        return rail_or_banner, rail_or_banner or review


# A review-named block with this many siblings of its tag and class is one card of a run (a
# roundup's "bosch-dishwasher-review" cards), not the one widget beside the product.
MIN_CARD_RUN = 3


def _is_card(element: Any) -> bool:
    parent = element.getparent()
    names = element.get("class")
    if parent is None or not names:
        return False
    run = 0
    for sibling in parent:
        if sibling.tag == element.tag and sibling.get("class") == names:
            run += 1
            if run >= MIN_CARD_RUN:
                return True
    return False


# A heading introducing other products: "You may also like", "People who viewed this item also
# viewed", "Similar items", "Frequently bought together", "Recently viewed".
_RAIL_HEADING = re.compile(
    r"^\W*(?:(?:you|customers|people)(?: who [\w ]+?)? (?:may|might|also|frequently) "
    r"(?:also )?(?:like|love|viewed|bought|purchased)"
    r"|(?:similar|related|recommended|recently viewed|sponsored) (?:items|products)"
    r"|explore related [\w ]+|frequently bought together|recently viewed"
    r"|(?:complete|shop) the look|more from this (?:seller|shop|brand))\W*$",
    re.I,
)
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")


def drop_product_rails(body: Any) -> None:
    """Drop each section of `body` a rail heading opens, up to the next heading as high."""
    for heading in list(body.iter(*_HEADINGS)):
        parent = heading.getparent()
        if parent is None or not _RAIL_HEADING.match(" ".join(text_of(heading).split())):
            continue
        level = int(heading.tag[1])
        for later in list(heading.itersiblings()):
            if later.tag in _HEADINGS and int(later.tag[1]) <= level:
                break
            drop_element(later)
        drop_element(heading)


# Blocks that a carousel or a responsive layout renders twice (the desktop and the mobile copy
# of a feature list, a slider's cloned slides): the text is shown once to a reader.
_BLOCKS = ("p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "dd", "dt")
# Only a block of at least this many words counts as a repeat: short labels ("Size", "Add to
# cart", "4.5") legitimately recur in a spec sheet.
MIN_REPEAT_WORDS = 3


def drop_repeated_blocks(body: Any) -> None:
    """Drop each text block of `body` whose text already appeared in an earlier block."""
    drop_repeats(body, _BLOCKS, MIN_REPEAT_WORDS)


# Short lines of the shop's buying widgets: the add-to-cart block, the size picker, shipping
# and payment banners, the delivery estimate and the stock count. The annotators keep the
# product's facts, not the controls around them.
_WIDGET_LINE = re.compile(
    r"^\W*(?:add to (?:cart|bag|basket|wish ?list)|buy now|quantity|qty|in stock|out of stock"
    r"|sold out|select (?:a )?(?:size|colou?r)|size (?:guide|chart)|find your size"
    r"|free (?:shipping|delivery|returns)\b|(?:or )?pay in \d|klarna|afterpay|sezzle"
    r"|sign up|subscribe|notify me|share(?: this)?|write a review|ask a question"
    # delivery, seller and stock lines, price labels, an ad's marker
    r"|sold and shipped by|ships from|sold by|fulfilled by|(?:arrives|get it) (?:by|today|tomorrow)"
    r"|order (?:within|today|in the next)|(?:pickup|delivery) today|shipping, arrives"
    r"|(?:only )?\d+ left\b|low in stock|(?:just )?a few left"
    r"|(?:regular|sale|current|original) price|price when purchased|sponsored\W*$"
    # a review widget's leftovers: its badge, its empty state, its loading placeholder
    r"|verified (?:buyer|purchase|reviewer)\W*$|no reviews yet|loading(?: reviews)?\W*$)",
    re.I,
)
MAX_WIDGET_WORDS = 12


# Notices a shop's scripts show around the product, a sentence or three each: the cookie
# notice and its settings, a form's status message ("Oops! Something went wrong. Please try
# again."), the consent line under an e-mail or phone field, and placeholder copy a theme ships
# with ("Lorem ipsum"). Matched anywhere in the block, so only whole phrases that never describe
# a product.
_NOTICE = re.compile(
    r"\bwe use cookies\b|\b(?:this|our) (?:web)?site uses cookies\b|\bthese cookies\b"
    r"|\bcookies (?:collect|allow|track|help us)\b|\b(?:accept|reject|disable) (?:all )?cookies\b"
    r"|^\W*(?:manage|customi[sz]e) (?:your )?cookie|\bsomething went wrong\b"
    r"|\bplease try again\b|\byour submission has been received\b"
    r"|^\W*by (?:providing|entering|submitting) (?:my|your) (?:e-?mail|phone|number)"
    r"|\blorem ipsum\b",
    re.I,
)
MAX_NOTICE_WORDS = 80


def drop_widget_lines(body: Any) -> None:
    """Drop short blocks of `body` that are a buying widget's labels, a shop banner or a
    notice of the shop's scripts (cookies, a form's status, a consent line, placeholder)."""
    for block in text_blocks(body, _BLOCKS):
        text = " ".join(text_of(block).split())
        words = len(text.split())
        widget = words <= MAX_WIDGET_WORDS and _WIDGET_LINE.match(text) is not None
        if widget or (words <= MAX_NOTICE_WORDS and _NOTICE.search(text)):
            drop_element(block)


# A spec sheet drawn as rows of two texts, a label and a value ("Weight" / "653 g"), in
# `div`s rather than a table or a list: trafilatura reads each row as too short to be text and
# drops the sheet. A run of such rows under one parent, the labels all different, most values
# holding a figure (a measure, a count, a version), no row a link or a form field, is the
# product's specs; when the selection lacks most of their words they are added to it as a list.
MIN_SPEC_ROWS = 4
MAX_LABEL_WORDS = 6
MAX_VALUE_WORDS = 12
MAX_ROW_CHARS = 160
MIN_FIGURE_SHARE = 0.5
MIN_MISSING_SHARE = 0.7
_DIGIT = re.compile(r"\d")
_WORD = re.compile(r"\w+")
_NOT_SPECS = frozenset({"nav", "footer", "header", "aside", "form", "table", "thead", "tbody"})
_TEXTS = etree.XPath(".//text()[normalize-space()]")
_CONTROLS = etree.XPath(".//a|.//label|.//input|.//select|.//button")


def add_missing_specs(root: Any, body: Any) -> None:
    """Append to `body` the label/value spec rows of `root` that the selection left out."""
    present = set(_WORD.findall(text_of(body).lower()))
    taken: set[Any] = set()
    for parent in root.iter():
        if not isinstance(parent.tag, str) or parent.tag in _NOT_SPECS or len(parent) < 4:
            continue
        rows = _spec_rows(parent)
        if rows is None or any(
            up in taken or up.tag in _NOT_SPECS for up in parent.iterancestors()
        ):
            continue
        words = _WORD.findall(" ".join(f"{label} {value}" for label, value in rows).lower())
        if sum(word not in present for word in words) < MIN_MISSING_SHARE * len(words):
            continue
        taken.add(parent)
        listing = etree.SubElement(body, "ul")
        for label, value in rows:
            label = label.rstrip(": ")
            etree.SubElement(listing, "li").text = f"{label}: {value}"


def _spec_rows(parent: Any) -> list[tuple[str, str]] | None:
    children = [child for child in parent if isinstance(child.tag, str)]
    if len(children) < MIN_SPEC_ROWS:
        return None
    rows = []
    for child in children:
        row = _spec_row(child)
        if row is None:
            return None
        rows.append(row)
    if len({label.lower() for label, _ in rows}) < len(rows):
        return None
    if sum(_DIGIT.search(value) is not None for _, value in rows) < MIN_FIGURE_SHARE * len(rows):
        return None
    return rows


def _spec_row(element: Any) -> tuple[str, str] | None:
    if len(text_of(element)) > MAX_ROW_CHARS or _CONTROLS(element):
        return None
    texts = [" ".join(str(text).split()) for text in _TEXTS(element)]
    if len(texts) != 2:
        return None
    label, value = texts
    if len(label.split()) > MAX_LABEL_WORDS or len(value.split()) > MAX_VALUE_WORDS:
        return None
    return label, value
