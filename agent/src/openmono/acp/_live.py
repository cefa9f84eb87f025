"""One open session of an ACP surface: the agent, its update queue, the running prompt.

Loop events arrive through a synchronous sink; they are translated and queued, and one sender task
delivers them in order. `flush()` waits until everything queued so far went out: before a
permission request (the client must know the tool call it is asked about) and before a prompt's
response (every update of a turn precedes its stop reason).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from openmono.acp._updates import Translator, Update, kinds_of, mode_update
from openmono.agent import Agent
from openmono.executor import Executor
from openmono.loop import LoopEvent
from openmono.mcp import McpManager

Send = Callable[[Update], Awaitable[None]]


@dataclass
class LiveSession:
    """An open agent plus what a surface needs to stream its turns."""

    agent: Agent
    send: Send
    executor: Executor | None = None
    mcp: McpManager | None = None
    translator: Translator = field(default_factory=Translator)
    task: asyncio.Task[Any] | None = None
    cancelled: bool = False
    mode: str = "agent"
    _queue: asyncio.Queue[Update | None] = field(default_factory=asyncio.Queue)
    _sender: asyncio.Task[None] | None = None

    def __post_init__(self) -> None:
        self.mode = self.agent.loop.mode
        self.translator.kind_of = kinds_of(self.agent.loop.catalog)
        self._sender = asyncio.create_task(self._drain(), name=f"acp-send:{self.session_id}")

    @property
    def session_id(self) -> str:
        return self.agent.session_id

    @property
    def busy(self) -> bool:
        return self.task is not None and not self.task.done()

    def emit(self, event: LoopEvent) -> None:
        for update in self.translator.updates(event):
            self._queue.put_nowait(update)
        self.sync_mode()

    def push(self, update: Update) -> None:
        self._queue.put_nowait(update)

    def sync_mode(self) -> None:
        if self.agent.loop.mode != self.mode:
            self.mode = self.agent.loop.mode
            self._queue.put_nowait(mode_update(self.mode))

    async def _drain(self) -> None:
        while True:
            update = await self._queue.get()
            try:
                if update is None:
                    return
                with contextlib.suppress(Exception):  # a client that went away: drop, go on
                    await self.send(update)
            finally:
                self._queue.task_done()

    async def flush(self) -> None:
        await self._queue.join()

    async def cancel(self) -> None:
        if self.busy and self.task is not None:
            self.cancelled = True
            self.task.cancel()
            with contextlib.suppress(BaseException):
                await self.task

    async def aclose(self) -> None:
        await self.cancel()
        self._queue.put_nowait(None)
        if self._sender is not None:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(self._sender, 5)
        await self.agent.aclose()
        if self.executor is not None:
            with contextlib.suppress(Exception):
                await self.executor.aclose()
        if self.mcp is not None:
            await self.mcp.aclose()
