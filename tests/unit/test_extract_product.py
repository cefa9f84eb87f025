"""Product pages: the product stays, the shop's review widget, product rails and banners go."""

from __future__ import annotations

import pytest
from lxml import etree
from openmono_scrape.extract import extract
from openmono_scrape.extract._dom import parse_html, text_of
from openmono_scrape.extract._jsonld import add_product_facts
from openmono_scrape.extract._pagetype import detect_page_type, json_ld_items
from openmono_scrape.extract._product import (
    add_missing_specs,
    drop_product_chrome,
    drop_product_rails,
    drop_repeated_blocks,
    drop_widget_lines,
)

from tests.unit.extract_pages import FOOTER, NAV

URL = "https://shop.e.org/products/trail-pack"
DESCRIPTION = (
    "A twenty five litre day pack with a ripstop nylon body, a padded back panel of foam and air "
    "mesh, and a removable hip belt, built for long days on the trail in changing weather."
)
SPECS = (
    "<table><tr><th>Capacity</th><td>25 litres</td></tr>"
    "<tr><th>Weight</th><td>820 g</td></tr></table>"
)
REVIEW = (
    "Took it on a three day hike through the hills and the straps never dug in once, even with "
    "a full water bladder and my camera gear packed at the bottom of the main compartment."
)
RELATED = "Summit Forty Litre Expedition Pack"
COOKIE = "We use cookies to personalise advertising and measure how visitors use this shop."


def _page(body: str, head: str = "") -> str:
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Trail pack</title>{head}</head>"
        f"<body><header>{NAV}</header>{body}{FOOTER}</body></html>"
    )


def _product_page() -> str:
    reviews = "".join(
        f'<li class="review-item"><p class="review-body">{REVIEW} ({i})</p></li>' for i in range(8)
    )
    # The widget must be beside the product, not most of the page.
    features = "".join(f"<p>Feature {i}: {DESCRIPTION}</p>" for i in range(8))
    return _page(
        f'<div id="cookie-banner"><p>{COOKIE}</p></div>'
        "<main><h1>Trail 25 Pack</h1><p class='price'>$89.95</p>"
        f"<div class='description'><p>{DESCRIPTION}</p>{features}</div>{SPECS}"
        f'<section class="product-reviews"><h2>Customer reviews</h2><ul>{reviews}</ul></section>'
        f'<section class="related-products"><h2>You may also like</h2>'
        f'<ul><li><a href="/products/summit-40">{RELATED}</a> $129.00</li>'
        f'<li><a href="/products/bottle">Insulated Bottle One Litre</a> $25.00</li></ul></section>'
        "</main>",
        '<meta property="og:type" content="product">',
    )


def test_product_page_keeps_description_and_specs_but_not_reviews_rails_or_banners() -> None:
    content = extract(_product_page(), URL, "markdown", True).content
    assert DESCRIPTION in content
    assert "25 litres" in content and "820 g" in content
    assert REVIEW not in content
    assert RELATED not in content
    assert COOKIE not in content


def test_chrome_is_dropped_from_the_visible_tree_only_where_it_is_beside_the_content() -> None:
    # A wrapper whose class happens to name reviews but holds the page is not a widget.
    root = parse_html(
        _page(f'<div class="page has-reviews"><h1>Trail 25 Pack</h1><p>{DESCRIPTION}</p></div>')
    )
    assert root is not None
    drop_product_chrome(root)
    assert DESCRIPTION in text_of(root)
    # "reviewer" is not "review"; a word inside another word is not a match either.
    root = parse_html(
        _page(
            f'<p class="reviewer-note">{DESCRIPTION}</p><p class="unrelated">{REVIEW}</p>'
            f'<p class="product-recommendations">{RELATED}</p>'
        )
    )
    assert root is not None
    drop_product_chrome(root)
    text = text_of(root)
    assert DESCRIPTION in text and REVIEW in text and RELATED not in text


def test_rating_summaries_and_testimonials_are_not_review_widgets() -> None:
    summary = "4.8 out of 5 stars from 1,316 reviews"
    quote = "The most comfortable pack I have carried in years, says Trail Magazine."
    root = parse_html(
        _page(
            f'<div class="review-summary">{summary}</div><div class="product-rating">4.8</div>'
            f'<div class="testimonial-card home-review-card"><p>{quote * 20}</p></div>'
            f'<div class="cmp-tabs"><p>{DESCRIPTION}</p></div>'
            + "".join(f"<p>Feature {i}: {DESCRIPTION}</p>" for i in range(8))
        )
    )
    assert root is not None
    drop_product_chrome(root)
    text = text_of(root)
    assert summary in text and quote in text and DESCRIPTION in text


def _type_of(html: str) -> str:
    root = parse_html(html)
    assert root is not None
    return detect_page_type(root, "https://e.org/item-2291", json_ld_items(root))


def _microdata(count: int) -> str:
    return "".join(
        f'<div itemscope itemtype="https://schema.org/Product"><h2 itemprop="name">Pack {i}</h2>'
        f'<span itemprop="price">89.95</span></div>'
        for i in range(count)
    )


@pytest.mark.parametrize(
    ("body", "head", "expected"),
    [
        (_microdata(1), "", "product"),
        (_microdata(4), "", "page"),  # a grid of products, not a product page
        ("<p>Trail pack</p>", '<meta property="product:price:amount" content="89.95">', "product"),
        ("<p>Trail pack</p>", "", "page"),
    ],
)
def test_product_microdata_or_a_price_tag_make_an_otherwise_untyped_page_a_product(
    body: str, head: str, expected: str
) -> None:
    assert _type_of(_page(f"<main>{body}</main>", head)) == expected


def test_a_rail_heading_drops_its_section_up_to_the_next_heading_as_high() -> None:
    body = etree.fromstring(
        "<body><h1>Trail 25 Pack</h1><p>DESCRIPTION</p>"
        "<h2>People who viewed this item also viewed</h2><p>RAIL one</p><h3>Deals</h3>"
        "<p>RAIL two</p><h2>Specifications</h2><p>SPECS</p>"
        "<h2>Similar items</h2><ul><li>RAIL three</li></ul></body>"
    )
    drop_product_rails(body)
    text = text_of(body)
    assert "DESCRIPTION" in text and "Specifications" in text and "SPECS" in text
    assert "RAIL" not in text and "viewed" not in text and "Similar" not in text


def test_a_block_rendered_twice_is_kept_once_but_short_labels_may_recur() -> None:
    body = etree.fromstring(
        "<body><h2>Soft wool</h2><p>Superfine fibers regulate temperature.</p>"
        "<ul><li>Size: 10</li><li>Fits true to size</li></ul>"
        "<h2>Soft wool</h2><p>Superfine fibers regulate  temperature.</p>"
        "<ul><li>Size: 10</li><li><p>Fits true to size</p></li></ul></body>"
    )
    drop_repeated_blocks(body)
    text = " ".join(text_of(body).split())
    assert text.count("Superfine fibers") == 1 and text.count("Fits true to size") == 1
    assert text.count("Soft wool") == 2 and text.count("Size: 10") == 2


@pytest.mark.parametrize("in_page", [False, True])
def test_repeats_and_widget_lines_go_from_a_body_that_sits_in_its_page(in_page: bool) -> None:
    # The selection can be the page's own <body>, inside its <html>: cleaned all the same.
    markup = (
        "<body><p>Superfine fibers regulate temperature.</p><p>Add to cart</p>"
        "<p>Superfine fibers regulate temperature.</p></body>"
    )
    tree = etree.fromstring(f"<html>{markup}</html>" if in_page else markup)
    body = tree.find("body") if in_page else tree
    drop_repeated_blocks(body)
    drop_widget_lines(body)
    text = text_of(body)
    assert text.count("Superfine fibers") == 1 and "Add to cart" not in text


def test_buying_widget_lines_go_but_the_facts_that_mention_them_stay() -> None:
    body = etree.fromstring(
        "<body><h1>Trail 25 Pack</h1><p>Add to cart</p><p>Free shipping on orders over $50</p>"
        "<ul><li>Select a size</li><li>Pay in 4 interest-free payments with Klarna</li></ul>"
        "<p>Sold and shipped by Trailworks</p><p>Order within 3 hr 52 min</p>"
        "<p>Low in stock, only 2 left</p><p>Sale price $79.00</p><p>Sponsored</p>"
        "<p>Verified buyer</p><p>No reviews yet</p><p>Loading reviews...</p>"
        "<p>Water resistant nylon; free shipping labels are in the lid pocket.</p>"
        "<p>Sold out sizes restock each spring, and the pack itself comes with a lifetime"
        " warranty that covers the frame, the zips and every seam.</p></body>"
    )
    drop_widget_lines(body)
    text = text_of(body)
    assert "Trail 25 Pack" in text and "Water resistant" in text and "lifetime warranty" in text
    assert "Add to cart" not in text and "Free shipping on" not in text
    assert "Select a size" not in text and "Klarna" not in text
    for gone in ("Sold and shipped", "Order within", "Low in stock", "Sale price", "Sponsored"):
        assert gone not in text
    assert "Verified" not in text and "No reviews" not in text and "Loading" not in text


def test_script_notices_go_but_product_text_about_cookies_or_email_stays() -> None:
    body = etree.fromstring(
        "<body><h1>Trail 25 Pack</h1>"
        "<p>We use cookies to improve your browsing experience and for marketing.</p>"
        "<p>Cookies collect information about how you use a website.</p>"
        "<p>Oops! Something went wrong. Please try again.</p>"
        "<p>By providing my email, I consent to receive marketing e-mails.</p>"
        "<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit.</p>"
        "<p>The lid pocket holds a phone, snacks and a bag of cookies for the summit.</p>"
        "<p>Register your email after purchase to extend the warranty.</p></body>"
    )
    drop_widget_lines(body)
    text = text_of(body)
    assert "Trail 25 Pack" in text and "bag of cookies" in text and "Register your" in text
    for gone in ("We use cookies", "Cookies collect", "Oops", "By providing", "Lorem"):
        assert gone not in text


def test_a_newsletter_signup_block_is_shop_chrome() -> None:
    signup = "Join the trail club and get ten percent off your first order today."
    root = parse_html(
        _page(
            f'<div class="klaviyo-form newsletter-signup"><p>{signup}</p></div>'
            + "".join(f"<p>Feature {i}: {DESCRIPTION}</p>" for i in range(8))
        )
    )
    assert root is not None
    drop_product_chrome(root)
    text = text_of(root)
    assert signup not in text and DESCRIPTION in text


def test_json_ld_name_is_added_only_when_the_selection_has_no_top_heading() -> None:
    long_name = "Trailworks Summit Series Trail 25 Pack, Unisex Hiking Rucksack, Forest Green"
    item = {"@type": "Product", "name": long_name, "description": DESCRIPTION}
    body = etree.fromstring(f"<body><h1>Trail 25 Pack</h1><p>{DESCRIPTION}</p></body>")
    add_product_facts(body, [item])
    assert "Trailworks" not in text_of(body)
    body = etree.fromstring(f"<body><p>{DESCRIPTION}</p></body>")
    add_product_facts(body, [item])
    assert body[0].tag == "h1" and body[0].text == long_name


def _spec_rows(rows: list[tuple[str, str]], link: bool = False) -> str:
    cells = "".join(
        f'<div class="row"><div><span>{label}</span></div><div class="v">'
        f"{f'<a href=/x>{value}</a>' if link else value}</div></div>"
        for label, value in rows
    )
    return f'<div class="sheet">{cells}</div>'


SPEC_ROWS = [("Height", "3.2 cm"), ("Width", "31 cm"), ("Weight", "653 g"), ("Keycaps", "ABS")]


def test_a_sheet_of_label_and_value_rows_left_out_is_added_as_a_list() -> None:
    root = parse_html(
        _page(f"<main><h1>Trail 25 Pack</h1><p>{DESCRIPTION}</p>{_spec_rows(SPEC_ROWS)}</main>")
    )
    assert root is not None
    body = etree.fromstring(f"<body><h1>Trail 25 Pack</h1><p>{DESCRIPTION}</p></body>")
    add_missing_specs(root, body)
    items = [text_of(li) for li in body.iter("li")]
    assert items == ["Height: 3.2 cm", "Width: 31 cm", "Weight: 653 g", "Keycaps: ABS"]
    # Already selected: not added twice.
    add_missing_specs(root, body)
    assert len(list(body.iter("li"))) == 4


@pytest.mark.parametrize(
    "rows",
    [
        _spec_rows(SPEC_ROWS[:3]),  # too few rows to be a sheet
        _spec_rows(SPEC_ROWS, link=True),  # a menu of links
        _spec_rows([(f"Colour {i}", "Green") for i in range(5)]),  # no value holds a figure
        f"<footer>{_spec_rows(SPEC_ROWS)}</footer>",  # the site's chrome
    ],
)
def test_rows_that_are_no_spec_sheet_are_not_added(rows: str) -> None:
    root = parse_html(_page(f"<main><h1>Trail 25 Pack</h1><p>{DESCRIPTION}</p>{rows}</main>"))
    assert root is not None
    body = etree.fromstring(f"<body><p>{DESCRIPTION}</p></body>")
    add_missing_specs(root, body)
    assert body.find(".//li") is None


def test_buyer_feedback_is_a_review_widget() -> None:
    feedback = "".join(f"<li>{REVIEW} ({i})</li>" for i in range(8))
    root = parse_html(
        _page(
            f'<div class="seller-feedback"><ul>{feedback}</ul></div>'
            + "".join(f"<p>Feature {i}: {DESCRIPTION}</p>" for i in range(8))
        )
    )
    assert root is not None
    drop_product_chrome(root)
    text = text_of(root)
    assert REVIEW not in text and DESCRIPTION in text


def test_a_category_page_loses_the_shops_review_widget_too() -> None:
    reviews = "".join(f'<li class="jdgm-rev"><p>{REVIEW} ({i})</p></li>' for i in range(8))
    intro = "".join(f"<p>Guide {i}: {DESCRIPTION}</p>" for i in range(12))
    cards = "".join(
        f'<li class="card"><a href="/products/pack-{i}">Trail Pack {i}</a> $8{i}.00</li>'
        for i in range(8)
    )
    html = _page(
        f"<main><h1>Day packs</h1>{intro}<ul class='grid'>{cards}</ul>"
        f'<div class="jdgm-widget jdgm-review-widget"><h2>Customer reviews</h2>'
        f"<ul>{reviews}</ul></div></main>",
        '<meta property="og:type" content="product.group">',
    )
    content = extract(html, "https://shop.e.org/collections/day-packs", "markdown", True).content
    assert DESCRIPTION in content and "Trail Pack 3" in content
    assert REVIEW not in content


def test_review_named_cards_of_a_run_and_trusted_by_sections_are_not_chrome() -> None:
    # A roundup's cards, each named for the review it links to, are the content.
    cards = "".join(
        f'<div class="product-widget roundup-review"><p>{REVIEW} ({i})</p>'
        + f"<p>{DESCRIPTION}</p>" * 6
        + "</div>"
        for i in range(3)
    )
    trusted = "Rated the best trail pack of the year by three outdoor magazines."
    root = parse_html(
        _page(
            f"<main>{cards}<div class='section-trusted_grid'><p>{trusted}</p></div>"
            + "".join(f"<p>Feature {i}: {DESCRIPTION}</p>" for i in range(30))
            + "</main>"
        )
    )
    assert root is not None
    drop_product_chrome(root)
    text = text_of(root)
    assert REVIEW in text and trusted in text
