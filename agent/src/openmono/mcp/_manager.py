"""All configured MCP servers of a process: started in the background, watched, closed together.

One manager serves every agent session of the process (the ACP server opens many); each session
attaches its own `McpToolset`, which the manager keeps in step when a server (re)connects.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from pathlib import Path

from openmono.config import McpServerSettings
from openmono.mcp._connection import RemoteTool, ServerConnection

Listener = Callable[[ServerConnection], None]


class McpManager:
    """Holds one `ServerConnection` per enabled server in `servers`."""

    def __init__(
        self, servers: Mapping[str, McpServerSettings], *, log_dir: Path | None = None
    ) -> None:
        self.connections: dict[str, ServerConnection] = {
            name: ServerConnection(name, s, log_dir=log_dir, on_change=self._changed)
            for name, s in servers.items()
            if s.enabled
        }
        self._listeners: list[Listener] = []
        self._started = False

    def __bool__(self) -> bool:
        return bool(self.connections)

    def start(self) -> None:
        """Connect every server in the background (`connect` also waits for them)."""
        if not self._started:
            self._started = True
            for conn in self.connections.values():
                conn.start()

    async def wait_ready(self, timeout_s: float) -> None:
        """Wait until every server connected or failed once, `timeout_s` at most in all."""
        waits = [c.ready.wait() for c in self.connections.values()]
        if waits:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*waits), timeout_s)

    async def connect(self, timeout_s: float) -> list[str]:
        """Start the servers and wait (`timeout_s` at most in all) until each connected or failed
        once, so a session's first request already offers their tools; one line for each server
        that is not connected (it keeps trying in the background)."""
        self.start()
        await self.wait_ready(timeout_s)
        lines: list[str] = []
        for name, conn in self.connections.items():
            if conn.state == "connected":
                continue
            if conn.ready.is_set():
                why = f"could not connect ({conn.error})"
            else:
                why = f"did not connect within {timeout_s:g} s"
            lines.append(f"MCP server {name!r} {why}; going on without its tools until it connects")
        return lines

    def tools(self) -> list[RemoteTool]:
        return [t for c in self.connections.values() for t in c.tools]

    def subscribe(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def unsubscribe(self, listener: Listener) -> None:
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    def _changed(self, conn: ServerConnection) -> None:
        for listener in list(self._listeners):
            listener(conn)

    def status(self) -> dict[str, dict[str, object]]:
        """Per server: state, error, tool count (for `doctor` and the HTTP discovery)."""
        return {
            name: {"state": c.state, "error": c.error, "tools": len(c.tools)}
            for name, c in self.connections.items()
        }

    async def aclose(self) -> None:
        self._listeners.clear()
        await asyncio.gather(*(c.aclose() for c in self.connections.values()))
