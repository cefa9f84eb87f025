"""Step 5: run the model's tool calls through the pipeline, reads in parallel, writes in order.

Pipeline per call: 1-6 the prepare steps, each one named step of `_prepare` (parse, lookup, mode,
read_only_task, permissions, pre_hooks; a refusal at any of them ends the call)  7. snapshot the
workspace files about to be written (for /undo; only where the workspace is on this machine)  8. the
toolset that offers the name runs the call (`_extensions.Toolset`: the worker's tools, MCP tools,
`Agent`, `Playbook`, all alike), validating its arguments and paths where the tool runs  9. post-
tool hooks  10. turn the result into a message (artifact reference). A call refused at any step, or
invalid where it runs, becomes one error result the model reads; it is never dropped.

Consecutive read-only, concurrency-safe calls are prepared in order, then executed together.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from openmono_contracts import ToolRequest, ToolResult, WebAccess
from openmono_contracts.sandbox import SandboxPolicy

from openmono.llm import ToolCallComplete
from openmono.loop._catalog import ToolCatalog
from openmono.loop._events import EventSink, PermissionAsked, ToolFinished, ToolStarted, discard
from openmono.loop._extensions import ToolHooks
from openmono.loop._prepare import PREPARE_STEPS, Pending, Refusal, Step, StepContext, run_steps
from openmono.permissions import (
    Answer,
    Approver,
    Mode,
    PermissionEngine,
    PermissionRequest,
    call_paths,
    writes_call,
)
from openmono.sessions import Snapshots

Problem = Literal["unknown_tool", "invalid"]
# files remembered per session for ToolRequest.known_files (a bound on the request's size)
KNOWN_MAX = 512
# The calls that were wrong themselves (not a failure of their work), by the result's kind.
_PROBLEMS: dict[str | None, Problem] = {"invalid_params": "invalid", "unknown_tool": "unknown_tool"}


@dataclass(frozen=True)
class Question:
    """What AskUser puts to the user: the question and the answers it suggests (maybe none)."""

    text: str
    options: list[str] = field(default_factory=list)


# How a surface asks the user (a prompt, an ACP request to the editor); the answer as typed.
Asker = Callable[[Question], Awaitable[str]]


@dataclass
class CallOutcome:
    """One call's answer for the model."""

    call: ToolCallComplete
    content: str
    ok: bool
    denied: bool = False


@dataclass
class _Prepared:
    call: ToolCallComplete
    args: dict[str, Any]
    sandbox: SandboxPolicy | None = None


@dataclass
class DispatchContext:
    """Where and as whom calls run; the loop fills it once per session."""

    workspace: Path
    session_id: str
    timeout_s: float
    web: WebAccess = field(default_factory=WebAccess)
    # the user trusted the workspace (ToolRequest.workspace_trusted)
    trusted: bool = False
    # the files the session's calls read or wrote, as named, oldest first (ToolRequest.known_files)
    known: dict[str, None] = field(default_factory=dict)

    def note_known(self, names: Sequence[str]) -> None:
        """Remember files a call read or wrote (the most recent `KNOWN_MAX`)."""
        for name in names:
            self.known.pop(name, None)
            self.known[name] = None
        while len(self.known) > KNOWN_MAX:
            del self.known[next(iter(self.known))]

    def request(
        self,
        call_id: str,
        tool: str,
        args: dict[str, Any],
        *,
        timeout_s: float | None = None,
        web: bool = False,
        writes: bool = False,
    ) -> ToolRequest:
        """A call of `tool` in this context (`timeout_s`: other than the session's). Only a tool
        that reaches the web (`web`, its facts) gets the gateway key: a call carries no secret
        its tool does not need (issue 36, finding 3), and the worker holds none of its own. A tool
        that writes (`writes`) gets the files the session knows, so FileWrite can tell a blind
        overwrite."""
        access = self.web if web else self.web.model_copy(update={"api_key": None})
        return ToolRequest(
            known_files=list(self.known) if writes else None,
            tool=tool,
            params=args,
            call_id=call_id,
            session_id=self.session_id,
            workspace=str(self.workspace),
            timeout_s=self.timeout_s if timeout_s is None else timeout_s,
            web=access,
            workspace_trusted=self.trusted,
        )


class Dispatcher:
    """Runs tool calls for a loop; holds the collaborators the pipeline needs.

    `snapshots` are kept only when the workspace is a folder on this machine (a worker on
    another box writes files the agent cannot read back for /undo)."""

    def __init__(
        self,
        catalog: ToolCatalog,
        permissions: PermissionEngine,
        ctx: DispatchContext,
        *,
        approver: Approver | None = None,
        asker: Asker | None = None,
        snapshots: Snapshots | None = None,
        hooks: ToolHooks | None = None,
        steps: tuple[Step, ...] = PREPARE_STEPS,
    ) -> None:
        self.catalog = catalog
        self.permissions = permissions
        self.ctx = ctx
        self.approver = approver
        self.asker = asker
        self.snapshots = snapshots if ctx.workspace.is_dir() else None
        self.hooks = hooks
        self.steps = steps

    def derive(
        self,
        catalog: ToolCatalog,
        *,
        approver: Approver | None = None,
        steps: tuple[Step, ...] = PREPARE_STEPS,
    ) -> Dispatcher:
        """A dispatcher for a nested run (a sub-agent, a playbook step): this one's permissions,
        workspace, asker, snapshots and hooks, with its own tools, approver and steps."""
        return Dispatcher(
            catalog,
            self.permissions,
            self.ctx,
            approver=approver,
            asker=self.asker,
            snapshots=self.snapshots,
            hooks=self.hooks,
            steps=steps,
        )

    async def run(
        self,
        calls: Sequence[ToolCallComplete],
        mode: Mode,
        turn: str,
        emit: EventSink,
        done: Callable[[CallOutcome], None],
        *,
        task: str | None = None,
    ) -> None:
        """Run `calls`; `done` receives each outcome in the calls' order as soon as it is known.
        `task`: the user's own message of the turn (the `read_only_task` step reads it)."""
        batch: list[ToolCallComplete] = []
        for call in calls:
            facts = self.catalog.facts_of(call.name)
            if facts.read_only and facts.concurrency_safe and call.error is None:
                batch.append(call)
                continue
            await self._run_parallel(batch, mode, turn, emit, done, task)
            batch = []
            for outcome in await self._run_one(call, mode, turn, emit, task):
                done(outcome)
        await self._run_parallel(batch, mode, turn, emit, done, task)

    async def _run_parallel(
        self,
        calls: list[ToolCallComplete],
        mode: Mode,
        turn: str,
        emit: EventSink,
        done: Callable[[CallOutcome], None],
        task: str | None,
    ) -> None:
        if not calls:
            return
        # Prepare (and ask) one at a time, in order; then execute what was allowed together.
        staged: list[_Prepared | CallOutcome] = []
        for call in calls:
            staged.append(await self._prepare(call, mode, emit, task))
        runnable = [s for s in staged if isinstance(s, _Prepared)]
        results = await asyncio.gather(*(self._execute(p, turn, emit) for p in runnable))
        by_id = {p.call.id: r for p, r in zip(runnable, results, strict=True)}
        for item in staged:
            done(item if isinstance(item, CallOutcome) else by_id[item.call.id])

    async def _run_one(
        self, call: ToolCallComplete, mode: Mode, turn: str, emit: EventSink, task: str | None
    ) -> list[CallOutcome]:
        staged = await self._prepare(call, mode, emit, task)
        if isinstance(staged, CallOutcome):
            return [staged]
        return [await self._execute(staged, turn, emit)]

    def _refuse(self, pending: Pending, refusal: Refusal, emit: EventSink) -> CallOutcome:
        call = pending.call
        problem: Problem | None = None
        if refusal.step in ("parse", "lookup"):  # the call itself was bad, not the policy
            unknown = call.name and self.catalog.lookup(call.name) is None
            problem = "unknown_tool" if unknown else "invalid"
        emit(
            ToolFinished(
                call_id=call.id,
                name=call.name,
                ok=False,
                output="",
                error=refusal.message,
                denied=refusal.denied,
                problem=problem,
                writes=problem is None and writes_call(pending.facts, pending.args),
                refused_by=refusal.step,
            )
        )
        return CallOutcome(call, f"Error: {refusal.message}", ok=False, denied=refusal.denied)

    async def _prepare(
        self, call: ToolCallComplete, mode: Mode, emit: EventSink, task: str | None = None
    ) -> _Prepared | CallOutcome:
        """The prepare steps (`_prepare.PREPARE_STEPS`): the call is ready, or refused with a
        reason."""
        pending = Pending(call, mode, emit, task=task)
        context = StepContext(
            self.catalog, self.permissions, self.approver_for(emit), self.hooks, self.request
        )
        refusal = await run_steps(context, self.steps, pending)
        if refusal is not None:
            return self._refuse(pending, refusal, emit)
        return _Prepared(call, pending.args, pending.sandbox)

    def request(self, call: ToolCallComplete, args: dict[str, Any]) -> ToolRequest:
        facts = self.catalog.facts_of(call.name)
        return self.ctx.request(call.id, call.name, args, web=facts.web, writes=facts.writes)

    async def call(self, request: ToolRequest, emit: EventSink = discard) -> ToolResult:
        """Run `request` on the toolset that offers its tool, with no pipeline around it (the
        caller has decided it may run: a playbook's own scripts)."""
        found = self.catalog.lookup(request.tool)
        if found is None:
            error = f"unknown tool {request.tool!r}"
            return ToolResult(
                call_id=request.call_id, ok=False, error=error, error_kind="unknown_tool"
            )
        return await found[1].call(request, emit)

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
        # 7. snapshots for /undo, of files inside the workspace (the tool refuses any other)
        facts = self.catalog.facts_of(call.name)
        if self.snapshots is not None and facts.writes:
            root = self.ctx.workspace.resolve()
            for path in call_paths(facts, args, root):
                if root in path.parents:
                    self.snapshots.save(turn, path)
        emit(ToolStarted(call_id=call.id, name=call.name, arguments=args))
        # 8. the toolset that offers the name runs it
        request = self.request(call, args)
        if prepared.sandbox is not None:  # the permission decision's sandbox (runs it there)
            request = request.model_copy(update={"sandbox": prepared.sandbox})
        result = await self.call(request, emit)
        if result.ok and facts.kind in ("read", "edit") and not facts.shell_param:
            # what the session has seen whole or written itself may be overwritten later
            self.ctx.note_known([v for k in facts.path_params if isinstance(v := args.get(k), str)])
        if result.artifact:
            self.permissions.note_output(result.artifact)
        # 9. post-tool hooks; 10. the message for the model
        note = await self.hooks.post_tool_use(request, result) if self.hooks else None
        content = self._content(result)
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
                problem=_PROBLEMS.get(result.error_kind),
                writes=writes_call(facts, args),
            )
        )
        return CallOutcome(call, content, ok=result.ok)

    @staticmethod
    def _content(result: ToolResult) -> str:
        if not result.ok:
            text = f"Error: {result.error or 'the tool failed'}"
            return f"{text}\n{result.output}" if result.output else text
        text = result.output
        if result.artifact and result.artifact not in text:
            text += f"\n[output truncated; the whole output is in {result.artifact} (FileRead it)]"
        return text
