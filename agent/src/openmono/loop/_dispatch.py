"""Step 5: run the model's tool calls through the pipeline, reads in parallel, writes in order.

Pipeline per call: 1. parse the JSON arguments  2. validate them with the tool's own pydantic model
3. workspace sanity (the worker's path guard: no escape, symlinks resolved)  4. mode guard (plan/ask
are read-only)  5. permission engine (may ask the user)  6. pre-tool hooks (may block)
7. snapshot files about to be written (for /undo)  8. execute through the Executor, or the
agent-side `Toolset` that owns the name (MCP tools, `Agent`)  9. post-tool hooks  10. turn the
result into a message (artifact reference, effects). A call refused at any step becomes an error
result the model reads; it is never dropped.

Consecutive read-only, concurrency-safe calls are prepared in order, then executed together.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openmono_contracts import ToolRequest, ToolResult, WebAccess
from openmono_contracts.effects import AskUserEffect, ToolEffect
from openmono_worker import PathRefused, format_validation_error, get_tool, resolve_path
from pydantic import ValidationError

from openmono.executor import Executor
from openmono.llm import ToolCallComplete
from openmono.loop._catalog import ToolCatalog
from openmono.loop._events import EventSink, PermissionAsked, ToolFinished, ToolStarted
from openmono.loop._extensions import ToolHooks, Toolset
from openmono.permissions import (
    Answer,
    Approver,
    Mode,
    PermissionEngine,
    PermissionRequest,
    call_paths,
    mode_denial,
)
from openmono.sessions import Snapshots

Asker = Callable[[AskUserEffect], Awaitable[str]]


@dataclass
class CallOutcome:
    """One call's answer for the model, plus what the loop must act on."""

    call: ToolCallComplete
    content: str
    ok: bool
    denied: bool = False
    effect: ToolEffect | None = None


@dataclass
class _Prepared:
    call: ToolCallComplete
    args: dict[str, Any]


@dataclass
class DispatchContext:
    """Where and as whom calls run; the loop fills it once per session."""

    workspace: Path
    session_id: str
    timeout_s: float
    web: WebAccess = field(default_factory=WebAccess)
    read_roots: Sequence[Path] = ()


class Dispatcher:
    """Runs tool calls for a loop; holds the collaborators the pipeline needs."""

    def __init__(
        self,
        executor: Executor,
        catalog: ToolCatalog,
        permissions: PermissionEngine,
        ctx: DispatchContext,
        *,
        approver: Approver | None = None,
        asker: Asker | None = None,
        snapshots: Snapshots | None = None,
        toolsets: Sequence[Toolset] = (),
        hooks: ToolHooks | None = None,
    ) -> None:
        self.executor = executor
        self.catalog = catalog
        self.permissions = permissions
        self.ctx = ctx
        self.approver = approver
        self.asker = asker
        self.snapshots = snapshots
        self.toolsets: list[Toolset] = list(toolsets)
        self.hooks = hooks

    def toolset_for(self, name: str) -> Toolset | None:
        return next((t for t in self.toolsets if t.owns(name)), None)

    async def run(
        self,
        calls: Sequence[ToolCallComplete],
        mode: Mode,
        turn: str,
        emit: EventSink,
        done: Callable[[CallOutcome], None],
    ) -> None:
        """Run `calls`; `done` receives each outcome in the calls' order as soon as it is known."""
        batch: list[ToolCallComplete] = []
        for call in calls:
            facts = self.catalog.facts_of(call.name)
            if facts.read_only and facts.concurrency_safe and call.error is None:
                batch.append(call)
                continue
            await self._run_parallel(batch, mode, turn, emit, done)
            batch = []
            for outcome in await self._run_one(call, mode, turn, emit):
                done(outcome)
        await self._run_parallel(batch, mode, turn, emit, done)

    async def _run_parallel(
        self,
        calls: list[ToolCallComplete],
        mode: Mode,
        turn: str,
        emit: EventSink,
        done: Callable[[CallOutcome], None],
    ) -> None:
        if not calls:
            return
        # Prepare (and ask) one at a time, in order; then execute what was allowed together.
        staged: list[_Prepared | CallOutcome] = []
        for call in calls:
            staged.append(await self._prepare(call, mode, emit))
        runnable = [s for s in staged if isinstance(s, _Prepared)]
        results = await asyncio.gather(*(self._execute(p, turn, emit) for p in runnable))
        by_id = {p.call.id: r for p, r in zip(runnable, results, strict=True)}
        for item in staged:
            done(item if isinstance(item, CallOutcome) else by_id[item.call.id])

    async def _run_one(
        self, call: ToolCallComplete, mode: Mode, turn: str, emit: EventSink
    ) -> list[CallOutcome]:
        staged = await self._prepare(call, mode, emit)
        if isinstance(staged, CallOutcome):
            return [staged]
        return [await self._execute(staged, turn, emit)]

    def _refuse(
        self, call: ToolCallComplete, message: str, emit: EventSink, denied: bool
    ) -> CallOutcome:
        emit(
            ToolFinished(
                call_id=call.id, name=call.name, ok=False, output="", error=message, denied=denied
            )
        )
        return CallOutcome(call, f"Error: {message}", ok=False, denied=denied)

    async def _prepare(
        self, call: ToolCallComplete, mode: Mode, emit: EventSink
    ) -> _Prepared | CallOutcome:
        # 1. parse (the client already flagged truncated or unparsable calls)
        if call.error is not None:
            return self._refuse(call, call.error, emit, denied=False)
        try:
            args = json.loads(call.arguments or "{}")
        except ValueError as exc:
            return self._refuse(call, f"arguments are not valid JSON: {exc}", emit, denied=False)
        if not isinstance(args, dict):
            return self._refuse(call, "arguments must be a JSON object", emit, denied=False)
        # 2. schema validation with the tool's own Params model
        toolset = self.toolset_for(call.name)
        tool = None if toolset else get_tool(call.name)
        if (tool is None and toolset is None) or call.name not in self.catalog.specs:
            known = ", ".join(self.catalog.specs)
            return self._refuse(
                call, f"unknown tool {call.name!r}; known tools: {known}", emit, False
            )
        if toolset is not None:
            invalid = toolset.check(call.name, args)
            if invalid:
                return self._refuse(call, invalid, emit, denied=False)
        try:
            if tool is not None:
                tool.parse(args)
        except ValidationError as exc:
            return self._refuse(call, format_validation_error(call.name, exc), emit, denied=False)
        facts = self.catalog.facts_of(call.name)
        # 3. workspace sanity
        for key in facts.path_params:
            value = args.get(key)
            if isinstance(value, str) and value:
                try:
                    extra = self.ctx.read_roots if facts.read_only else ()
                    resolve_path(self.ctx.workspace, value, extra_roots=extra)
                except PathRefused as exc:
                    return self._refuse(call, str(exc), emit, denied=True)
        # 4. mode guard, at execution time
        why = mode_denial(mode, call.name, args, facts)
        if why:
            return self._refuse(call, why, emit, denied=True)
        if facts.plan_switch == "exit":
            return await self._exit_plan(call, args, mode, emit)
        # 5. permissions
        decision = await self.permissions.authorize(
            call.id, call.name, args, facts, self._approver(emit)
        )
        if decision.action != "allow":
            return self._refuse(call, f"permission denied: {decision.reason}", emit, denied=True)
        # 6. pre-tool hooks
        if self.hooks is not None:
            blocked = await self.hooks.pre_tool_use(self._request(call, args))
            if blocked is not None:
                return self._refuse(
                    call, f"blocked by a pre_tool_use hook: {blocked}", emit, denied=True
                )
        return _Prepared(call, args)

    def _request(self, call: ToolCallComplete, args: dict[str, Any]) -> ToolRequest:
        return ToolRequest(
            tool=call.name,
            params=args,
            call_id=call.id,
            session_id=self.ctx.session_id,
            workspace=str(self.ctx.workspace),
            timeout_s=self.ctx.timeout_s,
            web=self.ctx.web,
        )

    async def _exit_plan(
        self, call: ToolCallComplete, args: dict[str, Any], mode: Mode, emit: EventSink
    ) -> _Prepared | CallOutcome:
        if mode != "plan":
            return self._refuse(call, "not in plan mode", emit, denied=False)
        if self.approver is None:
            return self._refuse(
                call,
                "this run is non-interactive, so nobody can approve the plan: give the plan as "
                "your final answer and stop.",
                emit,
                denied=True,
            )
        request = PermissionRequest(call.id, call.name, args, "approve the plan and start", "*")
        emit(
            PermissionAsked(call_id=call.id, name=call.name, arguments=args, reason=request.reason)
        )
        answer = await self.approver(request)
        if answer in ("once", "session"):
            return _Prepared(call, args)
        return self._refuse(call, "the user wants to keep planning; revise the plan", emit, True)

    def _approver(self, emit: EventSink) -> Approver | None:
        if self.approver is None:
            return None
        approver = self.approver

        async def ask(request: PermissionRequest) -> Answer:
            emit(
                PermissionAsked(
                    call_id=request.call_id,
                    name=request.tool,
                    arguments=dict(request.arguments),
                    reason=request.reason,
                )
            )
            return await approver(request)

        return ask

    async def _execute(self, prepared: _Prepared, turn: str, emit: EventSink) -> CallOutcome:
        call, args = prepared.call, prepared.args
        # 7. snapshots for /undo (only where the workspace is on this machine)
        facts = self.catalog.facts_of(call.name)
        if self.snapshots is not None and facts.writes:
            for path in call_paths(facts, args, self.ctx.workspace):
                self.snapshots.save(turn, path)
        emit(ToolStarted(call_id=call.id, name=call.name, arguments=args))
        # 8. execute (an agent-side toolset, else the executor)
        request = self._request(call, args)
        toolset = self.toolset_for(call.name)
        if toolset is not None:
            result = await toolset.call(request, emit)
        else:
            result = await self.executor.run(request)
        # 9. post-tool hooks; 10. the message for the model
        note = await self.hooks.post_tool_use(request, result) if self.hooks else None
        content = await self._content(result)
        if note:
            content += f"\n[post_tool_use hook] {note}"
        emit(
            ToolFinished(
                call_id=call.id,
                name=call.name,
                ok=result.ok,
                output=content,
                error=result.error,
                artifact=result.artifact,
                elapsed_ms=result.elapsed_ms,
            )
        )
        return CallOutcome(call, content, ok=result.ok, effect=result.effect)

    async def _content(self, result: ToolResult) -> str:
        if isinstance(result.effect, AskUserEffect):
            if self.asker is None:
                return (
                    "No user is available (non-interactive run). Make a reasonable assumption, "
                    "state it, and continue."
                )
            answer = await self.asker(result.effect)
            return f"The user answered: {answer}"
        if not result.ok:
            text = f"Error: {result.error or 'the tool failed'}"
            return f"{text}\n{result.output}" if result.output else text
        text = result.output
        if result.artifact and result.artifact not in text:
            text += f"\n[output truncated; the whole output is in {result.artifact} (FileRead it)]"
        return text
