"""Forum threads (`_forum`): the whole run of posts, without signatures, sidebars, thread lists."""

from __future__ import annotations

from typing import Any

import pytest
from lxml import etree
from openmono_scrape.extract import extract
from openmono_scrape.extract._code import CodeStore
from openmono_scrape.extract._dom import parse_html, remove_invisible, text_of
from openmono_scrape.extract._forum import complete_thread, expand_thread, find_post_run
from openmono_scrape.extract._pagetype import detect_page_type, json_ld_items

from tests.unit.test_extract_page_types import POSTS

QUESTION = "The pressure valve keeps dripping every morning."


def _post(index: int, text: str, extra: str = "") -> str:
    # Alternating row classes after the first class name, as phpBB and vBulletin write them.
    return (
        f'<div class="post bg{index % 2 + 1}" id="p{index}">'
        f'<div class="author"><a href="/u/{index}">poster{index}</a> · March {index + 1}</div>'
        f'<div class="content"><p>{text}</p></div>{extra}</div>'
    )


def _root(body: str) -> Any:
    root = parse_html(f"<html><head><title>t</title></head><body>{body}</body></html>")
    assert root is not None
    remove_invisible(root)
    return root


def _selection(*texts: str) -> Any:
    body = etree.Element("body")
    for text in texts:
        etree.SubElement(body, "p").text = text
    return body


THREAD = "<main><div class='thread'>" + "".join(_post(i, t) for i, t in enumerate(POSTS)) + "</div>"


def test_a_selection_that_kept_one_post_becomes_the_whole_thread() -> None:
    root = _root(THREAD + "</main>")
    thread = expand_thread(root, _selection(POSTS[1]), CodeStore())
    text = " ".join(text_of(thread).split())
    for index, post in enumerate(POSTS):
        assert post in text
        assert f"poster{index}" in text  # the authors and dates come with the posts
    assert text.index(POSTS[0]) < text.index(POSTS[3])


def test_a_selection_that_holds_the_thread_is_kept() -> None:
    root = _root(THREAD + "</main>")
    selection = _selection(*POSTS)
    assert expand_thread(root, selection, CodeStore()) is selection


def test_a_question_outside_the_run_of_answers_stays_in_front() -> None:
    answers = "".join(
        f'<div class="answer"><p>{text}</p><span>answered by helper{i}</span></div>'
        for i, text in enumerate(POSTS)
    )
    root = _root(f"<main><div class='question'><p>{QUESTION}</p></div>{answers}</main>")
    thread = expand_thread(root, _selection(QUESTION, POSTS[1]), CodeStore())
    text = " ".join(text_of(thread).split())
    assert text.startswith(QUESTION)
    for post in POSTS:
        assert post in text


def test_similar_threads_in_a_sidebar_are_not_the_thread() -> None:
    similar = "".join(f'<div class="item"><p>{text}</p></div>' for text in POSTS)
    root = _root(
        f"<main><p>{QUESTION}</p></main><div class='similar-threads'>{similar}</div>"
        f"<aside>{similar}</aside>"
    )
    assert find_post_run(root) == ([], 0)


def test_a_list_of_thread_titles_is_not_a_thread() -> None:
    titles = "".join(
        f'<li class="topic"><a href="/t/{i}">{text}</a></li>' for i, text in enumerate(POSTS)
    )
    root = _root(f"<main><ul class='topics'>{titles}</ul></main>")
    assert find_post_run(root) == ([], 0)


def test_signatures_leave_the_selection_and_the_thread() -> None:
    signature = '<div class="signature">Sent from my phone. Visit my boiler blog!</div>'
    posts = "".join(_post(i, t, signature) for i, t in enumerate(POSTS))
    root = _root(f"<main><div class='thread'>{posts}</div></main>")
    selection = _selection(POSTS[2], "Sent from my phone. Visit my boiler blog!")
    text = text_of(complete_thread(root, selection, CodeStore()))
    assert "boiler blog" not in text
    for post in POSTS:
        assert post in " ".join(text.split())


def test_extract_returns_the_posts_without_their_signatures() -> None:
    signature = '<div class="signature"><p>Sent from my phone. Visit my boiler blog!</p></div>'
    posts = "".join(_post(i, t, signature) for i, t in enumerate(POSTS))
    page = (
        "<html><head><title>Dripping valve</title></head><body><h1>Dripping valve</h1>"
        f"<main><div class='thread'>{posts}</div></main></body></html>"
    )
    content = extract(page, "https://e.org/forum/t/dripping-valve", "markdown", True).content
    for post in POSTS:
        assert post in content
    assert "boiler blog" not in content


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://forum.example.org/some-thread-about-valves", "forum"),
        ("https://community.example.com/travel/first-trip", "forum"),
        ("https://www.warriorforum.com/beginners-area/123-a-question.html", "forum"),
        ("https://example.com/travel-forum/beyond-europe/first-trip", "forum"),
        ("https://games.example.com/boards/1234-switch/5678", "forum"),
        ("https://example.com/best-board-games-of-2025/", "page"),
        ("https://example.com/community-outreach/marketing", "page"),
        ("https://example.com/topic/225132-if-the-valve-drips/", "forum"),
        ("https://example.com/topic/18427/rc1-of-the-valve", "forum"),
        ("https://news.example.com/topic/headphones", "page"),
    ],
)
def test_a_url_naming_a_forum_marks_a_forum(url: str, expected: str) -> None:
    root = parse_html("<html><body><main><p>Some text.</p></main></body></html>")
    assert root is not None
    assert detect_page_type(root, url, json_ld_items(root)) == expected


def test_a_script_loaded_thread_falls_back_to_the_summary_of_its_first_post() -> None:
    summary = " ".join(POSTS[:2])
    page = (
        "<html><head><title>Dripping valve</title>"
        f'<meta property="og:description" content="{summary}"></head>'
        "<body><div id='app'></div><section id='main'></section>"
        "<script>start()</script></body></html>"
    )
    content = extract(page, "https://e.org/t/dripping-valve/42", "markdown", True).content
    assert " ".join(content.split()) == summary
    # Off forums an empty page stays empty: the summary is not the page.
    assert extract(page, "https://e.org/about", "markdown", True).content == ""


def test_teasers_for_other_threads_after_the_post_leave_with_the_expansion() -> None:
    root = _root(THREAD + "</main>")
    teaser = "Looking for a plumber in Leeds who does weekend call outs ... [read more]"
    thread = expand_thread(root, _selection(POSTS[0], teaser), CodeStore())
    text = " ".join(text_of(thread).split())
    assert "read more" not in text
    for post in POSTS:
        assert post in text


def test_the_posters_record_leaves_the_copied_posts_but_not_their_names() -> None:
    record = (
        '<h5 class="userTitle">Well-known member</h5>'
        '<div class="message-userExtras">Joined Jun 4, 2019 Messages 2,811</div>'
    )
    posts = "".join(_post(i, t, record) for i, t in enumerate(POSTS))
    root = _root(f"<main><div class='thread'>{posts}</div></main>")
    text = text_of(expand_thread(root, _selection(POSTS[0]), CodeStore()))
    assert "Well-known member" not in text
    assert "Messages 2,811" not in text
    assert "poster3" in text


def test_a_post_said_twice_in_the_thread_is_kept_once() -> None:
    # A reply shows a preview of the post it answers; the reader reads that post once.
    preview = f"<div class='parent'><p>{POSTS[0]}</p></div>"
    posts = _post(0, POSTS[0]) + "".join(_post(i, t, preview) for i, t in enumerate(POSTS) if i)
    root = _root(f"<main><div class='thread'>{posts}</div></main>")
    thread = complete_thread(root, _selection(POSTS[1]), CodeStore())
    text = " ".join(text_of(thread).split())
    assert text.count(POSTS[0]) == 1
    for post in POSTS[1:]:
        assert text.count(post) == 1
    # Short lines repeat by chance and stay.
    short = complete_thread(_root("<main></main>"), _selection("Thanks!", "Thanks!"), CodeStore())
    assert text_of(short).count("Thanks!") == 2


def test_a_consent_banner_longer_than_the_thread_leaves_it() -> None:
    purposes = " ".join(
        f"<p>Purpose {i}: we and our partners store and access personal data on your device"
        " to measure advertising and build a profile of your interests.</p>"
        for i in range(12)
    )
    banner = f"<div id='onetrust-consent-sdk'><h2>We care about your privacy</h2>{purposes}</div>"
    root = _root(THREAD + f"</main>{banner}")
    selection = _selection(*POSTS, "We care about your privacy")
    thread = complete_thread(root, selection, CodeStore())
    text = text_of(thread)
    assert "privacy" not in text
    assert "personal data" not in text
    for post in POSTS:
        assert post in text
    # A wrapper named for consent that holds the page's heading is the page.
    page = _root(f"<div class='cookie-wrapper'><h1>Dripping valve</h1>{THREAD}</main></div>")
    assert POSTS[0] in text_of(complete_thread(page, _selection(POSTS[0]), CodeStore()))


def test_without_a_url_the_pages_own_address_tells_its_type() -> None:
    root = parse_html(
        "<html><head><link rel='canonical' href='https://e.org/t/dripping-valve/42'></head>"
        "<body><main><p>Some text.</p></main></body></html>"
    )
    assert root is not None
    assert detect_page_type(root, "", json_ld_items(root)) == "forum"
    # The address it was fetched from wins over the one it states.
    assert detect_page_type(root, "https://e.org/about", json_ld_items(root)) == "page"


def test_the_buttons_and_counters_around_each_post_leave_the_thread() -> None:
    furniture = (
        "<ul><li>Reply</li><li>Quote</li><li>permalink</li></ul><div>12 likes</div>"
        "<div>Last edited by poster2 on March 3, edited 2 times in total.</div><p>Posts: 2,811</p>"
    )
    posts = "".join(_post(i, t, furniture) for i, t in enumerate(POSTS))
    root = _root(f"<main><div class='thread'>{posts}</div></main>")
    text = " ".join(text_of(complete_thread(root, _selection(POSTS[1]), CodeStore())).split())
    for line in ("Reply", "Quote", "permalink", "12 likes", "Last edited", "2,811"):
        assert line not in text
    for post in POSTS:
        assert post in text
    # A post that only starts like a button stays.
    reply = "Reply from the installer: the valve was never rated for this pressure."
    kept = complete_thread(_root("<main></main>"), _selection(reply), CodeStore())
    assert reply in text_of(kept)


def test_a_short_thread_outweighed_by_a_run_of_panels_is_still_completed() -> None:
    panel = (
        "<div class='help'><p>{0} (phone): tap the lock icon next to the address bar, then tap"
        " permissions and notifications, and adjust your preference for this site there.</p>"
        "<p>{0} (desktop): click the padlock icon, open the site settings, find notifications"
        " and adjust your preference for this site there.</p></div>"
    )
    panels = "".join(panel.format(browser) for browser in ("Chrome", "Safari", "Edge"))
    posts = "".join(_post(i, t) for i, t in enumerate(POSTS[:3]))
    root = _root(f"<main><div class='thread'>{posts}</div></main><div>{panels}</div>")
    assert "Chrome" in text_of(find_post_run(root)[0][0])  # the panels outweigh the posts
    thread = expand_thread(root, _selection(POSTS[0]), CodeStore())
    text = " ".join(text_of(thread).split())
    assert POSTS[1] in text
    assert POSTS[2] in text
    assert "Chrome" not in text


def test_a_long_first_post_with_short_replies_is_completed() -> None:
    first = " ".join([POSTS[0], POSTS[2]])  # a long question ...
    replies = [  # ... and a few short answers: the thread is twice as long, not three times
        "Same here, the washer was cracked and a new one fixed it in ten minutes.",
        "Check the expansion vessel charge first, it is usually the cause of this.",
        "Thanks, pumping the vessel back up to one bar stopped it the same evening.",
        "Good to hear. Mark the thread as solved so the next person finds the answer.",
    ]
    posts = "".join(_post(i, t) for i, t in enumerate([first, *replies]))
    root = _root(f"<main><div class='thread'>{posts}</div></main>")
    selected = len(first.split())
    assert 2 * selected <= find_post_run(root)[1] < 2.3 * selected
    text = " ".join(text_of(expand_thread(root, _selection(first), CodeStore())).split())
    for reply in replies:
        assert reply in text


def test_a_selection_inside_a_page_tree_is_cleaned_too() -> None:
    page = etree.Element("html")
    selection = _selection(POSTS[0], "1 Like", POSTS[1], POSTS[0])
    page.append(selection)  # selection hands over a <body> inside its <html>
    thread = complete_thread(_root("<main></main>"), selection, CodeStore())
    text = " ".join(text_of(thread).split())
    assert "1 Like" not in text
    assert text.count(POSTS[0]) == 1


def test_a_dialog_left_in_the_page_leaves_the_thread() -> None:
    dialog = (
        "<header><div role='dialog'><p>Our network consists of many question and answer"
        " communities where people share what they know.</p></div></header>"
    )
    root = _root(dialog + THREAD + "</main>")
    selection = _selection(
        "Our network consists of many question and answer communities where people share"
        " what they know.",
        *POSTS,
    )
    text = text_of(complete_thread(root, selection, CodeStore()))
    assert "network consists" not in text
    for post in POSTS:
        assert post in text
