"""Streamed server rendering (`_streaming`): late hidden chunks go into their slots."""

from __future__ import annotations

from openmono_scrape.extract import extract
from openmono_scrape.extract._dom import parse_html, text_of
from openmono_scrape.extract._streaming import resolve_streamed_chunks

STORY = (
    "Index funds track a market index such as the S&P 500, so an investor owns a small slice of "
    "every company in it and pays far lower fees than an actively managed fund would charge. "
)


def test_chunks_replace_their_fallbacks_in_document_order() -> None:
    root = parse_html(
        "<html><body><main><h1>Index funds</h1><template id='B:0'></template>"
        "<div>Loading paragraph...</div><p>Between the slots.</p><template id='B:1'></template>"
        "<div>Loading image...</div></main>"
        "<div hidden id='S:1'><p>Second chunk.</p></div>"
        "<div hidden id='S:0'><p>First chunk.</p><template id='P:2'></template></div>"
        "<div hidden id='S:2'><p>Postponed segment.</p></div></body></html>"
    )
    resolve_streamed_chunks(root)
    main = root.find(".//main")
    assert [text_of(p) for p in main.iter("p")] == [
        "First chunk.",
        "Postponed segment.",
        "Between the slots.",
        "Second chunk.",
    ]
    assert "Loading" not in text_of(root)
    assert root.find(".//div[@hidden]") is None


def test_a_fallback_that_holds_other_slots_is_kept() -> None:
    # The "fallback" after a slot is sometimes the page's own shell, with slots of its own.
    root = parse_html(
        "<html><body><template id='B:0'></template><div id='shell'><template id='B:1'></template>"
        "<div>Loading...</div></div><div hidden id='S:0'><p>Banner.</p></div>"
        "<div hidden id='S:1'><p>Article text.</p></div></body></html>"
    )
    resolve_streamed_chunks(root)
    shell = root.find(".//div[@id='shell']")
    assert shell is not None and text_of(shell) == "Article text."


def test_a_streamed_article_is_extracted_instead_of_its_placeholders() -> None:
    html = (
        "<!DOCTYPE html><html><head><title>Index funds</title>"
        "<meta property='og:type' content='article'></head><body><main><article>"
        "<h1>Index funds</h1><template id='B:0'></template><div>Loading paragraph...</div>"
        "<template id='B:1'></template><div>Loading paragraph...</div></article></main>"
        f"<div hidden id='S:0'><p>{STORY * 3}</p></div>"
        f"<div hidden id='S:1'><p>{STORY * 2}</p></div></body></html>"
    )
    content = extract(html, "https://e.org/investing/index-funds", "markdown", True).content
    assert STORY.strip() in content
    assert "Loading paragraph" not in content


def test_a_chunk_of_link_cards_stays_hidden() -> None:
    # A streamed "Complete the look" carousel is other pages' cards, not this page's text.
    cards = "".join(
        f"<li><a href='/p/{n}'>Faux leather jacket number {n}</a></li>" for n in range(6)
    )
    root = parse_html(
        "<html><body><main><p>Jacket.</p><template id='B:0'></template><div>Loading...</div>"
        f"</main><div hidden id='S:0'><h3>Complete the look</h3><ul>{cards}</ul>"
        # A loader script in the chunk is not text a reader sees: it does not dilute the links.
        f"<script>loader.start('carousel', {{'items': 12, 'lazy': true}});{'x=1;' * 200}</script>"
        "</div>"
        "</body></html>"
    )
    resolve_streamed_chunks(root)
    main = root.find(".//main")
    assert "Faux leather" not in text_of(main)
