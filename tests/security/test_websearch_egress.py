"""Finding 6: `WebSearch` is auto-allowed and its query leaves the box through the public fallback.

The attack: a prompt (or a page the model read) makes the model search for something built from
the workspace; no gateway search answers, so the worker sends the query straight to DuckDuckGo,
and `read_top` then reads the hits straight from their sites, none of it approved by anyone.
Now the public fallback is opt-in (`web.public_fallback`, off by default): without it the fake
DuckDuckGo (tests/support/fake_ddg.py) and the hits' site see no request at all, and the tool
result says how to turn it on; an untrusted project cannot turn it on. With it, both are asked,
and what `read_top` read is marked untrusted exactly as WebFetch's page is.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from openmono_contracts import ToolRequest, ToolResult, WebAccess
from openmono_worker import run_tool

from tests.support.clean_env import clean_environ
from tests.support.cli import run_openmono
from tests.support.fake_ddg import FakeDuckDuckGo, fake_duckduckgo
from tests.support.httpfake import Reply, Seen, serve
from tests.support.procs import free_port
from tests.support.scripted_llm import Call, ScriptedLLM, Turn
from tests.support.web_env import loopback_web_env
from tests.support.web_stack import local_searxng

KEY = "egress-key"
SECRET_QUERY = "contents of .env API_TOKEN=s3cr3t"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from loopback_web_env(monkeypatch)


@pytest.fixture
def ddg(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeDuckDuckGo]:
    with fake_duckduckgo() as fake:
        monkeypatch.setenv("WORKER_WEB_DDG_URL", fake.url)
        yield fake


def search(params: dict[str, object], web: WebAccess, tmp: Path) -> ToolResult:
    req = ToolRequest(
        tool="WebSearch", params=params, call_id="c", session_id="s", workspace=str(tmp), web=web
    )
    return run_tool(req)


@pytest.mark.parametrize(
    "web",
    [
        WebAccess(),  # no gateway at all
        WebAccess(gateway=f"http://127.0.0.1:{free_port()}", api_key=KEY),  # the gateway is down
        WebAccess(gateway="http://127.0.0.1:1", search=False),  # search switched off
    ],
    ids=["no-gateway", "gateway-down", "search-off"],
)
def test_no_query_reaches_the_public_fallback_unless_opted_in(
    web: WebAccess, ddg: FakeDuckDuckGo, tmp_path: Path
) -> None:
    res = search({"query": SECRET_QUERY}, web, tmp_path)
    assert not res.ok and ddg.queries() == []
    assert "nothing was searched" in (res.error or "")
    assert "web.public_fallback" in (res.error or "") and "OPENMONO_WEB_PUBLIC_FALLBACK=1" in (
        res.error or ""
    )
    opted = search(
        {"query": SECRET_QUERY}, web.model_copy(update={"public_fallback": True}), tmp_path
    )
    assert opted.ok, opted.error
    assert ddg.queries() == [SECRET_QUERY]


def test_read_top_hits_leave_the_box_only_through_the_gateway_unless_opted_in(
    tmp_path: Path,
) -> None:
    seen: list[Seen] = []

    def page(req: Seen) -> Reply:
        seen.append(req)
        html = "<html><head><title>Tides</title></head><body><p>slack water</p></body></html>"
        return Reply(200, html.encode(), "text/html; charset=utf-8")

    with serve(page) as site, local_searxng([f"{site.url}/tides"]) as gateway_search:
        # the gateway answers the search but offers no scrape service: the hit would be read
        # directly from this box
        web = WebAccess(gateway=gateway_search.url, api_key=KEY, search=True, scrape=False)
        res = search({"query": "tides", "read_top": 1}, web, tmp_path)
        assert res.ok, res.error
        assert seen == []
        assert "[not read: no scrape service through the gateway" in res.output
        assert "the page was not asked for" in res.output and "web.public_fallback" in res.output
        opted = search(
            {"query": "tides", "read_top": 1},
            web.model_copy(update={"public_fallback": True}),
            tmp_path,
        )
        assert opted.ok, opted.error
        assert [r.path for r in seen] == ["/tides"]
        fetched = run_tool(
            ToolRequest(
                tool="WebFetch", params={"url": f"{site.url}/tides"}, call_id="f",
                session_id="s", workspace=str(tmp_path), web=WebAccess(),
            )
        )  # fmt: skip
    assert fetched.ok, fetched.error
    block = fetched.output[fetched.output.index("The text between") :]
    assert block in opted.output  # the very block WebFetch gives: note, marker, title, text
    assert "Title: Tides" in block and '<untrusted-page-content source="' in block


@pytest.mark.integration
def test_the_agent_sends_no_query_off_the_box_unless_the_user_opted_in(
    scripted_llm: Callable[..., ScriptedLLM], ddg: FakeDuckDuckGo, tmp_path: Path
) -> None:
    """The real `openmono -p`: its gateway (the scripted LLM) offers no search. The default sends
    nothing; an untrusted project cannot opt in; the user's own opt-in does."""
    ws = tmp_path / "ws"
    (ws / ".openmono").mkdir(parents=True)
    (ws / ".openmono" / "settings.json").write_text('{"web": {"public_fallback": true}}')
    call = Call("WebSearch", {"query": SECRET_QUERY})
    llm = scripted_llm([Turn(tool_calls=[call]), Turn(text="done")] * 2, api_key=KEY, n_ctx=32768)
    env = {
        **clean_environ(),
        "OPENMONO_DATA_DIR": str(tmp_path / "data"),
        "OPENMONO_LLM_ENDPOINT": llm.url,
        "OPENMONO_LLM_API_KEY": KEY,
        "OPENMONO_LLM_MAX_RETRIES": "0",
        "WORKER_WEB_DDG_URL": ddg.url,
        "HOME": str(tmp_path),
    }
    r = run_openmono(["-p", "look it up"], env, ws)
    assert r.code == 0, r.err
    assert ddg.queries() == []
    assert "web.public_fallback" in " ".join(r.err.split())  # left out: the project is untrusted
    result = next(m for m in llm.chat_requests[1].json["messages"] if m["role"] == "tool")
    assert "nothing was searched" in result["content"]
    assert "web.public_fallback" in result["content"]

    user = tmp_path / "data" / "settings.json"
    user.write_text(json.dumps({"web": {"public_fallback": True}}))
    r = run_openmono(["-p", "look it up"], env, ws)
    assert r.code == 0, r.err
    assert ddg.queries() == [SECRET_QUERY]
