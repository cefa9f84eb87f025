"""Turn the hrefs and srcs found in a page into absolute URLs, or None when unusable."""

from __future__ import annotations

from typing import Any
from urllib.parse import urljoin

_UNSAFE_SCHEMES = ("javascript:", "vbscript:", "data:", "about:", "blob:")


def absolute_url(base_url: str, href: str | None) -> str | None:
    """Resolve `href` against the page URL; drop script pseudo-links and empty targets."""
    if not href:
        return None
    # Browsers trim the ends and drop tabs and newlines anywhere in a URL.
    href = href.strip().replace("\t", "").replace("\n", "").replace("\r", "")
    if not href or href.lower().startswith(_UNSAFE_SCHEMES):
        return None
    try:
        return urljoin(base_url, href) if base_url else href
    except ValueError:  # e.g. an unbalanced IPv6 bracket in the host
        return None


def document_base(root: Any, url: str) -> str:
    """What relative links resolve against: the page's first `<base href>`, else its URL."""
    for base in root.iter("base"):
        resolved = absolute_url(url, base.get("href"))
        if resolved and resolved.startswith(("http://", "https://")):
            return resolved
        break
    return url


def absolutize_links(element: Any, base_url: str) -> None:
    """Make `href`/`src` absolute in an HTML fragment; drop script pseudo-links and handlers."""
    for node in element.iter():
        if isinstance(node.tag, str):
            for name in [n for n in node.attrib if n.lower().startswith("on") or n == "style"]:
                del node.attrib[name]
    for tag, attribute in (("a", "href"), ("img", "src")):
        for node in element.iter(tag):
            if node.get(attribute) is None:
                continue
            resolved = absolute_url(base_url, node.get(attribute))
            if resolved is None:
                del node.attrib[attribute]
            else:
                node.set(attribute, resolved)
