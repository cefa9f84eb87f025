"""Extension points of the tool pipeline: toolsets (the one shape of a tool group) and hooks.

Every tool the loop offers comes from a `Toolset`: the worker's tools (`WorkerTools`: the
executor plus the worker's catalog), an MCP server's, `Agent`, `Playbook`. A toolset says what it
offers (`tools()`: name -> spec and facts) and runs a call (`call`). The dispatcher routes each
call to the toolset that offers its name and never asks which kind it is. A toolset validates a
call's arguments where the tool runs (the worker, the MCP server, the agent for `Agent`), and an
invalid call comes back as an `ok=False` result whose error tells the model what to fix.

`Narrowed` is the one wrapper: a toolset seen through a filter (a sub-agent's allow-list, a
playbook's `allowed-tools`), composed around any toolset instead of flags on every tool.

`ToolHooks` wraps execution: `pre_tool_use` runs after the permission engine allowed a call and may
block it (the reason is the model's error message); `post_tool_use` runs after the result is known
and may add a note for the model.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Protocol

from openmono_contracts import ToolRequest, ToolResult
from openmono_contracts.toolfacts import ToolFacts

from openmono.llm import ToolSpec
from openmono.loop._events import EventSink


@dataclass(frozen=True)
class OfferedTool:
    """One tool as the loop offers it: the spec the model sees, the facts the pipeline reads."""

    spec: ToolSpec
    facts: ToolFacts


class Toolset(Protocol):
    """A group of tools the loop offers and runs (see the module docstring)."""

    def tools(self) -> Mapping[str, OfferedTool]:
        """What it offers now, by name (names must not clash with another toolset's)."""
        ...

    async def call(self, request: ToolRequest, emit: EventSink) -> ToolResult:
        """Validate and run one call; failures (invalid arguments included) are `ok=False`
        results, never exceptions (bar cancellation)."""
        ...


Keep = Callable[[str, ToolFacts], bool]


class Narrowed:
    """`inner` offering only the tools `keep(name, facts)` accepts; calls go to `inner`."""

    def __init__(self, inner: Toolset, keep: Keep) -> None:
        self.inner = inner
        self.keep = keep

    def tools(self) -> Mapping[str, OfferedTool]:
        return {n: t for n, t in self.inner.tools().items() if self.keep(n, t.facts)}

    async def call(self, request: ToolRequest, emit: EventSink) -> ToolResult:
        return await self.inner.call(request, emit)


class ToolHooks(Protocol):
    """Around every executed call (see the module docstring)."""

    async def pre_tool_use(self, request: ToolRequest) -> str | None: ...

    async def post_tool_use(self, request: ToolRequest, result: ToolResult) -> str | None: ...
