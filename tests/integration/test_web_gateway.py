"""WebSearch / WebFetch against the REAL Caddy gateway (auth, /services, upstream failures).

The SearXNG behind the gateway is the SearXNG-shaped server built from recorded answers; the
fallbacks go to a local DuckDuckGo stand-in and a local page (no internet here). Tools are run
with `run_tool`, as both executors do.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from openmono_contracts import ToolRequest, ToolResult, WebAccess
from openmono_worker import run_tool
from openmono_worker.web import clear_probe_cache

from tests.support.fake_ddg import FakeDuckDuckGo, fake_duckduckgo
from tests.support.fake_searxng import FakeSearxng, fake_searxng
from tests.support.gateway import closed_upstream, gateway
from tests.support.httpfake import FakeServer, Reply, Seen, serve
from tests.support.web_env import loopback_web_env

pytestmark = pytest.mark.integration

KEY = "gateway-web-key-91c2"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from loopback_web_env(monkeypatch)


@pytest.fixture
def sx() -> Iterator[FakeSearxng]:
    with fake_searxng() as fake:
        yield fake


@pytest.fixture
def ddg(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeDuckDuckGo]:
    with fake_duckduckgo() as fake:
        monkeypatch.setenv("WORKER_WEB_DDG_URL", fake.url)
        yield fake


@pytest.fixture
def page() -> Iterator[FakeServer]:
    body = b"<html><head><title>Note</title></head><body><p>Local page text.</p></body></html>"
    with serve(lambda req: Reply(200, body, "text/html")) as server:
        yield server


def call(tool: str, params: dict[str, object], web: WebAccess, tmp: Path) -> ToolResult:
    req = ToolRequest(
        tool=tool, params=params, call_id="c", session_id="s", workspace=str(tmp), web=web
    )
    return run_tool(req)


def test_search_with_the_key_goes_through_the_gateway(
    tmp_path: Path, sx: FakeSearxng, ddg: FakeDuckDuckGo, llama_stub: str
) -> None:
    with gateway(
        tmp_path, api_key=KEY, llama_upstream=llama_stub, searxng_upstream=sx.url,
        search_enabled="true",
    ) as gw:  # fmt: skip
        res = call(
            "WebSearch",
            {"query": "mixed"},
            WebAccess(public_fallback=True, gateway=gw.url, api_key=KEY),
            tmp_path,
        )
    assert res.ok, res.error
    assert res.output.startswith(f"[WebSearch via gateway: SearXNG via {gw.url}]")
    assert "Engines that did not answer: localbadjson, localdown, localerror" in res.output
    assert [s.query["q"] for s in sx.searches()] == [["mixed"]]
    assert ddg.queries() == []


def test_wrong_key_is_refused_by_the_gateway_and_falls_back(
    tmp_path: Path, sx: FakeSearxng, ddg: FakeDuckDuckGo, llama_stub: str
) -> None:
    with gateway(
        tmp_path, api_key=KEY, llama_upstream=llama_stub, searxng_upstream=sx.url,
        search_enabled="true",
    ) as gw:  # fmt: skip
        web = WebAccess(public_fallback=True, gateway=gw.url, api_key="not-the-key")
        res = call("WebSearch", {"query": "hello"}, web, tmp_path)
    assert res.ok
    assert "via fallback" in res.output
    assert "gateway search answered HTTP 401 (application/json)" in res.output
    assert sx.searches() == []  # the gateway stopped it
    assert ddg.queries() == ["hello"]


def test_json_disabled_403_html_through_the_gateway_falls_back(
    tmp_path: Path, sx: FakeSearxng, ddg: FakeDuckDuckGo, llama_stub: str
) -> None:
    sx.json_enabled = False
    with gateway(
        tmp_path, api_key=KEY, llama_upstream=llama_stub, searxng_upstream=sx.url,
        search_enabled="true",
    ) as gw:  # fmt: skip
        res = call(
            "WebSearch",
            {"query": "hello"},
            WebAccess(public_fallback=True, gateway=gw.url, api_key=KEY),
            tmp_path,
        )
    assert res.ok
    assert "gateway search answered HTTP 403 (text/html)" in res.output
    assert len(sx.searches()) == 1
    assert ddg.queries() == ["hello"]


def test_searxng_down_behind_the_gateway_falls_back(
    tmp_path: Path, ddg: FakeDuckDuckGo, llama_stub: str
) -> None:
    with gateway(
        tmp_path, api_key=KEY, llama_upstream=llama_stub, searxng_upstream=closed_upstream(),
        search_enabled="true",
    ) as gw:  # fmt: skip
        res = call(
            "WebSearch",
            {"query": "hello"},
            WebAccess(public_fallback=True, gateway=gw.url, api_key=KEY),
            tmp_path,
        )
    assert res.ok
    # /services already says SearXNG does not answer: no 502 round trip first
    assert "the gateway offers no search service (/services: search=false)" in res.output
    assert ddg.queries() == ["hello"]


def test_scrape_not_offered_means_a_direct_fetch(
    tmp_path: Path, page: FakeServer, llama_stub: str
) -> None:
    with gateway(tmp_path, api_key=KEY, llama_upstream=llama_stub, scrape_enabled="false") as gw:
        res = call(
            "WebFetch",
            {"url": f"{page.url}/n"},
            WebAccess(public_fallback=True, gateway=gw.url, api_key=KEY),
            tmp_path,
        )
    assert res.ok, res.error
    assert res.output.startswith(
        "[WebFetch via fallback: direct fetch; gateway not used: the gateway offers no scrape "
        "service (/services: scrape=false)]"
    )
    assert "Local page text." in res.output
    assert page.paths() == ["/n"]


def test_scrape_service_down_behind_the_gateway_means_a_direct_fetch(
    tmp_path: Path, page: FakeServer, llama_stub: str
) -> None:
    with gateway(
        tmp_path, api_key=KEY, llama_upstream=llama_stub, scrape_upstream=closed_upstream(),
        scrape_enabled="true",
    ) as gw:  # fmt: skip
        res = call(
            "WebFetch",
            {"url": f"{page.url}/n"},
            WebAccess(public_fallback=True, gateway=gw.url, api_key=KEY),
            tmp_path,
        )
    assert res.ok, res.error
    # /services already says the scrape service does not answer: no 502 round trip first
    assert "the gateway offers no scrape service (/services: scrape=false)" in res.output
    assert "Local page text." in res.output


def test_services_document_of_the_real_gateway_is_what_the_probe_reads(
    tmp_path: Path, sx: FakeSearxng, ddg: FakeDuckDuckGo, llama_stub: str
) -> None:
    with gateway(
        tmp_path, api_key=KEY, llama_upstream=llama_stub, searxng_upstream=sx.url,
        search_enabled="yes", scrape_enabled="off",
    ) as gw:  # fmt: skip
        import httpx

        doc = httpx.get(f"{gw.url}/services", timeout=5).json()
        assert doc == {
            "llm": True,
            "llm_replicas": None,
            "search": True,
            "scrape": False,
            "crawl_durable": False,
        }
        # The agent may hand over llm.endpoint with its /v1 suffix: same gateway.
        web = WebAccess(public_fallback=True, gateway=f"{gw.url}/v1", api_key=KEY)
        res = call("WebSearch", {"query": "hello"}, web, tmp_path)
    assert res.output.startswith(f"[WebSearch via gateway: SearXNG via {gw.url}]")


@pytest.fixture
def llama_stub() -> Iterator[str]:
    """An upstream for the LLM route (these tests never use it); the gateway needs one."""

    def handle(req: Seen) -> Reply:
        return Reply(200, json.dumps({"status": "ok"}).encode(), "application/json")

    with serve(handle) as server:
        yield server.url


def test_web_tools_verify_the_gateway_against_its_ca(
    tmp_path: Path, sx: FakeSearxng, ddg: FakeDuckDuckGo, llama_stub: str
) -> None:
    """The worker's gateway calls over HTTPS trust the CA handed over in WebAccess, and only it."""
    with (
        gateway(
            tmp_path / "gw", api_key=KEY, llama_upstream=llama_stub, searxng_upstream=sx.url,
            search_enabled="true",
        ) as gw,
        gateway(tmp_path / "other", api_key=KEY, llama_upstream=llama_stub) as other,
    ):  # fmt: skip
        good = WebAccess(public_fallback=True, gateway=gw.tls_url, api_key=KEY, ca=gw.ca_pem)
        res = call("WebSearch", {"query": "hello"}, good, tmp_path)
        assert res.ok and "via fallback" not in res.output, res.output
        assert len(sx.searches()) == 1
        clear_probe_cache()
        # the right gateway, but the anchor of another one: a man in the middle, as far as we know
        wrong = WebAccess(public_fallback=True, gateway=gw.tls_url, api_key=KEY, ca=other.ca_pem)
        res = call("WebSearch", {"query": "hello"}, wrong, tmp_path)
        assert res.ok and "via fallback" in res.output
        assert "OPENMONO_GATEWAY_CA does not vouch for" in res.output
        assert len(sx.searches()) == 1  # nothing reached SearXNG
        assert ddg.queries() == ["hello"]


def test_web_tools_never_send_the_key_over_plain_http_beyond_loopback(
    tmp_path: Path, ddg: FakeDuckDuckGo
) -> None:
    # refused before any connection: the name is never even resolved
    web = WebAccess(public_fallback=True, gateway="http://relay.example.invalid:7000", api_key=KEY)
    res = call("WebSearch", {"query": "hello"}, web, tmp_path)
    assert res.ok and "refusing plain http://" in res.output and "--insecure-http" in res.output
    assert ddg.queries() == ["hello"]
