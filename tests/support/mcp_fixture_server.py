"""A small real MCP server (the official SDK's FastMCP) with resources, for the MCP client tests.

mcp-server-time (the real PyPI server the tests also use) has no resources and no HTTP transport;
this one has both: `python -m tests.support.mcp_fixture_server [--http PORT]`.
Tools: `echo` {text} (not read-only), `add` {a, b} (read-only). Resources: `notes://readme`,
`notes://todo`.
"""

from __future__ import annotations

import argparse

from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations


def build(port: int = 8000) -> FastMCP:
    server = FastMCP("fixture", host="127.0.0.1", port=port, log_level="WARNING")

    @server.tool(description="Echo the text back.")
    def echo(text: str) -> str:
        return f"echo: {text}"

    @server.tool(description="Add two numbers.", annotations=ToolAnnotations(readOnlyHint=True))
    def add(a: int, b: int) -> str:
        return str(a + b)

    @server.resource("notes://readme", name="readme", description="What this server is.")
    def readme() -> str:
        return "This is the fixture MCP server."

    @server.resource("notes://todo", name="todo")
    def todo() -> str:
        return "- nothing left"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=None, help="serve streamable HTTP on PORT")
    args = parser.parse_args()
    if args.http:
        build(args.http).run("streamable-http")
    else:
        build().run("stdio")


if __name__ == "__main__":
    main()
