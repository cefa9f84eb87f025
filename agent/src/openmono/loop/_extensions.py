"""Extension points of the tool pipeline: agent-side toolsets and tool hooks.

A `Toolset` serves tools that run in the agent process rather than the worker (an MCP server's
tools, the `Agent` tool); the dispatcher asks each toolset whether it owns a name before it falls
back to the worker's registry. Its specs live in the same `ToolCatalog`, so the mode filter, the
permission engine and the hooks see them like any other tool.

`ToolHooks` wraps execution: `pre_tool_use` runs after the permission engine allowed a call and may
block it (the reason is the model's error message); `post_tool_use` runs after the result is known
and may add a note for the model.
"""

from __future__ import annotations

from typing import Any, Protocol

from openmono_contracts import ToolRequest, ToolResult

from openmono.loop._events import EventSink


class Toolset(Protocol):
    """Tools run by the agent itself; names must not clash with the worker's tools."""

    def owns(self, name: str) -> bool: ...

    def check(self, name: str, args: dict[str, Any]) -> str | None:
        """Why `args` are not valid for `name` (a message for the model), or None."""
        ...

    async def call(self, request: ToolRequest, emit: EventSink) -> ToolResult:
        """Run one call; failures are `ok=False` results, never exceptions (bar cancellation)."""
        ...


class ToolHooks(Protocol):
    """Around every executed call (see the module docstring)."""

    async def pre_tool_use(self, request: ToolRequest) -> str | None: ...

    async def post_tool_use(self, request: ToolRequest, result: ToolResult) -> str | None: ...
