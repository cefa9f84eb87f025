"""`LocalExecutor`: runs `openmono_worker.run_tool` in a thread pool inside the agent process.

This is the embedded default (no broker configured). Each call gets a `threading.Event`; cancelling
the call (or the task awaiting it) sets the event, and the tool kills its process group and returns.
When the awaiting task is cancelled we still wait for the tool thread to finish, so nothing the call
started outlives the cancellation. Closing it stops the language servers the code tools started
for the workspaces it served (they stay warm between calls, not beyond the session).
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

from openmono_contracts import ToolRequest, ToolResult
from openmono_worker import WorkerSettings, run_tool, stop_language_servers

# Waiting for a cancelled tool thread: Bash needs well under a second to kill its group.
_CANCEL_GRACE_S = 10.0


class LocalExecutor:
    """In-process executor; `max_workers` bounds how many tool calls run at the same time."""

    def __init__(self, settings: WorkerSettings | None = None, max_workers: int = 8) -> None:
        self._settings = settings if settings is not None else WorkerSettings()
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="tool")
        self._running: dict[str, threading.Event] = {}
        self._workspaces: set[str] = set()  # their language servers stop when we close
        self._closed = False

    async def run(self, req: ToolRequest) -> ToolResult:
        if self._closed:
            return ToolResult(call_id=req.call_id, ok=False, error="executor is closed")
        cancel = threading.Event()
        self._running[req.call_id] = cancel
        self._workspaces.add(req.workspace)
        try:
            fut = self._pool.submit(run_tool, req, cancel=cancel, settings=self._settings)
            inner = asyncio.wrap_future(fut)
            try:
                return await asyncio.shield(inner)
            except asyncio.CancelledError:
                cancel.set()
                await asyncio.wait({inner}, timeout=_CANCEL_GRACE_S)
                raise
        finally:
            if self._running.get(req.call_id) is cancel:
                del self._running[req.call_id]

    async def cancel(self, call_id: str) -> None:
        event = self._running.get(call_id)
        if event is not None:
            event.set()

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        for event in list(self._running.values()):
            event.set()
        await asyncio.to_thread(self._pool.shutdown, wait=True)
        for workspace in self._workspaces:
            await asyncio.to_thread(stop_language_servers, workspace)
