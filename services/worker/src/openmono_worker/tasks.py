"""The one task, `openmono.tools.run`: a ToolRequest dict in, a ToolResult dict out (DESIGN.md §7).

Thin on purpose: the tool code is `run_tool`, the same function the local executor calls, so both
executors give the same results. What the task adds is what only a separate process needs:
1. claim the call in Redis (a side-effecting call that was already started never runs again),
2. keep its heartbeat key fresh while it runs (the agent notices a dead worker within seconds),
3. run the tool in a thread so the soft time limit can stop it: the tool's own timeout normally
   answers first; if it does not, the cancel flag kills the tool's process group; if even that
   hangs, the hard limit kills the pool process and ToolCallRequest kills the groups first.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from celery import Task
from celery.exceptions import Ignore, SoftTimeLimitExceeded
from openmono_contracts import ToolRequest, ToolResult

from openmono_worker._request import is_read_only
from openmono_worker.callstate import Heartbeat, claim, lost_worker_error
from openmono_worker.celery_app import TASK_NAME, app
from openmono_worker.runner import run_tool
from openmono_worker.settings import WorkerSettings
from openmono_worker.tools import registry

# Import every tool now, in the worker's main process before it forks the pool: the first call
# in each pool process would otherwise pay for the imports (seconds for the web tools), and the
# main process needs the registry anyway to decide each call's acknowledgement.
registry()

# After the soft limit, the tool's own timeout result is usually a few ms away: wait that long
# before cancelling, so a timed-out call reads the same through Celery as in-process.
_SOFT_GRACE_S = 2.0


class _ProcessState:
    """Per pool process: settings, the tool thread, the heartbeat (created after the fork)."""

    def __init__(self, task: Task) -> None:
        self.pid = os.getpid()
        self.settings = WorkerSettings()
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="openmono-tool")
        self.heartbeat = Heartbeat(task.backend.client)


_state: _ProcessState | None = None


def _process_state(task: Task) -> _ProcessState:
    global _state
    if _state is None or _state.pid != os.getpid():
        _state = _ProcessState(task)
    return _state


def _refused(req: ToolRequest, error: str) -> dict[str, Any]:
    return ToolResult(call_id=req.call_id, ok=False, error=error).model_dump(mode="json")


def _wait(fut: Future[ToolResult], cancel: threading.Event, req: ToolRequest) -> ToolResult:
    try:
        return fut.result()
    except SoftTimeLimitExceeded:
        pass
    try:
        return fut.result(timeout=_SOFT_GRACE_S)
    except FutureTimeout:
        cancel.set()
    # If the tool ignores the cancel flag, the hard limit ends this process (and its groups).
    result = fut.result()
    if result.error == "cancelled":
        result = result.model_copy(update={"error": f"timed out after {req.timeout_s:g} s"})
    return result


@app.task(  # type: ignore[untyped-decorator]  # celery ships no type hints
    name=TASK_NAME,
    bind=True,
    Request="openmono_worker._request:ToolCallRequest",
    acks_late=True,
    reject_on_worker_lost=True,
)
def run(self: Task, request: dict[str, Any]) -> dict[str, Any]:
    """Run one tool call; always returns a ToolResult as a JSON-ready dict."""
    req = ToolRequest.model_validate(request)
    state = _process_state(self)
    task_id = str(self.request.id)
    outcome = claim(state.heartbeat.client, task_id, read_only=is_read_only(request))
    if outcome == "duplicate":
        # Another delivery of this message is running right now; its result is the answer.
        raise Ignore
    if outcome == "abandoned":
        return _refused(req, "cancelled")
    if outcome == "taken":
        return _refused(req, lost_worker_error(req.tool, req.call_id))
    cancel = threading.Event()
    state.heartbeat.beat_for(task_id)
    try:
        fut = state.pool.submit(run_tool, req, cancel=cancel, settings=state.settings)
        result = _wait(fut, cancel, req)
    finally:
        state.heartbeat.beat_for(None)
    return result.model_dump(mode="json")
