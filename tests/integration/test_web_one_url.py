"""The agent box against one URL: only `llm.endpoint` (the relay) and the key are configured.

Real processes: the Caddy gateway (`caddy/Caddyfile`), the scrape service, and the `openmono`
CLI as the agent; in-thread loopback servers: the scripted LLM, the SearXNG-shaped server built
from recorded answers, a local DuckDuckGo stand-in, a page to fetch, and a plain TCP forwarder
standing in for frps/frpc. The session calls WebSearch and WebFetch; both go through the gateway.
Then the gateway restarts with `WEB_SEARCH_ENABLED=false`, the same session (resumed) searches
again and takes the fallback, and says so. The relay changes nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_ddg import FakeDuckDuckGo, fake_duckduckgo
from tests.support.fake_searxng import FakeSearxng, fake_searxng
from tests.support.gateway import caddy_binary, gateway_env
from tests.support.httpfake import FakeServer, Reply, Seen, serve
from tests.support.procs import ROOT, Proc, free_port, running, start, wait_http_ok
from tests.support.scripted_llm import Call, ScriptedLLM, Turn
from tests.support.tcp_relay import tcp_relay

pytestmark = [pytest.mark.integration, pytest.mark.slow]

KEY = "one-url-test-key-7f3a"
ARTICLE = (
    "<html><head><title>Relay notes</title></head><body><nav>site menu</nav><article>"
    "<h1>Why one URL is enough</h1><p>The relay forwards the gateway port and nothing else; "
    "the agent discovers search and scrape through the services document.</p>"
    "<p>Every request carries the bearer key, so the relay never exposes an open model.</p>"
    "</article></body></html>"
)


@dataclass
class Box:
    """The inference box: gateway on a fixed port, upstreams, and what they saw."""

    tmp: Path
    port: int
    llm: ScriptedLLM
    searxng: FakeSearxng
    scrape_url: str
    proc: Proc | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start_gateway(self, *, search: str, scrape: str) -> None:
        env = gateway_env(
            self.tmp,
            api_key=KEY,
            listen=f"127.0.0.1:{self.port}",
            llama_upstream=self.llm.url,
            searxng_upstream=self.searxng.url,
            scrape_upstream=self.scrape_url,
            search_enabled=search,
            scrape_enabled=scrape,
        )
        cmd = [str(caddy_binary()), "run", "--config", str(ROOT / "caddy" / "Caddyfile")]
        cmd += ["--adapter", "caddyfile"]
        self.proc = start(cmd, self.tmp / f"caddy-{search}-{scrape}.log", env)
        wait_http_ok(f"{self.url}/health", 30, self.proc)

    def stop_gateway(self) -> None:
        if self.proc is not None:
            self.proc.stop()
            self.proc = None


@pytest.fixture
def page() -> Iterator[FakeServer]:
    def handle(req: Seen) -> Reply:
        if req.path == "/article":
            return Reply(200, ARTICLE.encode(), "text/html; charset=utf-8")
        return Reply(404, b"missing", "text/plain")

    with serve(handle) as server:
        yield server


@pytest.fixture
def ddg() -> Iterator[FakeDuckDuckGo]:
    with fake_duckduckgo() as fake:
        yield fake


@contextmanager
def scrape_service(tmp: Path) -> Iterator[str]:
    port = free_port()
    cmd = [sys.executable, "-m", "openmono_scrape", "--host", "127.0.0.1", "--port", str(port)]
    url = f"http://127.0.0.1:{port}"
    env = {"SCRAPE_ALLOW_CIDRS": "127.0.0.0/8"}
    with running(cmd, tmp / "scrape.log", env, ready_url=f"{url}/health", timeout_s=90):
        yield url


def agent(endpoint: str, prompt: str, tmp: Path, ddg: FakeDuckDuckGo, *extra: str) -> Any:
    """`openmono -p` as the agent box: nothing configured but the endpoint and the key."""
    workspace = tmp / "workspace"
    workspace.mkdir(exist_ok=True)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("OPENMONO_", "WORKER_", "LLAMA_", "WEB_"))
    }
    env.update(
        {
            "OPENMONO_LLM_ENDPOINT": endpoint,
            "LLAMA_API_KEY": KEY,
            "OPENMONO_DATA_DIR": str(tmp / "agent-data"),
            "HOME": str(tmp / "agent-home"),
            # No internet here: the fallback search engine is the local stand-in, and this
            # agent box opted in to it (web.public_fallback)
            "WORKER_WEB_DDG_URL": ddg.url,
            "OPENMONO_WEB_PUBLIC_FALLBACK": "1",
        }
    )
    cmd = [sys.executable, "-m", "openmono.cli", "-p", prompt, "--output-format", "json"]
    cmd += ["--allow", "WebSearch", "--allow", "WebFetch", "-C", str(workspace), *extra]
    done = subprocess.run(
        cmd,
        env=env,
        cwd=str(workspace),
        capture_output=True,
        text=True,
        timeout=180,
        start_new_session=True,
        check=False,
    )
    assert done.returncode == 0, f"agent failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def tool_results(llm: ScriptedLLM, request_index: int) -> dict[str, str]:
    """Tool name -> the tool message the model read in chat request `request_index`."""
    messages = llm.chat_requests[request_index].json["messages"]
    names: dict[str, str] = {}
    for msg in messages:
        for call in msg.get("tool_calls") or []:
            names[call["id"]] = call["function"]["name"]
    out: dict[str, str] = {}
    for msg in messages:
        if msg.get("role") == "tool":
            content = msg["content"]
            text = content if isinstance(content, str) else json.dumps(content)
            out[names.get(msg.get("tool_call_id", ""), "?")] = text
    return out


def script(page_url: str, search: str, answer: str) -> list[Turn]:
    return [
        Turn(
            tool_calls=[
                Call("WebSearch", {"query": search, "max_results": 3}),
                Call("WebFetch", {"url": page_url}),
            ]
        ),
        Turn(text=answer),
    ]


@pytest.fixture
def box(
    tmp_path: Path, scripted_llm: Callable[..., ScriptedLLM], page: FakeServer
) -> Iterator[Box]:
    llm = scripted_llm([], api_key=KEY)
    with fake_searxng() as sx, scrape_service(tmp_path) as scrape_url:
        b = Box(tmp_path, free_port(), llm, sx, scrape_url)
        try:
            yield b
        finally:
            b.stop_gateway()


def test_one_url_through_a_relay_then_fallback_after_the_switch(
    box: Box, page: FakeServer, ddg: FakeDuckDuckGo, tmp_path: Path
) -> None:
    article = f"{page.url}/article"
    box.start_gateway(search="true", scrape="true")
    with tcp_relay(box.port) as relay:
        # 1. Through the relay: search and fetch both answered by the gateway's services.
        box.llm.turns += script(article, "hello", "first answer")
        first = agent(relay.url, "look it up", tmp_path, ddg)
        assert first["result"] == "first answer"
        assert [t["name"] for t in first["tools"]] == ["WebSearch", "WebFetch"]
        assert all(t["ok"] for t in first["tools"])
        seen = tool_results(box.llm, len(box.llm.chat_requests) - 1)
        assert seen["WebSearch"].startswith(f"[WebSearch via gateway: SearXNG via {relay.url}]")
        assert "https://example.org/hello/p1/r1" in seen["WebSearch"]
        assert seen["WebFetch"].startswith(
            f"[WebFetch via gateway: scrape service via {relay.url}; engine: fetcher]"
        )
        assert "The relay forwards the gateway port and nothing else" in seen["WebFetch"]
        [search] = box.searxng.searches()
        assert search.query["q"] == ["hello"]
        assert search.query["format"] == ["json"]
        assert "Authorization" not in search.headers  # the gateway keeps the key to itself
        assert page.paths() == ["/article"]  # fetched by the scrape service, not the agent
        assert ddg.queries() == []
        assert relay.connections > 0
        # The LLM sat behind the same URL, with the same key.
        assert all(r.headers.get("authorization") == f"Bearer {KEY}" for r in box.llm.chat_requests)

        # 2. The same steps straight at the gateway: the relay changed nothing but the URL.
        box.llm.turns += script(article, "hello", "direct answer")
        direct = agent(box.url, "look it up", tmp_path, ddg)
        assert direct["result"] == "direct answer"
        seen_direct = tool_results(box.llm, len(box.llm.chat_requests) - 1)
        for name in ("WebSearch", "WebFetch"):
            assert seen_direct[name] == seen[name].replace(relay.url, box.url)

        # 3. Search switched off at the gateway; the same session, resumed, falls back and says so.
        box.stop_gateway()
        box.start_gateway(search="false", scrape="true")
        box.llm.turns += script(article, "caddy reverse proxy", "second answer")
        second = agent(relay.url, "again", tmp_path, ddg, "--resume", str(first["session_id"]))
        assert second["session_id"] == first["session_id"]
        assert second["result"] == "second answer"
        seen = tool_results(box.llm, len(box.llm.chat_requests) - 1)
        assert seen["WebSearch"].startswith(
            f"[WebSearch via fallback: DuckDuckGo ({ddg.url}); gateway not used: the gateway "
            "offers no search service (/services: search=false)]"
        )
        assert (
            "https://caddyserver.com/docs/caddyfile/directives/reverse_proxy" in (seen["WebSearch"])
        )
        assert ddg.queries() == ["caddy reverse proxy"]
        assert len(box.searxng.searches()) == 2  # nothing new reached SearXNG
        # Scrape is still offered: WebFetch still goes through the gateway.
        assert seen["WebFetch"].startswith(f"[WebFetch via gateway: scrape service via {relay.url}")
        assert page.paths() == ["/article"] * 3
