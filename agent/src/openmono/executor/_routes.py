"""The agent's half of call routing (openmono_contracts.routing): the route, who serves it, why not.

`routed(req)` stamps a request with the route of its workspace as the agent sees it (the id file
at or above the workspace, else this box). `consumers(app, queue)` asks the workers over Celery's
remote control which of them consume a queue (`inspect active_queues`, one broadcast with a
one-second reply window), so "no worker serves this workspace" is a sentence that names the
workspace, its queue and what the workers online do serve, said within seconds, never a hang.
`openmono doctor` uses the same two for its "workers" line.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from celery import Celery
from openmono_contracts import ToolRequest
from openmono_contracts.facts import REDIS_PASSWORD_ENV
from openmono_contracts.routing import (
    QUEUE_PREFIX,
    WORKSPACE_ID_FILE,
    Route,
    WorkspaceIdError,
    find_workspace_id,
    route_for,
)
from openmono_worker import WorkerSettings, create_app

from openmono.config import current_environ
from openmono.executor._errors import ExecutorError

__all__ = [
    "Consumers",
    "RouteError",
    "consumers",
    "no_consumer_error",
    "route_report",
    "routed",
    "where",
]

_INSPECT_TIMEOUT_S = 1.0


class RouteError(ExecutorError):
    """The workspace's id file is unreadable or malformed: no route can be computed."""


def routed(req: ToolRequest) -> ToolRequest:
    """`req` with the route of its workspace (as this process sees the files)."""
    try:
        route = route_for(req.workspace)
    except WorkspaceIdError as exc:
        raise RouteError(str(exc)) from exc
    return req.model_copy(update={"route": route})


def where(req: ToolRequest) -> str:
    """The workspace and how it is identified, for messages."""
    route = req.route
    if route is None or route.kind == "box":
        box = route.id if route is not None else "?"
        return f"{req.workspace} on this box (box {box}; no {WORKSPACE_ID_FILE} at or above it)"
    found = find_workspace_id(Path(req.workspace).resolve())
    source = f"{found[0] / WORKSPACE_ID_FILE}" if found is not None else str(WORKSPACE_ID_FILE)
    return f"workspace {req.workspace} (id {route.id}, from {source})"


@dataclass
class Consumers:
    """What `inspect active_queues` said: the nodes that answered and the queues of each."""

    nodes: dict[str, list[str]] = field(default_factory=dict)

    def serving(self, queue: str) -> list[str]:
        return sorted(node for node, queues in self.nodes.items() if queue in queues)

    def others(self, queue: str) -> list[str]:
        return sorted({q for queues in self.nodes.values() for q in queues if q != queue})


async def consumers(app: Celery, timeout_s: float = _INSPECT_TIMEOUT_S) -> Consumers:
    """Every worker that answers within `timeout_s`, with the queues it consumes."""

    def ask() -> dict[str, list[dict[str, object]]] | None:
        reply: dict[str, list[dict[str, object]]] | None = app.control.inspect(
            timeout=timeout_s
        ).active_queues()
        return reply

    reply = await asyncio.to_thread(ask)
    nodes = {
        node: [str(q.get("name")) for q in (queues or []) if isinstance(q, dict)]
        for node, queues in (reply or {}).items()
    }
    return Consumers(nodes)


def no_consumer_error(req: ToolRequest, found: Consumers) -> str:
    """Why nobody will run `req`, and what to start so somebody does."""
    route = req.route if req.route is not None else Route(kind="box", id="0" * 24)
    online = len(found.nodes)
    others = ", ".join(found.others(route.queue)) or "nothing"
    if route.kind == "workspace":
        found_root = find_workspace_id(Path(req.workspace).resolve())
        root = found_root[0] if found_root is not None else req.workspace
        hint = f"start a worker with WORKER_WORKSPACES={root} where these files are"
        if any(q.startswith(f"{QUEUE_PREFIX}.box.") for q in found.others(route.queue)):
            # e.g. a folder once served by a compose worker, now used with the native stack
            hint += f", or delete {Path(root) / WORKSPACE_ID_FILE} to use the workers of its box"
    else:
        hint = (
            "start a worker on this box without WORKER_WORKSPACES (`python -m openmono_worker`), "
            "or let a worker serve the folder with WORKER_WORKSPACES (it writes the id file)"
        )
    return (
        f"no tool worker serves {where(req)}: nobody consumes queue {route.queue}; "
        f"{online} worker(s) online consume {others}. {hint} (docs/worker.md)"
    )


def redis_password() -> str:
    """REDIS_PASSWORD as every command resolves it: the environment, else the env file."""
    return current_environ().get(REDIS_PASSWORD_ENV) or ""


async def route_report(broker_url: str, workspace: Path) -> tuple[bool, str]:
    """For `openmono doctor`: does a worker serve `workspace`, and on which queue."""
    probe = ToolRequest(tool="ListDirectory", call_id="doctor", session_id="doctor",
                        workspace=str(workspace))  # fmt: skip
    try:
        req = routed(probe)
    except RouteError as exc:
        return False, f"cannot route calls on {workspace}: {exc}"
    route = req.route
    if route is None:  # routed() always sets it
        return False, f"cannot route calls on {workspace}"
    app = create_app(WorkerSettings(broker_url=broker_url, redis_password=redis_password()))
    try:
        found = await consumers(app, timeout_s=2.0)
    except Exception as exc:  # kombu's connection errors
        return False, f"cannot ask the workers: {exc}"
    finally:
        await asyncio.to_thread(app.close)
    if not found.nodes:
        return False, "no worker answered (is the worker running?)"
    nodes = found.serving(route.queue)
    if not nodes:
        return False, no_consumer_error(req, found)
    return True, f"{len(nodes)} serve {where(req)} on {route.queue}: {', '.join(nodes)}"
