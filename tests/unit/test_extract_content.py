"""What extraction keeps and drops: hidden text, scripts, chrome, formats, charsets, bad input."""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor

import pytest
from openmono_scrape.extract import Extracted, extract

from tests.unit.extract_pages import FOOTER, NAV, PAGE_URL, PARAGRAPHS, SIDEBAR, article_page

HIDDEN = (
    '<p style="display: none">HIDDEN_DISPLAY_NONE text</p>'
    '<p style="color:red;visibility:hidden">HIDDEN_VISIBILITY text</p>'
    "<p hidden>HIDDEN_ATTRIBUTE text</p>"
    '<div aria-hidden="true">HIDDEN_ARIA text</div>'
    '<input type="hidden" value="HIDDEN_INPUT">'
    "<noscript>NOSCRIPT_TEXT enable javascript</noscript>"
    "<template><p>TEMPLATE_TEXT</p></template>"
    '<div class="layout w-condition-invisible"><p>WEBFLOW_HIDDEN text</p></div>'
)
MARKERS = (
    "HIDDEN_DISPLAY_NONE",
    "HIDDEN_VISIBILITY",
    "HIDDEN_ATTRIBUTE",
    "HIDDEN_ARIA",
    "HIDDEN_INPUT",
    "NOSCRIPT_TEXT",
    "TEMPLATE_TEXT",
    "WEBFLOW_HIDDEN",
    "SCRIPT_PAYLOAD",
    "SCRIPT_TAIL",
    "color: red",
)


@pytest.mark.parametrize("fmt", ["markdown", "text", "html"])
@pytest.mark.parametrize("main_content", [True, False])
def test_hidden_text_scripts_and_styles_are_dropped(fmt: str, main_content: bool) -> None:
    content = extract(article_page(HIDDEN), PAGE_URL, fmt, main_content).content  # type: ignore[arg-type]
    assert PARAGRAPHS[0] in content
    for marker in MARKERS:
        assert marker not in content
    assert "<script" not in content and "<style" not in content


def test_a_link_hidden_from_screen_readers_is_still_seen() -> None:
    excerpt = "The harbour master explains why the ferries now leave an hour earlier in winter."
    html = article_page(
        f'<p><a href="/story" aria-hidden="true" tabindex="-1">{excerpt}</a></p>'
        '<div aria-hidden="true"><p>HIDDEN_ARIA panel text</p></div>'
    )
    content = extract(html, PAGE_URL, "text", False).content
    assert excerpt in content
    assert "HIDDEN_ARIA" not in content


def test_a_section_copy_the_page_hides_at_desktop_width_is_read_once() -> None:
    # A site builder's page: one copy of the story per breakpoint, the stylesheet showing one.
    story = "".join(f"<p>{text}</p>" for text in PARAGRAPHS)
    variants = "".join(
        f'<div class="ssr-variant {hide}">{story}</div>'
        for hide in ("hide-t hide-m", "hide-d hide-m", "hide-d hide-t")
    )
    shown_again = f'<div class="wide-only">{PARAGRAPHS[0].upper()}</div>'
    styles = (
        "<style>@media (min-width: 1200px) { .hide-d { display: none !important } }"
        "@media (min-width: 810px) and (max-width: 1199px) { .hide-t { display: none } }"
        "@media (max-width: 809px) { .hide-m { display: none } }"
        # A later rule showing a class again wins, as in a browser.
        "@media screen and (min-width: 1000px) { .wide-only { display: none } }"
        "@media (min-width: 1100px) { .wide-only { color: red; display: block } }</style>"
    )
    html = (
        f"<html><head><title>Harbour</title>{styles}</head><body>{NAV}"
        f"<main><h1>A Day in the Harbour Town</h1>{variants}{shown_again}</main>{FOOTER}"
        "</body></html>"
    )
    for main_content in (True, False):
        content = extract(html, PAGE_URL, "markdown", main_content).content
        assert all(content.count(text) == 1 for text in PARAGRAPHS)
        assert PARAGRAPHS[0].upper() in content


def test_main_content_leaves_out_nav_sidebar_and_footer() -> None:
    content = extract(article_page(), PAGE_URL, "markdown", True).content
    assert all(text in content for text in PARAGRAPHS)
    for chrome in ("About us", "Sidebar teaser one", "Copyright 2024"):
        assert chrome not in content


def test_whole_page_includes_nav_sidebar_and_footer() -> None:
    content = extract(article_page(), PAGE_URL, "markdown", False).content
    assert all(text in content for text in PARAGRAPHS)
    for chrome in ("About us", "Sidebar teaser one", "Copyright 2024", "# A Day in the Harbour"):
        assert chrome in content


def test_text_format_is_what_a_reader_sees() -> None:
    extra = '<h2>Tides</h2><p>See <a href="/t">the <b>tables</b></a>.</p><pre>x  =  1</pre>'
    text = extract(article_page(extra), PAGE_URL, "text", True).content
    assert "Tides\n\nSee the tables." in text
    assert "x  =  1" in text
    for markup in ("#", "](", "**", "```", "<"):
        assert markup not in text


def test_html_format_is_the_cleaned_main_fragment() -> None:
    extra = '<h2>Tides</h2><pre><code class="language-py">x  =  1</code></pre>'
    html = extract(article_page(extra), PAGE_URL, "html", True).content
    assert html.startswith("<body>") and html.endswith("</body>")
    assert "<h2>Tides</h2>" in html
    assert '<pre><code class="language-py">x  =  1</code></pre>' in html
    assert f"<p>{PARAGRAPHS[0]}</p>" in html
    assert "About us" not in html


def test_html_format_of_the_whole_page_keeps_the_chrome() -> None:
    html = extract(article_page(), PAGE_URL, "html", False).content
    assert "About us" in html and "Sidebar teaser one" in html
    assert '<a href="https://example.com/about">About us</a>' in html  # cleaned, links absolute


def test_html_format_has_no_handlers_or_inline_styles() -> None:
    extra = (
        '<p onclick="steal()" style="color: blue">Click <a href="/x" onmouseover="x()">here</a></p>'
    )
    for main_content in (True, False):
        html = extract(article_page(extra), PAGE_URL, "html", main_content).content
        assert "steal" not in html and "onmouseover" not in html and "color: blue" not in html
        assert "here" in html


def test_html_format_links_are_absolute() -> None:
    extra = '<p>See <a href="/tides">the tide tables</a> and <a href="javascript:x()">this</a>.</p>'
    html = extract(article_page(extra), PAGE_URL, "html", True).content
    assert '<a href="https://example.com/tides">the tide tables</a>' in html
    assert "javascript" not in html


def test_latin1_page_already_decoded() -> None:
    raw = article_page("<p>Crème brûlée à la façon du chef, déjà célèbre.</p>").encode("latin-1")
    content = extract(raw.decode("latin-1"), PAGE_URL, "markdown", True).content
    assert "Crème brûlée à la façon du chef, déjà célèbre." in content


def test_shift_jis_page_with_its_declarations_already_decoded() -> None:
    sentence = "港町の朝はゆっくりと始まり、漁船が防波堤に戻ってくる。"
    body = "".join(
        f"<p>{sentence}{i}番目の段落です。市場の広場では土曜日の市が開かれる。</p>"
        for i in range(6)
    )
    page = (
        '<?xml version="1.0" encoding="Shift_JIS"?>'
        '<html><head><meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">'
        f"<title>港町の一日</title></head><body><article>{body}</article></body></html>"
    )
    decoded = page.encode("shift_jis").decode("shift_jis")
    result = extract(decoded, PAGE_URL, "markdown", True)
    assert result.title == "港町の一日"
    assert f"{sentence}0番目の段落です。" in result.content


def test_control_characters_go_and_a_declared_charset_is_not_reapplied() -> None:
    # A page already decoded from windows-1252 still says so: its text must not be decoded twice.
    page = article_page("<p>Caf\x00é cr\x07ème, na\x7fïve r\x1bésumé of the día.</p>").replace(
        "<head>", '<head><meta charset="windows-1252">', 1
    )
    content = extract(page, PAGE_URL, "text", True).content
    assert "Café crème, naïve résumé of the día." in content


def test_a_lone_surrogate_costs_one_character_not_its_paragraph() -> None:
    # Not encodable as UTF-8: the surrogate becomes U+FFFD and the rest of its paragraph stays.
    page = article_page("<p>Broken \ud800 pair and a bell\x07 in a line of text here.</p>")
    content = extract(page, PAGE_URL, "text", True).content
    assert "Broken \ufffd pair and a bell in a line of text here." in content


def test_title_prefers_title_then_og_title_then_h1() -> None:
    og = '<meta property="og:title" content="From OG">'
    assert extract(
        article_page(head=f"<title>  From\n Title </title>{og}"), PAGE_URL, "text", True
    ).title == ("From Title")
    assert extract(article_page(head=og), PAGE_URL, "text", True).title == "From OG"
    assert (
        extract(article_page(head=""), PAGE_URL, "text", True).title == "A Day in the Harbour Town"
    )
    assert extract("<p>no title here</p>", PAGE_URL, "text", True).title is None


@pytest.mark.parametrize(
    "html",
    [
        "",
        "   \n\t ",
        "\x00\x01\x02",
        "<html><head></head><body></body></html>",
        "<html><body><script>only()</script><style>p{}</style></body></html>",
        '<div hidden><p>all hidden</p></div><p style="display:none">also hidden</p>',
        "<!-- only a comment -->",
        "<?xml version='1.0'?>",
    ],
)
@pytest.mark.parametrize("fmt", ["markdown", "text", "html"])
def test_empty_and_garbage_give_empty_content(html: str, fmt: str) -> None:
    result = extract(html, PAGE_URL, fmt, True)  # type: ignore[arg-type]
    assert result == Extracted(title=None, content="")


def test_stray_angle_brackets_are_text() -> None:
    assert extract("<<<<>>>>", PAGE_URL, "text", False).content == "<<<<>>>>"


def test_random_bytes_never_raise() -> None:
    rng = random.Random(7)
    for _ in range(30):
        blob = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 3000))).decode("latin-1")
        for main_content in (True, False):
            result = extract(blob, PAGE_URL, "markdown", main_content)
            assert isinstance(result.content, str)


def test_json_blob_page_is_returned_as_text() -> None:
    blob = '{"status": "ok", "items": [1, 2, 3], "message": "hello harbour"}'
    for page in (blob, f"<html><body><pre>{blob}</pre></body></html>"):
        content = extract(page, PAGE_URL, "text", True).content
        assert content == blob


def test_short_page_falls_back_to_its_visible_text() -> None:
    result = extract(
        "<html><body><p>Just one short line.</p></body></html>", PAGE_URL, "markdown", True
    )
    assert result.content == "Just one short line."


def test_deeply_nested_page_keeps_its_text() -> None:
    page = "<div>" * 3000 + "<p>deep harbour text</p>" + "</div>" * 3000
    for main_content in (True, False):
        assert "deep harbour text" in extract(page, PAGE_URL, "markdown", main_content).content


def test_unclosed_nesting_never_raises() -> None:
    page = "<p>before</p>" + "<span><b><i>" * 20000 + "lost in the middle"
    for fmt in ("markdown", "text", "html"):
        result = extract(page, PAGE_URL, fmt, False)  # type: ignore[arg-type]
        assert "before" in result.content


def test_huge_page() -> None:
    text = " ".join(PARAGRAPHS)
    paragraphs = "".join(f"<p>Part {i}. {text}</p>" for i in range(1500))  # about 1 MB
    for main_content in (True, False):
        content = extract(article_page(paragraphs), PAGE_URL, "markdown", main_content).content
        assert f"Part 1499. {text}" in content
        assert content.count(PARAGRAPHS[3]) >= 1500


def test_concurrent_calls_match_sequential_results() -> None:
    pages = [
        article_page(f"<h2>Section {i}</h2><p>Paragraph number {i} about the harbour.</p>")
        for i in range(6)
    ]
    expected = [extract(page, PAGE_URL, "markdown", True) for page in pages]
    with ThreadPoolExecutor(max_workers=4) as pool:
        for _ in range(3):
            got = list(pool.map(lambda page: extract(page, PAGE_URL, "markdown", True), pages))
            assert got == expected


def test_article_split_into_chunks_comes_back_whole() -> None:
    # One article cut into same-class chunks with ads between them (as some magazines do); the
    # selector alone keeps the first chunk only. A comment reusing the class stays out.
    def chunk(i: int) -> str:
        paragraphs = "".join(
            f"<p>Chunk {i} paragraph {j}. {PARAGRAPHS[(i + j) % 4]}</p>" for j in range(3)
        )
        return (
            f'<div class="grid"><div class="grid-item article-body__content">{paragraphs}</div>'
            '</div><div class="ad-slot"><a href="/ad">Advertisement</a></div>'
        )

    comment = (
        "<section class='comments'><div class='article-body__content'><p>A reader comment long "
        "enough to look like prose, written by someone in the comments section below.</p></div>"
        "</section>"
    )
    page = (
        f"<html><head><title>T</title></head><body>{NAV}<article><div class='chunks'>"
        f"{''.join(chunk(i) for i in range(3))}</div></article>{SIDEBAR}{comment}{FOOTER}"
        "</body></html>"
    )
    md = extract(page, PAGE_URL, "markdown", True).content
    positions = [md.find(f"Chunk {i} paragraph {j}.") for i in range(3) for j in range(3)]
    assert -1 not in positions and positions == sorted(positions)
    assert "reader comment" not in md and "Advertisement" not in md


def test_you_may_also_like_section_is_cut() -> None:
    teasers = "".join(
        f"<p>Teaser {i}: {PARAGRAPHS[i % 4]} {PARAGRAPHS[(i + 1) % 4]}</p>" for i in range(6)
    )
    page = article_page().replace("</article>", f"<h3>You may also like...</h3>{teasers}</article>")
    content = extract(page, PAGE_URL, "markdown", True).content
    assert all(text in content for text in PARAGRAPHS)
    assert "Teaser" not in content and "You may also like" not in content


def test_related_label_before_the_article_body_cuts_nothing() -> None:
    page = article_page("", head="<title>T</title>").replace(
        "<article><h1>", "<article><h2>Related</h2><h1>"
    )
    content = extract(page, PAGE_URL, "markdown", True).content
    assert all(text in content for text in PARAGRAPHS)


def test_embedded_tweet_quoted_in_the_article_is_kept() -> None:
    tweet = (
        '<div class="social-media-embed"><blockquote class="twitter-tweet"><p lang="en">The '
        'ferry is late again and the whole harbour is talking about it <a href="https://t.co/x">'
        "pic.twitter.com/x</a></p>— Harbour Watcher (@harbourwatch) November 18, 2019"
        "</blockquote></div>"
    )
    content = extract(article_page(tweet), PAGE_URL, "markdown", True).content
    assert "The ferry is late again and the whole harbour is talking about it" in content
    assert all(text in content for text in PARAGRAPHS)


@pytest.mark.parametrize(
    "page",
    [
        "<ul><li>" * 1000 + "deep harbour text" + "</li></ul>" * 1000,
        "<table><tr><td>" * 400 + "deep harbour text",
        "<blockquote>" * 1200 + "deep harbour text" + "</blockquote>" * 1200,
        "<p>" + "<b><i>" * 3000 + "deep harbour text",
    ],
    ids=["lists", "tables", "quotes", "inline"],
)
@pytest.mark.parametrize("fmt", ["markdown", "text", "html"])
def test_deep_structures_keep_their_text(page: str, fmt: str) -> None:
    for main_content in (True, False):
        content = extract(page, PAGE_URL, fmt, main_content).content  # type: ignore[arg-type]
        assert "deep harbour text" in content


def test_text_loose_in_a_list_is_kept() -> None:
    page = "<ul>loose text<li>item one</li>tail text</ul>"
    assert extract(page, PAGE_URL, "markdown", False).content == (
        "loose text\n\n- item one\n\ntail text"
    )


def test_a_button_left_open_around_the_page_keeps_the_page() -> None:
    # A menu button closed inside a div it opened: the parser ignores that `</button>`, so the
    # button holds the whole page; a browser shows that text. A real button's label stays out.
    paragraphs = "".join(f"<p>{text}</p>" for text in PARAGRAPHS)
    html = (
        "<!DOCTYPE html><html><head><title>A Day in the Harbour Town</title></head><body>"
        f'<header><button class="menu-button"><div><div></button></div>{NAV}</header>'
        f"<main><article><h1>A Day in the Harbour Town</h1>{paragraphs}"
        "<button>SUBSCRIBE_LABEL</button></article></main>"
        f"{FOOTER}</body></html>"
    )
    content = extract(html, PAGE_URL, "markdown", True).content
    for text in PARAGRAPHS:
        assert text in content
    assert "SUBSCRIBE_LABEL" not in content
