"""Which calls this worker may run, and the queues it consumes (openmono_contracts.routing).

Two modes, chosen by `WORKER_WORKSPACES`:

    unset   box mode: the worker consumes `openmono.tools.box.<box id>` and runs calls on the
            workspaces of its own filesystem view that lie inside `WORKER_ROOTS` (default: the
            worker user's home; the native stack: agents beside it, no setup).
    set     workspace mode: a comma-separated list of roots. Each root gets its id file when it
            has none (at startup, before anything is consumed) and its queue
            `openmono.tools.ws.<id>`; only calls on a workspace inside one of these roots run.

Defence in depth: the queue is only the first check. Every call carries its `Route`; before the
tool runs, `refusal()` compares it with what this process serves, with the queue the message came
from, and (workspace mode) with the id file at the call's root, read again. A mismatch is an error
result that names both sides, never a run against other files.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from openmono_contracts import ToolRequest
from openmono_contracts.routing import (
    WORKSPACE_ID_FILE,
    Route,
    WorkspaceIdError,
    box_id,
    ensure_workspace_id,
    read_workspace_id,
)

from openmono_worker.errors import WorkerError
from openmono_worker.settings import WorkerSettings
from openmono_worker.workspace import is_inside

__all__ = ["RoutingError", "ServedRoutes", "served_routes"]


class RoutingError(WorkerError):
    """`WORKER_WORKSPACES` names a root that cannot serve (missing, no id and read-only, ...)."""


@dataclass(frozen=True)
class ServedRoutes:
    """What one worker serves: its box (box mode) or its workspace roots (workspace mode)."""

    box: Route | None = None
    roots: dict[Path, Route] = field(default_factory=dict)
    # box mode: the folders a call's workspace must lie in (WORKER_ROOTS)
    box_roots: tuple[Path, ...] = ()

    @property
    def queues(self) -> list[str]:
        if self.box is not None:
            return [self.box.queue]
        return sorted({r.queue for r in self.roots.values()})

    def describe(self) -> str:
        if self.box is not None:
            inside = ", ".join(str(r) for r in self.box_roots)
            return f"the workspaces of its own box ({self.box.id}) inside {inside}"
        served = ", ".join(f"{root} ({r.id})" for root, r in sorted(self.roots.items()))
        return f"the workspaces {served}"

    def refusal(self, req: ToolRequest, delivered_on: str | None) -> str | None:
        """None when this worker may run `req`; else why not, worded for the model and the user."""
        route = req.route
        if route is None:
            return "the call names no route (openmono_contracts.routing); only routed calls run"
        if delivered_on is not None and delivered_on != route.queue:
            return f"the call for queue {route.queue} was delivered on {delivered_on}"
        if self.box is not None:
            if route != self.box:
                return f"the call is for {route.describe()}; this worker serves {self.describe()}"
            real = Path(os.path.realpath(req.workspace))
            if not any(is_inside(real, root) for root in self.box_roots):
                return (
                    f"{req.workspace} is not inside the folders this worker was given "
                    f"({', '.join(str(r) for r in self.box_roots)}); add its folder to WORKER_ROOTS"
                )
            return None
        return self._workspace_refusal(req, route)

    def _workspace_refusal(self, req: ToolRequest, route: Route) -> str | None:
        roots = [root for root, served in self.roots.items() if served == route]
        if not roots:
            return f"the call is for {route.describe()}; this worker serves {self.describe()}"
        real = Path(os.path.realpath(req.workspace))
        root = next((r for r in roots if is_inside(real, r)), None)
        if root is None:
            where = ", ".join(str(r) for r in roots)
            return f"{req.workspace} is not inside {where}, the root of {route.describe()} here"
        try:
            now = read_workspace_id(root)
        except WorkspaceIdError as exc:
            return str(exc)
        if now is None:
            return f"{root} has no workspace id any more ({WORKSPACE_ID_FILE} was removed)"
        if now != route.id:
            # Someone replaced or removed the id file since startup: these are not the same
            # files any more, whatever the queue says.
            return f"{root} now holds workspace id {now}, not {route.id}"
        return None


def _roots(settings: WorkerSettings) -> list[Path]:
    raw = [part.strip() for part in settings.workspaces.split(",") if part.strip()]
    roots: list[Path] = []
    for item in raw:
        if not Path(item).is_absolute():
            raise RoutingError(f"WORKER_WORKSPACES: {item!r} is not an absolute path")
        real = Path(os.path.realpath(item))
        if not real.is_dir():
            raise RoutingError(f"WORKER_WORKSPACES: {item} is not an existing directory")
        roots.append(real)
    return roots


def served_routes(settings: WorkerSettings, *, create: bool = False) -> ServedRoutes:
    """The routes `settings` serve; `create` gives a root without an id file its id (startup)."""
    roots = _roots(settings)
    if not roots:
        box_roots = tuple(settings.root_paths)
        return ServedRoutes(box=Route(kind="box", id=box_id()), box_roots=box_roots)
    served: dict[Path, Route] = {}
    for root in roots:
        try:
            ws_id = ensure_workspace_id(root) if create else read_workspace_id(root)
        except WorkspaceIdError as exc:
            raise RoutingError(f"WORKER_WORKSPACES: {exc}") from exc
        if ws_id is None:
            raise RoutingError(f"WORKER_WORKSPACES: {root} has no workspace id")
        served[root] = Route(kind="workspace", id=ws_id)
    return ServedRoutes(roots=served)
