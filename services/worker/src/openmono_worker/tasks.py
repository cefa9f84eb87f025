"""The one task, `openmono.tools.run`: a ToolRequest dict in, a ToolResult dict out
(docs/architecture.md §7).

Thin on purpose: the tool code is `run_tool`, the same function the local executor calls, so both
executors give the same results. What the task adds is what only a separate process needs:
0. refuse a call whose route is not this worker's (routing.py): wrong files are never touched,
1. claim the call in Redis (a side-effecting call that was already started never runs again),
2. keep its heartbeat key fresh while it runs (the agent notices a dead worker within seconds),
3. stop the tool at the soft time limit: billiard signals the pool process (SIGUSR1); instead of
   raising inside the tool (which would leave its processes running), our handler gives the
   tool's own timeout a moment to answer, then sets the call's cancel flag, which kills the tool's
   process group. If even that hangs, the hard limit kills the pool process, and ToolCallRequest
   kills the tool's process groups first.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from dataclasses import dataclass, field
from typing import Any

import redis
from celery import Task, signals
from celery.exceptions import Ignore
from openmono_contracts import ToolErrorKind, ToolRequest, ToolResult
from openmono_contracts.logurl import redact_handlers
from openmono_contracts.privatefs import ensure_private_root

from openmono_worker._reaper import adopt_orphans
from openmono_worker._request import is_read_only
from openmono_worker.callstate import Heartbeat, claim, lost_worker_error
from openmono_worker.celery_app import TASK_NAME, app, consume_served_queues
from openmono_worker.routing import RoutingError, ServedRoutes, served_routes
from openmono_worker.runner import run_tool
from openmono_worker.settings import WorkerSettings
from openmono_worker.tools import registry

# Import every tool now, in the worker's main process before it forks the pool: the first call
# in each pool process would otherwise pay for the imports (seconds for the web tools), and the
# main process needs the registry anyway to decide each call's acknowledgement.
registry()

log = logging.getLogger(__name__)


@signals.celeryd_init.connect  # type: ignore[untyped-decorator]  # celery ships no type hints
def _choose_queues(sender: object = None, instance: Any = None, **_: Any) -> None:
    """Worker startup (main process): consume the queues of what this worker serves."""
    if getattr(instance, "app", None) is not app:
        return
    settings = WorkerSettings()
    # artifacts, background logs and installs land here: a data dir left 0755 by an older
    # version (or a fresh compose volume) is made its owner's alone before any call runs
    ensure_private_root(settings.data_dir)
    # The startup banner lists the chosen queues under [queues].
    consume_served_queues(app, settings)
    # What tool calls leave running becomes ours to wait for, before any pool process exists.
    if not adopt_orphans():
        log.warning("cannot become a child subreaper: orphans of tool calls go to PID 1")


@signals.after_setup_logger.connect  # type: ignore[untyped-decorator]
@signals.after_setup_task_logger.connect  # type: ignore[untyped-decorator]
def _redact_logged_urls(logger: logging.Logger | None = None, **_: Any) -> None:
    """The worker's log lines (a library's, a traceback) show URLs without query or userinfo."""
    if logger is not None:
        redact_handlers(logger)


# After the soft limit, how long the tool's own timeout gets to answer before we cancel it.
_SOFT_GRACE_S = 2.0


@dataclass
class _Running:
    cancel: threading.Event = field(default_factory=threading.Event)
    soft_limited: bool = False


class _ProcessState:
    """Per pool process: settings, heartbeat, the running call (created after the fork)."""

    def __init__(self, client: redis.Redis) -> None:
        self.pid = os.getpid()
        self.settings = WorkerSettings()
        # The main process created any missing id file before the fork; read them, never write.
        # One gone since (deleted by hand): every call is refused with that reason.
        self.routes: ServedRoutes | None = None
        self.routes_error = ""
        try:
            self.routes = served_routes(self.settings)
        except RoutingError as exc:
            self.routes_error = str(exc)
        self.heartbeat = Heartbeat(client)
        self.current: _Running | None = None
        self.soft_limit_handled = False

    def handle_soft_limit(self) -> None:
        """Take SIGUSR1 over from billiard, which installs its own after the process init."""
        if not self.soft_limit_handled:
            signal.signal(signal.SIGUSR1, self._on_soft_limit)
            self.soft_limit_handled = True

    def _on_soft_limit(self, signum: int, frame: object) -> None:
        running = self.current
        if running is None:
            return  # the call ended just before the signal arrived
        running.soft_limited = True
        # The tool's own timeout (the same timeout_s) normally answers within moments, so a
        # timed-out call reads the same as in-process; only if it does not, cancel the tool.
        timer = threading.Timer(_SOFT_GRACE_S, running.cancel.set)
        timer.daemon = True
        timer.start()


_state: _ProcessState | None = None


@signals.worker_process_init.connect  # type: ignore[untyped-decorator]
def _new_pool_process(**_: Any) -> None:
    """A pool process is born: its state is made now, so that no call waits for it."""
    global _state
    _state = _ProcessState(app.backend.client)


def _process_state(task: Task) -> _ProcessState:
    global _state
    if _state is None or _state.pid != os.getpid():  # a pool without process-init signals
        _state = _ProcessState(task.backend.client)
    _state.handle_soft_limit()
    return _state


def _refused(req: ToolRequest, error: str, kind: ToolErrorKind) -> dict[str, Any]:
    result = ToolResult(call_id=req.call_id, ok=False, error=error, error_kind=kind)
    return result.model_dump(mode="json")


def _with_gateway_key(req: ToolRequest, settings: WorkerSettings) -> ToolRequest:
    """The call with this worker's own gateway key: queued calls carry none (the agent's Celery
    executor strips it), so a message read from Redis never holds the key."""
    key = settings.gateway_key.get_secret_value()
    if req.web.api_key or not key:
        return req
    return req.model_copy(update={"web": req.web.model_copy(update={"api_key": key})})


@app.task(  # type: ignore[untyped-decorator]  # celery ships no type hints
    name=TASK_NAME,
    bind=True,
    Request="openmono_worker._request:ToolCallRequest",
    acks_late=True,
    reject_on_worker_lost=True,
    # The worker logs each result's repr: keep file contents and command output out of the logs.
    resultrepr_maxsize=160,
)
def run(self: Task, request: dict[str, Any]) -> dict[str, Any]:
    """Run one tool call; always returns a ToolResult as a JSON-ready dict."""
    req = ToolRequest.model_validate(request)
    state = _process_state(self)
    delivery = self.request.delivery_info or {}
    routes = state.routes
    if routes is not None:
        why = routes.refusal(req, delivery.get("routing_key"))
    else:
        why = state.routes_error
    if why is not None:
        log.warning("refused call %s (%s): %s", req.call_id, req.tool, why)
        return _refused(req, f"refused by tool worker {self.request.hostname}: {why}", "denied")
    req = _with_gateway_key(req, state.settings)
    task_id = str(self.request.id)
    outcome = claim(state.heartbeat.client, task_id, read_only=is_read_only(request))
    if outcome == "duplicate":
        # Another delivery of this message is running right now; its result is the answer.
        raise Ignore
    if outcome == "abandoned":
        return _refused(req, "cancelled", "cancelled")
    if outcome == "taken":
        return _refused(req, lost_worker_error(req.tool, req.call_id), "unavailable")
    running = _Running()
    state.current = running
    state.heartbeat.beat_for(task_id)
    try:
        result = run_tool(req, cancel=running.cancel, settings=state.settings)
    finally:
        state.current = None
        state.heartbeat.beat_for(None)
    if running.soft_limited and result.error == "cancelled":
        error = f"timed out after {req.timeout_s:g} s"
        result = result.model_copy(update={"error": error, "error_kind": "timeout"})
    return result.model_dump(mode="json")
