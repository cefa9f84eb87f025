"""MCP servers an ACP client hands over with `session/new` / `session/load` (`mcpServers`).

Stdio and HTTP servers are supported (SSE and ACP-transport ones are skipped with a warning). A
session given servers gets its own `McpManager` with the configured servers plus the client's
(a client's server of the same name wins); `session/new` waits a bounded time for them, since the
client expects their tools in the session it just asked for.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from acp.schema import HttpMcpServer, McpServerStdio

from openmono.config import McpServerSettings, Settings
from openmono.mcp import McpManager

log = logging.getLogger("openmono.acp")
CLIENT_WAIT_S = 15.0


def client_servers(servers: Sequence[Any] | None) -> dict[str, McpServerSettings]:
    """The client's server list as our settings (unsupported transports skipped)."""
    out: dict[str, McpServerSettings] = {}
    for server in servers or ():
        if isinstance(server, McpServerStdio):
            out[server.name] = McpServerSettings(
                command=server.command,
                args=list(server.args),
                env={e.name: e.value for e in server.env},
            )
        elif isinstance(server, HttpMcpServer):
            out[server.name] = McpServerSettings(
                url=server.url, headers={h.name: h.value for h in server.headers}
            )
        else:
            name = getattr(server, "name", "?")
            log.warning("MCP server %r: transport not supported (stdio and http are)", name)
    return out


async def session_manager(
    settings: Settings, servers: Sequence[Any] | None, wait_s: float = CLIENT_WAIT_S
) -> McpManager | None:
    """A started manager for a session the client gave servers to, or None when it gave none."""
    extra = client_servers(servers)
    if not extra:
        return None
    configured = {k: v for k, v in settings.mcp_servers.items() if v.enabled}
    manager = McpManager({**configured, **extra}, log_dir=settings.data_dir / "logs" / "mcp")
    manager.start()
    await manager.wait_ready(wait_s)
    return manager
