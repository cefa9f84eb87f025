"""The one exception base of `openmono.mcp`."""

from openmono.errors import OpenMonoError


class McpClientError(OpenMonoError):
    """An MCP server that cannot be used as configured (no command and no url, both, ...)."""
