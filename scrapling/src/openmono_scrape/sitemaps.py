"""A site's robots.txt and the URLs its sitemaps list, read through the service's own fetch path.

Where sitemaps are looked for: the `Sitemap:` lines of robots.txt, then `/sitemap.xml`. A sitemap
index (`<sitemapindex>`) is followed to the sitemaps it lists, at most `MAX_DEPTH` levels and
`MAX_SITEMAPS` files in all; a gzipped sitemap (`.gz`, a gzip type, or gzip's magic bytes) is
inflated up to `MAX_INFLATED` bytes. XML is parsed without entities or network access (an
entity bomb or an external DTD does nothing). Every fetch is the service's `get_page`: the guard on
the URL and every redirect, the per-host limit, the download limit and the cache (copies up to
`CACHE_AGE_S` old are reused, so a map and the crawl after it read a sitemap once). A file that
cannot be had is skipped: a site without sitemaps is an ordinary site.
"""

from __future__ import annotations

import gzip
import io
import logging
import time
from urllib.parse import urljoin, urlsplit

from lxml import etree
from openmono_contracts.logurl import for_log

from openmono_scrape.crawl import Robots, SiteFacts
from openmono_scrape.decode import decode_body
from openmono_scrape.errors import ScrapeError
from openmono_scrape.page import FetchedPage
from openmono_scrape.service import ScrapeService

log = logging.getLogger("openmono_scrape")

MAX_DEPTH = 3
MAX_SITEMAPS = 50
MAX_INFLATED = 50 * 1024 * 1024
CACHE_AGE_S = 300.0
_FETCH_S = 15.0
_GZIP_TYPES = frozenset({"application/gzip", "application/x-gzip", "application/octet-stream"})


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _inflate(page: FetchedPage) -> bytes | None:
    body = page.body
    zipped = body[:2] == b"\x1f\x8b"
    if not zipped and not (page.url.endswith(".gz") and page.content_type in _GZIP_TYPES):
        return body
    out = io.BytesIO()
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(body)) as gz:
            while chunk := gz.read(1 << 16):
                out.write(chunk)
                if out.tell() > MAX_INFLATED:
                    log.warning(
                        "sitemap %s inflates past %d bytes: skipped",
                        for_log(page.url),
                        MAX_INFLATED,
                    )
                    return None
    except (OSError, EOFError):
        return None
    return out.getvalue()


_PARSER = etree.XMLParser(
    resolve_entities=False, no_network=True, huge_tree=False, recover=True, load_dtd=False
)


def parse_sitemap(data: bytes, base: str) -> tuple[list[str], list[str]]:
    """(pages, sitemaps) a sitemap lists; a plain-text sitemap (one URL a line) is pages."""
    head = data[:512].lstrip()
    if not head.startswith(b"<"):
        lines = (line.strip() for line in data.decode("utf-8", "replace").splitlines())
        return [u for u in lines if u.startswith(("http://", "https://"))], []
    try:
        root = etree.fromstring(data, _PARSER)
    except etree.XMLSyntaxError:
        return [], []
    if root is None:
        return [], []
    index = etree.QName(root).localname.lower() == "sitemapindex"
    locs: list[str] = []
    for el in root.iter():
        if isinstance(el.tag, str) and etree.QName(el).localname.lower() == "loc" and el.text:
            url = urljoin(base, el.text.strip())
            if url.startswith(("http://", "https://")):
                locs.append(url)
    return ([], locs) if index else (locs, [])


class SiteReader:
    """Reads one site's robots.txt and sitemaps within one deadline (time.monotonic())."""

    def __init__(self, service: ScrapeService, deadline: float) -> None:
        self.service = service
        self.deadline = deadline

    async def fetch(self, url: str) -> FetchedPage | None:
        left = self.deadline - time.monotonic()
        if left <= 0.2:
            return None
        try:
            result, _ = await self.service.get_page(
                url, render=False, timeout_s=min(_FETCH_S, left), max_age_s=CACHE_AGE_S
            )
        except ScrapeError as exc:
            log.info("site file %s not read: %s", for_log(url), exc.message)
            return None
        page = result.page
        return page if page.status == 200 else None

    async def robots(self, url: str) -> str | None:
        page = await self.fetch(origin(url) + "/robots.txt")
        if page is None or page.content_type not in ("", "text/plain"):
            return None
        return decode_body(page.body, page.header("content-type"))

    async def sitemap_urls(self, url: str, robots: Robots, max_urls: int) -> list[str]:
        queue: list[tuple[str, int]] = [(u, 0) for u in robots.sitemaps()]
        queue.append((origin(url) + "/sitemap.xml", 0))
        seen: set[str] = set()
        pages: dict[str, None] = {}
        while queue and len(seen) < MAX_SITEMAPS and len(pages) < max_urls:
            where, depth = queue.pop(0)
            if where in seen:
                continue
            seen.add(where)
            page = await self.fetch(where)
            data = _inflate(page) if page is not None else None
            if data is None:
                continue
            found, nested = parse_sitemap(data, page.url if page else where)
            for found_url in found:
                pages.setdefault(found_url, None)
            if depth < MAX_DEPTH:
                queue.extend((n, depth + 1) for n in nested)
        return list(pages)[:max_urls]


async def site_facts(
    service: ScrapeService, url: str, *, sitemap: bool, max_urls: int, timeout_s: float
) -> SiteFacts:
    reader = SiteReader(service, time.monotonic() + timeout_s)
    robots = await reader.robots(url)
    urls = await reader.sitemap_urls(url, Robots(robots), max_urls) if sitemap else []
    return SiteFacts(robots=robots, sitemap_urls=urls)
