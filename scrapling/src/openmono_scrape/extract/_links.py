"""Turn the hrefs and srcs found in a page into absolute URLs, or None when unusable."""

from __future__ import annotations

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
