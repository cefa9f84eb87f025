"""A local web site on 127.0.0.1 that serves real pages for the scrape service's tests and bench.

Run it as a process (`python -m tests.support.fixture_web --port N`) or with `fixture_web(tmp)`.
Every response is produced by real HTTP over a socket; nothing is mocked. Paths:

    /article            an article inside navigation, sidebar, cookie banner and footer
    /code               code blocks (Python, shell with <, >, &, indentation) and a table
    /recaptcha-form     an ordinary article with a g-recaptcha comment form (must NOT escalate)
    /js-only            a JavaScript shell: text appears only after the script runs
    /status/<code>      a page answered with that status (403, 404, 410, 503, 401, ...)
    /forbidden-js       403 whose text is written by JavaScript (proves escalation ran a browser)
    /retry/<key>        429 with Retry-After: 1 the first time for <key>, the article after that
    /challenge          Cloudflare-style "Just a moment..." interstitial (503); its script sets a
                        cookie and reloads, and with the cookie the article is served
    /challenge-hard     the same interstitial, but it never clears
    /redirect?to=URL    302 to URL (any URL: private addresses are the point)
    /embed?to=URL       the article with an image, stylesheet, script, iframe, fetch() to URL
    /navigate?to=URL    a page whose script navigates to URL
    /chain/<n>          n redirects, then the article
    /huge?mb=N          N MiB of text (streamed, no Content-Length)
    /huge-declared?mb=N N MiB with Content-Length
    /slow[/key]?s=N     the article after N seconds (a key gives the request its own hit count)
    /charset/<name>     utf8, latin1, sjis (header), sjis-meta (only a <meta charset>)
    /json /plain /pdf /empty /image
    /hits?path=P        how many requests P received (JSON)
"""

from __future__ import annotations

import argparse
import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from html import escape as html_escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

ARTICLE_TITLE = "The Quiet Engineering of Tide Clocks"
ARTICLE_SENTINEL = "Tide clocks count the lunar day"
# what the Firecrawl json format is asked to extract from /article (its test and its bench)
ARTICLE_SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "maxLength": 80},
        "author": {"type": "string", "maxLength": 40},
    },
    "required": ["title", "author"],
    "additionalProperties": False,
}
ARTICLE_BODY = f"""
<article>
  <h1>{ARTICLE_TITLE}</h1>
  <p class="byline">By Mara Ellison</p>
  <p>{ARTICLE_SENTINEL}, which lasts about twenty-four hours and fifty minutes, rather than the
  solar day. Their gearing turns the hand once every twelve hours and twenty-five minutes, so the
  dial shows how far the water has come on its way between high and low tide.</p>
  <h2>Why the gearing matters</h2>
  <p>A coastal harbour master in the nineteenth century relied on printed tables, but a clock that
  ran at the lunar rate could be read at a glance. The mechanism is simple: a standard movement
  with a modified train, typically a ratio of 0.9661 against an ordinary clock.</p>
  <p>Local effects still matter. Bays, estuaries and shallow shelves delay or distort the tide, and
  the clock must be set against a known high water on the day it is installed. See the
  <a href="/guides/setting">setting guide</a> for the procedure.</p>
  <ul><li>Set at high water.</li><li>Check after a spring tide.</li><li>Correct monthly.</li></ul>
</article>
"""
BOILERPLATE_TOP = """
<header><nav><a href="/">Home</a> <a href="/shop">Shop</a> <a href="/about">About us</a>
<a href="/login">Log in</a></nav></header>
<div class="cookie-banner">We use cookies to improve your experience. Accept all cookies?</div>
"""
BOILERPLATE_BOTTOM = """
<aside class="sidebar"><h3>Popular</h3><ul><li><a href="/p/1">Ten best barometers</a></li>
<li><a href="/p/2">Subscribe to our newsletter</a></li></ul></aside>
<footer><p>Copyright 2026 Harbour Instruments Ltd. All rights reserved.</p>
<a href="/privacy">Privacy policy</a> <a href="/terms">Terms</a></footer>
"""
CODE_SNIPPET = "def tide(hours: float) -> float:\n    return hours % 12.42  # lunar half-day\n"
SHELL_SNIPPET = "grep -c '<tide>' log.xml && echo \"a & b\" > out.txt"
JS_SENTINEL = "Rendered by JavaScript: harbour schedule loaded"
CHALLENGE_TITLE = "Just a moment..."
CLICK_SENTINEL = "Revealed by a click: spring tides run high"
CHARSET_TEXT = {
    "utf8": ("utf-8", "Größe: naïve café — 東京 ✓"),
    "latin1": ("iso-8859-1", "Größe: naïve café, señor"),
    "sjis": ("shift_jis", "東京の天気は晴れです。潮の時計。"),
    "sjis-meta": ("shift_jis", "東京の天気は晴れです。潮の時計。"),
}
PDF_BYTES = (
    b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[]/Count 0>>"
    b"endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"
)


def page(title: str, body: str, head: str = "") -> str:
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>{head}'
        f"</head><body>{body}</body></html>"
    )


def article_page() -> str:
    return page(
        ARTICLE_TITLE, BOILERPLATE_TOP + f"<main>{ARTICLE_BODY}</main>" + BOILERPLATE_BOTTOM
    )


def code_page() -> str:
    body = f"""<main><article><h1>Working with tide data</h1>
<p>The helper below wraps the lunar period; keep its indentation exactly as shown in the
documentation of the harbour toolkit, because it is copied into notebooks.</p>
<pre><code class="language-python">{CODE_SNIPPET}</code></pre>
<p>Count the tide records in a log from the shell:</p>
<pre><code class="language-bash">{html_escape(SHELL_SNIPPET, quote=False)}</code></pre>
<h2>Tide table</h2>
<table><thead><tr><th>Port</th><th>High water</th><th>Range (m)</th></tr></thead>
<tbody><tr><td>Brest</td><td>04:12</td><td>6.1</td></tr>
<tr><td>Dover</td><td>11:47</td><td>5.9</td></tr></tbody></table>
<p>Ranges are for spring tides and vary by up to a metre through the month.</p>
</article></main>"""
    return page("Working with tide data", BOILERPLATE_TOP + body + BOILERPLATE_BOTTOM)


def recaptcha_page() -> str:
    form = """<section id="comments"><h3>Leave a comment</h3><form method="post" action="/c">
<textarea name="c"></textarea><div class="g-recaptcha" data-sitekey="6Lc_fake"></div>
<script src="https://www.google.com/recaptcha/api.js" async defer></script>
<button>Post</button></form></section>"""
    return page(ARTICLE_TITLE, f"<main>{ARTICLE_BODY}{form}</main>" + BOILERPLATE_BOTTOM)


def js_script(target: str) -> str:
    return (
        "<script>document.getElementById('" + target + "').innerHTML = "
        "'<h1>Harbour schedule</h1><p>" + JS_SENTINEL + ". The ferry leaves at nine, the pilot "
        "boat at ten, and the tide turns just after eleven in the morning.</p>';</script>"
    )


def js_only_page() -> str:
    body = (
        '<div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript>'
        + js_script("root")
    )
    return page("Harbour app", body)


def challenge_page(clears: bool) -> str:
    script = (
        "<script>document.cookie='fixture_clearance=ok; path=/'; location.reload();</script>"
        if clears
        else ""
    )
    body = (
        '<div class="main-content"><h1>Checking your browser before accessing the site.</h1>'
        "<p>This process is automatic.</p></div>"
        '<script>window._cf_chl_opt={cvId: "3", cType: "managed"};</script>'
        '<script src="/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1"></script>' + script
    )
    return page(CHALLENGE_TITLE, body)


def embed_page(target: str) -> str:
    """An article whose subresources and scripts all reach for `target`."""
    t = html_escape(target)
    extra = (
        f'<img src="{t}/pixel.png"><link rel="stylesheet" href="{t}/style.css">'
        f'<script src="{t}/app.js"></script><iframe src="{t}/frame"></iframe>'
        f"<script>fetch({json.dumps(target + '/xhr')}).catch(() => 0);"
        f"navigator.sendBeacon && navigator.sendBeacon({json.dumps(target + '/beacon')});</script>"
    )
    return page(ARTICLE_TITLE, f"<main>{ARTICLE_BODY}</main>{extra}")


def interactive_page(to: str, tall_px: int) -> str:
    """A page that changes only when used: a button that reveals text, a box that echoes what is
    typed into it on Enter, a link to `to`, a page global, and `tall_px` of height."""
    body = (
        "<main><h1>Harbour desk</h1><p>Ask the harbour desk about the tides.</p>"
        '<button id="reveal">Reveal</button><div id="out"></div>'
        '<form id="ask"><input id="q" name="q"></form><div id="echo"></div>'
        f'<a id="away" href="{html_escape(to)}">Away</a>'
        f'<a id="popup" href="{html_escape(to)}" target="_blank">Away in a new tab</a>'
        f'<div style="height:{tall_px}px"></div></main>'
        "<script>window.harbour = {port: 'Brest', range_m: 6.1};"
        "document.getElementById('reveal').onclick = () => {"
        f"document.getElementById('out').innerHTML = '<p>{CLICK_SENTINEL}</p>'; }};"
        "document.getElementById('ask').onsubmit = (e) => { e.preventDefault();"
        "document.getElementById('echo').textContent = 'You asked: ' +"
        " document.getElementById('q').value; };</script>"
    )
    return page("Harbour desk", body)


@dataclass
class _State:
    hits: Counter[str]
    lock: threading.Lock


class FixtureHandler(BaseHTTPRequestHandler):
    server_version = "FixtureWeb/1.0"
    protocol_version = "HTTP/1.1"
    # Headers and body go out as two writes; without this, Nagle + delayed ACK add ~40 ms each.
    disable_nagle_algorithm = True
    state: _State

    def log_message(self, format: str, *args: object) -> None:
        return

    def _send(
        self, status: int, body: bytes, ctype: str = "text/html; charset=utf-8", **headers: str
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _html(self, status: int, html: str, **headers: str) -> None:
        self._send(status, html.encode("utf-8"), **headers)

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_POST(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        path, query = parts.path, parse_qs(parts.query)
        with self.state.lock:
            self.state.hits[path] += 1
            count = self.state.hits[path]
        if path in ("/", "/article"):
            return self._html(200, article_page())
        if path == "/code":
            return self._html(200, code_page())
        if path == "/recaptcha-form":
            return self._html(200, recaptcha_page())
        if path == "/js-only":
            return self._html(200, js_only_page())
        if path == "/embed":
            return self._html(200, embed_page(query.get("to", ["http://169.254.169.254"])[0]))
        if path == "/interactive":
            to = query.get("to", ["/article"])[0]
            return self._html(200, interactive_page(to, int(query.get("tall", ["0"])[0])))
        if path == "/navigate":
            to = query.get("to", ["http://169.254.169.254"])[0]
            script = f"<script>location.href = {json.dumps(to)};</script>"
            return self._html(200, page("Moving", "<p>Moving on.</p>" + script))
        if path == "/forbidden-js":
            html = page("Members area", '<div id="msg"></div>' + js_script("msg"))
            return self._html(403, html)
        if path.startswith("/status/"):
            code = int(path.rsplit("/", 1)[1])
            text = f"<h1>Error {code}</h1><p>The harbour office answered {code} for this page.</p>"
            return self._html(code, page(f"Error {code}", text))
        if path.startswith("/retry/"):
            if count == 1:
                return self._html(
                    429, page("Slow down", "<p>Too many requests.</p>"), Retry_After="1"
                )
            return self._html(200, article_page())
        if path in ("/challenge", "/challenge-hard"):
            cleared = "fixture_clearance=ok" in (self.headers.get("Cookie") or "")
            if cleared and path == "/challenge":
                return self._html(200, article_page())
            return self._html(503, challenge_page(path == "/challenge"), Server="cloudflare")
        if path == "/redirect":
            target = query.get("to", ["/article"])[0]
            return self._send(302, b"", Location=target)
        if path.startswith("/chain/"):
            n = int(path.rsplit("/", 1)[1])
            return self._send(302, b"", Location=f"/chain/{n - 1}" if n > 1 else "/article")
        if path in ("/huge", "/huge-declared"):
            return self._huge(int(query.get("mb", ["20"])[0]), declared=path == "/huge-declared")
        if path == "/slow" or path.startswith("/slow/"):
            time.sleep(float(query.get("s", ["5"])[0]))
            return self._html(200, article_page())
        if path.startswith("/charset/"):
            return self._charset(path.rsplit("/", 1)[1])
        if path == "/json":
            body = json.dumps({"port": "Brest", "high_water": "04:12", "range_m": 6.1}).encode()
            return self._send(200, body, "application/json")
        if path == "/plain":
            return self._send(200, b"High water at Brest: 04:12\nRange: 6.1 m\n", "text/plain")
        if path == "/pdf":
            return self._send(200, PDF_BYTES, "application/pdf")
        if path == "/image":
            return self._send(200, b"\x89PNG\r\n\x1a\n" + b"\x00" * 64, "image/png")
        if path == "/empty":
            return self._html(200, page("", "<div></div>"))
        if path == "/hits":
            with self.state.lock:
                n = self.state.hits[query.get("path", ["/"])[0]]
            return self._send(200, json.dumps({"hits": n}).encode(), "application/json")
        return self._html(404, page("Not found", "<h1>Not found</h1><p>No such page here.</p>"))

    def _huge(self, mb: int, declared: bool) -> None:
        chunk = (b"<p>" + b"tide " * 200 + b"</p>\n") * 64
        total = mb * 1024 * 1024
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        if declared:
            self.send_header("Content-Length", str(total))
        else:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        sent = 0
        try:
            while sent < total:
                piece = chunk[: total - sent]
                self.wfile.write(piece)
                sent += len(piece)
        except (BrokenPipeError, ConnectionResetError):
            return

    def _charset(self, name: str) -> None:
        codec, text = CHARSET_TEXT[name]
        label = {"utf-8": "utf-8", "iso-8859-1": "ISO-8859-1", "shift_jis": "Shift_JIS"}[codec]
        meta = f'<meta charset="{label}">' if name == "sjis-meta" else ""
        html = (
            f"<!DOCTYPE html><html><head>{meta}<title>Charset {name}</title></head><body>"
            f"<article><h1>Charset {name}</h1><p>{text}</p><p>{text}</p></article></body></html>"
        )
        ctype = "text/html" if name == "sjis-meta" else f"text/html; charset={label}"
        self._send(200, html.encode(codec), ctype)


class Canary:
    """A TCP listener that only counts connections: proof that a refused target was never reached.

    It binds another loopback address (127.0.0.3 by default), which a service allow-listing only
    127.0.0.1/32 must refuse; any connection it sees is a guard failure.
    """

    def __init__(self, host: str = "127.0.0.3") -> None:
        import socket

        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.host, self.port = host, int(self.sock.getsockname()[1])
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.sock.close()


def make_server(host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    state = _State(Counter(), threading.Lock())
    handler = type("Handler", (FixtureHandler,), {"state": state})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server


@contextmanager
def fixture_web(tmp: Path) -> Iterator[str]:
    """Run the fixture site as its own process on a free port; yields its base URL."""
    import sys

    from tests.support.procs import free_port, running

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [sys.executable, "-m", "tests.support.fixture_web", "--port", str(port)]
    with running(cmd, tmp / f"fixture-web-{port}.log", ready_url=f"{url}/plain", timeout_s=30):
        yield url


@contextmanager
def scrape_service(tmp: Path, env: dict[str, str] | None = None) -> Iterator[str]:
    """Run the scrape service (`python -m openmono_scrape`) on a free port; yields its base URL.

    Defaults for tests: 127.0.0.0/8 allow-listed on purpose, and no DNS query ever leaves the
    machine (`SCRAPE_SYSTEM_DNS=false`; names come from `SCRAPE_STATIC_HOSTS`).
    """
    with scrape_services(tmp, env or {}) as (url,):
        yield url


@contextmanager
def scrape_services(tmp: Path, *envs: dict[str, str]) -> Iterator[list[str]]:
    """`scrape_service` for several settings at once: every service is started before any is
    waited for (their imports overlap); yields their base URLs in the order of `envs`."""
    import sys

    from tests.support.procs import free_port, start, stop_all, wait_http_ok

    procs = []
    urls = []
    try:
        for env in envs:
            port = free_port()
            full_env = {"SCRAPE_ALLOW_CIDRS": "127.0.0.0/8", "SCRAPE_SYSTEM_DNS": "false", **env}
            cmd = [sys.executable, "-m", "openmono_scrape", "--host", "127.0.0.1"]
            cmd += ["--port", str(port)]
            procs.append(start(cmd, tmp / f"scrape-{port}.log", full_env))
            urls.append(f"http://127.0.0.1:{port}")
        for proc, url in zip(procs, urls, strict=True):
            wait_http_ok(f"{url}/health", 60.0, proc)
        yield urls
        for proc in procs:
            if not proc.alive():
                raise RuntimeError(f"scrape service died:\n{proc.output()[-4000:]}")
    finally:
        stop_all(procs)


def main() -> None:
    parser = argparse.ArgumentParser(description="OpenMono fixture web site (tests only)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    server = make_server(args.host, args.port)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
