"""The `Executor` protocol: how the loop runs a tool call, wherever the tool actually runs; and
`ExecutorSettings`, what choosing and making one reads from the agent's settings."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from openmono_contracts import ToolRequest, ToolResult


@runtime_checkable
class Executor(Protocol):
    """Runs tool calls; the local and the Celery executor give the same results for the same calls.

    `run` never raises for a failing tool (that is an `ok=False` result); it raises only
    `asyncio.CancelledError` when the awaiting task is cancelled, after the call has been stopped.
    `cancel(call_id)` stops a running call (its process group dies) and makes its `run` return an
    `ok=False` result with error "cancelled"; an unknown or finished call id is ignored.
    `aclose()` cancels what still runs and frees the executor's resources.
    """

    async def run(self, req: ToolRequest) -> ToolResult: ...

    async def cancel(self, call_id: str) -> None: ...

    async def aclose(self) -> None: ...


class ExecutorSettings(Protocol):
    """What `select_executor` and `CeleryExecutor.from_settings` read from the agent's settings."""

    @property
    def broker_url(self) -> str | None: ...

    @property
    def data_dir(self) -> Path: ...
