"""WebSearch and WebFetch end to end against local HTTP servers shaped like the real ones.

The "gateway" here is a plain local server speaking the gateway's contract (`/services`,
`/search`, `/scrape`); the real Caddy gateway is exercised in tests/integration/test_web_*.py.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from openmono_contracts import ToolRequest, ToolResult, WebAccess
from openmono_worker import run_tool
from openmono_worker.web import clear_probe_cache

from tests.support.fake_ddg import FakeDuckDuckGo, fake_duckduckgo
from tests.support.fake_searxng import FakeSearxng, fake_searxng
from tests.support.httpfake import FakeServer, Reply, Seen, serve

KEY = "test-key-123"
ARTICLE = (
    "<html><head><title>Local article</title></head><body><nav>menu menu</nav><article>"
    "<h1>Relays</h1><p>A relay forwards bytes from one port to another without reading them, "
    "which is why one URL is enough for the agent box.</p></article></body></html>"
)


@dataclass
class Gateway:
    """A local server with the gateway's routes; `services` is what `/services` says."""

    searxng: FakeSearxng
    server: FakeServer | None = None
    services: dict[str, bool] = field(
        default_factory=lambda: {"llm": True, "search": True, "scrape": True}
    )
    services_status: int = 200
    scrape_reply: Reply | None = None
    hold: threading.Event | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return self.server.url

    def count(self, path: str) -> int:
        assert self.server is not None
        return sum(1 for r in self.server.requests if r.path == path)

    def handle(self, req: Seen) -> Reply:
        if self.hold is not None:
            self.hold.wait(30)
        if req.path == "/services":
            body = json.dumps(self.services).encode()
            return Reply(self.services_status, body, "application/json")
        if req.headers.get("Authorization") != f"Bearer {KEY}":
            return Reply(401, b'{"error": "unauthorized"}', "application/json")
        if req.path == "/search":
            return self.searxng.handle(req)
        if req.path == "/scrape":
            if self.scrape_reply is not None:
                return self.scrape_reply
            asked = json.loads(req.body)
            body = {
                "status": 200,
                "url": asked["url"],
                "engine": "fetcher",
                "format": "markdown",
                "truncated": False,
                "content": "# From the scrape service\n\nHello.",
                "title": "Scraped",
                "escalated_from": None,
                "elapsed_ms": 3.0,
            }
            return Reply(200, json.dumps(body).encode(), "application/json")
        return Reply(404, b"{}", "application/json")


@contextmanager
def gateway() -> Iterator[Gateway]:
    with fake_searxng() as sx:
        gw = Gateway(sx)
        with serve(gw.handle) as server:
            gw.server = server
            yield gw


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("OPENMONO_WEB_SEARCH", "OPENMONO_WEB_SCRAPE", "WORKER_WEB_FETCH_ALLOW_CIDRS"):
        monkeypatch.delenv(name, raising=False)
    clear_probe_cache()
    yield
    clear_probe_cache()


@pytest.fixture
def ddg(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeDuckDuckGo]:
    with fake_duckduckgo() as fake:
        monkeypatch.setenv("WORKER_WEB_DDG_URL", fake.url)
        yield fake


@pytest.fixture
def page_server() -> Iterator[FakeServer]:
    def handle(req: Seen) -> Reply:
        if req.path == "/article":
            return Reply(200, ARTICLE.encode(), "text/html; charset=utf-8")
        if req.path == "/to-metadata":
            return Reply(302, b"", headers={"Location": "http://169.254.169.254/latest/meta-data"})
        if req.path == "/to-localhost":
            return Reply(302, b"", headers={"Location": "http://localhost/x"})
        if req.path == "/hop":
            return Reply(301, b"", headers={"Location": "/article"})
        if req.path == "/image":
            return Reply(200, b"\x89PNG\r\n", "image/png")
        if req.path == "/untyped":
            return Reply(200, ARTICLE.encode(), "")
        if req.path == "/notes.txt":
            return Reply(200, b"plain notes\nline two", "text/plain")
        return Reply(404, b"missing", "text/html")

    with serve(handle) as server:
        yield server


def call(tool: str, params: dict[str, object], web: WebAccess, tmp_path: Path) -> ToolResult:
    req = ToolRequest(
        tool=tool,
        params=params,
        call_id="c1",
        session_id="s1",
        workspace=str(tmp_path),
        web=web,
    )
    return run_tool(req)


def web(gw: Gateway | None, **kw: object) -> WebAccess:
    return WebAccess(public_fallback=True, gateway=gw.url if gw else None, api_key=KEY, **kw)  # type: ignore[arg-type]


# --- WebSearch -----------------------------------------------------------------------------


def test_search_through_the_gateway(tmp_path: Path, ddg: FakeDuckDuckGo) -> None:
    with gateway() as gw:
        res = call("WebSearch", {"query": "mixed hello", "max_results": 2}, web(gw), tmp_path)
        assert res.ok, res.error
        first = res.output.splitlines()[0]
        assert first.startswith("[WebSearch via gateway: SearXNG via http://127.0.0.1:")
        assert "https://example.org/hello/p1/r1" in res.output
        assert "https://example.org/hello/p1/r3" not in res.output  # max_results=2
        assert "Engines that did not answer: localbadjson, localdown" in res.output
        assert "Related searches: hello tutorial, hello example" in res.output
        [seen] = gw.searxng.searches()
        assert seen.query == {"q": ["mixed hello"], "format": ["json"]}
        assert seen.headers["Authorization"] == f"Bearer {KEY}"
    assert ddg.queries() == []


def test_search_falls_back_when_the_gateway_offers_none(
    tmp_path: Path, ddg: FakeDuckDuckGo
) -> None:
    with gateway() as gw:
        gw.services["search"] = False
        res = call("WebSearch", {"query": "caddy reverse proxy"}, web(gw), tmp_path)
        assert gw.searxng.searches() == []
    assert res.ok, res.error
    assert res.output.splitlines()[0] == (
        f"[WebSearch via fallback: DuckDuckGo ({ddg.url}); gateway not used: the gateway "
        "offers no search service (/services: search=false)]"
    )
    assert "https://caddyserver.com/docs/caddyfile/directives/reverse_proxy" in res.output
    assert ddg.queries() == ["caddy reverse proxy"]


def test_search_falls_back_on_the_403_html_answer(tmp_path: Path, ddg: FakeDuckDuckGo) -> None:
    with gateway() as gw:
        gw.searxng.json_enabled = False
        res = call("WebSearch", {"query": "hello"}, web(gw), tmp_path)
        assert len(gw.searxng.searches()) == 1
    assert res.ok, res.error
    assert "via fallback" in res.output
    assert "gateway search answered HTTP 403 (text/html)" in res.output
    assert ddg.queries() == ["hello"]


def test_search_falls_back_when_every_engine_failed(tmp_path: Path, ddg: FakeDuckDuckGo) -> None:
    with gateway() as gw:
        res = call("WebSearch", {"query": "offline"}, web(gw), tmp_path)
    assert res.ok, res.error
    assert "via fallback" in res.output
    assert "its engines failed (brave, duckduckgo, google cse, startpage, wikipedia)" in (
        res.output
    )
    assert ddg.queries() == ["offline"]


def test_search_falls_back_without_the_key(tmp_path: Path, ddg: FakeDuckDuckGo) -> None:
    with gateway() as gw:
        access = WebAccess(public_fallback=True, gateway=gw.url, api_key=None)
        res = call("WebSearch", {"query": "hello"}, access, tmp_path)
    assert res.ok
    assert "gateway search answered HTTP 401" in res.output


def test_search_falls_back_when_the_gateway_is_down(tmp_path: Path, ddg: FakeDuckDuckGo) -> None:
    with gateway() as gw:
        dead = gw.url
    res = call(
        "WebSearch",
        {"query": "hello"},
        WebAccess(public_fallback=True, gateway=dead, api_key=KEY),
        tmp_path,
    )
    assert res.ok
    assert "gateway not used: the gateway's /services unreachable (ConnectError)" in res.output


def test_no_gateway_means_fallback(tmp_path: Path, ddg: FakeDuckDuckGo) -> None:
    res = call("WebSearch", {"query": "hello"}, WebAccess(public_fallback=True), tmp_path)
    assert res.ok
    assert "no gateway URL is configured" in res.output


def test_explicit_off_skips_the_gateway_entirely(tmp_path: Path, ddg: FakeDuckDuckGo) -> None:
    with gateway() as gw:
        res = call("WebSearch", {"query": "hello"}, web(gw, search=False), tmp_path)
        assert gw.count("/services") == 0
        assert gw.searxng.searches() == []
    assert "switched off (web.search=false)" in res.output


def test_env_switch_applies_when_the_request_leaves_it_unset(
    tmp_path: Path, ddg: FakeDuckDuckGo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENMONO_WEB_SEARCH", "0")
    with gateway() as gw:
        res = call("WebSearch", {"query": "hello"}, web(gw), tmp_path)
        assert gw.count("/services") == 0
    assert "switched off (OPENMONO_WEB_SEARCH=false)" in res.output


def test_explicit_on_uses_the_gateway_without_probing(tmp_path: Path, ddg: FakeDuckDuckGo) -> None:
    with gateway() as gw:
        gw.services["search"] = False  # would say no; the explicit switch wins
        res = call("WebSearch", {"query": "hello"}, web(gw, search=True), tmp_path)
        assert gw.count("/services") == 0
    assert "via gateway" in res.output


def test_probe_is_cached_per_gateway(tmp_path: Path, ddg: FakeDuckDuckGo) -> None:
    with gateway() as gw:
        for _ in range(3):
            assert "via gateway" in call("WebSearch", {"query": "a"}, web(gw), tmp_path).output
        assert gw.count("/services") == 1
        assert len(gw.searxng.searches()) == 3


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The probe cache's clock, moved by hand: `clock[0] += 10` is ten seconds later."""
    from openmono_worker.web import _probe

    now = [1000.0]
    monkeypatch.setattr(_probe, "_clock", lambda: now[0])
    return now


def test_failed_probe_is_cached_only_briefly(
    tmp_path: Path, ddg: FakeDuckDuckGo, clock: list[float]
) -> None:
    with gateway() as gw:
        gw.services_status = 503
        first = call("WebSearch", {"query": "a"}, web(gw), tmp_path)
        assert "/services answered HTTP 503" in first.output
        gw.services_status = 200
        clock[0] += 4.0  # the failure is kept for 5 s by default
        assert (
            "/services answered HTTP 503"
            in call("WebSearch", {"query": "a"}, web(gw), tmp_path).output
        )
        assert gw.count("/services") == 1
        clock[0] += 2.0
        res = call("WebSearch", {"query": "a"}, web(gw), tmp_path)
        assert gw.count("/services") == 2
        assert "via gateway" in res.output


def test_good_probe_is_kept_for_its_ttl(
    tmp_path: Path, ddg: FakeDuckDuckGo, clock: list[float]
) -> None:
    with gateway() as gw:
        assert "via gateway" in call("WebSearch", {"query": "a"}, web(gw), tmp_path).output
        gw.services["search"] = False
        clock[0] += 59.0  # kept for 60 s by default
        assert "via gateway" in call("WebSearch", {"query": "a"}, web(gw), tmp_path).output
        clock[0] += 2.0
        res = call("WebSearch", {"query": "a"}, web(gw), tmp_path)
        assert gw.count("/services") == 2
    assert "offers no search service" in res.output


def test_gateway_failure_forgets_the_probe(tmp_path: Path, ddg: FakeDuckDuckGo) -> None:
    with gateway() as gw:
        assert "via gateway" in call("WebSearch", {"query": "a"}, web(gw), tmp_path).output
        gw.searxng.json_enabled = False
        assert "via fallback" in call("WebSearch", {"query": "a"}, web(gw), tmp_path).output
        gw.services["search"] = False
        res = call("WebSearch", {"query": "a"}, web(gw), tmp_path)
        assert gw.count("/services") == 2
    assert "offers no search service" in res.output


def test_challenge_means_degraded_never_no_results(tmp_path: Path, ddg: FakeDuckDuckGo) -> None:
    ddg.mode = "challenge"
    res = call("WebSearch", {"query": "hello"}, WebAccess(public_fallback=True), tmp_path)
    assert not res.ok
    assert res.error is not None
    assert "Web search degraded: DuckDuckGo answered HTTP 202" in res.error
    assert "does not mean nothing exists" in res.error
    assert "No results" not in res.error


def test_real_no_results(tmp_path: Path, ddg: FakeDuckDuckGo) -> None:
    ddg.mode = "none"
    res = call("WebSearch", {"query": "zzqxv"}, WebAccess(public_fallback=True), tmp_path)
    assert res.ok
    assert 'No results for "zzqxv".' in res.output


def test_cancellation_propagates(tmp_path: Path, ddg: FakeDuckDuckGo) -> None:
    with gateway() as gw:
        gw.hold = threading.Event()
        cancel = threading.Event()
        req = ToolRequest(
            tool="WebSearch",
            params={"query": "slow"},
            call_id="c",
            session_id="s",
            workspace=str(tmp_path),
            web=web(gw),
        )
        timer = threading.Timer(0.3, cancel.set)
        timer.start()
        res = run_tool(req, cancel=cancel)
        timer.join()
        # Still held: the probe never got an answer, and we did not wait for its 5 s timeout
        # (that would have ended in the DuckDuckGo fallback, not in "cancelled").
        assert gw.count("/services") == 1
        gw.hold.set()
    assert not res.ok
    assert res.error == "cancelled"
    assert ddg.queries() == []


# --- WebFetch ------------------------------------------------------------------------------


def test_fetch_through_the_gateway(tmp_path: Path) -> None:
    with gateway() as gw:
        res = call("WebFetch", {"url": "https://example.org/a", "render": True}, web(gw), tmp_path)
        [seen] = [r for r in gw.server.requests if r.path == "/scrape"]  # type: ignore[union-attr]
    assert res.ok, res.error
    assert res.output.splitlines()[0] == (
        f"[WebFetch via gateway: scrape service via {gw.url}; engine: fetcher]"
    )
    assert "# From the scrape service" in res.output
    asked = json.loads(seen.body)
    assert asked["url"] == "https://example.org/a"
    assert asked["render"] is True
    assert asked["max_length"] == 50_000
    # 120 s call limit: the direct fetch (30 s) must still fit after the gateway gave up.
    assert 85.0 < asked["timeout_s"] < 88.0


@pytest.mark.parametrize(
    ("configured", "left", "fallback", "expected"),
    [(90.0, None, 30.0, 90.0), (90.0, 120.0, 30.0, 89.0), (90.0, 40.0, 30.0, 9.0),
     (15.0, 10.0, 15.0, 1.0)],
)  # fmt: skip
def test_gateway_budget_leaves_room_for_the_fallback(
    configured: float, left: float | None, fallback: float, expected: float
) -> None:
    from openmono_worker.web._http import gateway_budget

    assert gateway_budget(configured, left, fallback) == expected


def test_fetch_falls_back_to_a_direct_fetch(
    tmp_path: Path, page_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKER_WEB_FETCH_ALLOW_CIDRS", "127.0.0.0/8")
    with gateway() as gw:
        error = {"error": "FETCH_FAILED", "message": "boom", "retryable": True}
        gw.scrape_reply = Reply(502, json.dumps(error).encode(), "application/json")
        res = call("WebFetch", {"url": f"{page_server.url}/hop"}, web(gw), tmp_path)
    assert res.ok, res.error
    lines = res.output.splitlines()
    assert lines[0] == (
        "[WebFetch via fallback: direct fetch; gateway not used: gateway scrape answered "
        "HTTP 502 FETCH_FAILED: boom]"
    )
    assert lines[1] == f"URL: {page_server.url}/article"
    assert "Title: Local article" in res.output
    assert "A relay forwards bytes" in res.output
    assert "menu menu" not in res.output
    assert page_server.paths() == ["/hop", "/article"]


def test_direct_fetch_refuses_loopback_without_an_allow_list(
    tmp_path: Path, page_server: FakeServer
) -> None:
    res = call(
        "WebFetch", {"url": f"{page_server.url}/article"}, WebAccess(public_fallback=True), tmp_path
    )
    assert not res.ok
    assert "refused by the network guard" in (res.error or "")
    assert page_server.requests == []


@pytest.mark.parametrize(
    "url",
    [
        "http://10.0.0.1/",
        "http://169.254.169.254/latest/meta-data",
        "http://192.168.1.1/",
        "http://localhost/",
        "http://2130706433/",
        "file:///etc/passwd",
    ],
)
def test_direct_fetch_refuses_private_targets_before_connecting(
    tmp_path: Path, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKER_WEB_FETCH_ALLOW_CIDRS", "127.0.0.0/8")
    res = call("WebFetch", {"url": url}, WebAccess(public_fallback=True, scrape=False), tmp_path)
    assert not res.ok
    assert "refused by the network guard" in (res.error or "")


@pytest.mark.parametrize("path", ["/to-metadata", "/to-localhost"])
def test_direct_fetch_checks_every_redirect_hop(
    tmp_path: Path, page_server: FakeServer, monkeypatch: pytest.MonkeyPatch, path: str
) -> None:
    monkeypatch.setenv("WORKER_WEB_FETCH_ALLOW_CIDRS", "127.0.0.0/8")
    res = call(
        "WebFetch", {"url": f"{page_server.url}{path}"}, WebAccess(public_fallback=True), tmp_path
    )
    assert not res.ok
    assert "refused by the network guard" in (res.error or "")
    assert page_server.paths() == [path]


def test_direct_fetch_plain_text_truncation_and_render_note(
    tmp_path: Path, page_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKER_WEB_FETCH_ALLOW_CIDRS", "127.0.0.0/8")
    params = {"url": f"{page_server.url}/notes.txt", "max_length": 100, "render": True}
    res = call("WebFetch", params, WebAccess(public_fallback=True), tmp_path)
    assert res.ok, res.error
    assert "render=true needs the scrape service's browser" in res.output.splitlines()[0]
    assert "plain notes\nline two" in res.output
    assert not res.truncated
    long_ok = call(
        "WebFetch",
        {"url": f"{page_server.url}/article", "max_length": 100},
        WebAccess(public_fallback=True),
        tmp_path,
    )
    assert long_ok.truncated
    assert "[cut at max_length" in long_ok.output


def test_direct_fetch_refuses_binary_content(
    tmp_path: Path, page_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKER_WEB_FETCH_ALLOW_CIDRS", "127.0.0.0/8")
    res = call(
        "WebFetch", {"url": f"{page_server.url}/image"}, WebAccess(public_fallback=True), tmp_path
    )
    assert not res.ok
    assert "image/png" in (res.error or "")


def test_site_errors_are_pages_not_failures(
    tmp_path: Path, page_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKER_WEB_FETCH_ALLOW_CIDRS", "127.0.0.0/8")
    res = call(
        "WebFetch", {"url": f"{page_server.url}/nope"}, WebAccess(public_fallback=True), tmp_path
    )
    assert res.ok
    assert "Status: 404" in res.output


def test_tools_are_registered_read_only() -> None:
    from openmono_worker.tools import get_tool

    for name in ("WebSearch", "WebFetch"):
        tool = get_tool(name)
        assert tool is not None
        spec = tool.spec()
        assert spec["facts"]["read_only"] is True
        assert spec["facts"]["concurrency_safe"] is True
    fetch = get_tool("WebFetch")
    assert fetch is not None
    assert fetch.spec()["parameters"]["required"] == ["url"]


async def test_works_when_called_inside_a_running_event_loop(
    tmp_path: Path, ddg: FakeDuckDuckGo
) -> None:
    """`run_tool` is blocking; called from a coroutine anyway, the web I/O gets its own thread."""
    res = call("WebSearch", {"query": "caddy"}, WebAccess(public_fallback=True), tmp_path)
    assert res.ok, res.error
    assert ddg.queries() == ["caddy"]


def test_direct_fetch_sniffs_html_without_a_content_type(
    tmp_path: Path, page_server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKER_WEB_FETCH_ALLOW_CIDRS", "127.0.0.0/8")
    res = call(
        "WebFetch", {"url": f"{page_server.url}/untyped"}, WebAccess(public_fallback=True), tmp_path
    )
    assert res.ok, res.error
    assert "Title: Local article" in res.output
    assert "<article>" not in res.output
