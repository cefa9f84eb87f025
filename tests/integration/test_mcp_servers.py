"""MCP servers through the loop: the real `mcp-server-time` (stdio) and a fixture SDK server (stdio
and streamable HTTP) — listed, called, denied, resources read, a server killed mid-call."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from openmono.agent import Agent
from openmono.loop import LoopEvent, Notice, ToolFinished, ToolStarted
from openmono.mcp import McpManager

from tests.support.agents import OpenAgent
from tests.support.clean_env import clean_environ
from tests.support.procs import ROOT, free_port, running
from tests.support.scripted_llm import Call, ScriptedLLM, Turn

pytestmark = pytest.mark.integration
OPENMONO = str(Path(sys.executable).parent / "openmono")

KEY = "mcp-key"
TIME_SERVER = {
    "command": sys.executable,
    "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
}
FIXTURE_SERVER = {
    "command": sys.executable,
    "args": ["-m", "tests.support.mcp_fixture_server"],
    "cwd": str(ROOT),
}


@pytest.fixture
def ws(tmp_path: Path, clean_env: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def agent_overrides() -> dict[str, Any]:
    return {"llm.api_key": KEY}


@pytest.fixture
def open_with(open_with: OpenAgent) -> OpenAgent:
    """The shared opener, with MCP servers and their handshake awaited."""

    async def make(llm: ScriptedLLM, servers: dict[str, Any], **overrides: Any) -> Agent:
        agent = await open_with(llm, settings={"mcp_servers": servers, **overrides})
        assert agent.mcp is not None
        await agent.mcp.manager.wait_ready(60)
        return agent

    return make


def tool_message(llm: ScriptedLLM, index: int = -1) -> dict[str, Any]:
    return llm.chat_requests[index].json["messages"][-1]


async def test_time_server_listed_and_called_through_the_loop(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent
) -> None:
    llm = scripted_llm(
        [
            Turn(tool_calls=[Call("mcp__time__get_current_time", {"timezone": "UTC"}, id="t1")]),
            Turn(text="It is Sunday."),
        ],
        api_key=KEY, n_ctx=32768,
    )  # fmt: skip
    agent = await open_with(llm, {"time": TIME_SERVER})
    assert agent.mcp is not None
    assert agent.mcp.manager.status()["time"]["state"] == "connected"
    events: list[LoopEvent] = []
    done = await agent.run_turn("what time is it in UTC?", events.append)
    assert done.reason == "stop"
    offered = {t["function"]["name"] for t in llm.chat_requests[0].json["tools"]}
    assert {"mcp__time__get_current_time", "mcp__time__convert_time"} <= offered
    assert {"ListMcpResources", "ReadMcpResource", "FileRead"} <= offered
    answer = tool_message(llm)
    assert answer["tool_call_id"] == "t1"
    assert '"timezone": "UTC"' in answer["content"] and '"datetime"' in answer["content"]
    # read-only per the server's annotations: allowed without asking, like other reads
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert finished[0].ok and not finished[0].denied


async def test_server_killed_mid_call_gives_a_clear_error_and_reconnects(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent, tmp_path: Path
) -> None:
    pidfile = tmp_path / "time.pid"
    wrapped = {
        "command": "/bin/sh",
        "args": ["-c", f'echo $$ > {pidfile}; exec "$0" "$@"', *[TIME_SERVER["command"],
                 *TIME_SERVER["args"]]],
    }  # fmt: skip
    call = Call("mcp__time__get_current_time", {"timezone": "UTC"})
    llm = scripted_llm(
        [Turn(tool_calls=[call]), Turn(text="It failed."), Turn(tool_calls=[call]),
         Turn(text="Now it worked.")],
        api_key=KEY, n_ctx=32768,
    )  # fmt: skip
    agent = await open_with(llm, {"time": wrapped})
    assert agent.mcp is not None
    conn = agent.mcp.manager.connections["time"]
    pid = int(pidfile.read_text())
    os.kill(pid, signal.SIGSTOP)  # the server hangs: the call stays pending ...
    started = asyncio.Event()

    def watch(event: LoopEvent) -> None:
        if isinstance(event, ToolStarted):
            started.set()

    turn = asyncio.create_task(agent.run_turn("time?", watch))
    await asyncio.wait_for(started.wait(), 30)
    await asyncio.sleep(0.2)  # let the request reach the stopped server
    t0 = time.monotonic()
    os.kill(pid, signal.SIGKILL)  # ... until the server dies mid-call
    done = await asyncio.wait_for(turn, 30)
    assert time.monotonic() - t0 < 10
    assert done.reason == "stop"
    error = tool_message(llm, 1)["content"]
    assert error.startswith("Error: MCP server 'time' exited or closed the connection"), error
    # the supervisor restarts the server; the next call works
    deadline = time.monotonic() + 60
    while conn.connects < 2 and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert conn.state == "connected", conn.error
    events: list[LoopEvent] = []
    done = await agent.run_turn("time again?", events.append)
    assert done.text == "Now it worked."
    # the outage was reported to the session at the start of the next turn
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert notices and notices[0].startswith("MCP server 'time' is down (")
    assert '"timezone": "UTC"' in tool_message(llm, 3)["content"]


async def test_calls_while_a_server_is_down_fail_fast(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent
) -> None:
    llm = scripted_llm(
        [Turn(tool_calls=[Call("ReadMcpResource", {"server": "gone", "uri": "x://y"})]),
         Turn(text="ok")],
        api_key=KEY, n_ctx=32768,
    )  # fmt: skip
    agent = await open_with(llm, {"gone": {"command": "/nonexistent/mcp-server"}})
    assert agent.mcp is not None
    status = agent.mcp.manager.status()["gone"]
    assert status["state"] in ("down", "connecting") and status["error"]
    t0 = time.monotonic()
    done = await agent.run_turn("read it")
    assert time.monotonic() - t0 < 10 and done.reason == "stop"
    content = tool_message(llm)["content"]
    assert "MCP server 'gone' is not connected" in content


async def test_fixture_server_resources_and_permissions(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent
) -> None:
    llm = scripted_llm(
        [
            Turn(tool_calls=[Call("ListMcpResources", {})]),
            Turn(tool_calls=[Call("ReadMcpResource", {"server": "fx", "uri": "notes://readme"})]),
            Turn(tool_calls=[Call("mcp__fx__add", {"a": 2, "b": 3}),
                             Call("mcp__fx__echo", {"text": "hi"})]),
            Turn(text="done"),
        ],
        api_key=KEY, n_ctx=32768,
    )  # fmt: skip
    agent = await open_with(llm, {"fx": FIXTURE_SERVER, "time": TIME_SERVER})
    events: list[LoopEvent] = []
    done = await agent.run_turn("look around", events.append)
    assert done.reason == "stop"
    listing = tool_message(llm, 1)["content"]
    assert "fx: notes://readme (readme) — What this server is." in listing
    assert "fx: notes://todo (todo)" in listing
    assert "time: (this server exposes no resources)" in listing
    assert tool_message(llm, 2)["content"] == "This is the fixture MCP server."
    last = [m for m in llm.chat_requests[3].json["messages"] if m["role"] == "tool"][-2:]
    assert last[0]["content"] == "5"  # read-only: allowed
    # echo is not marked read-only: it needs approval, and this run cannot give it
    assert "non-interactive" in last[1]["content"]
    denied = [e for e in events if isinstance(e, ToolFinished) and e.name == "mcp__fx__echo"]
    assert denied[0].denied


async def test_streamable_http_server_and_rules(
    scripted_llm: Callable[..., ScriptedLLM], open_with: OpenAgent, tmp_path: Path
) -> None:
    port = free_port()
    cmd = [sys.executable, "-m", "tests.support.mcp_fixture_server", "--http", str(port)]
    llm = scripted_llm(
        [Turn(tool_calls=[Call("mcp__web__echo", {"text": "over http"})]), Turn(text="ok")],
        api_key=KEY, n_ctx=32768,
    )  # fmt: skip
    with running(cmd, tmp_path / "mcp-http.log"):
        servers = {"web": {"url": f"http://127.0.0.1:{port}/mcp", "connect_timeout_s": 60}}
        rules = {"mcp__web__echo": {"allow": ["*"]}}
        manager_ready = False
        deadline = time.monotonic() + 60
        agent = await open_with(llm, servers, **{"permissions.tools": rules})
        assert agent.mcp is not None
        while time.monotonic() < deadline:
            manager_ready = agent.mcp.manager.status()["web"]["state"] == "connected"
            if manager_ready:
                break
            await asyncio.sleep(0.1)
        assert manager_ready, agent.mcp.manager.status()
        agent.mcp.refresh()
        done = await agent.run_turn("echo over http")
        assert done.reason == "stop"
        assert tool_message(llm)["content"] == "echo: over http"


async def test_manager_closes_its_servers(tmp_path: Path) -> None:
    pidfile = tmp_path / "p.pid"
    server = {
        "command": "/bin/sh",
        "args": ["-c", f'echo $$ > {pidfile}; exec "$0" "$@"', *[TIME_SERVER["command"],
                 *TIME_SERVER["args"]]],
    }  # fmt: skip
    from openmono.config import McpServerSettings

    manager = McpManager({"time": McpServerSettings.model_validate(server)})
    manager.start()
    await manager.wait_ready(60)
    pid = int(pidfile.read_text())
    os.kill(pid, 0)
    await manager.aclose()
    with pytest.raises(ProcessLookupError):
        for _ in range(100):
            os.kill(pid, 0)
            await asyncio.sleep(0.05)


def run_print(
    llm: ScriptedLLM, tmp_path: Path, servers: dict[str, Any], *args: str
) -> tuple[subprocess.CompletedProcess[str], float]:
    """`openmono -p` as a user runs it, with `servers` in a settings file; (result, seconds)."""
    config = tmp_path / "settings.json"
    config.write_text(json.dumps({"mcp_servers": servers}))
    ws = tmp_path / "print-ws"
    ws.mkdir(exist_ok=True)
    env = {
        **clean_environ(),
        "OPENMONO_DATA_DIR": str(tmp_path / "data"),
        "OPENMONO_LLM_ENDPOINT": llm.url,
        "LLAMA_API_KEY": KEY,
        "HOME": str(tmp_path),
    }
    started = time.monotonic()
    done = subprocess.run(
        [OPENMONO, "--config", str(config), "-p", "what time is it?", *args],
        env=env, cwd=ws, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    return done, time.monotonic() - started


def test_print_mode_offers_the_mcp_tools_in_its_first_request(
    scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path
) -> None:
    """`-p` used to send its first request before the servers connected ("unknown tool")."""
    call = Call("mcp__time__get_current_time", {"timezone": "UTC"}, id="t1")
    llm = scripted_llm([Turn(tool_calls=[call]), Turn(text="It is now.")], api_key=KEY, n_ctx=32768)
    done, _ = run_print(llm, tmp_path, {"time": TIME_SERVER})
    assert done.returncode == 0, done.stderr
    offered = {t["function"]["name"] for t in llm.chat_requests[0].json["tools"]}
    assert {"mcp__time__get_current_time", "mcp__time__convert_time"} <= offered
    answer = tool_message(llm)
    assert answer["tool_call_id"] == "t1" and '"datetime"' in answer["content"], answer
    assert done.stdout.strip() == "It is now."
    assert "MCP server" not in done.stderr


@pytest.mark.parametrize("fmt", ["text", "json", "stream-json"])
def test_print_mode_says_in_one_line_which_server_failed(
    scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path, fmt: str
) -> None:
    llm = scripted_llm([Turn(text="No clock.")], api_key=KEY, n_ctx=32768)
    servers = {"time": TIME_SERVER, "gone": {"command": "/nonexistent/mcp-server"}}
    done, _ = run_print(llm, tmp_path, servers, "--output-format", fmt)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "MCP server" in line]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("[warning] MCP server 'gone' could not connect (")
    assert lines[0].endswith("; going on without its tools until it connects")
    assert "/nonexistent/mcp-server" in lines[0] and "Traceback" not in done.stderr
    offered = {t["function"]["name"] for t in llm.chat_requests[0].json["tools"]}
    assert "mcp__time__get_current_time" in offered


def test_print_mode_waits_at_most_15_s_for_a_server_that_never_answers(
    scripted_llm: Callable[..., ScriptedLLM], tmp_path: Path
) -> None:
    llm = scripted_llm([Turn(text="Went on.")], api_key=KEY, n_ctx=32768)
    mute = {"command": sys.executable, "args": ["-c", "import time; time.sleep(600)"]}
    done, took = run_print(llm, tmp_path, {"mute": mute})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Went on."
    assert "[warning] MCP server 'mute' did not connect within 15 s; going on without" in (
        done.stderr
    )
    assert 15 <= took < 45, took
