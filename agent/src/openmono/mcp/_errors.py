"""The one exception base of `openmono.mcp`."""


class McpClientError(Exception):
    """An MCP server that cannot be used as configured (no command and no url, both, ...)."""
