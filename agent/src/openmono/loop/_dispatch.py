"""Step 5: run the model's tool calls through the pipeline, reads in parallel, writes in order.

Pipeline per call: 1-6 the prepare steps, each one named step of `_prepare` (parse, validate,
workspace, mode, permissions, pre_hooks; a refusal at any of them ends the call)
7. snapshot files about to be written (for /undo)  8. execute through the Executor, or the
agent-side `Toolset` that owns the name (MCP tools, `Agent`)  9. post-tool hooks  10. turn the
result into a message (artifact reference, effects). A call refused at any step becomes an error
result the model reads; it is never dropped.

Consecutive read-only, concurrency-safe calls are prepared in order, then executed together.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openmono_contracts import ToolRequest, ToolResult, WebAccess
from openmono_contracts.effects import AskUserEffect, ToolEffect

from openmono.executor import Executor
from openmono.llm import ToolCallComplete
from openmono.loop._catalog import ToolCatalog
from openmono.loop._events import EventSink, PermissionAsked, ToolFinished, ToolStarted
from openmono.loop._extensions import ToolHooks, Toolset
from openmono.loop._prepare import PREPARE_STEPS, Pending, Step, run_steps
from openmono.permissions import (
    Answer,
    Approver,
    Mode,
    PermissionEngine,
    PermissionRequest,
    call_paths,
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
        steps: tuple[Step, ...] = PREPARE_STEPS,
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
        self.steps = steps

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
        """Steps 1-6 (`_prepare.PREPARE_STEPS`): the call is ready, or refused with a reason."""
        pending = Pending(call, mode, emit)
        refusal = await run_steps(self, self.steps, pending)
        if refusal is not None:
            return self._refuse(call, refusal.message, emit, refusal.denied)
        return _Prepared(call, pending.args)

    def request(self, call: ToolCallComplete, args: dict[str, Any]) -> ToolRequest:
        return ToolRequest(
            tool=call.name,
            params=args,
            call_id=call.id,
            session_id=self.ctx.session_id,
            workspace=str(self.ctx.workspace),
            timeout_s=self.ctx.timeout_s,
            web=self.ctx.web,
        )

    def approver_for(self, emit: EventSink) -> Approver | None:
        """The approver, announcing each question on `emit` first (None: nobody to ask)."""
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
        request = self.request(call, args)
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
