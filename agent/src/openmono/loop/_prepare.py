"""Steps 1-6 of the tool pipeline: what a call must pass before it runs, one named step each.

    1. parse        the JSON arguments (the client already flagged cut or unparsable calls)
    2. validate     against the tool's own pydantic model, or the agent-side toolset's check
    3. workspace    every path argument resolves inside the workspace (symlinks followed)
    4. mode         plan/ask are read-only; leaving plan mode asks the user to approve the plan
    5. permissions  the permission engine (may ask the user)
    6. pre_hooks    `pre_tool_use` hooks (may block)

A step looks at the `Pending` call and answers `None` (go on), a `Refusal` (the call ends as an
error result the model reads) or `READY` (the call may run; later steps do not apply). The
dispatcher runs `PREPARE_STEPS` in order; a caller may pass its own tuple (insert, drop, reorder)
without touching the others.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from openmono_contracts.toolfacts import ToolFacts
from openmono_worker import PathRefused, format_validation_error, get_tool, resolve_path
from pydantic import ValidationError

from openmono.llm import ToolCallComplete
from openmono.loop._catalog import UNKNOWN
from openmono.loop._events import EventSink, PermissionAsked
from openmono.permissions import Mode, PermissionRequest, mode_denial

if TYPE_CHECKING:
    from openmono.loop._dispatch import Dispatcher


@dataclass
class Pending:
    """A call on its way through the steps; `args` and `facts` are filled by the first two."""

    call: ToolCallComplete
    mode: Mode
    emit: EventSink
    args: dict[str, Any] = field(default_factory=dict)
    facts: ToolFacts = UNKNOWN


@dataclass(frozen=True)
class Refusal:
    """Why the call does not run; `denied` marks a policy refusal (not a malformed call)."""

    message: str
    denied: bool = False


class _Ready:
    def __repr__(self) -> str:
        return "READY"


READY: Final = _Ready()
Verdict = Refusal | _Ready | None
StepFn = Callable[["Dispatcher", Pending], Awaitable[Verdict]]


@dataclass(frozen=True)
class Step:
    name: str
    run: StepFn


async def parse(d: Dispatcher, p: Pending) -> Verdict:
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


async def validate(d: Dispatcher, p: Pending) -> Verdict:
    name = p.call.name
    toolset = d.toolset_for(name)
    tool = None if toolset else get_tool(name)
    if (tool is None and toolset is None) or name not in d.catalog.specs:
        return Refusal(f"unknown tool {name!r}; known tools: {', '.join(d.catalog.specs)}")
    if toolset is not None:
        invalid = toolset.check(name, p.args)
        if invalid:
            return Refusal(invalid)
    try:
        if tool is not None:
            tool.parse(p.args)
    except ValidationError as exc:
        return Refusal(format_validation_error(name, exc))
    p.facts = d.catalog.facts_of(name)
    return None


async def workspace(d: Dispatcher, p: Pending) -> Verdict:
    extra = d.ctx.read_roots if p.facts.read_only else ()
    for key in p.facts.path_params:
        value = p.args.get(key)
        if isinstance(value, str) and value:
            try:
                resolve_path(d.ctx.workspace, value, extra_roots=extra)
            except PathRefused as exc:
                return Refusal(str(exc), denied=True)
    return None


async def mode(d: Dispatcher, p: Pending) -> Verdict:
    why = mode_denial(p.mode, p.call.name, p.args, p.facts)
    if why:
        return Refusal(why, denied=True)
    if p.facts.plan_switch == "exit":
        return await _approve_plan(d, p)
    return None


async def _approve_plan(d: Dispatcher, p: Pending) -> Verdict:
    if p.mode != "plan":
        return Refusal("not in plan mode")
    if d.approver is None:
        return Refusal(
            "this run is non-interactive, so nobody can approve the plan: give the plan as "
            "your final answer and stop.",
            denied=True,
        )
    call = p.call
    request = PermissionRequest(call.id, call.name, p.args, "approve the plan and start", "*")
    p.emit(
        PermissionAsked(call_id=call.id, name=call.name, arguments=p.args, reason=request.reason)
    )
    if await d.approver(request) in ("once", "session"):
        return READY
    return Refusal("the user wants to keep planning; revise the plan", denied=True)


async def permissions(d: Dispatcher, p: Pending) -> Verdict:
    decision = await d.permissions.authorize(
        p.call.id, p.call.name, p.args, p.facts, d.approver_for(p.emit)
    )
    if decision.action != "allow":
        return Refusal(f"permission denied: {decision.reason}", denied=True)
    return None


async def pre_hooks(d: Dispatcher, p: Pending) -> Verdict:
    if d.hooks is None:
        return None
    blocked = await d.hooks.pre_tool_use(d.request(p.call, p.args))
    if blocked is not None:
        return Refusal(f"blocked by a pre_tool_use hook: {blocked}", denied=True)
    return None


PREPARE_STEPS: tuple[Step, ...] = (
    Step("parse", parse),
    Step("validate", validate),
    Step("workspace", workspace),
    Step("mode", mode),
    Step("permissions", permissions),
    Step("pre_hooks", pre_hooks),
)


async def run_steps(d: Dispatcher, steps: tuple[Step, ...], p: Pending) -> Refusal | None:
    """Run `steps` in order; the first refusal, or None when the call may run."""
    for step in steps:
        verdict = await step.run(d, p)
        if isinstance(verdict, Refusal):
            return verdict
        if verdict is READY:
            break
    return None
