"""Markdown shape of extracted content: headings, lists, tables, code, links, escaping."""

from __future__ import annotations

import re

from openmono_scrape.extract import extract

from tests.unit.extract_pages import PAGE_URL, PARAGRAPHS, article_page

CODE = (
    "def greet(name):\n"
    "    # *stars* and _underscores_ and `ticks` stay as typed\n"
    '    return f"hello {name}"  # two  spaces\n'
    "\n"
    "        deeply_indented = [a * b for a, b in pairs]"
)


def _markdown(extra: str, *, main_content: bool = True) -> str:
    return extract(article_page(extra), PAGE_URL, "markdown", main_content).content


def test_headings_are_atx() -> None:
    md = _markdown("<h2>Where the boats go</h2><p>Out past the lighthouse.</p><h3>At night</h3>")
    assert "## Where the boats go" in md.splitlines()
    assert "### At night" in md.splitlines()
    assert not re.search(r"^[=-]{3,}$", md, re.M)  # no setext underlines


def test_nested_lists_keep_their_structure() -> None:
    html = (
        "<ul><li>Fish market<ul><li>Cod and haddock</li><li>Mussels by the kilo</li></ul></li>"
        "<li>Bakery on the corner</li></ul>"
        "<ol><li>Take the ferry</li><li>Walk up the hill</li></ol>"
    )
    lines = _markdown(html).splitlines()
    start = lines.index("- Fish market")
    assert lines[start : start + 4] == [
        "- Fish market",
        "  - Cod and haddock",
        "  - Mussels by the kilo",
        "- Bakery on the corner",
    ]
    assert "1. Take the ferry" in lines and "2. Walk up the hill" in lines


def test_table_is_gfm_with_header_row() -> None:
    html = (
        "<table><thead><tr><th>Boat</th><th>Catch (kg)</th></tr></thead><tbody>"
        "<tr><td>Marie</td><td>120</td></tr><tr><td>Pelican | II</td><td>95</td></tr>"
        "</tbody></table>"
    )
    lines = _markdown(html).splitlines()
    start = lines.index("| Boat | Catch (kg) |")
    assert lines[start + 1] == "| --- | --- |"
    assert lines[start + 2] == "| Marie | 120 |"
    assert lines[start + 3] == "| Pelican \\| II | 95 |"


def test_code_block_is_verbatim_with_its_language() -> None:
    escaped = CODE.replace("&", "&amp;").replace("<", "&lt;")
    md = _markdown(f'<pre><code class="language-python">{escaped}\n</code></pre>')
    assert f"```python\n{CODE}\n```" in md


def test_highlighted_code_with_spans_and_breaks_is_verbatim() -> None:
    # Highlighters wrap tokens in spans; some pages use <br> for newlines inside <pre>.
    html = (
        '<div class="highlight-shell"><pre>'
        '<span class="k">for</span> f <span class="k">in</span> *.txt; do<br>'
        '    echo "$f"  <span class="c"># `quoted` *glob*</span><br>done</pre></div>'
    )
    md = _markdown(html)
    assert '```shell\nfor f in *.txt; do\n    echo "$f"  # `quoted` *glob*\ndone\n```' in md


def test_code_containing_fences_gets_a_longer_fence() -> None:
    md = _markdown("<pre>text with ``` inside\nand more</pre>")
    assert "````\ntext with ``` inside\nand more\n````" in md


def test_inline_code_is_not_escaped() -> None:
    md = _markdown("<p>Call <code>snake_case(*args)</code> or <code>a`b</code> when needed.</p>")
    assert "`snake_case(*args)`" in md
    assert "``a`b``" in md


def test_text_is_escaped_so_it_stays_text() -> None:
    md = _markdown("<p>Use *stars* and __dunder__ but keep snake_case and [brackets] literal.</p>")
    assert "Use \\*stars\\* and \\_\\_dunder\\_\\_ but keep snake_case and \\[brackets\\]" in md


def test_emphasis_and_strong() -> None:
    md = _markdown("<p>This is <strong>very</strong> <em>important</em> news for the harbour.</p>")
    assert "This is **very** *important* news" in md


def test_links_are_absolute() -> None:
    html = (
        '<p>See <a href="/docs/tides">the tide tables</a>, <a href="../archive/">the archive</a>, '
        '<a href="//cdn.example.org/map.pdf">the map</a>, <a href="#top">the top</a> and '
        '<a href="javascript:void(0)">a script link</a> for details.</p>'
    )
    md = _markdown(html)
    assert "[the tide tables](https://example.com/docs/tides)" in md
    assert "[the archive](https://example.com/blog/archive/)" in md
    assert "[the map](https://cdn.example.org/map.pdf)" in md
    assert "[the top](https://example.com/blog/2024/post.html#top)" in md
    assert "a script link" in md and "javascript:" not in md


def test_links_resolve_against_the_base_element() -> None:
    page = article_page(
        '<p>Read <a href="guide.html">the harbour guide</a> first.</p>',
        head='<title>T</title><base href="https://docs.example.net/v2/">',
    )
    for main_content in (True, False):
        md = extract(page, PAGE_URL, "markdown", main_content).content
        assert "[the harbour guide](https://docs.example.net/v2/guide.html)" in md


def test_whole_page_links_are_absolute_too() -> None:
    md = _markdown("", main_content=False)
    assert "[About us](https://example.com/about)" in md


def test_images_are_dropped() -> None:
    md = _markdown('<p>A photo <img src="/img/harbour.jpg" alt="the harbour at dawn"> here.</p>')
    assert "harbour.jpg" not in md and "![" not in md


def test_blockquote() -> None:
    md = _markdown("<blockquote><p>The sea gives and the sea takes.</p></blockquote>")
    assert "> The sea gives and the sea takes." in md


def test_paragraphs_are_separated_by_blank_lines() -> None:
    md = _markdown("")
    assert f"{PARAGRAPHS[0]}\n\n{PARAGRAPHS[1]}" in md


def test_repeated_headline_is_left_to_the_title() -> None:
    result = extract(article_page(), PAGE_URL, "markdown", True)
    assert result.title == "A Day in the Harbour Town"
    assert not result.content.startswith("# A Day in the Harbour Town")


def test_inline_link_in_bare_div_text_stays_in_its_sentence() -> None:
    # Text written straight into a <div> is split around inline elements by the main-content
    # selector; the sentence must come back whole.
    extra = (
        "<div>The figures come from the harbour office, as reported by the weekly "
        '<em><a href="/gazette">Harbour Gazette</a></em>, which has covered the port for decades. '
        "Its archive is open to visitors on weekdays.</div>"
    )
    md = _markdown(extra)
    assert (
        "as reported by the weekly *[Harbour Gazette](https://example.com/gazette)*, which has "
        "covered the port for decades."
    ) in md


def test_headline_repeating_the_title_with_site_name_is_dropped() -> None:
    page = article_page(head="<title>A Day in the Harbour Town | Example Media</title>")
    result = extract(page, PAGE_URL, "markdown", True)
    assert result.title == "A Day in the Harbour Town | Example Media"
    assert result.content.startswith(PARAGRAPHS[0])


def test_heading_that_is_not_the_title_stays() -> None:
    page = article_page(head="<title>Harbour news - Example Media</title>")
    content = extract(page, PAGE_URL, "markdown", True).content
    assert content.startswith(f"# A Day in the Harbour Town\n\n{PARAGRAPHS[0]}")


def test_paragraph_lines_that_look_like_markup_are_escaped() -> None:
    extra = (
        "<p>2024. A year the harbour will remember.</p><p># not a heading</p>"
        "<p>- not a list item</p><p>&gt; not a quote</p>"
    )
    lines = _markdown(extra).splitlines()
    for escaped in (
        "2024\\. A year the harbour will remember.",
        "\\# not a heading",
        "\\- not a list item",
        "\\> not a quote",
    ):
        assert escaped in lines
