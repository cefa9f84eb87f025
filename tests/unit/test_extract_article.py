"""Article furniture trimming (`_article`): short non-story lines go, look-alike text stays."""

from __future__ import annotations

from lxml import etree
from openmono_scrape.extract._article import trim_article_furniture
from openmono_scrape.extract._chunks import add_missing_chunks
from openmono_scrape.extract._code import CodeStore
from openmono_scrape.extract._dom import text_of

STORY = (
    "The council approved the new cycle lanes after a long debate about parking, and the work "
    "on the high street will start in the spring once the drainage survey is finished."
)


def _trimmed(markup: str) -> str:
    body = etree.fromstring(f"<body>{markup}</body>")
    trim_article_furniture(body)
    return " ".join(" ".join(text_of(child).split()) for child in body)


def test_reading_time_placeholders_ads_and_share_labels_go() -> None:
    text = _trimmed(
        "<p>June 8, 2023 • 11 Minute Read</p><ul><li>6 min read</li></ul>"
        f"<p>Loading paragraph...</p><p>{STORY}</p><p>Advertisement - Page continues below</p>"
        f"<p>{STORY}</p><p>ADVERTISEMENT</p><p>Share this post</p>"
    )
    assert text == f"{STORY} {STORY}"


def test_sentences_that_only_look_like_furniture_stay() -> None:
    lines = [
        "Loading indicators during data fetch keep the user informed.",
        "Share of homes that sold above asking price in 2024.",
        "Advertisement spending rose by a third across the region last year.",
        "It takes about 5 minutes to read the whole report, and longer to act on it.",
    ]
    markup = "".join(f"<p>{line}</p>" for line in lines)
    assert _trimmed(markup) == " ".join(lines)


def test_a_contents_list_of_jump_links_goes_but_a_top_picks_list_stays() -> None:
    toc = (
        '<h3>Table of Contents</h3><ul><li><a href="#why">Why it matters</a></li>'
        '<li><a href="#how">How it works</a><ul><li><a href="#cost">Cost</a></li></ul></li></ul>'
    )
    # Jump links with a line of text each are the article's summary, not a table of contents.
    picks = (
        '<h3>Contents</h3><ol><li><a href="#a">Acme Movers</a>: 4.6 out of 5 stars, best for '
        'long distance</li><li><a href="#b">Beta Vans</a>: 4.2 out of 5 stars</li></ol>'
    )
    assert _trimmed(f"{toc}<p>{STORY}</p>") == STORY
    assert "Acme Movers" in _trimmed(f"{picks}<p>{STORY}</p>")
    # Without a contents label a list of jump links is left alone.
    unlabelled = (
        '<ul><li><a href="#why">Why it matters</a></li><li><a href="#how">How</a></li></ul>'
    )
    assert "Why it matters" in _trimmed(f"<p>{STORY}</p>{unlabelled}")


def test_datelines_go_above_the_story_only() -> None:
    later = "<p>December 15, 2025</p><p>Updated: Jan 31</p>"
    text = _trimmed(
        "<p>Last updated on: April 21, 2025</p><p>August 16, 2019 - Updated July 9, 2025</p>"
        f"<p>Published:</p><p>{STORY}</p>{later}"
    )
    # Below the first paragraph a dated line is an entry of the story (a changelog, a diary).
    assert text == f"{STORY} December 15, 2025 Updated: Jan 31"
    assert _trimmed("<p>May the new lanes open soon</p>") == "May the new lanes open soon"


def test_an_author_box_at_the_end_goes_up_to_the_next_heading() -> None:
    bio = "<p>Jane Roe covers transport and local politics; before that she taught geography.</p>"
    text = _trimmed(
        f"<p>{STORY}</p><p>{STORY}</p><h3>About the Author</h3>{bio}<h3>Sources</h3><p>Minutes.</p>"
    )
    assert text == f"{STORY} {STORY} Sources Minutes."
    # Near the top an "About the author" section is the page's subject (a profile), not a box.
    top = _trimmed(f"<h3>About the Author</h3>{bio}<p>{STORY}</p><p>{STORY}</p>")
    assert "Jane Roe" in top


def test_newsletter_boxes_go_but_a_sentence_about_a_newsletter_stays() -> None:
    box = (
        "<p>Sign up for our newsletter.</p><p>Thanks for subscribing! Look out for your first "
        "newsletter in your inbox soon!</p><p>By entering your email address you agree to our "
        "Terms of Use and Privacy Policy.</p>"
    )
    assert _trimmed(f"<p>{STORY}</p>{box}<p>{STORY}</p>") == f"{STORY} {STORY}"
    line = "The council's newsletter said the lanes would be finished by June."
    assert _trimmed(f"<p>{line}</p>") == line


def test_rich_text_chunks_left_behind_come_back() -> None:
    # A CMS's "rich text" block class names article text as "article body" does: a chunk of
    # the same class next to the selected one is brought back.
    first = f"<p>{STORY}</p><p>First part, second paragraph. {STORY}</p>"
    second = f"<p>Second part. {STORY}</p><p>Second part, more. {STORY}</p>"
    root = etree.fromstring(
        "<html><body><div class='story'>"
        f"<div class='c-rich-text'>{first}</div><div class='ad'>Advertisement</div>"
        f"<div class='c-rich-text'>{second}</div></div></body></html>"
    )
    selected = etree.fromstring(f"<body>{first}</body>")
    add_missing_chunks(root, selected, CodeStore())
    assert "Second part, more." in text_of(selected)
