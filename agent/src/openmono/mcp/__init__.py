"""MCP client: servers from the settings' `mcp_servers`, their tools offered to the loop.

`McpManager` connects every server (stdio commands and streamable-HTTP URLs, official `mcp` SDK
1.x; a new session waits, 15 s at most, for them) and reconnects the ones that die; `McpToolset`
is one session's view of their tools (`mcp__{server}__{tool}`, plus `ListMcpResources` /
`ReadMcpResource`), plugged into the loop's `Toolset` extension point so every call goes through
the usual permission pipeline.
"""

from openmono.mcp._connection import RemoteTool, ServerConnection
from openmono.mcp._errors import McpClientError
from openmono.mcp._manager import McpManager
from openmono.mcp._names import tool_name
from openmono.mcp._toolset import LIST_RESOURCES, READ_RESOURCE, McpToolset

__all__ = [
    "LIST_RESOURCES",
    "READ_RESOURCE",
    "McpClientError",
    "McpManager",
    "McpToolset",
    "RemoteTool",
    "ServerConnection",
    "tool_name",
]
