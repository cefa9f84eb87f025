"""One MCP server, kept connected by a supervisor task: connect, list tools, wait, reconnect.

The SDK's transports are anyio context managers that must be entered and left in one task, so each
server gets its own long-lived task; calls from the loop's tasks go through the live
`ClientSession`. The transport's read stream is forwarded through our own memory stream, whose
end tells us at once that the server is gone (a process that exited, an HTTP stream that broke):
pending calls then fail with a clear error instead of waiting, and the supervisor reconnects with a
growing back-off.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO

import anyio
import httpx
import mcp.types as mt
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError
from mcp.shared.message import SessionMessage
from openmono_contracts.privatefs import open_private
from openmono_contracts.userenv import user_environment

from openmono.config import McpServerSettings
from openmono.mcp._errors import McpClientError
from openmono.mcp._names import tool_name

log = logging.getLogger("openmono.mcp")
RECONNECT_MIN_S, RECONNECT_MAX_S = 0.5, 30.0
State = Literal["connecting", "connected", "down", "stopped"]
Streams = tuple[
    MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]
]


@dataclass(frozen=True)
class RemoteTool:
    """A tool one server offers, and the name the model knows it by."""

    server: str
    name: str
    exposed: str
    description: str
    schema: dict[str, Any]
    read_only: bool


def describe(exc: BaseException) -> str:
    """A readable one-liner for what went wrong (exception groups are unwrapped)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if str(exc) else text


class ServerConnection:
    """The supervisor of one configured server (see the module docstring)."""

    def __init__(
        self,
        name: str,
        settings: McpServerSettings,
        *,
        log_dir: Path | None = None,
        on_change: Callable[[ServerConnection], None] | None = None,
    ) -> None:
        if bool(settings.command) == bool(settings.url):
            raise McpClientError(f"MCP server {name!r}: give exactly one of `command` or `url`")
        self.name = name
        self.settings = settings
        self.log_dir = log_dir
        self.on_change = on_change
        self.state: State = "connecting"
        self.error: str | None = None
        self.tools: list[RemoteTool] = []
        self.has_resources = False
        self.connects = 0
        self.session: ClientSession | None = None
        self.ready = asyncio.Event()
        self._dead = asyncio.Event()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._supervise(), name=f"mcp:{self.name}")

    async def aclose(self) -> None:
        self._stop.set()
        task, self._task = self._task, None
        if task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(task), 10)
            except (TimeoutError, Exception):
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        self.state = "stopped"

    def _changed(self) -> None:
        if self.on_change is not None:
            try:
                self.on_change(self)
            except Exception:  # a listener's bug must not take the connection down
                log.exception("MCP change listener failed")

    async def _supervise(self) -> None:
        delay = RECONNECT_MIN_S
        while not self._stop.is_set():
            self.state = "connecting"
            before = self.connects
            try:
                await self._serve_once()
            except Exception as exc:
                self.error = describe(exc)
            else:
                if self._stop.is_set():
                    break
                self.error = "the server closed the connection"
            if self.connects > before:
                delay = RECONNECT_MIN_S  # it was up: retry soon
            self.session = None
            self.state = "down"
            self.ready.set()
            # Info, not warning: the sessions tell their user (`McpToolset`, `McpManager.connect`),
            # and an unconfigured logger would print every retry over `-p` output or the full
            # screen UI.
            log.info(
                "MCP server %r is down (%s); reconnecting in %.1f s", self.name, self.error, delay
            )
            self._changed()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), delay)
            delay = min(delay * 2, RECONNECT_MAX_S)
        self.state = "stopped"

    @contextlib.asynccontextmanager
    async def _transport(self) -> AsyncIterator[Streams]:
        s = self.settings
        if s.url:
            headers = dict(s.headers)
            timeout = httpx.Timeout(s.connect_timeout_s, read=s.call_timeout_s + 30)
            async with (
                httpx.AsyncClient(headers=headers, timeout=timeout) as client,
                streamable_http_client(s.url, http_client=client) as (read, write, _),
            ):
                yield read, write
            return
        assert s.command is not None
        params = StdioServerParameters(
            command=s.command,
            args=list(s.args),
            # the user's PATH, never OpenMono's own virtual environment (`python`, `uvx` are theirs)
            env={**get_default_environment(), **_path_of_user(), **s.env},
            cwd=s.cwd,
        )
        with self._errlog() as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                yield read, write

    @contextlib.contextmanager
    def _errlog(self) -> Any:
        """Where the server's stderr goes: a log file per server (stdout is the protocol)."""
        if self.log_dir is None:
            with Path(os.devnull).open("w") as fh:
                yield fh
            return
        with open_private(self.log_dir / f"{self.name}.log", "a", encoding="utf-8") as fh:
            handle: TextIO = fh
            yield handle

    async def _serve_once(self) -> None:
        dead = asyncio.Event()
        async with contextlib.AsyncExitStack() as stack:
            read, write = await stack.enter_async_context(self._transport())
            # The session reads our forwarded stream, so closing the transport's is up to us.
            stack.push_async_callback(read.aclose)
            fwd_send, fwd_recv = anyio.create_memory_object_stream[SessionMessage | Exception](64)
            # Closed on the way out whatever happened (the session does not close what it reads).
            stack.push_async_callback(fwd_recv.aclose)
            stack.push_async_callback(fwd_send.aclose)

            async def forward() -> None:
                try:
                    async with fwd_send:
                        async for message in read:
                            await fwd_send.send(message)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    pass
                finally:
                    dead.set()

            group = await stack.enter_async_context(anyio.create_task_group())
            group.start_soon(forward)
            session = await stack.enter_async_context(ClientSession(fwd_recv, write))
            with anyio.fail_after(self.settings.connect_timeout_s):
                init = await session.initialize()
                self.tools = await self._list_tools(session)
            self.has_resources = init.capabilities.resources is not None
            self.session, self._dead = session, dead
            self.state, self.error = "connected", None
            self.connects += 1
            self.ready.set()
            log.info("MCP server %r connected: %d tools", self.name, len(self.tools))
            self._changed()
            stop = asyncio.ensure_future(self._stop.wait())
            gone = asyncio.ensure_future(dead.wait())
            try:
                await asyncio.wait({stop, gone}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                stop.cancel()
                gone.cancel()
                self.session = None
                self._dead.set()
                group.cancel_scope.cancel()

    async def _list_tools(self, session: ClientSession) -> list[RemoteTool]:
        tools: list[RemoteTool] = []
        cursor: str | None = None
        while True:
            page = await session.list_tools(cursor)
            for t in page.tools:
                hints = t.annotations
                tools.append(
                    RemoteTool(
                        server=self.name,
                        name=t.name,
                        exposed=tool_name(self.name, t.name),
                        description=(t.description or t.title or t.name).strip(),
                        schema=dict(t.inputSchema or {"type": "object", "properties": {}}),
                        read_only=bool(hints is not None and hints.readOnlyHint),
                    )
                )
            cursor = page.nextCursor
            if not cursor:
                return tools

    # -- requests ----------------------------------------------------------------------------
    async def request(
        self, what: str, make: Callable[[ClientSession], Any], timeout_s: float
    ) -> Any:
        """Run one request on the live session; raises `McpClientError` with a readable reason
        when the server is down, dies during the request, or does not answer in time."""
        session, dead = self.session, self._dead
        if session is None or self.state != "connected":
            why = self.error or "still connecting"
            raise McpClientError(f"MCP server {self.name!r} is not connected ({why}); retry later")
        call = asyncio.ensure_future(make(session))
        gone = asyncio.ensure_future(dead.wait())
        try:
            done, _ = await asyncio.wait(
                {call, gone}, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            gone.cancel()
            if not call.done():
                call.cancel()
                with contextlib.suppress(BaseException):
                    await call
        if call in done:
            try:
                return call.result()
            except McpError as exc:
                if exc.error.code == mt.CONNECTION_CLOSED:
                    raise McpClientError(self._died(what)) from exc
                raise McpClientError(f"MCP server {self.name!r}: {exc.error.message}") from exc
            except Exception as exc:
                raise McpClientError(f"MCP server {self.name!r}: {describe(exc)}") from exc
        if gone in done:
            raise McpClientError(self._died(what))
        raise McpClientError(
            f"MCP server {self.name!r} did not answer {what} within {timeout_s:g} s"
        )

    def _died(self, what: str) -> str:
        return (
            f"MCP server {self.name!r} exited or closed the connection during {what}; "
            "it is being restarted, the call's effect is unknown"
        )


def _path_of_user() -> dict[str, str]:
    """PATH as the user has it (mcp's default environment copies ours, venv and all)."""
    path = user_environment().get("PATH")
    return {"PATH": path} if path else {}
