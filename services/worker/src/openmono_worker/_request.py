"""`ToolCallRequest`: the worker-side request class of `openmono.tools.run` (main process only).

Celery calls these hooks in the worker's main process, where the pool processes are visible:
- `on_accepted`: a side-effecting call is acknowledged as soon as a pool process takes it, so the
  broker never hands it out again; read-only calls stay unacknowledged until done (acks_late) and
  are requeued if their process dies (reject_on_worker_lost).
- `on_timeout` (hard), `terminate` (revoke with terminate) and `cancel` (a read-only call stopped
  when Redis is lost): the tool's process groups are killed before the pool process is, because
  they live in sessions of their own.
- `on_failure` with a lost process: a side-effecting call gets a failure result that says so at
  once (Celery would otherwise leave it pending, as its message was already acknowledged).
"""

from __future__ import annotations

from typing import Any

from celery.exceptions import WorkerLostError
from celery.worker.request import Request

from openmono_worker._proctree import kill_descendants
from openmono_worker.callstate import lost_worker_error
from openmono_worker.tools import get_tool


def is_read_only(payload: object) -> bool:
    """Whether a task's ToolRequest names a read-only tool (unknown or malformed: no)."""
    if not isinstance(payload, dict):
        return False
    name = payload.get("tool")
    tool = get_tool(name) if isinstance(name, str) else None
    return tool is not None and tool.read_only


class ToolCallRequest(Request):  # type: ignore[misc]  # celery ships no type hints
    """Per-call acknowledgement and process-tree cleanup for tool calls."""

    def _payload_dict(self) -> dict[str, Any]:
        args = self.args
        if isinstance(args, list | tuple) and args and isinstance(args[0], dict):
            return args[0]
        return {}

    def _read_only(self) -> bool:
        return is_read_only(self._payload_dict())

    def on_accepted(self, pid: int, time_accepted: float) -> None:
        super().on_accepted(pid, time_accepted)
        if not self._read_only():
            self.acknowledge()

    def on_timeout(self, soft: bool, timeout: float) -> None:
        if not soft and self.worker_pid:
            kill_descendants(self.worker_pid)
        super().on_timeout(soft, timeout)

    def terminate(self, pool: Any, signal: Any = None) -> None:
        if self.time_start and self.worker_pid:
            kill_descendants(self.worker_pid)
        super().terminate(pool, signal)

    def cancel(self, pool: Any, signal: Any = None, emit_retry: bool = True) -> None:
        if self.time_start and self.worker_pid:
            kill_descendants(self.worker_pid)
        super().cancel(pool, signal, emit_retry=emit_retry)

    def on_failure(
        self, exc_info: Any, send_failed_event: bool = True, return_ok: bool = False
    ) -> None:
        exc = exc_info.exception
        # billiard wraps exceptions that crossed the pool pipe; the original is `.exc`.
        inner = getattr(exc, "exc", None)
        if isinstance(inner, BaseException):
            exc = inner
        if isinstance(exc, WorkerLostError) and not self._read_only():
            payload = self._payload_dict()
            message = lost_worker_error(str(payload.get("tool")), str(payload.get("call_id")))
            self.task.backend.mark_as_failure(
                self.id, WorkerLostError(message), request=self._context, store_result=True
            )
        super().on_failure(exc_info, send_failed_event=send_failed_event, return_ok=return_ok)
