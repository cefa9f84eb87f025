"""`run_tool`: the single entry point that turns a `ToolRequest` into a `ToolResult`.

Both executors call it: the local one in a thread of the agent process, the Celery worker inside its
task. It never raises: an unknown tool, invalid parameters, a refused path, a failing tool or a bug
all come back as `ok=False` with a message the model can act on and the kind of failure
(`error_kind`: `unknown_tool`, `invalid_params`, `denied`, ...). The result is plain JSON (the
contracts model); apart from `elapsed_ms`, the same request against the same workspace gives the
same result.

Steps: 1. find the tool  2. validate params with its pydantic model  3. resolve the workspace
4. execute with a `ToolContext` (cancel flag, timeout, settings)  5. spill big outputs to artifacts
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from openmono_contracts import ToolErrorKind, ToolRequest, ToolResult
from pydantic import ValidationError

from openmono_worker.artifacts import spill
from openmono_worker.errors import ToolError
from openmono_worker.settings import WorkerSettings
from openmono_worker.tools import ToolContext, ToolOutcome, get_tool, registry
from openmono_worker.tools import tool_specs as _tool_specs
from openmono_worker.workspace import resolve_workspace

log = logging.getLogger(__name__)


def tool_specs() -> list[dict[str, Any]]:
    """Every tool's name, description, JSON-schema `parameters`, `read_only`, `concurrency_safe`."""
    return _tool_specs()


def format_validation_error(tool: str, exc: ValidationError) -> str:
    """One line per problem, addressed by parameter path, without pydantic's URLs."""
    problems = []
    for err in exc.errors(include_url=False):
        where = ".".join(str(p) for p in err["loc"]) or "(arguments)"
        problems.append(f"{where}: {err['msg']}")
    return f"invalid parameters for {tool}: " + "; ".join(problems)


class _Refused(ToolError):
    """The call itself is wrong (no such tool, arguments that do not fit), not its work."""

    def __init__(self, message: str, kind: ToolErrorKind) -> None:
        super().__init__(message)
        self.kind = kind


def _finish(req: ToolRequest, start: float, **fields: Any) -> ToolResult:
    elapsed = round((time.perf_counter() - start) * 1000.0, 3)
    return ToolResult(call_id=req.call_id, elapsed_ms=elapsed, **fields)


def _execute(req: ToolRequest, cancel: threading.Event, settings: WorkerSettings) -> ToolOutcome:
    tool = get_tool(req.tool)
    if tool is None:
        known = ", ".join(registry())
        raise _Refused(f"unknown tool {req.tool!r}; known tools: {known}", "unknown_tool")
    try:
        params = tool.parse(req.params)
    except ValidationError as exc:
        raise _Refused(format_validation_error(tool.name, exc), "invalid_params") from exc
    if req.sandbox is not None and not tool.shell_param:
        message = f"{tool.name} does not run commands, so it cannot run in a sandbox"
        raise _Refused(message, "invalid_params")
    ctx = ToolContext(
        workspace=resolve_workspace(req.workspace),
        call_id=req.call_id,
        session_id=req.session_id,
        timeout_s=req.timeout_s,
        settings=settings,
        cancel=cancel,
        web=req.web,
        extra_read=tuple(req.read_roots),
        trusted=req.workspace_trusted,
        sandbox=req.sandbox,
        known_files=None if req.known_files is None else tuple(req.known_files),
    )
    ctx.check_cancelled()
    return tool.execute(params, ctx)


def run_tool(
    req: ToolRequest,
    *,
    cancel: threading.Event | None = None,
    settings: WorkerSettings | None = None,
) -> ToolResult:
    """Run one tool call to completion (or cancellation); never raises."""
    start = time.perf_counter()
    cfg = settings if settings is not None else WorkerSettings()
    try:
        outcome = _execute(req, cancel if cancel is not None else threading.Event(), cfg)
    except ToolError as exc:
        return _finish(req, start, ok=False, error=str(exc), error_kind=exc.kind)
    except Exception as exc:  # a bug in a tool must not kill the worker or the agent loop
        log.exception("tool %s crashed (call %s)", req.tool, req.call_id)
        error = f"internal error in {req.tool}: {exc!r}"
        return _finish(req, start, ok=False, error=error, error_kind="internal")
    output, artifact, truncated = outcome.output, outcome.artifact, outcome.truncated
    spilled = spill(output, cfg, req.session_id, req.call_id)
    if spilled is not None:
        output, artifact, truncated = spilled.text, spilled.artifact, True
    return _finish(
        req,
        start,
        ok=outcome.ok,
        output=output,
        error=outcome.error,
        truncated=truncated,
        artifact=artifact,
        error_kind=outcome.error_kind,
    )
