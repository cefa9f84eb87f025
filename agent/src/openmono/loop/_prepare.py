"""Steps 1-6 of the tool pipeline: what a call must pass before it runs, one named step each.

    1. parse        the JSON arguments (the client already flagged cut or unparsable calls)
    2. lookup       the tool is offered (some toolset serves the name); its facts
    3. mode         plan/ask are read-only; leaving plan mode asks the user to approve the plan
    4. read_only_task  the safety floor: in a turn whose user message only asks to read, list or
                    explain (`permissions.read_only_task`), a write that would run without asking
                    (allow rules, `--allow`, allow-all) is refused; not under `--yolo`; a write
                    that asks still asks (the user is the floor there)
    5. permissions  the permission engine (may ask the user; path rules match the paths named)
    6. pre_hooks    `pre_tool_use` hooks (may block)

The arguments' validation and the workspace guard are not steps here: they run once, where the
tool runs (`_extensions.Toolset.call`; for the worker's tools, on the worker, which sees the
workspace's real files), and an invalid call comes back as the error result the model reads.

A step gets a `StepContext` (what steps may use: the catalog, the permission engine, the
approver, the hooks, how a call becomes a request), looks at the `Pending` call and answers `None`
(go on), a `Refusal` (the call ends as an error result the model reads) or `READY` (the call may
run; later steps do not apply). The dispatcher runs `PREPARE_STEPS` in order; a caller may pass
its own tuple (insert, drop, reorder) without touching the others.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Final

from openmono_contracts import ToolRequest
from openmono_contracts.sandbox import SandboxPolicy
from openmono_contracts.toolfacts import ToolFacts

from openmono.llm import ToolCallComplete
from openmono.loop._catalog import UNKNOWN, ToolCatalog
from openmono.loop._events import EventSink
from openmono.loop._extensions import ToolHooks
from openmono.permissions import (
    FLOOR_MESSAGE,
    Approver,
    Mode,
    PermissionEngine,
    PermissionRequest,
    mode_denial,
    read_only_task,
    writes_call,
)


@dataclass(frozen=True)
class StepContext:
    """What the steps may use; `approver` announces each question before it asks (None: a
    non-interactive run, nobody to ask)."""

    catalog: ToolCatalog
    permissions: PermissionEngine
    approver: Approver | None
    hooks: ToolHooks | None
    request: Callable[[ToolCallComplete, dict[str, Any]], ToolRequest]


@dataclass
class Pending:
    """A call on its way through the steps; `args` and `facts` are filled by the first two."""

    call: ToolCallComplete
    mode: Mode
    emit: EventSink
    args: dict[str, Any] = field(default_factory=dict)
    facts: ToolFacts = UNKNOWN
    # the sandbox the permission decision runs a shell call in (ToolRequest.sandbox)
    sandbox: SandboxPolicy | None = None
    # the user's own message of the turn (None: not known, as for a playbook's own scripts)
    task: str | None = None


@dataclass(frozen=True)
class Refusal:
    """Why the call does not run; `denied` marks a policy refusal (not a malformed call);
    `step` is the name of the step that refused (`run_steps` fills it in)."""

    message: str
    denied: bool = False
    step: str = ""


class _Ready:
    def __repr__(self) -> str:
        return "READY"


READY: Final = _Ready()
Verdict = Refusal | _Ready | None
StepFn = Callable[[StepContext, Pending], Awaitable[Verdict]]


@dataclass(frozen=True)
class Step:
    name: str
    run: StepFn


async def parse(c: StepContext, p: Pending) -> Verdict:
    if p.call.error is not None:
        return Refusal(p.call.error)
    try:
        args = json.loads(p.call.arguments or "{}")
    except ValueError as exc:
        return Refusal(f"arguments are not valid JSON: {exc}")
    if not isinstance(args, dict):
        return Refusal("arguments must be a JSON object")
    p.args = args
    return None


async def lookup(c: StepContext, p: Pending) -> Verdict:
    found = c.catalog.lookup(p.call.name)
    if found is None:
        known = ", ".join(c.catalog.specs)
        return Refusal(f"unknown tool {p.call.name!r}; known tools: {known}")
    p.facts = found[0].facts
    return None


async def mode(c: StepContext, p: Pending) -> Verdict:
    why = mode_denial(p.mode, p.call.name, p.args, p.facts)
    if why:
        return Refusal(why, denied=True)
    if p.facts.plan_switch == "exit":
        return await _approve_plan(c, p)
    return None


async def _approve_plan(c: StepContext, p: Pending) -> Verdict:
    if p.mode != "plan":
        return Refusal("not in plan mode")
    if c.approver is None:
        return Refusal(
            "this run is non-interactive, so nobody can approve the plan: give the plan as "
            "your final answer and stop.",
            denied=True,
        )
    request = PermissionRequest(p.call.id, p.call.name, p.args, "approve the plan and start", "*")
    if await c.approver(request) in ("once", "session"):
        return READY
    return Refusal("the user wants to keep planning; revise the plan", denied=True)


async def read_only_floor(c: StepContext, p: Pending) -> Verdict:
    if p.task is None or c.permissions.yolo or not writes_call(p.facts, p.args):
        return None
    if not read_only_task(p.task):
        return None
    decision = c.permissions.decide(p.call.name, p.args, p.facts, read_only=p.mode != "agent")
    if decision.action != "allow":  # asked (or denied) by the next step, as without the floor
        return None
    return Refusal(FLOOR_MESSAGE.format(tool=p.call.name), denied=True)


async def permissions(c: StepContext, p: Pending) -> Verdict:
    decision = await c.permissions.authorize(
        p.call.id, p.call.name, p.args, p.facts, c.approver, read_only=p.mode != "agent"
    )
    if decision.action != "allow":
        return Refusal(f"permission denied: {decision.reason}", denied=True)
    p.sandbox = decision.sandbox
    return None


async def pre_hooks(c: StepContext, p: Pending) -> Verdict:
    if c.hooks is None:
        return None
    blocked = await c.hooks.pre_tool_use(c.request(p.call, p.args))
    if blocked is not None:
        return Refusal(f"blocked by a pre_tool_use hook: {blocked}", denied=True)
    return None


PREPARE_STEPS: tuple[Step, ...] = (
    Step("parse", parse),
    Step("lookup", lookup),
    Step("mode", mode),
    Step("read_only_task", read_only_floor),
    Step("permissions", permissions),
    Step("pre_hooks", pre_hooks),
)


async def run_steps(c: StepContext, steps: tuple[Step, ...], p: Pending) -> Refusal | None:
    """Run `steps` in order; the first refusal, or None when the call may run."""
    for step in steps:
        verdict = await step.run(c, p)
        if isinstance(verdict, Refusal):
            return replace(verdict, step=step.name)
        if verdict is READY:
            break
    return None
