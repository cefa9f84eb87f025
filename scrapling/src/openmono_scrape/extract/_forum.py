"""Forum threads: the posts are the content, and selection often keeps one of them only.

A thread is a run of sibling post containers of one shape (same tag and first class name: the
classes after it vary with alternating rows, first posts and per-post ids), each with its
author, its date and its body. Selection tuned for articles sees one post as the article and
the others as comments, so it keeps one post (or a few) and drops the thread. `complete_thread`
repairs a forum page's selection in three steps:

1. posters' signatures and cookie-consent banners are removed from the cleaned page, and so
   their text from the selection (dialogs too, once the thread is complete);
2. the page's largest run of post-shaped siblings that holds the selection is found (real prose
   in most items, links a minority of their words, outside consent banners, menus and "similar
   threads" lists) and, when it is much longer, replaces the selection: the posts with their authors
   and dates, without the posters' titles and counters. Selected blocks before the last one the
   run also says (a Q&A page's question above its answers) stay in front of the posts; blocks
   after it (teasers for other threads) go;
3. a block of five or more words said again further down (a reply's preview of the post it
   answers, a quote of it, a mobile copy) is dropped: truth keeps one copy; so are the lines
   that are only a post's buttons, counters or edit note ("Reply", "12 likes", "Last edited by");
4. a shell page whose posts a script loads has nothing to select: the page's own summary of the
   first post (`og:description`) stands in when it says more than the selection.

Measured on the wcxb development split (112 true forum pages; a loaded machine): mean word F1
0.705 -> 0.760 (even ids 0.695 -> 0.764, odd ids 0.716 -> 0.756; trafilatura 0.691). Listing
and collection pages detected as forums gained too (0.623 -> 0.627, 0.606 -> 0.609); no other
type moved. Dropping repeated blocks: 0.765 -> 0.779 (even ids +0.014, odd +0.015), no other
type moved; consent banners: 0.779 -> 0.784 (one page of the even half, 0.15 -> 0.73);
post furniture lines: 0.785 -> 0.786 (even +0.0018, odd +0.0008; 18 pages up, 3 down); the
largest run holding the selection rather than the largest run: 0.786 -> 0.788 (one page of the
even half, 0.55 -> 0.77; none down); `MIN_GAIN` 2.3 -> 2.0: 0.788 -> 0.792 (two pages of the odd
half up, none down); dialogs: 0.7923 -> 0.7934 (even +0.0015, odd +0.0007; 8 pages up, none
down).
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

from lxml import etree

from ._chunks import clean_copy
from ._cleanup import drop_repeats, drop_unseen_text, text_blocks
from ._code import CodeStore
from ._dom import NAMED_IN_BODY, drop_element, text_of

MIN_POSTS = 2
# A post holds at least a sentence; shorter siblings are rows of a list, not posts.
MIN_POST_WORDS = 8
# A run whose words are mostly link text is a list of threads or a menu, not a thread.
MAX_LINK_SHARE = 0.5
# The run replaces the selection only when it is this much longer (the selection was one post,
# not a thread cut short by a few lines of signature; wcxb dev split, a loaded machine: 2.3
# left two long first posts with short replies alone, 1.8 replaced five selections that were
# the thread already) ...
MIN_GAIN = 2.0
# ... and holds this share of the selection's words (it is the same thread, not a sidebar).
MIN_COVER = 0.9
_WORD = re.compile(r"\w+")
# Runs inside these are not the thread: a consent banner's settings, "similar threads", menus.
# (A class or id starting with the word: "p-body-main--withSidebar" holds the thread.)
_CHROME = re.compile(
    r"(?:cookie|consent|onetrust|ot-sdk|gdpr|sidebar|related|similar|suggested|recommend"
    r"|nav|menu|footer)",
    re.I,
)
_CHROME_TAGS = frozenset({"nav", "aside", "footer", "header"})
# Not `form`: some forums wrap every post's text in one (old Reddit); reply boxes lose their
# controls with the rest of the invisible elements.
_DROP_IN_POSTS = ("nav", "img", "figure")
# A signature is marked by its class on every forum engine seen (phpBB, vBulletin, XenForo,
# Invision, Stack Exchange's user cards); truth keeps little of them (measured on the wcxb dev
# split: about a tenth of their words occur anywhere in the thread's truth).
_SIGNATURE = re.compile(r"signature", re.I)
_SIGNATURES = etree.XPath("descendant-or-self::body/descendant::*[contains(@class, 'ignature')]")
# Posters' titles and counters ("Well-known member", "Joined", "Messages 28") leave the posts
# copied into a thread: truth keeps the poster's name and the post's date, not the record.
# (Not from the cleaned page: selection merges them into the post's text, and removing them
# there takes the post with them.)
_POSTER_RECORD = re.compile(
    r"user-?(?:title|extras?|banner|stats)|profile-(?:joined|posts|rank)", re.I
)
_DESCRIPTIONS = etree.XPath(
    "//meta[@property='og:description' or @name='description' or @name='twitter:description']"
    "/@content"
)


def _key(element: Any) -> tuple[str, str]:
    names = (element.get("class") or "").split()
    return element.tag, names[0] if names else ""


def find_post_run(root: Any) -> tuple[list[Any], int]:
    """The page's largest run of post-shaped siblings and its word count (empty, 0 if none)."""
    runs = find_post_runs(root)
    return runs[0] if runs else ([], 0)


def find_post_runs(root: Any) -> list[tuple[list[Any], int]]:
    """The page's runs of post-shaped siblings with their word counts, the largest first."""
    body = root.find("body")
    if body is None:
        return []
    found: list[tuple[list[Any], int]] = []
    for parent in body.iter():
        if not isinstance(parent.tag, str) or len(parent) < MIN_POSTS:
            continue
        groups: dict[tuple[str, str], list[Any]] = defaultdict(list)
        for child in parent:
            if isinstance(child.tag, str) and child.get("class"):
                groups[_key(child)].append(child)
        for run in groups.values():
            if len(run) >= MIN_POSTS:
                words = _post_words(run)
                if words and not _in_chrome(parent):
                    found.append((run, words))
    found.sort(key=lambda item: -item[1])
    return found


def _in_chrome(element: Any) -> bool:
    for node in (element, *element.iterancestors()):
        if node.tag in _CHROME_TAGS:
            return True
        names = f"{node.get('class', '')} {node.get('id', '')}".split()
        if node.tag not in ("body", "html") and any(_CHROME.match(name) for name in names):
            return True
    return False


def _post_words(run: list[Any]) -> int:
    total = posts = linked = 0
    for element in run:
        count = len(text_of(element).split())
        if count >= MIN_POST_WORDS:
            posts += 1
            total += count
        linked += sum(len(text_of(link).split()) for link in element.iter("a"))
    if posts < MIN_POSTS or linked > MAX_LINK_SHARE * total:
        return 0
    return total


def complete_thread(root: Any, body: Any, store: CodeStore, pristine: Any | None = None) -> Any:
    """The thread `body` was selected from, without signatures: `body` itself or a new one.

    `root` is the cleaned page; its signatures are removed first, and their text from `body`
    (after selection: removed before, they change which block trafilatura picks). A thread
    whose posts a script loads (a forum app's shell page) has nothing to select: the page's
    own summary of its first post (`og:description`, read from `pristine`, the page as served)
    stands in when it says more than the selection.
    """
    if drop_signatures(root) + drop_consent_banners(root):
        drop_unseen_text(body, root)
    body = expand_thread(root, body, store)
    if drop_dialogs(root):
        # After the expansion: a selection losing a dialog's lines is no shorter thread.
        drop_unseen_text(body, root)
    drop_repeated_blocks(body)
    drop_post_furniture(body)
    summary = _summary(pristine) if pristine is not None else ""
    if len(summary.split()) > len(text_of(body).split()):
        body = etree.Element("body")
        etree.SubElement(body, "p").text = summary
    return body


def _summary(page: Any) -> str:
    summaries = [" ".join(str(text).split()) for text in _DESCRIPTIONS(page)]
    return max(summaries, key=len, default="")


def expand_thread(root: Any, body: Any, store: CodeStore) -> Any:
    """`body` (the selection), or a new `<body>` holding the whole thread it was cut from.

    The thread is the largest run of posts that holds the selection (a short thread can be
    outweighed by a run of help or menu panels beside it). The selection's blocks are told apart
    by whether the run says them too: blocks after the last one in the run are teasers for other
    threads and go; blocks before it (a Q&A page's question, a first post kept apart from the
    replies) stay in front of the posts.
    """
    blocks = [child for child in body if isinstance(child.tag, str)]
    if not blocks:
        return body
    for run, run_words in find_post_runs(root)[:MAX_RUNS_TRIED]:
        expanded = _expand_into(run, run_words, blocks, store)
        if expanded is not None:
            return body if expanded is False else expanded
    return body


# Runs tried, the largest first: enough for the thread beside a panel or two, few enough to
# stay cheap on a page of many small lists.
MAX_RUNS_TRIED = 3


def _expand_into(run: list[Any], run_words: int, blocks: list[Any], store: CodeStore) -> Any:
    """The thread `run` completes the selection `blocks` into; False when the run holds the
    selection but is not much longer (the selection is the thread); None when the run does
    not hold the selection (another run may)."""
    run_shingles = set(_shingles(" ".join(text_of(post) for post in run)))
    inside = [_within(block, run_shingles) for block in blocks]
    last = max((index for index, flag in enumerate(inside) if flag), default=len(blocks) - 1)
    kept = blocks[: last + 1]
    selected = _WORD.findall(" ".join(text_of(block) for block in kept).lower())
    if not selected:
        return False
    in_run = set(_WORD.findall(" ".join(text_of(post) for post in run).lower()))
    if sum(word in in_run for word in selected) < MIN_COVER * len(selected):
        return None
    if run_words < MIN_GAIN * len(selected):
        return False
    thread = etree.Element("body")
    for block, flag in zip(kept, inside, strict=False):
        if not flag:
            block.tail = None
            thread.append(block)  # moved, not copied: `body` is discarded
    for post in run:
        thread.append(clean_copy(post, store, _DROP_IN_POSTS, _POSTER_RECORD))
    return thread


def _within(block: Any, shingles: set[tuple[str, ...]]) -> bool:
    """Whether `block` says what the run says, by word triples (selection rewrites quotes and
    spaces, so the text itself may differ; single words would match any question)."""
    own = _shingles(text_of(block))
    return sum(shingle in shingles for shingle in own) >= MIN_COVER * len(own)


def _shingles(text: str) -> list[tuple[str, ...]]:
    words = _WORD.findall(text.lower())
    return [tuple(words[i : i + 3]) for i in range(max(1, len(words) - 2))]


# A thread shows some text twice: a reply's preview of the post it answers, a post's mobile
# copy, a quote of an earlier post. Truth keeps one copy (measured on the wcxb dev split, a
# loaded machine: dropping every repeat scored higher than keeping the quotes, on both id
# halves, even where the page marks them as quotes). Shorter blocks repeat by chance
# ("Thanks for the help!").
MIN_REPEAT_WORDS = 5
_BLOCKS = ("p", "li", "h1", "h2", "h3", "h4", "h5", "h6", "div", "pre", "td", "dd")


def drop_repeated_blocks(body: Any) -> None:
    """Drop each text block of `body` whose text an earlier block said, in place."""
    drop_repeats(body, _BLOCKS, MIN_REPEAT_WORDS)


# The lines a forum engine puts around each post: its buttons ("Reply", "Quote", "Permalink"),
# counters ("12 likes", "Posts: 2,811", "Joined: Aug 2016"), edit notes ("Last edited by ..."),
# the quote's "Click to expand..." and the thread's "closed" notice. Truth keeps the posts and
# their authors and dates, not these (a line is dropped only when it is nothing else).
_POST_FURNITURE = re.compile(
    r"""^\W*(?:
    click\ to\ expand
    |upvote\ \d+\ downvote
    |[\d,.]+k?\ (?:posts?|messages?|likes?|reactions?|points?|views?|replies)
    |(?:posts|messages|likes|reactions|points|views|replies|reputation)\s*:\s*[\d,.]+k?
    |(?:join(?:ed)?(?:\ date)?|location)\s*:?\ .{0,30}
    |(?:reply|quote|report|share|like|permalink|embed|save|parent|flag)(?:\ \d+)?
    |last\ edited(?:\ by)?\ .{0,90}
    |\d+\s*(?:y|mo|w|d|h|yrs?|years?|months?|weeks?|days?|hours?|minutes?)(?:\ ago)?
    |not\ open\ for\ further\ replies
    |this\ (?:discussion|thread|topic)\ (?:is|has\ been)\ (?:now\ )?(?:closed|archived|locked)
    .{0,80}
    )\W*$""",
    re.I | re.X,
)
MAX_FURNITURE_WORDS = 16


def drop_post_furniture(body: Any) -> None:
    """Drop the blocks of `body` that are only a post's buttons, counters or edit note."""
    for block in text_blocks(body, _BLOCKS):
        text = " ".join(text_of(block).split())
        if len(text.split()) <= MAX_FURNITURE_WORDS and _POST_FURNITURE.match(text):
            drop_element(block)


# A cookie-consent banner (its settings panel lists the ad partners' purposes at length) is not
# hidden until a script runs, and selection reading the page with its comments keeps it.
_CONSENT = re.compile(r"(?:cookie|consent|onetrust|gdpr)", re.I)
# A block holding this share of the page's text, or its heading, is the page, whatever its
# class says (a consent panel listing every partner's purposes can outweigh a short thread).
MAX_BANNER_SHARE = 0.9


def drop_consent_banners(root: Any) -> int:
    """Remove cookie-consent banners (named so in their class or id) from `root`, in place.

    Returns how many were removed.
    """
    total = len(text_of(root))
    dropped = 0
    for element in list(NAMED_IN_BODY(root)):
        if element.tag in ("body", "main") or element.getroottree().getroot() is not root:
            continue  # the page itself, or inside a banner already dropped
        names = f"{element.get('class', '')} {element.get('id', '')}".split()
        if any(_CONSENT.match(name) for name in names):
            big = len(text_of(element)) > MAX_BANNER_SHARE * total
            if not big and next(element.iter("h1"), None) is None:
                drop_element(element)
                dropped += 1
    return dropped


# A dialog (a site menu's "about this network" box, a privacy centre) is not hidden until a
# script runs either; it never holds a post.
_DIALOGS = etree.XPath(
    "descendant-or-self::body/descendant::*[@role or @aria-modal]"
    "[@role='dialog' or @role='alertdialog' or @aria-modal='true'][not(.//h1)]"
)


def drop_dialogs(root: Any) -> int:
    """Remove the dialogs (by their role) from `root`, in place; returns how many were removed."""
    total = len(text_of(root))
    dropped = 0
    for element in list(_DIALOGS(root)):
        inside = element.getroottree().getroot() is not root
        if not inside and len(text_of(element)) <= MAX_BANNER_SHARE * total:
            drop_element(element)
            dropped += 1
    return dropped


def drop_signatures(root: Any) -> int:
    """Remove the posters' signatures (a line of links or quotes under every post), in place.

    Returns how many were removed.
    """
    dropped = 0
    for element in _SIGNATURES(root):
        if element.getparent() is not None and _SIGNATURE.search(element.get("class", "")):
            drop_element(element)
            dropped += 1
    return dropped
