"""Which URLs a crawl takes, and when two URLs are the same page.

- `normalise`: http(s) only; scheme and host lower-cased, default port, fragment and the `#`
  dropped, an empty path as `/`. Map answers and crawl results use it.
- `page_key`: the dedupe key. The query goes with `ignoreQueryParameters`; with
  `deduplicateSimilarURLs` (on by default, as in Firecrawl) `http`/`https`, a `www.` prefix, a
  trailing slash and a trailing `index.html`/`index.htm`/`index.php` make no difference.
- `Scope.admits`: the crawl's rules. The start URL's host, its subdomains with `allowSubdomains`,
  any host with `allowExternalLinks`; on the start host, the start path's subtree unless
  `crawlEntireDomain`; `includePaths`/`excludePaths` (regular expressions searched in the path,
  or in the whole URL with `regexOnFullURL`); v1's `maxDepth` (path segments below the start's);
  `maxDiscoveryDepth` (link hops; the start page and sitemap pages are at depth 0).
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

from openmono_contracts.crawl import CrawlRules

_DEFAULT_PORTS = {"http": 80, "https": 443}
_INDEX = re.compile(r"/index\.(html?|php)$", re.IGNORECASE)


def normalise(url: str) -> str | None:
    """The canonical spelling of an http(s) URL, or None for anything else."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower().rstrip(".")
    if scheme not in _DEFAULT_PORTS or not host:
        return None
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port is None or port == _DEFAULT_PORTS[scheme] else f"{host}:{port}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


def host_of(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower().rstrip(".")
    except ValueError:
        return ""


def origin_of(url: str) -> str:
    """`scheme://host[:port]` of a normalised URL."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def page_key(url: str, *, ignore_query: bool = False, similar: bool = True) -> str:
    """The dedupe key of a normalised URL (see the module docstring)."""
    parts = urlsplit(url)
    query = "" if ignore_query else parts.query
    if not similar:
        return urlunsplit((parts.scheme, parts.netloc, parts.path, query, ""))
    netloc = parts.netloc.removeprefix("www.")
    path = _INDEX.sub("/", parts.path)
    if len(path) > 1:
        path = path.rstrip("/") or "/"
    return f"{netloc}{path}" + (f"?{query}" if query else "")


def _path_depth(path: str) -> int:
    return len([seg for seg in path.split("/") if seg])


def _base_path(path: str) -> str:
    """The subtree a crawl starting at `path` stays in: `/docs/` for `/docs/` and `/docs`."""
    if path.endswith("/"):
        return path
    last = path.rsplit("/", 1)[-1]
    if "." in last:  # a file: its folder
        return path[: len(path) - len(last)]
    return path + "/"


class Scope:
    """The rules of one crawl, compiled once (patterns were checked when the job was made)."""

    def __init__(self, rules: CrawlRules, start_url: str) -> None:
        self.rules = rules
        start = normalise(start_url) or start_url
        parts = urlsplit(start)
        self.start_host = (parts.hostname or "").lower()
        self.start_bare = self.start_host.removeprefix("www.")
        self.start_path = parts.path or "/"
        self.base = _base_path(self.start_path)
        self.start_depth = _path_depth(self.start_path)
        self.include = [re.compile(p) for p in rules.include_paths]
        self.exclude = [re.compile(p) for p in rules.exclude_paths]

    def key(self, url: str) -> str:
        return page_key(
            url,
            ignore_query=self.rules.ignore_query_parameters,
            similar=self.rules.deduplicate_similar_urls,
        )

    def _host_ok(self, host: str) -> tuple[bool, bool]:
        """(admitted, on the start site)."""
        bare = host.removeprefix("www.")
        if bare == self.start_bare:
            return True, True
        if self.rules.allow_subdomains and bare.endswith("." + self.start_bare):
            return True, False
        return self.rules.allow_external_links, False

    def admits(self, url: str, depth: int) -> bool:
        """Whether a normalised URL found at discovery `depth` belongs to this crawl."""
        rules = self.rules
        if rules.max_discovery_depth is not None and depth > rules.max_discovery_depth:
            return False
        parts = urlsplit(url)
        ok, on_site = self._host_ok((parts.hostname or "").lower())
        if not ok:
            return False
        path = parts.path or "/"
        if (
            on_site
            and not rules.crawl_entire_domain
            and path != self.start_path
            and not path.startswith(self.base)
        ):
            return False
        if (
            rules.max_path_depth is not None
            and _path_depth(path) - self.start_depth > rules.max_path_depth
        ):
            return False
        subject = url if rules.regex_on_full_url else path
        if self.include and not any(p.search(subject) for p in self.include):
            return False
        return not any(p.search(subject) for p in self.exclude)


def check_patterns(patterns: list[str]) -> str | None:
    """The first pattern that is not a valid regular expression, with the reason; else None."""
    for pattern in patterns:
        if len(pattern) > 500:
            return f"{pattern[:40]!r}...: longer than 500 characters"
        try:
            re.compile(pattern)
        except re.error as exc:
            return f"{pattern!r}: {exc}"
    return None
