"""MCP client pieces without servers: names, result rendering, argument checks, config errors."""

from __future__ import annotations

import mcp.types as mt
import pytest
from openmono.config import McpServerSettings
from openmono.llm import ToolSpec
from openmono.loop import ToolCatalog
from openmono.mcp import (
    McpClientError,
    McpManager,
    McpToolset,
    RemoteTool,
    ServerConnection,
    tool_name,
)
from openmono.mcp._toolset import render
from openmono_contracts import ToolRequest, ToolResult


def test_tool_names_are_safe_function_names() -> None:
    assert tool_name("time", "get_current_time") == "mcp__time__get_current_time"
    assert tool_name("my server", "do.it/now") == "mcp__my_server__do_it_now"
    long = tool_name("s" * 40, "t" * 40)
    assert len(long) == 64 and long.startswith("mcp__ssss")
    assert long != tool_name("s" * 40, "t" * 39 + "u")


def test_render_results() -> None:
    result = mt.CallToolResult(
        content=[
            mt.TextContent(type="text", text="line"),
            mt.ImageContent(type="image", data="QUJD", mimeType="image/png"),
            mt.EmbeddedResource(
                type="resource",
                resource=mt.TextResourceContents(uri="notes://a", text="inside"),
            ),
        ]
    )
    assert (
        render(result) == "line\n[image: image/png, 4 base64 chars]\n[resource notes://a]\ninside"
    )
    structured = mt.CallToolResult(content=[], structuredContent={"n": 1})
    assert render(structured) == '{"n": 1}'


def test_server_needs_exactly_one_of_command_or_url() -> None:
    with pytest.raises(McpClientError, match="exactly one"):
        ServerConnection("x", McpServerSettings())
    with pytest.raises(McpClientError, match="exactly one"):
        ServerConnection("x", McpServerSettings(command="a", url="http://127.0.0.1:1/mcp"))


def test_disabled_servers_are_skipped() -> None:
    manager = McpManager({"off": McpServerSettings(command="x", enabled=False)})
    assert not manager and manager.status() == {}


async def test_toolset_offers_tools_and_checks_required_arguments() -> None:
    manager = McpManager({"t": McpServerSettings(command="never-started")})
    conn = manager.connections["t"]
    conn.tools = [
        RemoteTool("t", "now", "mcp__t__now", "the time",
                   {"type": "object", "properties": {"tz": {"type": "string"}},
                    "required": ["tz"]}, read_only=True),
    ]  # fmt: skip
    toolset = McpToolset(manager)
    catalog = ToolCatalog([toolset])
    assert set(catalog.specs) == {"mcp__t__now", "ListMcpResources", "ReadMcpResource"}
    assert isinstance(catalog.specs["mcp__t__now"], ToolSpec)
    assert catalog.facts_of("mcp__t__now").read_only
    assert catalog.lookup("mcp__t__later") is None

    async def call(tool: str, args: dict[str, str]) -> ToolResult:
        request = ToolRequest(tool=tool, params=args, call_id="c", session_id="s", workspace="/")
        return await toolset.call(request, lambda _e: None)

    # the arguments are checked before anything is sent to the (never started) server
    missing = await call("mcp__t__now", {})
    assert not missing.ok and missing.error == "invalid arguments for mcp__t__now: missing tz"
    unread = await call("ReadMcpResource", {"server": "t"})
    assert not unread.ok and (unread.error or "").startswith(
        "invalid arguments for ReadMcpResource"
    )
    toolset.close()
