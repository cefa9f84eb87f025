"""The search fallback: DuckDuckGo's HTML endpoint, parsed without a browser.

Results are `div.result` blocks: the title link `a.result__a`, the snippet `.result__snippet`.
Links point at DuckDuckGo's redirector (`//duckduckgo.com/l/?uddg=<target>&rut=..`): we decode
`uddg` and drop ads (`result--ad`, or a redirector link without `uddg`).

DuckDuckGo answers automated clients with a bot challenge, usually HTTP 202 with an "anomaly"
page. That is `SearchDegraded`, never "no results": a page without results counts as "no results"
only when it says so (`.no-results`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
from openmono_contracts.searxng import SearchHit, SearchPage

from openmono_worker.web._errors import FallbackError, SearchDegraded
from openmono_worker.web._http import request

_VOID = frozenset({"br", "img", "hr", "input", "meta", "link", "wbr", "source", "col", "area"})
_CHALLENGE = re.compile(
    r"anomaly-modal|challenge-form|bots use DuckDuckGo|unusual traffic|captcha",
    re.IGNORECASE,
)


def decode_link(href: str) -> str | None:
    """The real target of a result link (None for ads and DuckDuckGo's own pages)."""
    href = href.strip()
    if not href:
        return None
    absolute = urljoin("https://duckduckgo.com/", href)
    parts = urlsplit(absolute)
    host = (parts.hostname or "").lower()
    if host == "duckduckgo.com" or host.endswith(".duckduckgo.com"):
        if parts.path.startswith("/l/"):
            target = parse_qs(parts.query).get("uddg", [""])[0]
            return target if target.startswith(("http://", "https://")) else None
        return None
    return absolute if parts.scheme in ("http", "https") else None


@dataclass
class _Result:
    classes: set[str]
    href: str = ""
    title: list[str] = field(default_factory=list)
    snippet: list[str] = field(default_factory=list)


class _Parser(HTMLParser):
    """Collects result blocks; tracks which part (title, snippet) text belongs to."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.results: list[_Result] = []
        self.no_results = False
        self._current: _Result | None = None
        self._in: str | None = None  # "title" | "snippet"
        self._depth = 0  # element depth inside the current title/snippet

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        classes = set((a.get("class") or "").split())
        if "no-results" in classes:
            self.no_results = True
        if tag == "div" and "result" in classes:
            self._current = _Result(classes)
            self.results.append(self._current)
            return
        if self._current is None:
            return
        if self._in is not None:
            if tag == "br":
                self.handle_data(" ")
            elif tag not in _VOID:
                self._depth += 1
            return
        if tag == "a" and "result__a" in classes:
            self._current.href = a.get("href") or ""
            self._in, self._depth = "title", 0
        elif "result__snippet" in classes:
            self._in, self._depth = "snippet", 0

    def handle_endtag(self, tag: str) -> None:
        if self._in is None or tag in _VOID:
            return
        if self._depth == 0:
            self._in = None
        else:
            self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._current is None or self._in is None:
            return
        (self._current.title if self._in == "title" else self._current.snippet).append(data)


def _clean(parts: list[str]) -> str:
    return " ".join("".join(parts).split())


def parse(html: str, max_results: int | None = None) -> SearchPage:
    """Results of a DuckDuckGo HTML page (raises `SearchDegraded` for a challenge page)."""
    parser = _Parser()
    parser.feed(html)
    parser.close()
    hits: list[SearchHit] = []
    seen: set[str] = set()
    for row in parser.results:
        if "result--ad" in row.classes:
            continue
        url = decode_link(row.href)
        if url is None or url in seen:
            continue
        seen.add(url)
        title, snippet = _clean(row.title) or url, _clean(row.snippet)
        hits.append(SearchHit(title=title, url=url, snippet=snippet, engines=("duckduckgo",)))
    if not hits and not parser.no_results and _CHALLENGE.search(html):
        raise SearchDegraded("DuckDuckGo answered with a bot challenge instead of results")
    if not hits and not parser.no_results and not parser.results:
        raise SearchDegraded("DuckDuckGo answered a page without results or a 'no results' note")
    return SearchPage(hits=hits[:max_results] if max_results is not None else hits)


async def search(
    client: httpx.AsyncClient,
    base_url: str,
    query: str,
    max_results: int,
    timeout_s: float,
    user_agent: str,
) -> SearchPage:
    """Ask DuckDuckGo's HTML endpoint (a form POST, as its own search box does)."""
    resp = await request(
        client,
        "POST",
        base_url,
        who="DuckDuckGo",
        error=FallbackError,
        timeout_s=timeout_s,
        data={"q": query, "b": "", "kl": ""},
        headers={"User-Agent": user_agent, "Accept": "text/html"},
        follow_redirects=True,
    )
    if resp.status_code == 202:
        raise SearchDegraded("DuckDuckGo answered HTTP 202 (a bot challenge) instead of results")
    if resp.status_code in (403, 429):
        raise SearchDegraded(f"DuckDuckGo refused the query (HTTP {resp.status_code})")
    if resp.status_code != 200:
        raise FallbackError(f"DuckDuckGo answered HTTP {resp.status_code}")
    return parse(resp.text, max_results)
