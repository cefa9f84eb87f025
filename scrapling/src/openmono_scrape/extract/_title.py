"""The page title: `<title>`, else `og:title`, else the first `<h1>`; whitespace collapsed."""

from __future__ import annotations

from typing import Any

from ._dom import text_of

MAX_TITLE_CHARS = 500
# A heading this long that starts or ends the title is the headline with the site name cut off.
MIN_PARTIAL_WORDS = 3


def _clean(text: str | None) -> str | None:
    if not text:
        return None
    collapsed = " ".join(text.split())
    return collapsed[:MAX_TITLE_CHARS] or None


def find_title(root: Any) -> str | None:
    """Read the title before any cleanup (the `<head>` is discarded later)."""
    for element in root.iter("title"):
        title = _clean(text_of(element))
        if title:
            return title
        break
    for meta in root.iter("meta"):
        if meta.get("property", meta.get("name", "")).lower() == "og:title":
            title = _clean(meta.get("content"))
            if title:
                return title
    for element in root.iter("h1"):
        title = _clean(text_of(element))
        if title:
            return title
    return None


def headline_candidates(root: Any) -> set[str]:
    """Normalised forms of the page's title strings (`<title>`, og:title, twitter:title)."""
    found: set[str] = set()
    for element in root.iter("title"):
        found.add(normalise(text_of(element)))
    for meta in root.iter("meta"):
        if meta.get("property", meta.get("name", "")).lower() in ("og:title", "twitter:title"):
            found.add(normalise(meta.get("content") or ""))
    found.discard("")
    return found


def repeats_title(heading: str, candidates: set[str]) -> bool:
    """Whether a heading only repeats the title, possibly without its " - Site name" part."""
    heading = normalise(heading)
    if not heading:
        return False
    if heading in candidates:
        return True
    if len(heading.split()) < MIN_PARTIAL_WORDS:
        return False
    return any(c.startswith(heading + " ") or c.endswith(" " + heading) for c in candidates)


def normalise(text: str) -> str:
    """Lower-cased words only, so punctuation and spacing differences do not matter."""
    return " ".join("".join(c if c.isalnum() else " " for c in text.lower()).split())
