"""WebSearch with `read_top`: search and read the top results in one call, through the real
gateway, scrape service and SearXNG-shaped server (tests/support/web_stack.py), and on the
fallbacks when the gateway offers no scrape service or no search."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from openmono_contracts import ToolRequest, ToolResult, WebAccess
from openmono_worker import run_tool

from tests.support.fake_ddg import fake_duckduckgo
from tests.support.httpfake import FakeServer, Reply, Seen, serve
from tests.support.web_env import loopback_web_env
from tests.support.web_stack import WebStack, web_stack

pytestmark = pytest.mark.integration

KEY = "search-read-key-7f"
TEXT = "Slack water is the short time between the flood and the ebb. " * 40


class Origin:
    """Pages that take a moment and record how many were being served at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = 0
        self.peak = 0

    def reset(self) -> None:
        with self.lock:
            self.now = 0
            self.peak = 0

    def handle(self, req: Seen) -> Reply:
        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        time.sleep(0.4)
        with self.lock:
            self.now -= 1
        if req.path == "/image":
            return Reply(200, b"\x89PNG\r\n\x1a\n" + bytes(64), "image/png")
        title = req.path.strip("/")
        body = f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1>"
        body += f"<p>{title}: {TEXT}</p></article></body></html>"
        return Reply(200, body.encode(), "text/html; charset=utf-8")


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from loopback_web_env(monkeypatch)


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[Origin, FakeServer]]:
    state = Origin()
    with serve(state.handle) as server:
        yield state, server


@pytest.fixture
def origin(served: tuple[Origin, FakeServer]) -> tuple[Origin, FakeServer]:
    """The module's page server, its counts and its record of requests started afresh."""
    state, server = served
    state.reset()
    server.requests.clear()
    return state, server


@pytest.fixture(scope="module")
def stack(
    tmp_path_factory: pytest.TempPathFactory, served: tuple[Origin, FakeServer]
) -> Iterator[WebStack]:
    """One gateway + scrape service + SearXNG for the module: a test reads through it and
    changes nothing in it (the pages' counts are the origin's, reset per test)."""
    _, server = served
    urls = [f"{server.url}/tides", f"{server.url}/currents", f"{server.url}/image"]
    with web_stack(tmp_path_factory.mktemp("read"), KEY, urls) as s:
        yield s


def call(params: dict[str, object], web: WebAccess, tmp: Path) -> ToolResult:
    req = ToolRequest(
        tool="WebSearch", params=params, call_id="c", session_id="s", workspace=str(tmp), web=web
    )
    return run_tool(req)


def test_read_top_reads_the_first_results_in_parallel_through_the_gateway(
    tmp_path: Path, stack: WebStack, origin: tuple[Origin, FakeServer]
) -> None:
    state, server = origin
    web = WebAccess(public_fallback=True, gateway=stack.gateway.url, api_key=KEY)
    res = call({"query": "hello", "read_top": 3, "read_max_length": 500}, web, tmp_path)
    assert res.ok, res.error
    out = res.output
    assert out.startswith("[WebSearch via gateway: SearXNG via")
    assert out.count("[read via gateway; status 200; cut at read_max_length]") == 2
    assert "tides: Slack water" in out and "currents: Slack water" in out
    # each text read sits inside its own untrusted block, as WebFetch's does
    assert out.count("<untrusted-page-content source=") == 2
    assert out.count("</untrusted-page-content>") == 2
    # each text is cut to the budget: 500 characters, not the page's ~2,500
    tides = out.split("tides: Slack water", 1)[1].split("</untrusted-page-content>", 1)[0]
    assert len(tides) < 600
    # the image is refused by the scrape service and by the direct fetch: said, not fatal
    assert "[not read: the page is image/png" in out
    assert state.peak >= 2  # the reads overlapped
    assert sorted(r.path for r in server.requests) == ["/currents", "/image", "/image", "/tides"]


def test_read_top_zero_reads_nothing(
    tmp_path: Path, stack: WebStack, origin: tuple[Origin, FakeServer]
) -> None:
    _, server = origin
    web = WebAccess(public_fallback=True, gateway=stack.gateway.url, api_key=KEY)
    res = call({"query": "hello"}, web, tmp_path)
    assert res.ok and "[read via" not in res.output
    assert server.requests == []


def test_reads_fall_back_to_the_direct_fetch_when_the_gateway_offers_no_scrape(
    tmp_path: Path, origin: tuple[Origin, FakeServer]
) -> None:
    _, server = origin
    urls = [f"{server.url}/tides", f"{server.url}/currents"]
    with web_stack(tmp_path, KEY, urls, scrape_enabled="false") as s:
        web = WebAccess(public_fallback=True, gateway=s.gateway.url, api_key=KEY)
        res = call({"query": "hello", "read_top": 2}, web, tmp_path)
    assert res.ok, res.error
    assert res.output.startswith("[WebSearch via gateway: SearXNG via")
    assert res.output.count("[read via fallback (direct fetch); status 200]") == 2
    assert "tides: Slack water" in res.output and "currents: Slack water" in res.output


def test_a_failed_search_reads_nothing(
    tmp_path: Path, origin: tuple[Origin, FakeServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, server = origin
    with fake_duckduckgo("challenge") as ddg:
        monkeypatch.setenv("WORKER_WEB_DDG_URL", ddg.url)
        res = call(
            {"query": "tides", "read_top": 2},
            WebAccess(public_fallback=True, gateway=None),
            tmp_path,
        )
    assert not res.ok and "Web search degraded" in (res.error or "")
    assert server.requests == []


def test_read_top_is_bounded(tmp_path: Path) -> None:
    res = call(
        {"query": "x", "read_top": 6}, WebAccess(public_fallback=True, gateway=None), tmp_path
    )
    assert not res.ok and "read_top" in (res.error or "")
