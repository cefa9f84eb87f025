"""The MCP servers' tools as one agent's `Toolset`, plus two tools for their resources.

Server tools are offered as `mcp__{server}__{tool}`; `ListMcpResources` {server?} lists what the
servers expose and `ReadMcpResource` {server, uri} reads one. All of them pass through the same
pipeline as built-in tools (mode guard, permission engine, hooks). A tool is read-only only when
its server marks it so (`readOnlyHint`); everything else asks before it runs. A call missing an
argument the tool's schema requires is answered here, without a round trip to the server.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping

import mcp.types as mt
from openmono_contracts import ToolErrorKind, ToolRequest, ToolResult
from openmono_contracts.toolfacts import ToolFacts, params_schema
from pydantic import AnyUrl, BaseModel, Field, ValidationError

from openmono.llm import ToolSpec
from openmono.loop import EventSink, OfferedTool
from openmono.mcp._connection import RemoteTool, ServerConnection
from openmono.mcp._errors import McpClientError
from openmono.mcp._manager import McpManager

LIST_RESOURCES, READ_RESOURCE = "ListMcpResources", "ReadMcpResource"
LIST_TIMEOUT_S = 30.0
# Argument names the built-in tools use for paths: a server tool taking one is held to the
# workspace (and matched by path rules) like them.
PATH_PARAM_NAMES = ("file_path", "path")


class ListParams(BaseModel):
    server: str | None = Field(default=None, description="Only this server (default: all).")


class ReadParams(BaseModel):
    server: str = Field(description="The MCP server that exposes the resource.")
    uri: str = Field(description="The resource's URI, as ListMcpResources showed it.")


RESOURCE_TOOLS = {
    LIST_RESOURCES: OfferedTool(
        ToolSpec(
            name=LIST_RESOURCES,
            description="List the resources (files, documents, data) the MCP servers expose.",
            parameters=params_schema(ListParams),
        ),
        ToolFacts(read_only=True, concurrency_safe=True, kind="search"),
    ),
    READ_RESOURCE: OfferedTool(
        ToolSpec(
            name=READ_RESOURCE,
            description="Read one resource of an MCP server by its URI.",
            parameters=params_schema(ReadParams),
        ),
        ToolFacts(read_only=True, concurrency_safe=True, kind="read"),
    ),
}


class _Invalid(McpClientError):
    """A call whose arguments miss what the tool's schema requires (answered without a round
    trip to the server)."""


def remote_facts(tool: RemoteTool) -> ToolFacts:
    """What a server tool declares: read-only (and then parallel) only with `readOnlyHint`."""
    properties = tool.schema.get("properties")
    names = properties if isinstance(properties, dict) else {}
    paths = tuple(k for k in PATH_PARAM_NAMES if k in names)
    return ToolFacts(read_only=tool.read_only, concurrency_safe=tool.read_only, path_params=paths)


def render(result: mt.CallToolResult) -> str:
    """A tool result as text for the model."""
    parts: list[str] = []
    for block in result.content:
        if isinstance(block, mt.TextContent):
            parts.append(block.text)
        elif isinstance(block, mt.ImageContent | mt.AudioContent):
            parts.append(f"[{block.type}: {block.mimeType}, {len(block.data)} base64 chars]")
        elif isinstance(block, mt.EmbeddedResource):
            res = block.resource
            text = res.text if isinstance(res, mt.TextResourceContents) else "[binary]"
            parts.append(f"[resource {res.uri}]\n{text}")
        elif isinstance(block, mt.ResourceLink):
            parts.append(f"[resource link {block.uri}] {block.name}")
    if not parts and result.structuredContent is not None:
        parts.append(json.dumps(result.structuredContent, ensure_ascii=False))
    return "\n".join(parts)


class McpToolset:
    """One session's view of the manager's tools, kept in step with the servers."""

    def __init__(self, manager: McpManager, report: Callable[[str], None] | None = None) -> None:
        self.manager = manager
        self.report = report
        self._tools: dict[str, RemoteTool] = {}
        self._offered: dict[str, OfferedTool] = {}
        # Outages already told (`McpManager.connect` reports the ones found at the start).
        self._down = {
            name
            for name, conn in manager.connections.items()
            if conn.ready.is_set() and conn.state != "connected"
        }
        manager.subscribe(self._on_change)
        self.refresh()

    def close(self) -> None:
        self.manager.unsubscribe(self._on_change)

    def _on_change(self, conn: ServerConnection) -> None:
        self.refresh()
        # One report per outage, not one per failed reconnect attempt.
        if conn.state == "connected":
            self._down.discard(conn.name)
        elif conn.state == "down" and conn.name not in self._down:
            self._down.add(conn.name)
            if self.report is not None:
                self.report(f"MCP server {conn.name!r} is down ({conn.error}); reconnecting")

    def refresh(self) -> None:
        """Offer every tool the servers listed (kept while a server reconnects)."""
        offered = dict(RESOURCE_TOOLS) if self.manager else {}
        for tool in self.manager.tools():
            self._tools[tool.exposed] = tool
        for name, tool in self._tools.items():
            spec = ToolSpec(
                name=name,
                description=f"[MCP server {tool.server}] {tool.description}",
                parameters=tool.schema,
            )
            offered[name] = OfferedTool(spec, remote_facts(tool))
        self._offered = offered

    # -- the Toolset protocol -----------------------------------------------------------------
    def tools(self) -> Mapping[str, OfferedTool]:
        return self._offered

    async def call(self, request: ToolRequest, emit: EventSink) -> ToolResult:
        started = time.monotonic()
        kind: ToolErrorKind | None = None
        try:
            if request.tool == LIST_RESOURCES:
                output = await self._list(ListParams.model_validate(request.params))
                ok, error = True, None
            elif request.tool == READ_RESOURCE:
                output = await self._read(ReadParams.model_validate(request.params))
                ok, error = True, None
            else:
                output, ok, error = await self._call(request)
        except ValidationError as exc:
            output, ok, kind = "", False, "invalid_params"
            error = f"invalid arguments for {request.tool}: {exc.errors()[0]['msg']}"
        except _Invalid as exc:
            output, ok, error, kind = "", False, str(exc), "invalid_params"
        except McpClientError as exc:
            output, ok, error = "", False, str(exc)
        elapsed = (time.monotonic() - started) * 1000
        return ToolResult(
            call_id=request.call_id,
            ok=ok,
            output=output,
            error=error,
            elapsed_ms=elapsed,
            error_kind=kind,
        )

    def _conn(self, server: str) -> ServerConnection:
        conn = self.manager.connections.get(server)
        if conn is None:
            known = ", ".join(self.manager.connections) or "none"
            raise McpClientError(f"no MCP server {server!r} (configured: {known})")
        return conn

    async def _call(self, request: ToolRequest) -> tuple[str, bool, str | None]:
        tool = self._tools[request.tool]
        missing = [k for k in tool.schema.get("required", []) if k not in request.params]
        if missing:
            raise _Invalid(f"invalid arguments for {tool.exposed}: missing {', '.join(missing)}")
        conn = self._conn(tool.server)
        result: mt.CallToolResult = await conn.request(
            f"the call to {tool.name}",
            lambda s: s.call_tool(tool.name, request.params),
            conn.settings.call_timeout_s,
        )
        text = render(result)
        if result.isError:
            return "", False, text or f"{tool.name} failed (no details from the server)"
        return text, True, None

    async def _list(self, params: ListParams) -> str:
        names = [params.server] if params.server else list(self.manager.connections)
        lines: list[str] = []
        for name in names:
            conn = self._conn(name)
            if conn.state == "connected" and not conn.has_resources:
                lines.append(f"{name}: (this server exposes no resources)")
                continue
            try:
                page: mt.ListResourcesResult = await conn.request(
                    "resources/list", lambda s: s.list_resources(), LIST_TIMEOUT_S
                )
            except McpClientError as exc:
                lines.append(f"{name}: {exc}")
                continue
            if not page.resources:
                lines.append(f"{name}: (no resources)")
            for r in page.resources:
                about = f" — {r.description}" if r.description else ""
                lines.append(f"{name}: {r.uri} ({r.name}){about}")
        return "\n".join(lines) or "(no MCP servers)"

    async def _read(self, params: ReadParams) -> str:
        conn = self._conn(params.server)
        result: mt.ReadResourceResult = await conn.request(
            "resources/read",
            lambda s: s.read_resource(AnyUrl(params.uri)),
            conn.settings.call_timeout_s,
        )
        parts = [
            c.text if isinstance(c, mt.TextResourceContents) else f"[binary {c.mimeType}]"
            for c in result.contents
        ]
        return "\n".join(parts)
