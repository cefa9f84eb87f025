"""A local site to crawl and map (tests and bench/crawl.py), served by its own process.

    python -m tests.support.crawl_site --port N [--items 40] [--latency-ms 0] [--canary URL]

With the default 40 items per section it has 250+ pages:

    /                         home: links to the sections, /private/, /loop/a, /slow, /moved,
                              and to the canary URL (a private address: must never be contacted)
    /docs/ /blog/ /guides/    section indexes, each linking to its items
    /<section>/<i>            an item: links to its child, the next item and the section
    /<section>/<i>/more       a nested child page
    /orphan/<j>               10 pages linked from nowhere, listed only in the gzipped sitemap
    /private/ /private/<k>    a subtree robots.txt disallows (never fetched by a crawl)
    /loop/a -> /loop/b -> /loop/a   a redirect loop
    /moved                    301 to /docs/1 (a redirect onto a page the crawl has anyway)
    /slow                     answers after --slow-s seconds (default 1.5)
    /robots.txt               Disallow: /private/ ; Sitemap: /sitemap_index.xml
    /sitemap_index.xml        a sitemap index: /sitemap-pages.xml and /sitemap-orphans.xml.gz
    /_hits                    JSON {path: requests seen, "_max_inflight": most requests at once}
                              (not part of the site)

Every page takes --latency-ms to answer (a remote site's latency, for the bench). `expected_pages`
says which pages a default crawl from / must return.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

SECTIONS = ("docs", "blog", "guides")
ORPHANS = 10
PRIVATE = 5
WORDS = (
    "Harbour tides follow the moon, and a careful keeper writes down each high water. "
    "The gauge on the pier is read twice a day and the numbers go into the ledger. "
)


@dataclass(frozen=True)
class SiteShape:
    items: int = 40
    latency_s: float = 0.0
    slow_s: float = 1.5
    canary: str = ""


def item_paths(items: int) -> list[str]:
    out: list[str] = []
    for section in SECTIONS:
        out.append(f"/{section}/")
        for i in range(1, items + 1):
            out += [f"/{section}/{i}", f"/{section}/{i}/more"]
    return out


def expected_pages(items: int = 40) -> set[str]:
    """Paths a crawl of / returns with defaults: everything but the disallowed subtree, the
    redirect loop, the moved page (a duplicate of /docs/1) and the canary."""
    return {"/", "/slow", *item_paths(items), *(f"/orphan/{j}" for j in range(1, ORPHANS + 1))}


def _page(title: str, links: list[str], extra: str = "") -> bytes:
    nav = "".join(f'<li><a href="{href}">{href}</a></li>' for href in links)
    body = (
        f"<html><head><title>{title}</title><meta name='description' content='{title} page'>"
        f"</head><body><nav><ul>{nav}</ul></nav><article><h1>{title}</h1>"
        f"<p>{title}: {WORDS * 3}</p><p>{WORDS * 2}</p>{extra}</article></body></html>"
    )
    return body.encode()


def _urlset(base: str, paths: list[str]) -> bytes:
    rows = "".join(f"<url><loc>{base}{p}</loc></url>" for p in paths)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{rows}</urlset>'
    ).encode()


class _Handler(BaseHTTPRequestHandler):
    shape: SiteShape
    hits: Counter[str]
    lock: threading.Lock
    inflight: list[int]  # [now, most at once]
    protocol_version = "HTTP/1.1"
    # Headers and body in one write, Nagle off: a kept-alive client would otherwise wait ~40 ms
    # for a delayed ACK on every response (as in httpfake.py).
    wbufsize = -1
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: object) -> None:
        pass

    def _send(self, status: int, body: bytes, ctype: str, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def _base(self) -> str:
        return f"http://{self.headers.get('Host', 'localhost')}"

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path == "/_hits":
            with self.lock:
                seen = {**self.hits, "_max_inflight": self.inflight[1]}
            self._send(200, json.dumps(seen).encode(), "application/json")
            return
        with self.lock:
            self.hits[path] += 1
            self.inflight[0] += 1
            self.inflight[1] = max(self.inflight)
        try:
            if self.shape.latency_s:
                time.sleep(self.shape.latency_s)
            self._route(path)
        finally:
            with self.lock:
                self.inflight[0] -= 1

    def _route(self, path: str) -> None:
        shape, base = self.shape, self._base()
        html = "text/html; charset=utf-8"
        if path == "/robots.txt":
            text = f"User-agent: *\nDisallow: /private/\n\nSitemap: {base}/sitemap_index.xml\n"
            self._send(200, text.encode(), "text/plain")
        elif path == "/sitemap_index.xml":
            rows = "".join(
                f"<sitemap><loc>{base}{p}</loc></sitemap>"
                for p in ("/sitemap-pages.xml", "/sitemap-orphans.xml.gz")
            )
            xml = f'<?xml version="1.0"?><sitemapindex xmlns="x">{rows}</sitemapindex>'
            self._send(200, xml.encode(), "application/xml")
        elif path == "/sitemap-pages.xml":
            self._send(200, _urlset(base, item_paths(shape.items)[::7]), "application/xml")
        elif path == "/sitemap-orphans.xml.gz":
            orphans = [f"/orphan/{j}" for j in range(1, ORPHANS + 1)]
            self._send(200, gzip.compress(_urlset(base, orphans)), "application/gzip")
        elif path == "/":
            links = [f"/{s}/" for s in SECTIONS]
            links += ["/private/", "/loop/a", "/slow", "/moved"]
            if shape.canary:
                links.append(shape.canary)
            self._send(200, _page("Home", links), html)
        elif path in ("/loop/a", "/loop/b"):
            other = "/loop/b" if path == "/loop/a" else "/loop/a"
            self._send(302, b"", "text/plain", Location=other)
        elif path == "/moved":
            self._send(301, b"", "text/plain", Location="/docs/1")
        elif path == "/slow":
            time.sleep(shape.slow_s)
            self._send(200, _page("Slow", ["/"]), html)
        else:
            self._content(path, html)

    def _content(self, path: str, html: str) -> None:
        parts = [p for p in path.split("/") if p]
        items = self.shape.items
        if path.startswith("/private/"):
            kids = [f"/private/{k}" for k in range(1, PRIVATE + 1)] if len(parts) == 1 else []
            self._send(200, _page("Private " + path, ["/", *kids]), html)
        elif len(parts) == 2 and parts[0] == "orphan" and parts[1].isdigit():
            self._send(200, _page(f"Orphan {parts[1]}", ["/"]), html)
        elif parts and parts[0] in SECTIONS and path.endswith("/") and len(parts) == 1:
            links = [f"/{parts[0]}/{i}" for i in range(1, items + 1)]
            self._send(200, _page(f"Section {parts[0]}", ["/", *links]), html)
        elif len(parts) >= 2 and parts[0] in SECTIONS and parts[1].isdigit():
            i = int(parts[1])
            if not 1 <= i <= items or len(parts) > 3 or (len(parts) == 3 and parts[2] != "more"):
                self._send(404, _page("Not found", ["/"]), html)
                return
            nxt = f"/{parts[0]}/{i % items + 1}"
            links = [f"/{parts[0]}/", f"/{parts[0]}/{i}/more", nxt]
            self._send(200, _page(f"{parts[0].title()} {path}", links), html)
        else:
            self._send(404, _page("Not found", ["/"]), html)


def make_server(shape: SiteShape, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    attrs = {"shape": shape, "hits": Counter(), "lock": threading.Lock(), "inflight": [0, 0]}
    handler = type("Handler", (_Handler,), attrs)
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server


@dataclass
class CrawlSite:
    url: str

    def hits(self) -> dict[str, int]:
        import httpx

        return dict(httpx.get(f"{self.url}/_hits", timeout=10).json())


@contextmanager
def crawl_site(
    tmp: Path,
    *,
    items: int = 40,
    latency_ms: float = 0.0,
    slow_s: float = 1.5,
    canary: str = "",
) -> Iterator[CrawlSite]:
    """Run the site as its own process on a free port; yields its base URL."""
    from tests.support.procs import free_port, running

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [
        sys.executable,
        "-m",
        "tests.support.crawl_site",
        "--port",
        str(port),
        "--items",
        str(items),
        "--latency-ms",
        str(latency_ms),
        "--slow-s",
        str(slow_s),
    ]
    if canary:
        cmd += ["--canary", canary]
    with running(cmd, tmp / f"crawl-site-{port}.log", ready_url=f"{url}/_hits", timeout_s=30):
        yield CrawlSite(url)


def main() -> None:
    parser = argparse.ArgumentParser(description="OpenMono crawl test site (tests and bench)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--items", type=int, default=40)
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--slow-s", type=float, default=1.5)
    parser.add_argument("--canary", default="")
    args = parser.parse_args()
    shape = SiteShape(args.items, args.latency_ms / 1000.0, args.slow_s, args.canary)
    server = make_server(shape, args.host, args.port)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
