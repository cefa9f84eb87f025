"""The main region candidate: the page's own main element (or body) without chrome, and when it
replaces the content selection (`_region`)."""

from __future__ import annotations

from typing import Any

from lxml import etree
from openmono_scrape.extract import extract
from openmono_scrape.extract._dom import parse_html, text_of
from openmono_scrape.extract._region import (
    drop_repeated_labels,
    drop_screen_reader_text,
    main_region,
    prefer_main_region,
)

SECTIONS = [
    "Our engineers survey your house, size the heat pump to its rooms and plan where the "
    "outdoor unit goes, so the installation day holds no surprises for you or your neighbours.",
    "We fit the pump, the cylinder and the controls in two days, then set the system up with "
    "you and show you how to read its app, change its schedule and check its running costs.",
    "Every installation has a seven year warranty on parts and labour, and a service visit "
    "each year for the first two years, booked by us at a time that suits you.",
]
CHROME = (
    '<a href="#content">Skip to content</a>'
    '<header class="top"><a href="/">Home</a> <a href="/shop">Shop all heat pumps</a></header>'
    '<nav><a href="/a">About the company</a> <a href="/b">Careers with us</a></nav>'
    '<div class="cookie-banner"><p>We use cookies to improve your experience.</p></div>'
)
IN_MAIN_CHROME = (
    '<ol class="breadcrumbs"><li><a href="/">Home page</a></li><li>Services</li></ol>'
    '<div class="share-bar"><a href="/s">Share on social media</a></div>'
)
FOOTER = (
    '<form class="signup"><p>Get our newsletter every month</p></form>'
    "<footer><p>Copyright 2026 Warm Homes Ltd, all rights reserved.</p></footer>"
)


def _root(body: str) -> Any:
    root = parse_html(f"<html><head><title>t</title></head><body>{body}</body></html>")
    assert root is not None
    return root


def _service_page() -> Any:
    sections = "".join(
        f"<section><h2>Step {i}</h2><p>{t}</p></section>" for i, t in enumerate(SECTIONS)
    )
    return _root(
        f"{CHROME}<main id='content'><header><h1>Heat pump installation</h1></header>"
        f"{IN_MAIN_CHROME}{sections}<ul class='pagination'><li><a href='?p=2'>Next page</a>"
        f"</li></ul></main>{FOOTER}"
    )


def _selection(text: str) -> Any:
    body = etree.Element("body")
    etree.SubElement(body, "p").text = text
    return body


def test_main_region_keeps_the_sections_and_drops_the_chrome() -> None:
    region = main_region(_service_page())
    assert region is not None and region.tag == "main"
    text = " ".join(text_of(region).split())
    assert "Heat pump installation" in text  # the main region's own header is its title
    for section in SECTIONS:
        assert section in text
    for chrome in ("Skip to", "Shop all", "Careers", "cookies", "Share on", "Next page", "Home"):
        assert chrome not in text


def test_the_body_is_the_region_when_main_holds_only_a_hero() -> None:
    sections = "".join(f"<p>{t}</p>" for t in SECTIONS)
    region = main_region(_root(f"{CHROME}<main><h1>Warm homes</h1></main>{sections}{FOOTER}"))
    assert region is not None and region.tag == "body"
    assert SECTIONS[0] in text_of(region)
    assert "Copyright" not in text_of(region)


def test_a_form_or_a_layout_wrapper_around_the_page_is_not_chrome() -> None:
    # A form around the whole page (ASP.NET sites) and a wrapper whose class names a sidebar
    # layout hold the content: only small elements are dropped by their class name.
    sections = "".join(f"<p>{t}</p>" for t in SECTIONS)
    page = f"<form id='aspnetForm'><div class='layout with-sidebar'>{sections}</div></form>"
    region = main_region(_root(page))
    assert region is not None
    assert all(section in text_of(region) for section in SECTIONS)


def test_the_region_replaces_a_selection_that_kept_only_the_intro() -> None:
    root = _service_page()
    chosen = prefer_main_region(root, _selection(SECTIONS[0]), "page")
    assert chosen is not None and chosen.tag == "main"
    assert SECTIONS[2] in text_of(chosen)


def test_a_selection_covering_the_region_stays() -> None:
    selected = _selection(" ".join(SECTIONS) + " Heat pump installation Step 0 Step 1 Step 2")
    assert prefer_main_region(_service_page(), selected, "page") is selected


def test_articles_keep_a_selection_that_is_not_a_sliver_of_the_page() -> None:
    selected = _selection(SECTIONS[0])
    assert prefer_main_region(_service_page(), selected, "article") is selected


def test_an_article_selection_that_is_a_sliver_of_the_page_gives_way_to_the_region() -> None:
    # The selection kept a caption of a long story: it failed, and the region is the story.
    story = "".join(f"<p>{SECTIONS[i % 3]}</p>" for i in range(30))
    root = _root(f"{CHROME}<main><h1>Heat pumps</h1>{story}</main>{FOOTER}")
    chosen = prefer_main_region(root, _selection("Photo: the outdoor unit"), "article")
    assert chosen is not None and chosen.tag == "main"
    assert SECTIONS[2] in text_of(chosen) and "Careers" not in text_of(chosen)
    # Nothing selected at all: the region rather than the whole page, chrome and all.
    root = _root(f"{CHROME}<main><h1>Heat pumps</h1>{story}</main>{FOOTER}")
    chosen = prefer_main_region(root, None, "article")
    assert chosen is not None and chosen.tag == "main"


def test_a_long_selection_on_an_untyped_page_stays() -> None:
    # 1,200 words of prose are an article's body, whatever else its page holds.
    selected = _selection(" ".join(["prose"] * 1200))
    assert prefer_main_region(_service_page(), selected, "page") is selected


def test_a_collection_takes_its_region_whatever_the_selection() -> None:
    grid = "".join(
        f"<li><a href='/p/{i}'>Product {i} in stoneware</a> $20</li>" for i in range(200)
    )
    # The region is far larger than a long selection: on a collection it is taken all the same.
    selected = _selection(" ".join(["intro"] * 120))
    root = _root(f"{CHROME}<main><h1>Mugs</h1><ul>{grid}</ul></main>{FOOTER}")
    chosen = prefer_main_region(root, selected, "collection")
    assert chosen is not None and chosen.tag == "main"
    # And with no selection at all, as `extract` calls it on collections.
    region = prefer_main_region(_root(f"{CHROME}<ul>{grid}</ul>{FOOTER}"), None, "collection")
    assert region is not None
    text = text_of(region)
    assert "Product 199 in stoneware" in text
    assert "Careers with us" not in text and "newsletter" not in text


def test_a_collection_page_is_its_region_intro_and_grid_without_chrome() -> None:
    intro = " ".join(SECTIONS)
    cards = "".join(
        f"<li class='card'><a href='/p/{i}'><h3>Stoneware mug no. {i}</h3></a><p>$2{i}.00</p></li>"
        for i in range(40)
    )
    html = (
        f"<html><head><title>Mugs</title></head><body>{CHROME}<main><h1>Mugs</h1><p>{intro}</p>"
        f"<ul class='grid'>{cards}</ul></main>{FOOTER}</body></html>"
    )
    content = extract(html, "https://shop.e.org/collections/mugs", "markdown", True).content
    assert SECTIONS[0] in content
    assert "Stoneware mug no. 0" in content and "Stoneware mug no. 39" in content
    for chrome in ("Careers with us", "We use cookies", "newsletter", "Copyright 2026"):
        assert chrome not in content


def test_an_empty_region_keeps_the_selection() -> None:
    root = _root(f"<header>{CHROME}</header>{FOOTER}")
    selected = _selection("what the selection found")
    assert prefer_main_region(root, selected, "collection") is selected
    assert prefer_main_region(_root(f"<header>{CHROME}</header>{FOOTER}"), None, "page") is None


def test_a_selection_of_many_prose_paragraphs_on_an_untyped_page_stays() -> None:
    # Twelve paragraphs of prose are an article (one without JSON-LD), whatever else its page
    # holds: comments and teasers around it make the region larger, not better.
    paragraphs = [f"Paragraph {i} {SECTIONS[i % 3]}" for i in range(12)]
    comments = "".join(f"<p>{t} Reader comment {i}.</p>" for i in range(30) for t in SECTIONS[:1])
    root = _root(f"<main>{''.join(f'<p>{p}</p>' for p in paragraphs)}{comments}</main>")
    selected = etree.Element("body")
    for paragraph in paragraphs:
        etree.SubElement(selected, "p").text = paragraph
    assert prefer_main_region(root, selected, "page") is selected


def test_a_region_that_is_mostly_links_stays_out_of_untyped_pages() -> None:
    links = "".join(
        f"<li><a href='/story/{i}'>Another story number {i}</a></li>" for i in range(60)
    )
    root = _root(f"<main><p>{SECTIONS[0]}</p><ul>{links}</ul></main>")
    selected = _selection(SECTIONS[0])
    assert prefer_main_region(root, selected, "page") is selected


def test_controls_are_dropped_from_the_region_but_a_clickable_card_stays() -> None:
    card = "A clickable teaser that tells the whole story of the new heat pump in a few lines"
    root = _root(
        f"<main><p>{SECTIONS[0]}</p><button>Add to cart</button>"
        "<select><option>Price, low to high</option><option>Newest first</option></select>"
        f'<div role="button"><p>{card}</p></div></main>'
    )
    region = main_region(root)
    assert region is not None
    text = text_of(region)
    assert "Add to cart" not in text
    assert "low to high" not in text
    assert card in text


def test_labels_every_card_repeats_are_dropped_but_prices_and_names_stay() -> None:
    cards = "".join(
        f'<li><a href="/p{n}">Walnut bookcase model {n}</a><span class="price">$79.00</span>'
        '<span class="stock">Notify Me</span><span class="badge">Best seller</span></li>'
        for n in range(4)
    )
    root = _root(
        f"<ul>{cards}</ul><table><tr><td>Yes</td></tr>" + "<tr><td>Yes</td></tr>" * 3 + "</table>"
    )
    body = root.find("body")
    drop_repeated_labels(body)
    text = text_of(body)
    assert "Notify Me" not in text
    assert "Best seller" not in text
    assert text.count("$79.00") == 4
    assert "Walnut bookcase model 3" in text
    assert text.count("Yes") == 4


def test_a_repeated_value_among_many_of_its_slot_is_an_attribute_and_stays() -> None:
    colours = ["Amber", "Sandstone", "Amber", "Indigo", "Amber", "Violet", "Amber"]
    cards = "".join(
        f'<li><a href="/c{n}">Ceramic cup {n}</a><span class="colour">{colour}</span></li>'
        for n, colour in enumerate(colours)
    )
    root = _root(f"<ul>{cards}</ul>")
    body = root.find("body")
    drop_repeated_labels(body)
    assert text_of(body).count("Amber") == 4


def test_a_label_seen_three_times_stays() -> None:
    cards = "".join(f"<li><p>Oak shelf {n}</p><span>Notify Me</span></li>" for n in range(3))
    root = _root(f"<ul>{cards}</ul>")
    body = root.find("body")
    drop_repeated_labels(body)
    assert text_of(body).count("Notify Me") == 3


def test_a_button_that_opens_a_panel_names_a_section_and_stays() -> None:
    root = _root(
        f'<main><button aria-expanded="false" aria-controls="p1">How to use</button>'
        f'<div id="p1"><p>{SECTIONS[1]}</p></div><button>Add to bag</button></main>'
    )
    region = main_region(root)
    assert region is not None
    assert "How to use" in text_of(region)
    assert "Add to bag" not in text_of(region)


def test_screen_reader_only_text_is_dropped_whatever_the_theme_calls_it() -> None:
    root = _root(
        f"<p>{SECTIONS[0]}</p>"
        '<span class="sr-only">Opens in a new window</span>'
        '<dd class="tile__visually-hidden">Trail shoe is available in 3 options</dd>'
        '<div class="field__label show-for-sr">Registration deadline</div>'
        '<span class="plp-price__sr-text">Sale price</span>'
        # Names that only contain the words are not screen-reader classes.
        '<div class="field--label-visually_hidden"><p>Open to all staff</p></div>'
        '<span class="sr-only-focusable">Back to top</span>'
    )
    drop_screen_reader_text(root)
    text = " ".join(text_of(root).split())
    assert SECTIONS[0] in text
    for gone in ("new window", "3 options", "deadline", "Sale price"):
        assert gone not in text
    assert "Open to all staff" in text and "Back to top" in text


def test_a_long_cookie_notice_leaves_the_region() -> None:
    # Longer than the share any other chrome name may hold (a layout wrapper), still chrome.
    policy = " ".join(["These cookies remember your choices and measure visits."] * 12)
    sections = "".join(f"<section><p>{t}</p></section>" for t in SECTIONS)
    region = main_region(_root(f"{sections}<div id='modal_cookie-consent'><p>{policy}</p></div>"))
    assert region is not None
    text = text_of(region)
    assert SECTIONS[2] in text and "cookies remember" not in text


def test_a_footer_by_name_leaves_the_region_but_a_cards_footer_stays() -> None:
    cards = "".join(
        f"<div class='card'><h3><a href='/p{i}'>Post {i}</a></h3><p>{t}</p>"
        f"<div class='card__footer'>By Ann Lee, {i} May</div></div>"
        for i, t in enumerate(SECTIONS)
    )
    region = main_region(
        _root(f"{cards}<div id='Footer'><p>Trademarks belong to their owners.</p></div>")
    )
    assert region is not None
    text = text_of(region)
    assert "By Ann Lee, 2 May" in text and "Trademarks" not in text


def test_a_recently_viewed_rail_leaves_the_region() -> None:
    sections = "".join(f"<section><p>{t}</p></section>" for t in SECTIONS)
    rail = "<div class='recently-viewed'><a href='/x'>Cordless drill kit</a></div>"
    region = main_region(_root(f"{sections}{rail}"))
    assert region is not None
    assert SECTIONS[1] in text_of(region) and "Cordless drill" not in text_of(region)


def test_a_collections_screen_reader_text_stays_out_of_its_content() -> None:
    cards = "".join(
        f"<li class='tile'><a href='/p/{i}'>Trail shoe model {i}</a> <span>$9{i}.00</span>"
        f"<span class='tile__sr-text'>Trail shoe model {i} comes in four colours</span></li>"
        for i in range(6)
    )
    page = f"<main><h1>Trail shoes</h1><p>{SECTIONS[0]}</p><ul>{cards}</ul></main>"
    html = f"<html><body>{page}</body></html>"
    content = extract(html, "https://e.org/collections/trail", "markdown", True).content
    assert "Trail shoe model 3" in content and "four colours" not in content
