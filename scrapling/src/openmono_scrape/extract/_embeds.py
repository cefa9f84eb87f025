"""Embedded posts quoted in an article (tweets, Instagram posts) are part of what a reader sees.

Their wrappers carry classes such as `social-media-embed`, which main-content selection treats as
share widgets and prunes with everything inside. Before selection the class and id of such a
quote and of its closest wrappers are removed, so it is judged like any other blockquote
(measured on the article benchmark: two pages gained their quoted tweets, none lost text).
"""

from __future__ import annotations

from typing import Any

from lxml import etree

_EMBEDDED_POSTS = etree.XPath(
    "//blockquote[contains(@class, 'twitter-tweet') or contains(@class, 'instagram-media')"
    " or contains(@class, 'tiktok-embed') or contains(@class, 'bluesky-embed')"
    " or contains(@class, 'mastodon-embed')]"
)
WRAPPER_LEVELS = 3


def unmark_embedded_posts(root: Any) -> None:
    """Strip the class and id of embedded-post quotes and their nearest wrappers, in place."""
    for quote in _EMBEDDED_POSTS(root):
        for element in [quote, *list(quote.iterancestors())[:WRAPPER_LEVELS]]:
            if element.tag in ("body", "html", "article", "main"):
                break
            for attribute in ("class", "id"):
                element.attrib.pop(attribute, None)
